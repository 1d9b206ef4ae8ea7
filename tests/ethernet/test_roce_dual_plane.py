"""inventories/roce-dual-plane.yaml against a hand count.

Hand count: 512 nodes x 8 NICs = 4,096 NIC ports; NICs 0, 2, 4, 6 in plane A and 1, 3, 5, 7 in plane B, so 2,048 a
plane. An SN5600 has 64 cages of 800G, split 2 x 400G: 128 ports; non-blocking, a leaf has 64 down and 64 up.
Per plane: 2,048 / 64 = 32 leaves; 32 x 64 = 2,048 uplinks over 128-port spines = 16 spines, each leaf with 64 / 16
= 4 links to each spine. Fabric: 64 leaves + 32 spines = 96 switches; 4,096 leaf-spine and 4,096 node-leaf cables.
BGP: a leaf has 64 sessions (4 to each of 16 spines), a spine 128 (4 to each of 32 leaves); 4,096 sessions.
ASNs: plane A's spines 4200000000, plane B's 4200000001; leaves 4200001000-4200001063, one each: 66 ASNs.
Addresses: 96 loopbacks 10.0.0.1-10.0.0.96; 4,096 link /31s in 10.1.0.0/16 (8,192 addresses, up to 10.1.31.255);
a leaf's 64 hosts take 128 addresses, a /25: 64 blocks in 10.128.0.0/16, 10.128.0.0/25 to 10.128.31.128/25.
ECMP: a leaf reaches the other 31 leaves of its plane over 64 next hops; a spine each of 32 leaves over 4.
"""

import ipaddress
from collections import Counter


def test_switches_per_tier(dual_plane_plan):
    tiers = Counter((sw.zone, sw.tier) for sw in dual_plane_plan.switches)
    assert tiers == {
        ("plane-a", "leaf"): 32,
        ("plane-a", "spine"): 16,
        ("plane-b", "leaf"): 32,
        ("plane-b", "spine"): 16,
    }
    assert {sw.ports for sw in dual_plane_plan.switches} == {128}
    eth = dual_plane_plan.ethernet
    assert (eth.link_gbps, eth.breakout, eth.asic) == (400, 2, "spectrum-4")
    assert len(eth.switches) == 96


def test_links(dual_plane_plan):
    kinds = Counter(c.kind for c in dual_plane_plan.cables)
    assert kinds == {"leaf-spine": 4096, "node-leaf": 4096}
    sessions = {sw.name: len(sw.neighbors) for sw in dual_plane_plan.ethernet.switches}
    assert {n for name, n in sessions.items() if "leaf" in name} == {64}
    assert {n for name, n in sessions.items() if "spine" in name} == {128}
    assert sum(sessions.values()) == 2 * 4096


def test_asns(dual_plane_plan):
    eth = dual_plane_plan.ethernet
    assert eth.spine_asns == {"plane-a": 4_200_000_000, "plane-b": 4_200_000_001}
    leaves = sorted(sw.asn for sw in eth.switches if "leaf" in sw.name)
    assert leaves == list(range(4_200_001_000, 4_200_001_064))
    assert {sw.asn for sw in eth.switches if "spine" in sw.name} == {4_200_000_000, 4_200_000_001}
    # every session's remote ASN is the neighbor's own
    asn = {sw.name: sw.asn for sw in eth.switches}
    assert all(n.asn == asn[n.name] for sw in eth.switches for n in sw.neighbors)


def test_addresses(dual_plane_plan):
    eth = dual_plane_plan.ethernet
    loopbacks = sorted(ipaddress.ip_interface(sw.loopback).ip for sw in eth.switches)
    assert loopbacks == [ipaddress.ip_address("10.0.0.1") + i for i in range(96)]
    links = [ipaddress.ip_interface(p.address) for sw in eth.switches for p in sw.ports if p.peer.startswith("plane-")]
    assert len(links) == 2 * 4096 and len({a.ip for a in links}) == 8192
    assert all(a in ipaddress.ip_network("10.1.0.0/19") for a in (link.ip for link in links))
    blocks = sorted(ipaddress.ip_network(sw.host_block) for sw in eth.switches if sw.host_block)
    assert len(blocks) == 64 and {b.prefixlen for b in blocks} == {25}
    assert blocks[0] == ipaddress.ip_network("10.128.0.0/25") and blocks[-1] == ipaddress.ip_network("10.128.31.128/25")
    hosts = [ipaddress.ip_interface(h.address) for h in eth.hosts]
    assert len(hosts) == 4096 and len({h.ip for h in hosts}) == 4096
    # each host's gateway is the other end of its /31, on its leaf's port
    ports = {(sw.name, p.peer, p.peer_port): p for sw in eth.switches for p in sw.ports}
    for h in eth.hosts[:64]:
        leaf_end = ports[(h.leaf, h.hostname, h.nic)]
        assert leaf_end.address == f"{h.gateway}/31" and leaf_end.peer_address == h.address.split("/")[0]
        assert ipaddress.ip_interface(h.address).network == ipaddress.ip_interface(leaf_end.address).network


def test_ecmp_next_hop_sets(dual_plane_plan):
    for sw in dual_plane_plan.ethernet.switches:
        if "leaf" in sw.name:
            (group,) = sw.ecmp
            assert len(group.destinations) == 31 and len(group.next_hops) == 64 and sw.maximum_paths == 64
            assert sw.name not in group.destinations
        else:
            assert len(sw.ecmp) == 32 and {len(g.next_hops) for g in sw.ecmp} == {4} and sw.maximum_paths == 4


def test_dual_plane_rails(dual_plane_plan):
    """NICs 0, 2, 4, 6 in plane A, 1, 3, 5, 7 in plane B; a leaf holds one rail (one NIC index) of 64 nodes."""
    node = dual_plane_plan.nodes[0]
    assert [(p.nic, p.zone) for p in node.ports] == [
        (f"mlx5_{i}", "plane-a" if i % 2 == 0 else "plane-b") for i in range(8)
    ]
    rails = {}
    for n in dual_plane_plan.nodes:
        for p in n.ports:
            rails.setdefault(p.leaf, set()).add(p.nic)
    assert {len(nics) for nics in rails.values()} == {1}


def test_nccl_settings_name_every_rail_and_cross_planes(dual_plane_plan):
    (profile,) = dual_plane_plan.ethernet.host_profiles
    settings = {s.name: s.value for s in profile.nccl}
    assert settings["NCCL_IB_HCA"] == "=" + ",".join(f"mlx5_{i}" for i in range(8))
    assert settings["NCCL_CROSS_NIC"] == "1" and settings["NCCL_IB_TC"] == "106"
    assert len(profile.hosts) == 512
