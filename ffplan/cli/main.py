"""`ffplan` entry point: registers one module per command."""

from __future__ import annotations

import inspect
from typing import get_args

import typer
from typer.core import TyperArgument, TyperCommand

from ffplan import __version__

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


class _NamedArgument(TyperArgument):
    def display_type_rich(self, ctx) -> None:  # the argument's name (PLAN, INVENTORY) says what it is
        return None


def _value_name(param) -> str | None:
    """What an option's value is, as the help names it: its choices, PATH, N, NUMBER or TEXT (typer >= 0.2x would
    print `<float range>`, `<list[str]>`). None leaves it to older typers, whose click names values itself."""
    desc = getattr(param, "type_descriptor", None)
    if desc is None:
        return None
    if desc.choices:
        return "[" + "|".join(str(getattr(c, "value", c)) for c in desc.choices) + "]"
    if desc.is_path:
        return "PATH"
    element = get_args(desc.annotation)[0] if desc.is_list else desc.annotation
    return {int: "N", float: "NUMBER"}.get(element, "TEXT")


class HelpCommand(TyperCommand):
    """A command whose help speaks the docs' language: arguments by name (PLAN, INVENTORY), option values as
    their choices, PATH, N, NUMBER or TEXT, never a Python type name."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.help:  # examples are command lines: printed as written, never re-flowed mid-command
            self.help = "\n\n".join("\b\n" + p if p.lstrip().startswith("Example") else p for p in inspect.cleandoc(self.help).split("\n\n"))
        for param in self.params:
            if isinstance(param, TyperArgument):
                param.__class__ = _NamedArgument
                param.metavar = param.metavar or param.name.upper()
            elif param.metavar is None and not param.is_flag:
                param.metavar = _value_name(param)


def _use_help_command(typer_app: typer.Typer) -> None:
    for info in typer_app.registered_commands:
        if info.cls in (None, TyperCommand):
            info.cls = HelpCommand
    for group in typer_app.registered_groups:
        _use_help_command(group.typer_instance)


def _register() -> None:
    # One module per command; each exposes `register(app)`.
    from ffplan.cli import analyze as analyze_cmd
    from ffplan.cli import design as design_cmd
    from ffplan.cli import diff as diff_cmd
    from ffplan.cli import lint as lint_cmd
    from ffplan.cli import render as render_cmd
    from ffplan.cli import report as report_cmd
    from ffplan.cli import verify as verify_cmd

    for module in (lint_cmd, design_cmd, render_cmd, report_cmd, diff_cmd, verify_cmd, analyze_cmd):
        module.register(app)
    _use_help_command(app)


_register()


def run() -> None:
    app()
