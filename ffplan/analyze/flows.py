"""Count flows per directed switch-to-switch link, one destination tree at a time for all destinations at once.

The LFTs are destination-based: every flow from one leaf to one destination LID takes the same path. A phase of
a traffic pattern is therefore a set of *bundles* (source leaf, destination LID, flows), and the bundles are
walked hop by hop together over the LFTs as one (switches x LIDs) array: the work grows with leaves x
destinations, not with flows (all-to-all in a Fire-Flyer 2 zone is 600,000 flows but 28,000 bundles). A bundle
that does not arrive (an unrouted LID, a port to the wrong place, a loop) loads no link and counts as unroutable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ffplan.fabric.arrays import WALK_BLOCK, Channels, table_array
from ffplan.fabric.reach import RouteCounts
from ffplan.fabric.walk import in_trees, walk
from ffplan.plan.model import LftLike
from ffplan.plan.topology import Topology


class TopologyArrays:
    """analyze's view of the topology: its array form (fabric.arrays.Channels: switches in `topo.lid` order, the alive
    switch-to-switch links), per CA LID its leaf and leaf port, per switch its zone."""

    def __init__(self, topo: Topology):
        self.topo = topo
        self.channels = Channels(topo)
        self.switches = self.channels.switches
        self.sid = {s: i for i, s in enumerate(self.switches)}
        ca_lids = np.array(list(topo.ca_by_lid), dtype=np.int64)
        self.leaf_of = np.full(topo.max_lid + 1, -1, dtype=np.int64)  # CA LID -> index of its leaf; -1 for other LIDs
        self.leaf_of[ca_lids] = self.channels.dest_switch[ca_lids]
        self.leaf_port = self.channels.dest_port
        zones = {z: i for i, z in enumerate(topo.zones)}
        self.zone_of_switch = np.array([zones[topo.zone_of[s]] for s in self.switches], dtype=np.int64)

    def lft(self, tables: Mapping[str, LftLike]) -> np.ndarray:
        return table_array(self.topo, tables)


@dataclass
class Demand:
    """The flows of one phase as bundles, with what the report needs of the flows themselves. Bundles are in the
    order their first flow comes in the pattern (a tie between lower bounds names the first cut)."""

    leaf: np.ndarray  # source switch of each bundle (index in TopologyArrays.switches)
    dst: np.ndarray  # destination LID of each bundle
    weight: np.ndarray  # flows in each bundle
    flows: int
    max_inject: int  # most flows one CA port sends
    max_eject: int  # most flows one CA port receives
    cross_zone: int  # flows between CA ports of two zones


def pair_demand(net: TopologyArrays, flows: list[tuple[int, int]]) -> Demand:
    """Bundles of explicit (source CA LID, destination LID) flows."""
    if not flows:
        empty = np.zeros(0, dtype=np.int64)
        return Demand(empty, empty, empty, 0, 0, 0, 0)
    src, dst = np.array(flows, dtype=np.int64).T
    width = len(net.leaf_of)
    keys, first, weight = np.unique(net.leaf_of[src] * width + dst, return_index=True, return_counts=True)
    order = np.argsort(first)
    keys, weight = keys[order], weight[order]
    ca_dst = net.leaf_of[dst] >= 0
    zone = net.zone_of_switch
    cross = int(np.count_nonzero(zone[net.leaf_of[src[ca_dst]]] != zone[net.leaf_of[dst[ca_dst]]]))
    return Demand(
        keys // width,
        keys % width,
        weight.astype(np.int64),
        len(flows),
        int(np.bincount(src).max()),
        int(np.bincount(dst).max()),
        cross,
    )


def all_to_all_demand(net: TopologyArrays, groups: list[list[int]]) -> Demand:
    """Every CA port of a group to every port of the group on another host (the groups are the zones), aggregated
    without listing the flows: from leaf L to port d, the ports on L less those of d's host."""
    host_of = {lid: ca.host for lid, ca in net.topo.ca_by_lid.items()}
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    flows = inject = 0
    for ports in groups:
        if not ports:
            continue
        leaves_in_order = list(dict.fromkeys(net.leaf_of[ports].tolist()))  # the group's leaves in port order
        row_of = {leaf: row for row, leaf in enumerate(leaves_in_order)}
        leaf_row = np.array([row_of[leaf] for leaf in net.leaf_of[ports].tolist()], dtype=np.int64)
        w = np.zeros((len(leaves_in_order), len(ports)), dtype=np.int64)
        w += np.bincount(leaf_row, minlength=len(leaves_in_order))[:, None]
        by_host: dict[str, list[int]] = {}
        for i, lid in enumerate(ports):
            by_host.setdefault(host_of[lid], []).append(i)
        src = [a for cols in by_host.values() for a in cols for _ in cols]
        dst = [b for cols in by_host.values() for _ in cols for b in cols]
        np.subtract.at(w, (leaf_row[src], np.array(dst, dtype=np.int64)), 1)  # no flow between two ports of one host
        # in the order of their first flow: from the leaf's first port, or its first port of another host than d's
        host = np.unique(np.array([host_of[lid] for lid in ports]), return_inverse=True)[1]
        first = np.unique(leaf_row, return_index=True)[1].tolist()
        segments = []  # (source port, row, which destinations: 0 all, 1 off the first port's host, 2 on it)
        for row, start in enumerate(first):
            other = next((i for i in range(start, len(ports)) if leaf_row[i] == row and host[i] != host[start]), start)
            segments += [(start, row, 0)] if other == start else [(start, row, 1), (other, row, 2)]
        # A source port is on one leaf, so the bundles of one source are one row's, destinations ascending: in the
        # order of their source, these segments are the bundles in order without sorting them (8.4 M on 16,384 ports)
        segments.sort()
        leaf, dsts, weight = (np.empty(np.count_nonzero(w), dtype=np.int32) for _ in range(3))  # half of int64
        group_leaves, group_ports = np.array(leaves_in_order, dtype=np.int64), np.array(ports, dtype=np.int64)
        at = 0
        for _, row, which in segments:
            taken = w[row] > 0
            if which:
                taken &= (host == host[first[row]]) == (which == 2)
            cols = np.flatnonzero(taken)
            end = at + len(cols)
            leaf[at:end], dsts[at:end], weight[at:end] = group_leaves[row], group_ports[cols], w[row, cols]
            at = end
        parts.append((leaf, dsts, weight))
        flows += int(w.sum())
        inject = max(inject, len(ports) - min(len(cols) for cols in by_host.values()))
    if not parts:
        return pair_demand(net, [])
    leaf, dsts, weight = parts[0] if len(parts) == 1 else (np.concatenate(column) for column in zip(*parts))
    return Demand(leaf, dsts, weight, flows, inject, inject, 0)


