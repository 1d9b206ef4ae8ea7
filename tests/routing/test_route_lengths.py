"""The array route lengths (fabric.walk.route_lengths) against the walk they replace, and the tree router's
shortcuts that use them: each must give what the slower path gave, entry for entry."""

from __future__ import annotations

import dataclasses
import networkx as nx
import numpy as np
import pytest

from ffplan.analyze import plan_tables, topology_for
from ffplan.design import design
from ffplan.design.routing.dispatch import router_for
from ffplan.design.routing.tree import TreeCase
from ffplan.fabric.arrays import MAX_HOPS, Channels, table_array
from ffplan.fabric.deadlock import Dependencies, channel_dependencies, switch_route_loops
from ffplan.fabric.reach import RouteCounts, check_routes
from ffplan.fabric.walk import in_trees, route_lengths, walk
from ffplan.inventory import load_inventory
from ffplan.plan.model import UNROUTED, RouteCheck
from tests.routing.three_layer import SMALL


@pytest.fixture(scope="module")
def tree():
    return design(load_inventory(SMALL))


def _damage(lft: np.ndarray, fraction: float, seed: int) -> None:
    """Random ports in about `fraction` of the entries: dead ends, wrong CAs, loops."""
    rng = np.random.default_rng(seed)
    hit = rng.random(lft.shape) < fraction
    lft[hit] = rng.integers(0, 256, int(hit.sum()))


def _routed_and_damaged(tree, failed: list[str], damaged: float, seed: int):
    """(topology, channels, tables) of the tree routed around `failed`, with random ports in `damaged` of them."""
    rt = router_for(tree).tables(failed)
    lft = table_array(rt.topo, rt.tables)
    _damage(lft, damaged, seed)
    return rt.topo, Channels(rt.topo), lft


@pytest.mark.parametrize("damaged", [0.0, 0.05, 0.3])
def test_route_lengths_equal_the_walk_from_every_switch(tree, damaged):
    """Also over tables with random ports (dead ends, wrong CAs, loops): -1 wherever the walk does not arrive."""
    topo = topology_for(tree)
    ch = Channels(topo)
    lft = table_array(topo, plan_tables(tree))
    _damage(lft, damaged, seed=7)
    n, width = lft.shape
    w = walk(ch, lft, np.repeat(np.arange(n), width), np.tile(np.arange(width), n))
    expected = np.where(w.reached, w.links, -1).reshape(n, width)
    got = route_lengths(ch, lft, (ch.dest_switch[:width], ch.dest_port[:width]))
    assert got.dtype == np.int8
    assert (got == expected).all()
    assert (got >= 0).any() and ((got < 0).any() or not damaged)


@pytest.mark.parametrize(
    "failed", [["z1-core01"], ["z1-spine01"], ["z1-spine01-p05", "z1-leaf02-p06"], ["z1-leaf01-p01"]]
)
def test_a_case_needs_only_the_intact_switch_columns(tree, failed):
    """A failure case built from the intact switch-LID columns alone equals the one built after the whole intact case
    (what every case did before)."""
    fresh, warm = router_for(tree), router_for(tree)
    intact = warm.case([])
    assert (fresh.intact_switch_columns() == intact.lft[:, fresh.switch_lids[fresh.switch_targets]]).all()
    a, b = fresh.case(failed), warm.case(failed)
    assert (a.lft == b.lft).all() and (a.grown == b.grown).all() and (a.loose == b.loose).all()


@pytest.mark.parametrize("seed", range(6))
def test_a_cases_channels_from_the_intact_ones_equal_channels_built_anew(tree, seed):
    """Channels.of_case (the intact channels less the failed cables and switches) numbers the alive links as
    Channels(topo) does: random failed switches and cables of every kind (CA cables too)."""
    topo = topology_for(tree)
    rng = np.random.default_rng(seed)
    labels, switches = sorted(topo.by_label), sorted(topo.lid)
    failed = {
        "failed_cables": set(rng.choice(labels, int(rng.integers(0, 12)), replace=False).tolist()),
        "failed_switches": set(rng.choice(switches, int(rng.integers(0, 3)), replace=False).tolist()),
    }
    case = dataclasses.replace(topo, **failed)
    got, expected = Channels(topo).of_case(case), Channels(case)
    assert got.ends == expected.ends and got.switches == expected.switches
    for name in ["next", "chan", "peer_of", "src_of", "port_of", "alive", "dest_switch", "dest_port", "sources"]:
        assert np.array_equal(getattr(got, name), getattr(expected, name)), name


