"""`ffplan analyze` per subnet: a plan with planes is analysed plane by plane (each its own subnet view), reported
per plane and as the worst plane; `--plane` picks one. The failure sweep too, and on three-layer trees it fails
spine-core cables and cores as well."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ffplan.cli.main import app
from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.plan import dump_plan
from tests.routing.three_layer import SMALL

PLANES = Path(__file__).parents[1] / "routing" / "inventories" / "planes-8.yaml"


@pytest.fixture(scope="module")
def planes_plan(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("planes") / "plan.yaml"
    path.write_text(dump_plan(design(load_inventory(PLANES))))
    return path


@pytest.fixture(scope="module")
def three_plan(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("three") / "plan.yaml"
    path.write_text(dump_plan(design(load_inventory(SMALL))))
    return path


def run(*args: str):
    return CliRunner().invoke(app, ["analyze", *args])


def test_every_plane_on_its_own_and_the_worst(planes_plan):
    result = run(str(planes_plan), "-p", "all-to-all", "-p", "shift", "-f", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [p["plane"] for p in data["planes"]] == ["p0", "p1", "p2", "p3"]
    for plane in data["planes"]:
        a2a = next(p for p in plane["patterns"] if p["pattern"] == "all-to-all")
        # one plane's 16 ports only (its own LIDs): 4 leaves x 4 ports, 12 flows on every uplink, the bound
        assert a2a["flows"] == 16 * 15 and a2a["max_load"] == a2a["bound"] == 12
        assert plane["route_check"]["unreachable_ca_pairs"] == 0
        assert all(link["link"].startswith(plane["plane"] + "-") for link in a2a["top"])
    worst = {p["pattern"]: p for p in data["worst"]["patterns"]}
    assert worst["all-to-all"]["max_load"] == 12 and worst["shift"]["ratio"] == 1.0
    assert data["worst"]["route_check"]["unreachable_ca_pairs"] == 0


def test_one_plane(planes_plan):
    result = run(str(planes_plan), "--plane", "p2", "-p", "all-to-all")
    assert result.exit_code == 0, result.output
    assert "plane p2" in result.stdout and "plane p1" not in result.stdout
    assert "p2-leaf01" in result.stdout and "p0-leaf" not in result.stdout


def test_an_unknown_plane_is_refused(planes_plan):
    result = run(str(planes_plan), "--plane", "p9")
    assert result.exit_code == 2
    assert "no plane 'p9'" in result.output and "p0, p1, p2, p3" in result.output


def test_an_opensm_dump_needs_its_plane(planes_plan, tmp_path):
    dump = tmp_path / "lfts.txt"
    dump.write_text("")
    result = run(str(planes_plan), "--lfts", str(dump))
    assert result.exit_code == 2 and "--plane" in result.output


def test_the_sweep_runs_per_plane(planes_plan):
    result = run(str(planes_plan), "--sweep", "--plane", "p1", "-f", "json", "-j", "1")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    [plane] = data["planes"]
    assert plane["plane"] == "p1"
    assert all(c["failed"][0].startswith("p1-") for c in plane["cases"])
    assert plane["intact"]["patterns"]["B"]["max"] == 12


def test_the_sweep_of_a_three_layer_tree_fails_cores_and_spine_core_cables(three_plan):
    result = run(str(three_plan), "--sweep", "-f", "json", "-j", "1")
    assert result.exit_code == 0, result.output  # every case deadlock-free, nothing unreachable
    data = json.loads(result.stdout)
    kinds = {c["case"].split()[0] for c in data["cases"]}
    assert kinds == {"cable", "spine", "core"}
    assert any("-spine01-p05" in c["case"] for c in data["cases"])  # a spine-core cable
    assert data["summary"]["core"]["cases"] == 4
    assert all(
        c["unreachable_ca_pairs"] == c["unreachable_switch_lids"] == 0 and c["deadlock_free"] for c in data["cases"]
    )
