"""Help texts in the words of the docs: arguments by name (PLAN, INVENTORY), option values as their choices, PATH,
N, NUMBER or TEXT, never a Python type name (`<list[Path]>`, `<float range>`), and examples never re-flowed."""

from __future__ import annotations

import inspect
from typing import Any, get_args

import typer
from typer.core import TyperArgument, TyperCommand, TyperOption


class _NamedArgument(TyperArgument):
    def display_type_rich(self, ctx: Any) -> None:  # the argument's name (PLAN, INVENTORY) says what it is
        return None


def _value_name(param: TyperOption) -> str | None:
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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.help:  # examples are command lines: printed as written, never re-flowed mid-command
            self.help = "\n\n".join(
                "\b\n" + p if p.lstrip().startswith("Example") else p for p in inspect.cleandoc(self.help).split("\n\n")
            )
        for param in self.params:
            if isinstance(param, TyperArgument):
                param.__class__ = _NamedArgument
                param.metavar = param.metavar or param.name.upper()
            elif isinstance(param, TyperOption) and param.metavar is None and not param.is_flag:
                param.metavar = _value_name(param)


def use_help_command(typer_app: typer.Typer) -> None:
    """Every command of the app (and of its sub-apps) formats its help as HelpCommand does."""
    for info in typer_app.registered_commands:
        if info.cls in (None, TyperCommand):
            info.cls = HelpCommand
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            use_help_command(group.typer_instance)
