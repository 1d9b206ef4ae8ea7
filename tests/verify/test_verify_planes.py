"""`ffplan verify` on a plan with planes: each plane's files (opensm/<plane>/) boot in ibsim with the real
OpenSM, one plane after another, each bound to the SM host's port in that plane, with a report per plane."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from ffplan.cli.main import app
from ffplan.design import design
from ffplan.inventory import load_inventory
from tests.support.ibsim import write_rendered
from tests.opensm.test_render_planes import INVENTORY, PLANES

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def planes_out(tmp_path_factory, sim_tools):
    return write_rendered(tmp_path_factory.mktemp("planes"), design(load_inventory(INVENTORY)))


def _json(args: list[str]) -> tuple[int, dict]:
    result = CliRunner().invoke(app, ["verify", *args, "--format", "json"])
    return result.exit_code, json.loads(result.stdout) if result.stdout.startswith("{") else {"output": result.output}


def test_every_plane_boots_and_passes(planes_out, no_leftovers):
    code, data = _json([str(planes_out)])
    assert code == 0, data
    assert data["ok"] is True and [r["subnet"] for r in data["subnets"]] == PLANES
    for plane, report in zip(PLANES, data["subnets"]):
        assert report["ok"], [c for c in report["checks"] if c["status"] == "fail"]
        assert f"opensm/{plane}" in report["source"]
        checks = {c["name"]: c for c in report["checks"]}
        # 4 leaves + 2 spines of the plane; 16 nodes with one port each in it
        assert checks["LFTs installed == plan"]["detail"].endswith("on 6 switches; 0 differences")
        assert checks["every CA pair reachable"]["detail"].startswith("240/240")
        assert checks["config effective (opensm.conf)"]["status"] == "pass"  # guid, log and dump paths of the plane


def test_one_plane_and_a_broken_plane(planes_out, tmp_path, no_leftovers):
    code, data = _json([str(planes_out), "--plane", "p2"])
    assert code == 0 and [r["subnet"] for r in data["subnets"]] == ["p2"]
    damaged = tmp_path / "damaged"
    shutil.copytree(planes_out, damaged)
    # plane p1 given plane p0's tables: p1's switches have no block, p0's are not in p1's fabric
    shutil.copyfile(damaged / "opensm" / "p0" / "lfts.dump", damaged / "opensm" / "p1" / "lfts.dump")
    code, data = _json([str(damaged)])
    assert code == 1
    assert {r["subnet"]: r["ok"] for r in data["subnets"]} == {"p0": True, "p1": False, "p2": True, "p3": True}


def test_unknown_plane_is_a_usage_error(planes_out):
    result = CliRunner().invoke(app, ["verify", str(planes_out), "--plane", "p9"])
    assert result.exit_code == 2
    assert "p0, p1, p2, p3" in result.output


def test_audit_of_one_planes_real_discovery(sim_tools, tmp_path, no_leftovers):
    """One plane booted, the real ibnetdiscover on it, `audit --plane`: a match. The plane runs at HDR here:
    Debian's ibsim 0.10 does not parse NDR (ibsim 0.12 does, commit 6f90798) and reports such links as 4xSDR."""
    from ffplan.plan.subnets import subnet_view
    from ffplan.opensm import build_fabric
    from ffplan.opensm.files import simulator_topology
    from tests.audit.test_audit_ibsim import discover

    hdr = tmp_path / "planes-hdr.yaml"
    hdr.write_text(INVENTORY.read_text().replace("speed: NDR", "speed: HDR"))
    plan = design(load_inventory(hdr))
    out = write_rendered(tmp_path / "out", plan)
    fab = build_fabric(subnet_view(plan, "p1"))
    (tmp_path / "p1.txt").write_text(discover(sim_tools, tmp_path / "sim", simulator_topology(fab), fab.sm_ca().id))
    result = CliRunner().invoke(app, ["audit", str(out), str(tmp_path / "p1.txt"), "--plane", "p1"])
    assert result.exit_code == 0, result.output
    assert "22 devices and 32 links found, 32 cables planned; the fabric matches the plan" in result.output


def test_one_plane_on_opensms_ftree(planes_out, no_leftovers):
    """The ftree variant of a plane without storage nodes: no io_guid_file (ftree refuses an empty one, AB29)."""
    code, data = _json([str(planes_out), "--plane", "p3", "--engine", "ftree"])
    assert code == 0, data
    checks = {c["name"]: c for c in data["subnets"][0]["checks"]}
    assert checks["OpenSM log: routing engine"]["status"] == "pass"


def test_zone_of_a_plane_verifies_that_plane(planes_out, no_leftovers):
    code, data = _json([str(planes_out), "--zone", "p1"])
    assert code == 0, data
    assert [r["subnet"] for r in data["subnets"]] == ["p1"]


@pytest.mark.slow
def test_a_twin_planar_plane_boots_and_passes(tmp_path_factory, sim_tools, no_leftovers):
    """Twin-planar NICs (tests/design/test_twin_planar.py): plane-b holds every card's function 1 (mlx5_1, ...), its
    port GUID the card's base + 1 and its system image GUID the card's; OpenSM routes it and every pair is reached."""
    from pathlib import Path

    twin = Path(__file__).resolve().parents[1] / "design" / "inventories" / "twin-planar-1su.yaml"
    out = write_rendered(tmp_path_factory.mktemp("twin"), design(load_inventory(twin)))
    code, data = _json([str(out), "--plane", "plane-b"])
    assert code == 0, data
    (report,) = data["subnets"]
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["cabling"]["detail"].startswith("512 links discovered, 512 planned; 0 missing, 0 unexpected")
    assert checks["every CA pair reachable"]["detail"].startswith("65280/65280")
