"""Exports of a plan with planes and of a three-layer tree: golden files for planes-lab (Slurm topology with the
first plane standing for all, Ansible with each host's NIC per plane, NetBox with every NIC an interface and the
cables of every plane, a diagram per plane, the BOM), and what a three-layer tree adds (core switches in NetBox and
in the BOM, spine-core cables, cores as ftree's roots)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.opensm.files import opensm_files
from ffplan.opensm.layout import ROOT_GUIDS
from ffplan.render.exports import render_exports
from ffplan.render.netbox import netbox_files
from tests.goldens import assert_golden_folder
from tests.support.plans import design_file

INVENTORIES = Path(__file__).resolve().parents[1] / "golden" / "inventories"
GOLDEN = Path(__file__).resolve().parent / "golden" / "planes-lab"


@pytest.fixture(scope="module")
def planes_plan():
    return design(load_inventory(INVENTORIES / "planes-lab.yaml"))


@pytest.fixture(scope="module")
def three_plan():
    return design_file(INVENTORIES / "three-lab.yaml")


def test_planes_exports_match_golden(planes_plan, update_golden):
    assert_golden_folder(GOLDEN, render_exports(planes_plan), update_golden, "exports of planes-lab")


def test_slurm_lists_each_node_once_with_the_first_plane_for_all(planes_plan):
    text = render_exports(planes_plan)["exports/topology.conf"]
    lines = [ln for ln in text.splitlines() if ln.startswith("SwitchName=")]
    assert all(ln.startswith(("SwitchName=p0-", "SwitchName=p0 ")) for ln in lines)
    assert "plane p0 stands for all of them" in text


def test_ansible_names_each_planes_nic(planes_plan):
    hosts = yaml.safe_load(render_exports(planes_plan)["exports/ansible-inventory.yaml"])["all"]["hosts"]
    assert hosts["gpu07"]["ffplan_plane_nics"] == {"p0": "mlx5_0", "p1": "mlx5_1", "p2": "mlx5_2", "p3": "mlx5_3"}


def test_netbox_has_every_nic_and_every_planes_cables(planes_plan):
    files = netbox_files(planes_plan)
    interfaces = files["interfaces.csv"].splitlines()[1:]
    assert len(interfaces) == 16 * 4
    cables = files["cables.csv"]
    for plane in ("p0", "p1", "p2", "p3"):
        assert cables.count(f"zone {plane}") == 32  # 16 node cables and 16 uplinks per plane
    files = render_exports(planes_plan)
    assert {f"exports/diagram-{p}.svg" for p in ("p0", "p1", "p2", "p3")} <= set(files)


def test_three_layer_tree_adds_cores(three_plan):
    files = netbox_files(three_plan)
    assert "InfiniBand core" in files["device-roles.csv"]
    assert sum(1 for ln in files["devices.csv"].splitlines() if ",InfiniBand core," in ln) == 4
    assert sum(1 for c in three_plan.cables if c.kind == "spine-core") == 32
    assert files["cables.csv"].count("ffplan spine-core") == 32
    bom = render_exports(three_plan)["exports/bom.csv"]
    assert '"core 4, leaf 8, spine 8"' in bom
    roots = [ln.split()[1] for ln in opensm_files(three_plan)[ROOT_GUIDS].splitlines() if ln.startswith("0x")]
    assert roots == [f"z1-core0{i}" for i in range(1, 5)]


def test_three_layer_diagrams_draw_the_cores(three_plan):
    from ffplan.render.diagrams import render_diagrams

    files = render_diagrams(three_plan)
    diagram = files["exports/diagram-z1.svg"]
    assert "4 cores, 8 spines, 8 leaves" in diagram
    assert all(f"z1-core0{i} (U" in diagram for i in range(1, 5))  # a cell per core, named on hover
    assert "32 spine-core links" in diagram and "every spine of its pod (2 pods)" in diagram
    elevation = files["exports/elevation-z1.svg"]
    assert "z1-core01" in elevation  # the core racks are drawn with the others