@pytest.mark.parametrize("failed", [[], ["z1-core01"], ["z1-spine01-p05", "z1-leaf02-p06"]])
@pytest.mark.parametrize("damaged", [0.0, 0.02, 0.3])
def test_route_check_counts_what_the_walk_finds(tree, failed, damaged):
    """check_routes (counted a block of in-trees at a time) against its definition: every (switch, LID) route walked,
    the shortest paths by networkx, the routes of every alive source counted one by one."""
    topo, ch, lft = _routed_and_damaged(tree, failed, damaged, seed=11)
    n, width = lft.shape
    w = walk(ch, lft, np.repeat(np.arange(n), width), np.tile(np.arange(width), n))
    hops = np.where(w.reached, w.links, -1).reshape(n, width)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(zip(ch.src_of.tolist(), ch.peer_of.tolist()))
    dist = dict(nx.all_pairs_shortest_path_length(graph))
    alive = [s not in topo.failed_switches for s in ch.switches]
    sid = {s: i for i, s in enumerate(ch.switches)}
    cas = [(lid, sid[ca.leaf]) for lid, ca in topo.ca_by_lid.items()]
    cas = [(lid, leaf) for lid, leaf in cas if alive[leaf] and topo.cable_alive(topo.ca_by_lid[lid].label)]
    cas_on = np.bincount([leaf for _, leaf in cas], minlength=n)
    expected = dict.fromkeys(RouteCheck.model_fields, 0)
    for lid, leaf in cas:
        for s in (s for s in range(n) if alive[s] and leaf in dist[s]):
            sources = cas_on[s] - (s == leaf)
            if hops[s, lid] < 0:
                expected["unreachable_ca_pairs"] += sources
                expected["unreachable_switch_to_ca"] += 1
            elif hops[s, lid] > dist[s][leaf]:
                expected["ca_pair_detours"] += sources
                expected["switch_to_ca_detours"] += 1
    for name, lid in topo.lid.items():
        at = sid[name]
        if alive[at]:
            lost = [s for s in range(n) if alive[s] and at in dist[s] and hops[s, lid] < 0]
            expected["unreachable_switch_lids"] += sum(1 + int(cas_on[s]) for s in lost)
    got = check_routes(topo, {s: lft[i] for i, s in enumerate(ch.switches)}, ch)
    assert got.model_dump() == {k: int(v) for k, v in expected.items()}
    assert any(expected.values()) == bool(damaged)


@pytest.mark.parametrize("failed", [[], ["z1-core01"], ["z1-spine01-p05", "z1-leaf02-p06"]])
@pytest.mark.parametrize("damaged", [0.0, 0.05, 0.3, "valleys"])
def test_the_grown_routes_lengths_and_turns_are_the_walks(tree, failed, damaged):
    """TreeCase._route_lengths (from the in-trees, a length at a time) against its definition: every switch's route
    walked, its length where it arrives from an alive switch, and clean unless some two links in a row of it turn
    down then up at a switch outside the transit pod. Over tables with random ports too (dead ends, loops), and with
    spines sent down to random leaves (valleys deep in the routes of the cores above them)."""
    router = router_for(tree)
    case = TreeCase(router, router.case(failed).topo)
    case.lft = router.case(failed).lft.copy()
    case._prepare_growth()
    rng = np.random.default_rng(5)
    if damaged == "valleys":
        for spine in np.nonzero(case._tier == 1)[0].tolist():
            hop = case.ch.next[spine]
            down = np.nonzero((hop >= 0) & (case._tier[np.maximum(hop, 0)] == 0))[0]  # its ports to leaves
            hit = rng.random(case.lft.shape[1]) < 0.1
            case.lft[spine, hit] = rng.choice(down, int(hit.sum()))
    else:
        _damage(case.lft, damaged, seed=5)
    d = np.nonzero(case.alive[router.d_leaf])[0]
    lids, at, port = router.d_lid[d], router.d_leaf[d], router.d_port[d]
    links, clean = case._route_lengths(lids, at, port)
    n, m = len(router.names), len(lids)
    start, column = np.tile(np.arange(n), m), np.repeat(np.arange(m), n)
    w = walk(case.ch, case.lft[:, lids], start, column, MAX_HOPS, trace=True, dest=(at, port))
    taken: list[list[int]] = [[] for _ in range(n * m)]
    for k, c in w.steps:
        for walker, channel in zip(k.tolist(), c.tolist()):
            taken[walker].append(channel)
    tier, ch = case._tier, case.ch
    for k in range(n * m):
        s, j = int(start[k]), int(column[k])
        assert links[s, j] == (w.links[k] if w.reached[k] and case.alive[s] else -1)
        if links[s, j] >= 0:
            turns = [(ch.src_of[a], ch.peer_of[a], ch.peer_of[b]) for a, b in zip(taken[k], taken[k][1:])]
            down_up = [tier[x] > tier[v] < tier[y] and not case._valley_ok[v] for x, v, y in turns]
            assert clean[s, j] == (not any(down_up))
    assert (links >= 0).any()


