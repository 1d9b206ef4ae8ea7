"""The side-by-side measurement's counting, without a simulator: pattern flows per link and the leaf-cut bound."""

from __future__ import annotations

from ffplan.render import opensm as R
from ffplan.verify.expect import fabric_topo, planned_tables
from ffplan.verify.sidebyside import Load, Row, leaf_cut_bound, markdown, pattern_load, pattern_loads
from ffplan.verify.walk import walk


def _ports(fab, role=None):
    """The topology's (node GUID, port) keys of the CA ports of a role, found by port GUID."""
    topo = fabric_topo(fab)
    guids = {p.port_guid for ca in fab.cas for p in ca.ports if role in (None, ca.role)}
    return {gp for gp, g in topo.port_guid.items() if g in guids}


def test_pattern_b_is_the_walkers_all_to_all(lab_plan):
    fab = R.build_fabric(lab_plan)
    topo, tables = fabric_topo(fab), planned_tables(fab)
    load, lost = pattern_load(topo, tables, _ports(fab), _ports(fab))
    assert lost == 0
    assert load == +walk(topo, tables).load  # the same flows on the same links (+ drops idle links)
    loads = pattern_loads(topo, tables, fab)
    assert list(loads) == ["A", "B", "C"] and loads["B"].max == max(load.values())
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


def test_leaf_cut_bounds_of_a_fire_flyer_zone(ff2_plan):
    """Zone z1: 40 leaves of 20 uplinks, 15 compute and 4-5 storage ports each (600 compute, 180 storage, 4 management)."""
    fab = R.build_fabric(ff2_plan, R.View(zone="z1"))
    topo = fabric_topo(fab)
    compute, storage, every = _ports(fab, "compute"), _ports(fab, "storage"), _ports(fab)
    assert leaf_cut_bound(topo, compute, compute) == 439  # ceil(15 x 585 / 20)
    assert leaf_cut_bound(topo, every, every) == 764  # ceil(20 x 764 / 20)
    assert leaf_cut_bound(topo, compute, storage) == 147  # ceil(585 x 5 / 20): storage incast into one leaf
    # a dead uplink leaves 19 links at that leaf: its bound rises
    fab = R.build_fabric(ff2_plan, R.View(zone="z1", drop_cables=frozenset({"z1-leaf05-p21"})))
    assert leaf_cut_bound(fabric_topo(fab), compute, compute) == 462  # ceil(15 x 585 / 19)


def test_markdown_table():
    rows = [Row("intact", "ffplan", {p: Load(585, 439, 0) for p in "ABC"}), Row("intact", "ftree", error="no SUBNET UP")]
    text = markdown(rows)
    assert "| intact | ffplan | 585 (1.33) | 585 (1.33) | 585 (1.33) | 0 | 0 |" in text
    assert "|  | ftree | - | - | - | no SUBNET UP | |" in text
