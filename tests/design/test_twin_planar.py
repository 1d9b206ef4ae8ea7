"""Twin-planar NICs (issue 23 item 2): a ConnectX-8 SuperNIC whose cage feeds two 400G planes (`planes: 2` on the
NIC model). Link k of every cage lands in the k-th plane, on its rail's leaf there; the host files list both links."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.lint import lint_file
from ffplan.render import render_plan

TWIN = Path(__file__).parent / "inventories" / "twin-planar-1su.yaml"


@pytest.fixture(scope="module")
def plan():
    return design(load_inventory(TWIN))


def test_the_inventory_lints_clean():
    """FF104 asked for one port per plane (16 links on 2 planes refused) and `planes` was refused by the schema."""
    assert [d.rule for d in lint_file(TWIN).diagnostics] == []


def test_each_link_of_a_cage_lands_in_its_plane_on_its_rail_leaf(plan):
    for node in plan.nodes:
        assert len(node.ports) == 16
        for rail in range(8):
            links = [p for p in node.ports if p.nic == f"mlx5_{rail}"]
            assert [(p.port, p.zone, p.leaf) for p in links] == [
                (1, "plane-a", f"plane-a-leaf{rail + 1:02d}"), (2, "plane-b", f"plane-b-leaf{rail + 1:02d}")]
            assert links[0].leaf_port == links[1].leaf_port  # the node's place in its scalable unit, in both planes
            assert links[0].sysimg_guid == links[1].sysimg_guid  # one card
            assert links[0].port_guid != links[1].port_guid


def test_one_card_is_two_cables_one_per_plane(plan):
    node_leaf = [c for c in plan.cables if c.kind == "node-leaf"]
    assert Counter(c.zone for c in node_leaf) == {"plane-a": 256, "plane-b": 256}
    cards = {(n.hostname, p.sysimg_guid) for n in plan.nodes for p in n.ports}
    assert len(cards) == 32 * 8 and len(node_leaf) == 2 * len(cards)


def test_host_files_check_and_use_both_links(plan):
    files = render_plan(plan)
    hca = re.search(r"^NCCL_IB_HCA=(.*)$", files["hosts/dgx-h100/nccl.conf"], re.M)
    assert hca and hca.group(1) == "=" + ",".join(f"mlx5_{i}:{p}" for i in range(8) for p in (1, 2))
    check = files["hosts/dgx-h100/host-check.sh"]
    assert re.search(r"mlx5_7 2 0x[0-9a-f]{16} \d+ placeholder '4X NDR'", check)
