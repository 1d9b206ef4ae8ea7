"""OpenSM files of a plan (being written)."""

from __future__ import annotations

from ffplan.plan.model import Plan


def render_opensm(plan: Plan, prefix: str) -> dict[str, str]:
    """Relative path under the output folder -> file text."""
    return {}
