"""Shared CLI plumbing: consoles, exit codes and the error barrier that turns stage errors into messages."""

from __future__ import annotations

import contextlib
import gc
import sys
from enum import Enum
from pathlib import Path
from typing import Iterator, NoReturn, Sequence

import typer
from rich.console import Console, ConsoleDimensions

from ffplan.diagnostics import StageError
from ffplan.diagnostics.formats import format_text
from ffplan.progress import StageCallback, no_progress

# Wide enough that no table ffplan prints is ever narrowed: rich tables take their natural width, not this.
PIPE_WIDTH = 10_000


class ReportFormat(str, Enum):
    """`--format` of the commands that print a report for people (text, markdown) or for programs (json)."""

    text = "text"
    json = "json"
    markdown = "markdown"


class CliConsole(Console):
    """Fits the terminal; writing to a pipe or a file (CI logs, `| less`, `> out.txt`) it never cuts a cell
    to `…` nor wraps a line at 80 columns, which is what rich does when it finds no terminal."""

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        return size if self.is_terminal else ConsoleDimensions(PIPE_WIDTH, size.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size  # as rich's own setter does


def make_console(stderr: bool = False) -> Console:
    """The one console factory of the CLI: every command prints through `out` (data) or `err` (progress, errors)."""
    # emoji=False: a name such as `rack:ok:` is printed as written (and rich's 3 MB emoji table is never loaded)
    return CliConsole(stderr=stderr, highlight=False, soft_wrap=True, emoji=False)


out = make_console()
err = make_console(stderr=True)

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INFEASIBLE = 0, 1, 2, 3


def plan_file(path: Path) -> Path:
    """PLAN is plan.yaml or the folder `ffplan design` wrote it to."""
    return path / "plan.yaml" if path.is_dir() else path


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


@contextlib.contextmanager
def stage_progress(title: str, stages: Sequence[str], quiet: bool = False) -> Iterator[StageCallback]:
    """A progress bar on stderr that the stage callback it yields moves along `stages`; nothing with --quiet or
    when stderr is not a terminal (CI logs, redirected output), where a bar would only add noise."""
    if quiet or not err.is_terminal:
        yield no_progress
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task(title, total=len(stages))

        def on_stage(stage: str) -> None:
            bar.update(task, completed=stages.index(stage), description=f"{title}: {stage}", refresh=True)

        yield on_stage
        bar.update(task, completed=len(stages))


@contextlib.contextmanager
def kept_until_exit() -> Iterator[None]:
    """Around loading what the command keeps to its end (a plan: a hundred thousand objects made in one go, none
    of them garbage): the cyclic collector is paused while it is made and never walks it afterwards (frozen), where
    it would walk it once per collection to free nothing (0.04 s of Fire-Flyer 2's render)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def write_output(target: Path, text: str) -> None:
    """`text` into the file `target`, its folder made: whole or not at all and never into a FIFO or device
    (ffplan.outdir.write_file, the one atomic file writer); exit 2 with the reason when it cannot be written."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"cannot write {target}: {exc.strerror}", "check the path and its permissions")
    from ffplan.outdir import write_file

    with stage_errors():
        write_file(target, text)
