"""Every diagnostic code ffplan prints, one module per stage (as ruff keeps its codes.rs): each code a named
constant with its one-line meaning. The stages import their constants from here; this package imports nothing
else from ffplan, so any module may use it. `ffplan explain` documents each code (ffplan.lint.registry)."""

from __future__ import annotations

from ffplan.codes import analyze, audit, design, inventory, lint, plan, render, report
from ffplan.codes.code import Code

STAGES = (inventory, lint, design, report, plan, render, analyze, audit)


def table() -> dict[str, Code]:
    """Every code by its id."""
    return {str(code): code for stage in STAGES for code in vars(stage).values() if isinstance(code, Code)}


__all__ = ["Code", "STAGES", "table"]
