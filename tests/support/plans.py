"""A plan written where a test needs it."""

from __future__ import annotations

from pathlib import Path

from ffplan.plan import Plan, dump_plan


def write_plan(plan: Plan, path: Path) -> None:
    """plan.yaml as `ffplan design` writes it (its folder created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_plan(plan), encoding="utf-8", newline="\n")
