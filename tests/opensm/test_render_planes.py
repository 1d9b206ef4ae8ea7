"""The OpenSM files of a plan with planes: one configuration per subnet under opensm/<plane>/, each built from
that plane's view alone (its switches, its CA ports, its LIDs) and bound to the SM host's port in that plane,
plus a README naming which SM host runs which plane's OpenSM. Golden: tests/opensm/golden/planes-lab.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.plan.subnets import subnet_view
from ffplan.opensm.layout import (
    CN_GUIDS,
    CONF,
    FTREE_CONF,
    GUID2LID,
    IO_GUIDS,
    LFTS,
    NODE_NAME_MAP,
    PARTITIONS,
    QOS_POLICY,
    ROOT_GUIDS,
    TOPOLOGY,
)
from ffplan.render.opensm import render_opensm
from ffplan.fabric.lft import parse_lfts
from ffplan.verify import parse as P
from tests.goldens import assert_golden_folder

HERE = Path(__file__).resolve().parent
INVENTORY = HERE.parent / "golden" / "inventories" / "planes-lab.yaml"
PLANES = ["p0", "p1", "p2", "p3"]


@pytest.fixture(scope="module")
def planes_plan():
    return design(load_inventory(INVENTORY))


@pytest.fixture(scope="module")
def planes_files(planes_plan):
    return render_opensm(planes_plan, "/etc/opensm")


def test_planes_opensm_files_match_golden(planes_files, update_golden):
    assert_golden_folder(HERE / "golden" / "planes-lab", planes_files, update_golden, "OpenSM files per plane")


def test_one_folder_per_plane_and_a_readme(planes_plan, planes_files):
    assert planes_plan.subnets == PLANES
    names = {
        CONF,
        FTREE_CONF,
        LFTS,
        GUID2LID,
        QOS_POLICY,
        PARTITIONS,
        ROOT_GUIDS,
        CN_GUIDS,
        IO_GUIDS,
        TOPOLOGY,
        NODE_NAME_MAP,
    }
    assert set(planes_files) == {f"opensm/{p}/{n}" for p in PLANES for n in names} | {"opensm/README.md"}


@pytest.mark.parametrize("plane", PLANES)
def test_each_plane_holds_only_its_own_subnet(planes_plan, planes_files, plane):
    view = subnet_view(planes_plan, plane)
    switch_guids = {s.node_guid for s in view.switches}
    port_guids = {p.port_guid for n in view.nodes for p in n.ports}
    assert switch_guids and all(s.zone == plane for s in view.switches)
    lfts = parse_lfts(planes_files[f"opensm/{plane}/lfts.dump"])
    assert set(lfts.tables) == switch_guids
    planned_lids = {s.lid for s in view.switches} | {p.lid for n in view.nodes for p in n.ports}
    for table in lfts.tables.values():
        assert set(table) == planned_lids  # this plane's LIDs only: each plane numbers its ports from 1
    guid2lid = {line.split()[0] for line in planes_files[f"opensm/{plane}/guid2lid"].splitlines() if line.strip()}
    assert guid2lid == switch_guids | port_guids
    roots = {
        line.split()[0] for line in planes_files[f"opensm/{plane}/root_guids.txt"].splitlines() if line.startswith("0x")
    }
    assert roots == {s.node_guid for s in view.switches if s.tier == "spine"}
    cns = {
        line.split()[0] for line in planes_files[f"opensm/{plane}/cn_guids.txt"].splitlines() if line.startswith("0x")
    }
    assert cns == port_guids  # every node of the lab is compute


@pytest.mark.parametrize("plane", PLANES)
def test_each_plane_binds_its_own_sm_port_with_its_own_paths(planes_plan, planes_files, plane):
    master = planes_plan.sm_hosts[0]
    sm_port = next(p for n in planes_plan.nodes if n.hostname == master for p in n.ports if p.zone == plane)
    for conf_name in (CONF, FTREE_CONF):
        conf = P.parse_conf(planes_files[f"opensm/{plane}/{conf_name}"])
        assert conf["guid"] == sm_port.port_guid
        assert conf["log_file"] == f"/var/log/opensm-{plane}.log"
        assert conf["dump_files_dir"] == f"/var/log/opensm-{plane}"
        for key in ("qos_policy_file", "partition_config_file", "node_name_map_name"):
            assert conf[key].startswith(f"/etc/opensm/{plane}/"), key
    assert P.parse_conf(planes_files[f"opensm/{plane}/{CONF}"])["lfts_file"] == f"/etc/opensm/{plane}/lfts.dump"
    readme = planes_files["opensm/README.md"]
    assert f"OSM_CACHE_DIR=/var/cache/opensm/{plane} opensm -F /etc/opensm/{plane}/opensm.conf -B" in readme
    standby = planes_plan.sm_hosts[1]
    standby_port = next(p for n in planes_plan.nodes if n.hostname == standby for p in n.ports if p.zone == plane)
    assert f"-g {standby_port.port_guid} -B" in readme


def test_single_subnet_plan_keeps_one_folder_without_guid(lab_plan):
    files = render_opensm(lab_plan, "/etc/opensm")
    assert "opensm/README.md" not in files and "opensm/opensm.conf" in files
    assert "guid" not in P.parse_conf(files["opensm/opensm.conf"])
