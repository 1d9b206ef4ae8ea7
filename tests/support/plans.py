"""Plans for the tests: designed from an inventory (the shipped ones cached per session), with ffplan's own
routing and QoS; and a plan written where a test needs it."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ffplan.plan import Plan, dump_plan

ROOT = Path(__file__).resolve().parents[2]


def design_file(inventory: Path) -> Plan:
    from ffplan.design import design
    from ffplan.inventory import load_inventory

    return design(load_inventory(inventory))


@lru_cache(maxsize=4)
def designed(name: str) -> Plan:
    return design_file(ROOT / "inventories" / f"{name}.yaml")


def write_plan(plan: Plan, path: Path) -> None:
    """plan.yaml as `ffplan design` writes it (its folder created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_plan(plan), encoding="utf-8", newline="\n")
