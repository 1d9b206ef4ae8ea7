"""Routing of sparsely filled leaves (ffplan.design.routing.tree): a destination on a leaf with fewer CA ports than
uplinks also owns the leaf's unused slots, and source leaves spread its traffic over them. The 4-plane synthetic of
32-port switches filled to 141 of 512 ports per plane (benchmarks/synth.py): d-mod-k brought a destination's whole
incoming traffic down one spine-to-leaf link (137 flows against the bound 45). And the 8-port three-layer lab tree
with 5 of its 8 nodes, 3 per rack (4 leaves of one CA port each: 16 flows against the bound 13)."""

from __future__ import annotations

import pytest

from benchmarks.synth import make_inventory
from ffplan.analyze import analyze
from ffplan.design import design
from ffplan.design.routing import ZoneRouter, route
from ffplan.inventory import load_inventory
from ffplan.plan.subnets import subnet_view
from ffplan.plan.topology import build_topology
from tests.routing.failures import assert_only_affected_moved
from tests.routing.three_layer import SMALL


@pytest.fixture(scope="module")
def plane(tmp_path_factory):
    path = tmp_path_factory.mktemp("sparse") / "sparse.yaml"
    path.write_text(make_inventory("s", 4, 32, 400, 40, 4, planes=True))
    return subnet_view(design(load_inventory(path)), "z1")


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    path = tmp_path_factory.mktemp("sparse") / "three-layer-8-sparse.yaml"
    path.write_text(SMALL.read_text().replace("count: 8,", "count: 5,").replace("per_rack: 4", "per_rack: 3"))
    return design(load_inventory(path))


def test_the_plane_is_sparse(plane):
    topo = build_topology(plane)
    assert len(topo.ca_by_lid) == 141 and len(topo.leaves["z1"]) == 32
    assert max(len(topo.cas[leaf]) for leaf in topo.leaves["z1"]) < len(topo.uplinks["z1-leaf01"]) == 16


def test_all_to_all_nearly_reaches_the_bound(plane):
    a2a = analyze(plane, ["all-to-all"])[0]
    assert a2a.unroutable == 0 and a2a.bound == 45
    # a destination owning 3 of its leaf's 16 slots takes 136 flows over 3 links: 46 at least; measured 48
    assert a2a.max_load <= 48, a2a.max_load
    two_layer = analyze(plane, ["all-to-all"], tables=ZoneRouter(build_topology(plane)).tables().tables)[0]
    assert two_layer.max_load == 137  # d-mod-k: one slot per destination


def test_the_sparse_three_layer_tree_reaches_the_bound(tree):
    topo = build_topology(tree)
    assert tree.zones[0].layers == 3 and len(topo.ca_by_lid) == 20
    assert min(len(topo.cas[leaf]) for leaf in topo.leaves["z1"]) < len(topo.uplinks["z1-leaf01"])
    a2a = analyze(tree, ["all-to-all"])[0]
    assert a2a.unroutable == 0 and a2a.max_load == a2a.bound == 13  # one slot per destination: 16


@pytest.mark.parametrize("name", ["plane", "tree"])
def test_routes_are_shortest_up_down_and_deadlock_free(name, request):
    r = request.getfixturevalue(name).routing
    assert r.deadlock.acyclic and r.deadlock.valley_turns == 0
    assert r.check.ca_pair_detours == r.check.switch_to_ca_detours == 0
    assert r.check.unreachable_ca_pairs == r.check.unreachable_switch_to_ca == r.check.unreachable_switch_lids == 0


def test_one_destination_comes_down_several_spines(plane):
    """Different source leaves reach one CA port through different spines (each leaf's LFT entry is its own)."""
    topo = build_topology(plane)
    table = {t.switch: t.ports for t in plane.routing.lfts}
    lid, ca = min(topo.ca_by_lid.items())
    spines = {topo.peer[(leaf, int(table[leaf][lid]))][1][0] for leaf in topo.leaves["z1"] if leaf != ca.leaf}
    assert len(spines) > 1


@pytest.mark.parametrize(
    "name, failed, repaired_max",
    [
        ("plane", ["z1-leaf01-p17"], None),
        ("plane", ["z1-spine01"], None),
        ("tree", ["z1-leaf01-p05"], None),
        ("tree", ["z1-spine01-p05"], None),
        ("tree", ["z1-spine02"], None),
        ("tree", ["z1-core02"], 17),
    ],
)
def test_failures_move_only_affected_routes(name, failed, repaired_max, request):
    """Only what a failure breaks moves; after a core failure the rebalance also moves healthy routes, because that
    lowers all-to-all's maximum (17 after the minimal repair, 14 rebalanced, bound 13); the spine-core cable's case
    is at the bound already (13), so nothing healthy moves there."""
    plan = request.getfixturevalue(name)
    routing = route(plan, failed)
    check = routing.check
    assert routing.deadlock.acyclic
    assert check.unreachable_ca_pairs == check.unreachable_switch_to_ca == check.unreachable_switch_lids == 0
    assert check.ca_pair_detours == 0
    assert_only_affected_moved(plan, routing, failed, repaired_max)
