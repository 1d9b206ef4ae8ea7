"""`--engine ftree`: OpenSM's own fat-tree engine on one Fire-Flyer 2 zone, next to ffplan's routes, intact
and with one leaf uplink out; and the message when the simulator tools are missing."""

from __future__ import annotations

import importlib.util

import pytest
from typer.testing import CliRunner

from ffplan.cli.main import app
from ffplan.verify.run import verify
from tests.support.ibsim import write_rendered
from tests.support.plans import designed

HAVE_ROUTING = importlib.util.find_spec("ffplan.design.routing") is not None


@pytest.mark.integration
def test_ftree_side_by_side_on_one_zone(ff2_out, no_leftovers):
    report = verify(ff2_out, zone="z1", engine="ftree")
    assert report.ok, [(c.name, c.detail, c.items) for c in report.checks if c.status == "fail"]
    rows = {(r["case"], r["routing"]): r for r in report.comparison if r["pattern"] == "all-to-all"}
    patterns = {r["pattern"] for r in report.comparison}
    if importlib.util.find_spec("ffplan.analyze") is not None:  # every traffic pattern of the analysis
        assert patterns >= {"all-to-all", "shift", "ring", "double-binary-tree", "storage-incast", "storage-read"}
    cases = sorted({case for case, _ in rows})
    assert cases[0] == "intact" and cases[1].startswith("without z1-leaf01-p")
    intact_ftree = rows[("intact", "OpenSM ftree")]
    failed_ftree = rows[(cases[1], "OpenSM ftree")]
    n = intact_ftree["reachable"].split("/")[1]
    assert intact_ftree["reachable"] == f"{n}/{n}" == failed_ftree["reachable"]
    # ftree moves the dead uplink's destinations onto one other uplink: its worst link gets busier
    assert failed_ftree["max flows/link"] > intact_ftree["max flows/link"]
    ours = rows[(cases[1], "ffplan")]
    if HAVE_ROUTING:
        assert ours["reachable"] == f"{n}/{n}"
        assert ours["max flows/link"] < failed_ftree["max flows/link"]
    print("\n" + "\n".join(str(r) for r in report.comparison))


def test_missing_tools_exit_2_naming_the_packages(monkeypatch, tmp_path):
    monkeypatch.setenv("FFPLAN_UMAD2SIM", str(tmp_path / "nowhere.so"))
    monkeypatch.setattr("ffplan.verify.sim.UMAD2SIM_CANDIDATES", ())
    rendered = write_rendered(tmp_path / "out", designed("lab"))  # a valid folder: the tools are what is missing
    result = CliRunner().invoke(app, ["verify", str(rendered)])
    assert result.exit_code == 2
    assert "opensm ibsim-utils infiniband-diags" in result.stderr
