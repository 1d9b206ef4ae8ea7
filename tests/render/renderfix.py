"""Plans for the render tests, designed from the shipped inventories once per session.

While the designer does not yet fill routing or QoS, the OpenSM tests' stand-ins (tests/opensm/planfix.py)
complete the plan, and the host profiles are re-derived so their SLs come from that QoS plan. Once the
designer fills both, the real ones are used unchanged.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

from ffplan.design import design
from ffplan.design.hosts import design_hosts
from ffplan.inventory import load_inventory
from ffplan.plan.model import Plan

ROOT = Path(__file__).resolve().parents[2]


def _planfix():
    spec = importlib.util.spec_from_file_location("ffplan_tests_planfix", ROOT / "tests" / "opensm" / "planfix.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def complete(loaded, plan: Plan) -> Plan:
    """The plan with routing and QoS (stand-ins where the designer has none yet) and matching host profiles."""
    if plan.routing is not None and plan.qos is not None:
        return plan
    plan = _planfix().complete(plan)
    return plan.model_copy(update={"hosts": design_hosts(loaded, plan)})


def design_file(path: Path) -> Plan:
    loaded = load_inventory(path)
    return complete(loaded, design(loaded))


@lru_cache(maxsize=4)
def designed(name: str) -> Plan:
    return design_file(ROOT / "inventories" / f"{name}.yaml")