@pytest.mark.parametrize("damaged", [0.0, 0.3])
def test_dependencies_found_over_the_in_trees_are_the_tables(tree, damaged):
    """Dependencies.add over the blocks of fabric.walk.in_trees (as the tree router finds them on the way), with some
    columns skipped, against channel_dependencies of the same tables with those columns unrouted."""
    topo, ch, lft = _routed_and_damaged(tree, ["z1-core01", "z1-leaf02-p06"], damaged, seed=3)
    width = lft.shape[1]
    skip = np.random.default_rng(4).random(width) < 0.2
    found = Dependencies(topo, ch, width)
    for block in in_trees(ch, lft, (ch.dest_switch[:width], ch.dest_port[:width]), 8):
        found.add(block.cols, lft[:, block.cols], block.chan, block.to, skip=skip[block.cols])
    unrouted = np.where(skip, np.uint8(UNROUTED), lft)
    _, expected = channel_dependencies(topo, {s: unrouted[i] for i, s in enumerate(ch.switches)}, ch)
    _, everything = channel_dependencies(topo, {s: lft[i] for i, s in enumerate(ch.switches)}, ch)
    assert np.array_equal(found.edges(), expected) and len(expected) < len(everything)


@pytest.mark.parametrize("seed", range(8))
def test_the_route_lengths_the_tree_router_measured_are_its_tables(tree, seed):
    """The route lengths a failure case keeps from growing its in-trees (RoutingTables.lengths) equal those of its
    final tables in every column of an alive LID, so the route check counts the same with them, and the channel
    dependencies found in the same pass (RoutingTables.dependencies) are those of its final tables: random failed
    switches and cables (growth after most of them), and neither kept when the loose entries are dropped."""
    topo = topology_for(tree)
    rng = np.random.default_rng(seed)
    failed = rng.choice(sorted(topo.by_label), int(rng.integers(0, 6)), replace=False).tolist()
    failed += rng.choice(sorted(topo.lid), int(rng.integers(1, 3)), replace=False).tolist()
    router = router_for(tree)
    rt = router.tables(failed)
    ch = Channels(rt.topo)
    lft = table_array(rt.topo, rt.tables)
    width = lft.shape[1]
    expected = route_lengths(ch, lft, (ch.dest_switch[:width], ch.dest_port[:width]))
    alive = RouteCounts(rt.topo, ch, width).kind[:width] > 0
    assert rt.lengths is not None and (rt.lengths[:, alive] == expected[:, alive]).all()
    assert check_routes(rt.topo, rt.tables, ch, rt.lengths) == check_routes(rt.topo, rt.tables, ch)
    assert rt.channels is not None and rt.dependencies is not None
    assert np.array_equal(rt.dependencies, channel_dependencies(rt.topo, rt.tables, rt.channels)[1])
    dropped = router.tables(failed, drop=("loose",))
    assert dropped.lengths is None and dropped.dependencies is None


@pytest.mark.parametrize("failed", [[], ["z1-core01"], ["z1-spine01-p05", "z1-leaf02-p06"]])
@pytest.mark.parametrize("damaged", [0.0, 0.02, 0.3])
def test_channel_dependencies_are_the_walks_consecutive_channels(tree, failed, damaged):
    """channel_dependencies (every entry's channel and its next entry's, a block of LIDs at a time) against its
    definition: the routes in scope walked one by one (from every switch to a CA LID, from the switches with CA ports
    to a switch LID), each pair of channels one walk takes in a row; and switch_route_loops against the walk of every
    switch-to-switch route."""
    topo, ch, lft = _routed_and_damaged(tree, failed, damaged, seed=5)
    n, width = lft.shape
    if damaged:  # and a switch-to-switch loop: the two ends of a link send a third switch's LID to each other
        a, p, b = int(ch.src_of[0]), int(ch.port_of[0]), int(ch.peer_of[0])
        target = topo.lid[ch.switches[next(s for s in range(n) if s not in (a, b))]]
        lft[a, target], lft[b, target] = p, np.flatnonzero(ch.next[b] == a)[0]
    assert n < MAX_HOPS  # a route that does not loop ends within the walk
    switch_lids = set(topo.lid.values())
    with_cas = [i for i, s in enumerate(ch.switches) if topo.cas.get(s)]
    start = [s for lid in range(width) for s in (with_cas if lid in switch_lids else range(n))]
    lid = [lid for lid in range(width) for _ in (with_cas if lid in switch_lids else range(n))]
    w = walk(ch, lft, np.array(start), np.array(lid), MAX_HOPS, trace=True)
    expected = set()
    for (k1, c1), (k2, c2) in zip(w.steps, w.steps[1:]):
        expected |= set(zip(c1[np.searchsorted(k1, k2)].tolist(), c2.tolist()))
    tables = {s: lft[i] for i, s in enumerate(ch.switches)}
    _, edges = channel_dependencies(topo, tables, ch)
    assert set(map(tuple, edges.tolist())) == expected and len(edges) == len(expected)
    assert (np.diff(edges[:, 0] * len(ch.ends) + edges[:, 1]) > 0).all()  # sorted by (c1, c2), as documented
    lids = [topo.lid[s] for s in ch.switches]
    loops = walk(ch, lft, np.repeat(np.arange(n), n), np.tile(lids, n), MAX_HOPS + 1).looping.reshape(n, n)
    assert switch_route_loops(topo, lft, ch) == [(ch.switches[a], ch.switches[b]) for a, b in zip(*np.nonzero(loops))]
    assert loops.any() == bool(damaged)
