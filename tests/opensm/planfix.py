"""Plans for the OpenSM tests: designed from an inventory (the shipped ones cached per session), with ffplan's own
routing and QoS."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ffplan.plan.model import Plan

ROOT = Path(__file__).resolve().parents[2]


def design_file(inventory: Path) -> Plan:
    from ffplan.design import design
    from ffplan.inventory import load_inventory

    return design(load_inventory(inventory))


@lru_cache(maxsize=4)
def designed(name: str) -> Plan:
    return design_file(ROOT / "inventories" / f"{name}.yaml")
