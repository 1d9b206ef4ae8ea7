"""Shared CLI plumbing: consoles, exit codes and the error barrier that turns stage errors into messages."""

from __future__ import annotations

import contextlib
import sys
from typing import Iterator, NoReturn

import typer
from rich.console import Console

from ffplan.diagnostics import StageError
from ffplan.diagnostics.formats import format_text

# Data goes to stdout; progress and errors to stderr.
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INFEASIBLE = 0, 1, 2, 3


def fail(message: str, hint: str = "", code: int = EXIT_USAGE) -> NoReturn:
    err.print(f"[bold red]error:[/] {message}", markup=True)
    if hint:
        err.print(f"    hint: {hint}", markup=False)
    raise typer.Exit(code)


@contextlib.contextmanager
def stage_errors() -> Iterator[None]:
    """Print a stage's diagnostics (never a traceback) and exit with the stage's code."""
    try:
        yield
    except StageError as exc:
        sys.stderr.write(format_text(exc.diagnostics))
        raise typer.Exit(exc.exit_code) from None
