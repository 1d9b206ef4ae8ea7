"""inventories/roce-hpn-dual-tor.yaml (Alibaba HPN-like non-stacked dual-ToR, dual-plane) against a hand count.

Hand count: 256 nodes x 8 dual-port cards = 2,048 cards, 4,096 links (PCI functions): function 0 of every card in
plane A, function 1 in plane B, 2,048 a plane. An SN5600 has 64 cages of 800G, split 4 x 200G: 256 ports;
non-blocking, a leaf has 128 down and 128 up. Rail-optimized: a segment is 128 nodes (a leaf's down-ports), its
rail-k functions on one leaf a plane: 8 leaves a plane a segment, 2 segments, so 16 leaves a plane. Uplinks: 16 x
128 = 2,048 a plane; spines are the fewest that divide 128 and take them: 2,048 / 256 = 8, 16 links from each leaf
to each spine. Fabric: 32 leaves + 16 spines = 48 switches; 4,096 node-leaf and 4,096 leaf-spine cables.
BGP: a leaf has 128 sessions (16 to each of 8 spines), a spine 256 (16 to each of 16 leaves); 4,096 sessions.
ASNs: plane A's spines 4200000000, plane B's 4200000001; leaves 4200001000-4200001031: 34 ASNs.
Addresses: 48 loopbacks 10.0.0.1-10.0.0.48; 4,096 link /31s (8,192 addresses, 10.1.0.0/19); a leaf's 128 hosts
take 256 addresses, a /24: 32 blocks 10.128.0.0/24 to 10.128.31.0/24; 4,096 host /31s.
Dual-ToR: each card's two functions sit on two leaves (one per plane, the same rail), no cable joins two leaves.
ECMP: a leaf reaches the other 15 leaves of its plane over 128 next hops; a spine each of 16 leaves over 16.
"""

import ipaddress
from collections import Counter, defaultdict

import pytest

from ffplan.design import design
from ffplan.inventory import load_inventory

from tests.conftest import ROOT


@pytest.fixture(scope="module")
def plan():
    return design(load_inventory(ROOT / "inventories" / "roce-hpn-dual-tor.yaml"))


def test_switches_and_cables(plan):
    assert Counter((sw.zone, sw.tier) for sw in plan.switches) == {
        ("plane-a", "leaf"): 16,
        ("plane-a", "spine"): 8,
        ("plane-b", "leaf"): 16,
        ("plane-b", "spine"): 8,
    }
    assert {sw.ports for sw in plan.switches} == {256}
    assert (plan.ethernet.link_gbps, plan.ethernet.breakout) == (200, 4)
    assert Counter(c.kind for c in plan.cables) == {"node-leaf": 4096, "leaf-spine": 4096}
    assert {z.links_per_leaf_spine for z in plan.zones} == {16}


def test_every_card_on_two_independent_tors(plan):
    tors = defaultdict(list)  # (host, card) -> its functions' (plane, leaf)
    for node in plan.nodes:
        for p in node.ports:
            tors[(node.hostname, p.sysimg_guid)].append((p.zone, p.leaf))
    assert len(tors) == 2048
    for ends in tors.values():
        assert [zone for zone, _ in ends] == ["plane-a", "plane-b"]
        assert ends[0][1].removeprefix("plane-a-") == ends[1][1].removeprefix("plane-b-")  # the same rail's ToR
    leaves = {sw.name for sw in plan.switches if sw.tier == "leaf"}
    assert not [c for c in plan.cables if c.a.device in leaves and c.b.device in leaves]  # no ToR-to-ToR link
    node = plan.nodes[0]
    leaf_of = {p.nic: p.leaf for p in node.ports}
    assert [leaf_of[f"mlx5_{i}"] for i in range(4)] == [
        "plane-a-leaf01",
        "plane-b-leaf01",
        "plane-a-leaf02",
        "plane-b-leaf02",
    ]


def test_sessions_and_asns(plan):
    eth = plan.ethernet
    assert eth.spine_asns == {"plane-a": 4_200_000_000, "plane-b": 4_200_000_001}
    leaves = [sw for sw in eth.switches if "leaf" in sw.name]
    spines = [sw for sw in eth.switches if "spine" in sw.name]
    assert sorted(sw.asn for sw in leaves) == list(range(4_200_001_000, 4_200_001_032))
    assert {sw.asn for sw in spines} == {4_200_000_000, 4_200_000_001}
    assert {len(sw.neighbors) for sw in leaves} == {128} and {len(sw.neighbors) for sw in spines} == {256}


def test_addresses(plan):
    eth = plan.ethernet
    assert sorted(ipaddress.ip_interface(sw.loopback).ip for sw in eth.switches) == [
        ipaddress.ip_address("10.0.0.1") + i for i in range(48)
    ]
    links = {
        ipaddress.ip_interface(p.address).ip for sw in eth.switches for p in sw.ports if p.peer.startswith("plane-")
    }
    assert links == set(ipaddress.ip_network("10.1.0.0/19"))
    blocks = sorted(ipaddress.ip_network(sw.host_block) for sw in eth.switches if sw.host_block)
    assert blocks == [ipaddress.ip_network(f"10.128.{i}.0/24") for i in range(32)]
    hosts = [ipaddress.ip_interface(h.address) for h in eth.hosts]
    assert len(hosts) == 4096 and len({h.ip for h in hosts}) == 4096
    first = [h for h in eth.hosts if h.hostname == "gpu0001"]
    assert [h.table for h in first] == list(range(101, 117))  # both links of every card active, a table each


def test_ecmp(plan):
    for sw in plan.ethernet.switches:
        if "leaf" in sw.name:
            (group,) = sw.ecmp
            assert len(group.destinations) == 15 and len(group.next_hops) == 128 and sw.maximum_paths == 128
        else:
            assert len(sw.ecmp) == 16 and {len(g.next_hops) for g in sw.ecmp} == {16} and sw.maximum_paths == 16
