"""ibsim at scale: a three-layer tree of 16-port switches (16 pods: 128 leaves, 128 spines, 64 cores = 320
switches, 1,024 CA ports, 3,072 links) boots in ibsim with the real OpenSM on ffplan's LFT file and passes every
verify check. 320 switches are past ibsim's compiled-in 256 (MAXNETSWITCHS): verify raises it with -S. The
tables are ffplan's own (the three-layer tree router)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml

from ffplan.verify.run import verify
from ffplan.verify.sim import IBSIM_MAX_SWITCHES
from tests.support.ibsim import write_rendered
from tests.support.plans import design_file

pytestmark = [pytest.mark.integration, pytest.mark.slow]
BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "ibsim_scale.py"


def _inventory(case: str) -> dict:
    spec = importlib.util.spec_from_file_location("ibsim_scale", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.inventory(case)


def test_three_layer_tree_of_1024_ca_ports_boots_on_ffplans_tables(sim_tools, tmp_path, no_leftovers):
    inv = tmp_path / "three-16.yaml"
    inv.write_text(yaml.safe_dump(_inventory("three-16"), sort_keys=False))
    plan = design_file(inv)
    assert len(plan.switches) == 320 > IBSIM_MAX_SWITCHES
    out = write_rendered(tmp_path / "out", plan)
    report = verify(out, timeout=300)
    assert report.ok, [(c.name, c.detail, c.items) for c in report.checks if c.status == "fail"]
    checks = {c.name: c.detail for c in report.checks}
    assert checks["LFTs installed == plan"] == "430080 entries on 320 switches; 0 differences"
    assert checks["cabling"].startswith("3072 links discovered, 3072 planned")
    assert checks["every CA pair reachable"].startswith("1047552/1047552")
    assert "core" in checks["SL2VL per port class"]
