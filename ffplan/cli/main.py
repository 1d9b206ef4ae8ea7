"""`ffplan` entry point: registers one module per command (only the command it runs, when it runs one)."""

from __future__ import annotations

import gc
import importlib
import os
import sys
from typing import Sequence

import typer

from ffplan import __version__
from ffplan.cli.help import use_help_command


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ffplan {__version__}")
        raise typer.Exit()


def main(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """ffplan: lint an inventory, design the fabric, render configs, report cost, verify in a simulator."""


def _plain_option_errors() -> None:
    """typer coerces option values with pydantic and prints the first error's message, so a bad choice reads
    "Value error, 'gpu' is not one of ...". Users should see ffplan's wording without pydantic's prefix, as in
    every other error; tests/cli/test_cli_errors.py fails if typer stops calling this hook."""
    from pydantic import ValidationError
    from typer import _coercion, _param_types

    from ffplan.diagnostics import printable, validation_message

    def message(exc: ValidationError) -> str:
        errors = exc.errors()
        return printable(validation_message(errors[0])) if errors else printable(str(exc))

    # typer's coercion hooks are private: its stubs do not declare them
    _coercion.get_error_msg = message  # type: ignore[attr-defined]
    _param_types.get_error_msg = message  # type: ignore[attr-defined]


# Command -> the module (ffplan.cli.<module>) whose `register(app)` adds it; the modules' order is --help's.
COMMAND_MODULES = {
    "lint": "lint",
    "rules": "lint",
    "explain": "lint",
    "schema": "lint",
    "design": "design",
    "render": "render",
    "report": "report",
    "diff": "diff",
    "verify": "verify",
    "analyze": "analyze",
    "audit": "audit",
    "reroute": "reroute",
}


def build_app(modules: Sequence[str] = tuple(dict.fromkeys(COMMAND_MODULES.values()))) -> typer.Typer:
    """The `ffplan` app with these modules' commands registered, their help in the docs' words (use_help_command)."""
    built = typer.Typer(
        name="ffplan",
        help="Plan, configure and verify cost-effective InfiniBand GPU clusters (Fire-Flyer 2 style).",
        no_args_is_help=True,
        add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish, PowerShell
        pretty_exceptions_enable=False,
        rich_markup_mode=None,  # plain help: paragraphs re-flowed to the terminal, [brackets] printed as written
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    built.callback()(main)
    for module in modules:
        importlib.import_module(f"ffplan.cli.{module}").register(built)
    use_help_command(built)
    return built


def __getattr__(name: str) -> typer.Typer:
    """`app`: every command registered, built on first use (tests; `run()` builds the app it runs itself)."""
    if name == "app":
        globals()["app"] = full = build_app()
        return full
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _app_for(argv: Sequence[str]) -> typer.Typer:
    """The app to run `argv` with: only its command when it names one (each command's module imports what its
    options need: the report's catalogs, lint's rules, analyze's roles; 0.03-0.04 s that `ffplan render` or
    `ffplan lint` would spend on the others), every command for anything else (--help, --version, a mistyped
    command, shell completion)."""
    completing = any(key.startswith("_") and key.endswith("_COMPLETE") for key in os.environ)
    module = COMMAND_MODULES.get(argv[1]) if len(argv) > 1 and not completing else None
    return build_app((module,)) if module else build_app()


_plain_option_errors()


def run() -> None:
    try:
        _app_for(sys.argv)()
    finally:
        # Python's exit runs one last full collection over everything still alive (the loaded plan, every module):
        # 0.07 s of Fire-Flyer 2's render, to find nothing worth collecting in a process about to end.
        gc.freeze()
