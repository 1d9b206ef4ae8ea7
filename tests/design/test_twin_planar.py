"""Twin-planar NICs (issue 23 item 2): a ConnectX-8 SuperNIC whose cage feeds two 400G planes (`planes: 2` on the
NIC model). Each plane's link is a PCI function and InfiniBand device of its own (0000:19:00.0 mlx5_0, .1 mlx5_1),
function f in plane f on its rail's leaf there; NCCL sees one card with a <net> per plane (as NCCL's own dumps of
such cards show, NVIDIA/nccl#2097); the host files check both; the card's links share its GUID and cage."""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from pathlib import Path

import pytest

from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.lint import lint_file
from ffplan.plan import dump_plan, load_plan
from ffplan.plan.exports import bom_rows, cables_csv
from ffplan.render import render_plan

TWIN = Path(__file__).parent / "inventories" / "twin-planar-1su.yaml"


@pytest.fixture(scope="module")
def plan():
    return design(load_inventory(TWIN))


@pytest.fixture(scope="module")
def files(plan):
    return render_plan(plan)


def test_the_inventory_lints_clean():
    """`planes` was refused by the schema, FF104 asked for one port per plane (16 on 2 planes refused) and FF304
    counted the two functions of one card as two x16 links."""
    assert [d.rule for d in lint_file(TWIN).diagnostics] == []


def test_each_function_lands_in_its_plane_on_its_rail_leaf(plan):
    for node in plan.nodes:
        assert len(node.ports) == 16
        for rail in range(8):
            a, b = (next(p for p in node.ports if p.nic == f"mlx5_{2 * rail + f}") for f in (0, 1))
            assert [(p.port, p.zone, p.leaf) for p in (a, b)] == [
                (1, "plane-a", f"plane-a-leaf{rail + 1:02d}"),
                (1, "plane-b", f"plane-b-leaf{rail + 1:02d}"),
            ]
            assert a.leaf_port == b.leaf_port  # the node's place in its scalable unit, in both planes
            assert a.sysimg_guid == b.sysimg_guid == a.port_guid  # one card, named by function 0
            assert int(b.port_guid, 16) == int(a.port_guid, 16) + 1


def test_one_card_is_two_cables_one_per_plane(plan):
    node_leaf = [c for c in plan.cables if c.kind == "node-leaf"]
    assert Counter(c.zone for c in node_leaf) == {"plane-a": 256, "plane-b": 256}
    cards = {(n.hostname, p.sysimg_guid) for n in plan.nodes for p in n.ports}
    assert len(cards) == 32 * 8 and len(node_leaf) == 2 * len(cards)


def test_the_plan_carries_the_planes_and_reads_back(plan, tmp_path):
    text = dump_plan(plan)
    assert "- {name: CX8-2x400, vendor_id: '0x02c9', device_id: '0x1023', planes: 2}" in text
    (tmp_path / "plan.yaml").write_text(text)
    assert dump_plan(load_plan(tmp_path / "plan.yaml")) == text


def test_nccl_sees_one_card_with_a_net_per_plane(files):
    topo = files["hosts/dgx-h100/topo.xml"]
    card = re.search(r'<pci busid="0000:19:00.0"[^>]*>\s*<nic>\s*((?:<net [^>]*>\s*)+)</nic>', topo)
    assert card and re.findall(r'name="([^"]+)"', card.group(1)) == ["mlx5_0", "mlx5_1"]
    assert "0000:19:00.1" not in topo  # NCCL names a NIC by function 0
    hca = re.search(r"^NCCL_IB_HCA=(.*)$", files["hosts/dgx-h100/nccl.conf"], re.M)
    # device:port:rail:plane (NCCL >= 2.30.7): card i is rail i, function f plane f; NCCL then never pairs two planes
    # (src/graph/search.cc ncclTopoSearchCheckNet), which the shared GUID and port 1 could not tell apart
    assert hca and hca.group(1) == "=" + ",".join(f"mlx5_{i}:1:{i // 2}:{i % 2}" for i in range(16))


def test_host_check_checks_both_functions(files):
    check = files["hosts/dgx-h100/host-check.sh"]
    assert re.search(r"dgx001\) plan_ports=\( mlx5_0 1 0x[0-9a-f]{16} \d+ placeholder '4X NDR' mlx5_1 1 ", check)


def test_every_cable_end_is_its_own_interface(plan):
    """NetBox takes one cable per interface: the two links of a card end on two devices (mlx5_0, mlx5_1)."""
    rows = list(csv.DictReader(io.StringIO(cables_csv(plan))))
    ends = Counter((r["side_a_device"], r["side_a_name"]) for r in rows) + Counter(
        (r["side_b_device"], r["side_b_name"]) for r in rows
    )
    assert max(ends.values()) == 1


def test_the_bom_counts_one_nic_transceiver_per_card(plan):
    """A card's two planes leave through its one cage: 256 twin-port transceivers for 512 links, not 512."""
    rows = {item: n for category, item, n, _ in bom_rows(plan) if category == "transceiver"}
    assert rows == {"NDR twin-port OSFP (switch)": 256, "NDR twin-port OSFP (multi-planar NIC)": 256}


def test_the_cost_report_counts_one_nic_two_cables(plan):
    """The plan's column: 512 node cables for 256 cards, and transceivers as bom.csv counts them (a card's two planes
    through one cage: 256 switch cages + 256 NIC cages), not one per link (768) or two per run (1,024)."""
    from ffplan.report import designs as d
    from ffplan.report.catalog import resolve_catalog
    from ffplan.report.cost import build_report

    report = build_report(plan, resolve_catalog(plan, "list-price"))
    own = next(r for r in report.designs if r.key == d.FIRE_FLYER)
    assert own.cables_by_kind["node-leaf"] == 512 and own.endpoints == 512
    assert own.transceivers == sum(n for category, _, n, _ in bom_rows(plan) if category == "transceiver") == 512
    assert "16 NIC ports per compute node on 8 multi-planar NICs" in own.description
