"""`speed: XDR` (800 Gb/s, Quantum-X800 / ConnectX-8) is accepted (it was FF012) and every file says XDR: the
fabric's topology.net (what ibnetdiscover prints), host-check.sh (the sysfs rate) and the IPoIB group's rate."""

from __future__ import annotations

from pathlib import Path

from ffplan.lint import lint_file
from ffplan.opensm.files import ipoib_rate
from ffplan.render.hosts import render_hosts
from ffplan.render.opensm import render_opensm
from tests.support.plans import design_file

XDR_144 = Path(__file__).parents[1] / "verify" / "inventories" / "xdr-144.yaml"


def test_xdr_lints_clean_and_renders_xdr_rates():
    assert [d.rule for d in lint_file(XDR_144).diagnostics] == ["FF112"]  # info: what verify cannot check
    plan = design_file(XDR_144)
    files = render_opensm(plan)
    topology = files["opensm/topology.net"]
    assert "4xXDR" in topology and "4xNDR" not in topology
    assert ipoib_rate(plan) == (800, 23) and "rate=23" in files["opensm/partitions.conf"]
    check = next(text for name, text in render_hosts(plan).items() if name.endswith("host-check.sh"))
    assert "'4X XDR'" in check and "4X NDR" not in check
