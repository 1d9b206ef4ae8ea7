"""The three-layer tree router's tables in the real OpenSM: the small 8-port tree (2 pods, 4 cores, 32 CA ports)
boots in ibsim with OpenSM's file engine, and the tables dump_fts reads back are the plan's, every CA pair and
switch LID reachable over them."""

from __future__ import annotations

import pytest

from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.verify.run import verify
from tests.support.ibsim import write_rendered
from tests.routing.three_layer import SMALL

pytestmark = pytest.mark.integration


def test_three_layer_tree_passes_in_opensm(tmp_path, sim_tools, no_leftovers):
    plan = design(load_inventory(SMALL))
    report = verify(write_rendered(tmp_path / "three", plan))
    assert report.ok, [(c.name, c.detail, c.items) for c in report.checks if c.status == "fail"]
    detail = {c.name: c.detail for c in report.checks}
    assert "0 differences" in detail["LFTs installed == plan"]
    assert detail["every CA pair reachable"].startswith("992/992")
    assert "file tables configured" in detail["OpenSM log: routing engine"]
