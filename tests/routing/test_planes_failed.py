"""Failed items on a plan with planes: each is routed around in its own plane only; the other planes' tables stay."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ffplan.design import design
from ffplan.design.routing import route
from ffplan.inventory import load_inventory

PLANES = Path(__file__).parent / "inventories" / "planes-8.yaml"


def test_a_failed_spine_changes_only_its_planes_tables():
    plan = design(load_inventory(PLANES))
    assert plan.routing is not None
    failed = route(plan, ["p1-spine01", "p2-leaf01-p05"])
    before = {t.switch: t.ports for t in plan.routing.lfts}
    changed = {t.switch.split("-")[0] for t in failed.lfts if not np.array_equal(t.ports, before[t.switch])}
    assert changed == {"p1", "p2"}
    assert failed.failed == ["p1-spine01", "p2-leaf01-p05"]
    assert failed.check is not None and failed.check.unreachable_ca_pairs == 0
    to_spine01 = {(c.a.device, c.a.port) for c in plan.cables if c.b.device == "p1-spine01"}
    for t in failed.lfts:
        if t.switch.startswith("p1-leaf"):
            assert not any((t.switch, int(port)) in to_spine01 for port in np.unique(t.ports))
