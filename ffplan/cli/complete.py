"""Shell completion of option values: traffic patterns, rule ids and names, a plan's zones. Each imports what it
needs only when the shell asks, so `ffplan` starts as fast as before."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ffplan.plan.model import Plan


def patterns(incomplete: str) -> list[str]:
    from ffplan.analyze.patterns import PATTERNS

    return [p for p in PATTERNS if p.startswith(incomplete)]


def rules(incomplete: str) -> list[str]:
    """Rule ids (FF101) and names (zone-port-budget), for explain, --select and --ignore."""
    from ffplan.lint.registry import all_rules

    words = [w for r in all_rules() for w in (r.id, r.name)]
    return [w for w in words if w.lower().startswith(incomplete.lower())]


def zones(incomplete: str) -> list[str]:
    """--zone: the zones of the plan on the command line."""
    plan = _plan_on_command_line()
    return [z.name for z in plan.zones if z.name.startswith(incomplete)] if plan else []


def planes(incomplete: str) -> list[str]:
    """--plane: the planes (subnets) of the plan on the command line."""
    plan = _plan_on_command_line()
    return [s for s in plan.subnets if s.startswith(incomplete)] if plan else []


def _plan_on_command_line() -> Plan | None:
    """The plan on the command line being completed: the first existing path among the
    words (verify's OUT, the PLAN of analyze, audit and reroute), or verify's --plan; none while no plan is named.
    The words come from the shell (bash: COMP_WORDS; typer's zsh and fish scripts: _TYPER_COMPLETE_ARGS), since
    click stops parsing at the option whose value is being completed and leaves every parameter unset."""
    from ffplan.plan.io import load_plan
    from ffplan.verify.inputs import plan_file_of

    try:
        words = shlex.split(os.environ.get("COMP_WORDS") or os.environ.get("_TYPER_COMPLETE_ARGS", ""))
        given = words[words.index("--plan") + 1] if "--plan" in words[:-1] else None
        target = next((w for w in words[1:] if not w.startswith("-") and Path(w).exists()), None)
        return load_plan(plan_file_of(Path(target), Path(given) if given else None)) if target else None
    except Exception:  # completion must never fail the shell: no readable plan, no candidates
        return None
