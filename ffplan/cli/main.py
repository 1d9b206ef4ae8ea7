"""`ffplan` entry point: registers one module per command."""

from __future__ import annotations

import gc

import typer

from ffplan import __version__
from ffplan.cli.help import use_help_command

app = typer.Typer(
    name="ffplan",
    help="Plan, configure and verify cost-effective InfiniBand GPU clusters (Fire-Flyer 2 style).",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish, PowerShell
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: paragraphs re-flowed to the terminal, [brackets] printed as written
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ffplan {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """ffplan: lint an inventory, design the fabric, render configs, report cost, verify in a simulator."""


def _plain_option_errors() -> None:
    """typer coerces option values with pydantic and prints the first error's message, so a bad choice reads
    "Value error, 'gpu' is not one of ...". Users should see ffplan's wording without pydantic's prefix, as in
    every other error; tests/unit/test_cli_errors.py fails if typer stops calling this hook."""
    from pydantic import ValidationError
    from typer import _coercion, _param_types

    from ffplan.diagnostics import printable, validation_message

    def message(exc: ValidationError) -> str:
        errors = exc.errors()
        return printable(validation_message(errors[0])) if errors else printable(str(exc))

    # typer's coercion hooks are private: its stubs do not declare them
    _coercion.get_error_msg = message  # type: ignore[attr-defined]
    _param_types.get_error_msg = message  # type: ignore[attr-defined]


def _register() -> None:
    # One module per command; each exposes `register(app)`.
    from ffplan.cli import analyze as analyze_cmd
    from ffplan.cli import audit as audit_cmd
    from ffplan.cli import design as design_cmd
    from ffplan.cli import diff as diff_cmd
    from ffplan.cli import lint as lint_cmd
    from ffplan.cli import render as render_cmd
    from ffplan.cli import report as report_cmd
    from ffplan.cli import reroute as reroute_cmd
    from ffplan.cli import verify as verify_cmd

    for module in (lint_cmd, design_cmd, render_cmd, report_cmd, diff_cmd, verify_cmd, analyze_cmd, audit_cmd, reroute_cmd):
        module.register(app)
    use_help_command(app)


_plain_option_errors()
_register()


def run() -> None:
    try:
        app()
    finally:
        # Python's exit runs one last full collection over everything still alive (the loaded plan, every module):
        # 0.07 s of Fire-Flyer 2's render, to find nothing worth collecting in a process about to end.
        gc.freeze()