def count_loads(
    net: TopologyArrays, lft: np.ndarray, demand: Demand, counts: RouteCounts | None = None
) -> tuple[np.ndarray, int]:
    """(flows per channel, unroutable flows); a bundle that never arrives (dead end or loop) loads nothing. A demand
    of many bundles is counted over the in-trees of the LFTs (`_tree_loads`), else its bundles are walked: the work
    grows with switches x LIDs in the one, with bundles x hops in the other (16,384 ports all-to-all: 22.6 M entries
    against 8.4 M bundles of about four hops). `counts`: a route check still to count (fabric.reach.RouteCounts),
    fed the same in-trees when the loads go over them."""
    entries = lft.shape[0] * lft.shape[1]
    if len(demand.leaf) * TREE_BUNDLES < entries:
        return _walked_loads(net, lft, demand)
    return _tree_loads(net, lft, demand, counts if counts is not None and not counts.complete else None)


TREE_BUNDLES = 5  # bundles walk about five times as many entries' worth of work as the in-trees take (16k tree)


def _walked_loads(net: TopologyArrays, lft: np.ndarray, demand: Demand) -> tuple[np.ndarray, int]:
    """count_loads by walking the bundles WALK_BLOCK at a time (fabric.walk: its trace of 8 M bundles, a 16,384-port
    all-to-all, held 1.5 GB)."""
    load = np.zeros(len(net.channels.ends), dtype=np.int64)
    lost = 0
    for a in range(0, len(demand.leaf), WALK_BLOCK):
        block = slice(a, a + WALK_BLOCK)
        w = walk(net.channels, lft, demand.leaf[block], demand.dst[block], trace=True)
        load += w.loads(demand.weight[block], len(load))
        lost += int(demand.weight[block][~w.reached].sum())
    return load, lost


def _tree_loads(
    net: TopologyArrays, lft: np.ndarray, demand: Demand, counts: RouteCounts | None
) -> tuple[np.ndarray, int]:
    """count_loads over the in-trees (fabric.walk.in_trees), a block of destination columns at a time: the flows that
    enter each switch towards a destination (its own bundle's plus what the switches routing through it pass on) are
    summed from the longest routes down, each entry's put on the channel it takes. Only routes that arrive carry
    flows: a route through a switch arrives only if the switch's own does."""
    ch = net.channels
    n, m = lft.shape
    weight = np.zeros((n, m), dtype=np.int64 if demand.flows >= 1 << 31 else np.int32)
    weight[demand.leaf, demand.dst] = demand.weight  # one bundle per (source leaf, destination)
    load = np.zeros(len(ch.ends), dtype=np.float64)  # float64 sums stay exact far beyond any flow count
    lost = 0
    for block in in_trees(ch, lft, (ch.dest_switch[:m], ch.dest_port[:m])):
        if counts is not None:
            counts.add(block)
        sent = weight[:, block.cols]
        lost += int(sent[block.hops < 0].sum())
        hops, chan = block.hops.ravel(), block.chan.ravel()
        flows = np.zeros(len(hops) + 1)  # the last: no switch
        flows[:-1] = sent.ravel()
        for length in range(int(hops.max(initial=0)), 0, -1):
            at = np.flatnonzero(hops == length)
            passed = flows[at]
            np.add.at(flows, block.to[at], passed)
            np.add.at(load, chan[at], passed)  # not a bincount: a zeroed copy of every channel per length
    return load.astype(np.int64), lost
