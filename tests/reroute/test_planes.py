"""`ffplan reroute` and `ffplan audit` on a plan with planes: each works on one plane (--plane), whose LFT file
and discovery hold that plane's switches and LIDs only; a plan with several planes without --plane, or an
unknown plane, is a usage error naming the planes."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ffplan.cli.main import app
from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.plan.io import dump_plan
from ffplan.render.opensm import render_opensm
from ffplan.fabric.lft import parse_lfts
from tests.opensm.test_render_planes import INVENTORY


@pytest.fixture(scope="module")
def planes(tmp_path_factory):
    plan = design(load_inventory(INVENTORY))
    folder = tmp_path_factory.mktemp("planes")
    (folder / "plan.yaml").write_text(dump_plan(plan))
    files = render_opensm(plan)
    for plane in plan.subnets:
        (folder / f"{plane}.net").write_text(files[f"opensm/{plane}/topology.net"])
    return plan, folder


def _run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_reroute_one_plane_writes_that_planes_tables(planes, tmp_path):
    plan, folder = planes
    uplink = next(c for c in plan.cables if c.zone == "p1" and c.kind == "leaf-spine")
    out = tmp_path / "lfts.dump"
    result = _run("reroute", str(folder), "--plane", "p1", "--failed", uplink.label, "-o", str(out), "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["failed"] == [uplink.label] and data["routes_changed"]["entries"] > 0
    assert data["unreachable"]["of_ca_pairs"] == 16 * 15  # the plane's 16 ports, not the 64 of all planes
    tables = parse_lfts(out.read_text()).tables
    assert set(tables) == {s.node_guid for s in plan.switches if s.zone == "p1"}


def test_reroute_from_one_planes_discovery(planes, tmp_path):
    _plan, folder = planes
    result = _run("reroute", str(folder), "--plane", "p2", "--fabric", str(folder / "p2.net"), "-o", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "failed: nothing" in result.output


@pytest.mark.parametrize("command", ["reroute", "audit"])
def test_a_plan_with_planes_needs_plane(planes, tmp_path, command):
    _plan, folder = planes
    args = (
        [command, str(folder), "--fabric", str(folder / "p0.net"), "-o", str(tmp_path)]
        if command == "reroute"
        else [command, str(folder), str(folder / "p0.net")]
    )
    result = _run(*args)
    assert result.exit_code == 2 and "FF910" in result.output and "p0, p1, p2, p3" in result.output
    result = _run(*args, "--plane", "p7")
    assert result.exit_code == 2 and "plane 'p7' is not in the plan" in result.output


def test_audit_compares_one_plane(planes):
    _plan, folder = planes
    result = _run("audit", str(folder), str(folder / "p3.net"), "--plane", "p3", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["planned_cables"] == 32 and data["findings"] == []  # 16 node cables + 16 uplinks of p3
    wrong = _run("audit", str(folder), str(folder / "p3.net"), "--plane", "p0")
    assert wrong.exit_code == 1 and "missing" in wrong.output
