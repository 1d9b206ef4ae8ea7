"""An oversubscribed RoCE Clos (tests/ethernet/inventories/roce-oversubscribed.yaml, `oversubscription: 3.0`)
against a hand count, beside the same inventory non-blocking.

Hand count at 3:1: an 8-port leaf splits its ports down:up = 3:1, floor(8 x 3 / 4) = 6 down and 2 up. 24 NIC ports
/ 6 = 4 leaves with 4 x 2 = 8 uplinks; the fewest spines whose 8 ports take them: 1, so 2 parallel links from each
leaf to it. Switches 4 + 1 = 5; cables 24 node-leaf + 8 leaf-spine. BGP: a leaf has 2 sessions, the spine 8. ECMP:
a leaf reaches the other 3 leaves over its 2 uplinks (maximum-paths 2); the spine each leaf over its 2 links.
Addresses: 5 loopbacks, 8 link /31s (16 addresses, 10.1.0.0/28); a leaf's 6 hosts take 12 addresses, rounded up to
16: a /28 per leaf, 10.2.0.0/28 to 10.2.0.48/28.
Non-blocking (1:1), the same 24 ports: 4 down and 4 up a leaf, 6 leaves, 24 uplinks; spines are the fewest that
divide a leaf's 4 uplinks evenly and take all 24 (3 does not divide 4): 4 spines, 10 switches.
"""

import ipaddress
from collections import Counter

import pytest

from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.render import render_plan

from tests.conftest import ROOT
from tests.ethernet.test_render import _dryrun, vtysh

INVENTORY = ROOT / "tests" / "ethernet" / "inventories" / "roce-oversubscribed.yaml"


@pytest.fixture(scope="module")
def plan():
    return design(load_inventory(INVENTORY))


def test_uplinks_per_leaf_follow_the_ratio(plan):
    (zone,) = plan.zones
    assert (zone.down_ports, zone.up_ports, zone.leaves, zone.spines, zone.links_per_leaf_spine) == (6, 2, 4, 1, 2)
    assert Counter(sw.tier for sw in plan.switches) == {"leaf": 4, "spine": 1}
    assert Counter(c.kind for c in plan.cables) == {"node-leaf": 24, "leaf-spine": 8}
    tiers = {sw.name: sw.tier for sw in plan.switches}
    for sw in plan.ethernet.switches:
        if tiers[sw.name] == "leaf":
            assert len(sw.neighbors) == 2 and sw.maximum_paths == 2
            (group,) = sw.ecmp
            assert len(group.destinations) == 3 and len(group.next_hops) == 2
            assert sum(1 for p in sw.ports if p.peer.startswith("gpu")) == 6
        else:
            assert len(sw.neighbors) == 8 and sw.maximum_paths == 2
            assert [len(g.next_hops) for g in sw.ecmp] == [2, 2, 2, 2]


def test_addresses(plan):
    eth = plan.ethernet
    links = {
        ipaddress.ip_interface(p.address).ip for sw in eth.switches for p in sw.ports if not p.peer.startswith("gpu")
    }
    assert links == set(ipaddress.ip_network("10.1.0.0/28"))
    blocks = sorted(ipaddress.ip_network(sw.host_block) for sw in eth.switches if sw.host_block)
    assert blocks == [ipaddress.ip_network(f"10.2.0.{16 * i}/28") for i in range(4)]


def test_non_blocking_needs_more_switches(tmp_path):
    path = tmp_path / "non-blocking.yaml"
    path.write_text(INVENTORY.read_text().replace("  oversubscription: 3.0\n", ""))
    (zone,) = design(load_inventory(path)).zones
    assert (zone.down_ports, zone.up_ports, zone.leaves, zone.spines) == (4, 4, 6, 4)


@vtysh
def test_frr_parses_the_oversubscribed_frr_confs(plan, tmp_path):
    for path, text in render_plan(plan).items():
        if path.endswith("frr.conf"):
            target = tmp_path / path.replace("/", "_")
            target.write_text(text)
            assert _dryrun(target).returncode == 0, path
