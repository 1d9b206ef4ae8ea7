"""The side-by-side measurement's counting, without a simulator: pattern flows per link and analyze's bound."""

from __future__ import annotations

from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.opensm import View, build_fabric
from ffplan.verify.expect import fabric_topo, planned_tables
from benchmarks.sidebyside import Load, Row, markdown, pattern_load, pattern_loads, plan_bound
from ffplan.verify.walk import walk_ca_pairs
from tests.routing.three_layer import SMALL


def _ports(fab, role=None):
    """The topology's (node GUID, port) keys of the CA ports of a role, found by port GUID."""
    topo = fabric_topo(fab)
    guids = {p.port_guid for ca in fab.cas for p in ca.ports if role in (None, ca.role)}
    return {gp for gp, g in topo.port_guid.items() if g in guids}


def test_pattern_b_is_the_walkers_all_to_all(lab_plan):
    fab = build_fabric(lab_plan)
    topo, tables = fabric_topo(fab), planned_tables(fab)
    load, lost = pattern_load(topo, tables, _ports(fab), _ports(fab))
    assert lost == 0
    # every CA pair's flow on every switch-to-switch link of its route: a route over h switches crosses h - 1 links
    hops = walk_ca_pairs(topo, tables).hops
    assert sum(load.values()) == sum((h - 1) * pairs for h, pairs in hops.items()) > 0
    # as analyze: no flow between two ports of one host (the lab's storage servers have two)
    host_of = {p.port_guid: ca.hostname for ca in fab.cas for p in ca.ports}
    host = {gp: host_of[g] for gp, g in topo.port_guid.items() if g in host_of}
    two_hosts, _ = pattern_load(topo, tables, _ports(fab), _ports(fab), host)
    assert sum(two_hosts.values()) < sum(load.values())
    loads = pattern_loads(topo, tables, fab)
    assert list(loads) == ["A", "B", "C"] and loads["B"].max == max(two_hosts.values())
    assert all(x.unreachable == 0 and x.bound > 0 for x in loads.values())
    # compute -> storage only: fewer flows, and a black hole is counted per pair lost
    leaf = next(s for s in fab.switches if s.name == "za-leaf02")
    elsewhere = {p.port_guid for ca in fab.cas for p in ca.ports if ca.role == "storage" and p.leaf != leaf.name}
    # a storage port on another leaf: only the compute ports of za-leaf02 lose it
    dst = min(gp for gp, g in topo.port_guid.items() if g in elsewhere)
    broken = {k: dict(v) for k, v in tables.items()}
    del broken[leaf.node_guid][topo.port_lid[dst]]
    _, lost = pattern_load(topo, broken, _ports(fab, "compute"), {dst})
    on_leaf = sum(1 for ca in fab.cas for p in ca.ports if p.leaf == leaf.name and ca.role == "compute")
    assert lost == on_leaf > 0


def _lids(fab, role=None):
    return {p.lid for ca in fab.cas for p in ca.ports if role in (None, ca.role)}


def test_bounds_of_a_fire_flyer_zone_are_analyzes(ff2_plan):
    """Zone z1: 40 leaves of 20 uplinks, 15 compute and 4-5 storage ports each (600 compute, 180 storage, 4
    management). analyze's bundle bound: a leaf's 15 compute ports send 585 bundles of 15 flows over 20 links."""
    fab = build_fabric(ff2_plan, View(zone="z1"))
    compute, storage, every = _lids(fab, "compute"), _lids(fab, "storage"), _lids(fab)
    assert plan_bound(fab, compute, compute) == (450, "links out of leaf z1-leaf01")  # 15 x ceil(585 / 20)
    assert plan_bound(fab, every, every)[0] == 780
    assert plan_bound(fab, compute, storage)[0] == 150
    # a dead uplink leaves 19 links at that leaf: its bound rises
    fab = build_fabric(ff2_plan, View(zone="z1", drop_cables=frozenset({"z1-leaf05-p21"})))
    assert plan_bound(fab, compute, compute) == (465, "links out of leaf z1-leaf05")  # 15 x ceil(585 / 19)


def test_bounds_of_a_three_layer_tree_have_the_pod_cuts():
    """The 8-port three-layer tree with 3 of its 4 cores down: a pod's ports reach the other pod over 4 spine-core
    links, above every leaf cut (25)."""
    plan = design(load_inventory(SMALL))
    every = _lids(build_fabric(plan))
    assert plan_bound(build_fabric(plan), every, every) == (25, "links out of leaf z1-leaf01")
    fab = build_fabric(plan, View(drop_switches=frozenset({"z1-core01", "z1-core02", "z1-core03"})))
    assert plan_bound(fab, every, every) == (64, "spine-core links out of pod 1 of zone z1")


def test_markdown_table():
    rows = [
        Row("intact", "ffplan", {p: Load(585, 439, 0) for p in "ABC"}),
        Row("intact", "ftree", error="no SUBNET UP"),
    ]
    text = markdown(rows)
    assert "| intact | ffplan | 585 (1.33) | 585 (1.33) | 585 (1.33) | 0 | 0 |" in text
    assert "|  | ftree | - | - | - | no SUBNET UP | |" in text
