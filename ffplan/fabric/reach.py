"""Where the routes go: the length of every (switch, LID) route over a set of LFTs, against the shortest path the
alive fabric allows. The design records the result in the plan (detours, unreachable LIDs); analyze and the failure
sweep report it.

A route from a CA port is the route from its leaf, so (switch, LID) routes cover CA sources too: a CA-to-CA pair is
counted once per source CA port.
"""

from __future__ import annotations

import numpy as np

from ffplan.fabric.arrays import Channels, Tables, table_array
from ffplan.fabric.walk import TREE_BLOCK, InTrees, in_trees
from ffplan.plan.model import RouteCheck
from ffplan.plan.topology import Topology


def switch_distances(ch: Channels, n: int) -> np.ndarray:
    """Fewest alive links between every pair of switches (-1 where nothing connects; int8, as the route lengths): a
    breadth-first search from all switches at once, a port at a time, over rows of bits (no n x n x n product)."""
    dist = np.full((n, n), -1, dtype=np.int64)
    np.fill_diagonal(dist, 0)
    seen = np.packbits(np.eye(n, dtype=bool), axis=1)
    frontier = seen.copy()
    hops = [(np.flatnonzero(hop >= 0), hop[hop >= 0]) for hop in ch.next.T if (hop >= 0).any()]
    for step in range(1, n):
        grown = np.zeros_like(frontier)
        for at, hop in hops:
            grown[at] |= frontier[hop]  # a switch is one step further than its neighbour's frontier
        grown &= ~seen
        if not grown.any():
            break
        dist[np.unpackbits(grown, axis=1, count=n).view(bool)] = step
        seen |= grown
        frontier = grown
    return dist.astype(np.int8)


class RouteCounts:
    """The route check counted a block of in-trees (fabric.walk.in_trees) at a time, so a stage that goes over the
    in-trees anyway (analyze's loads) counts it on the way. Only the CA LIDs of alive CA ports and the LIDs of alive
    switches are checked, from alive switches that the alive fabric connects to the destination."""

    def __init__(self, topo: Topology, ch: Channels, width: int):
        n = len(ch.switches)
        sid = {s: i for i, s in enumerate(ch.switches)}
        self.alive = np.array([s not in topo.failed_switches for s in ch.switches])
        self.cas_on = np.zeros(n, dtype=np.int64)  # CA sources on each switch
        self.kind = np.zeros(max(width, topo.max_lid + 1), dtype=np.int8)  # per LID: 1 alive CA port, 2 alive switch
        self.own = np.full(len(self.kind), -1, dtype=np.int64)  # a CA LID's leaf: that source is the LID itself
        for lid, ca in topo.ca_by_lid.items():
            if topo.cable_alive(ca.label) and ca.leaf not in topo.failed_switches:
                self.cas_on[sid[ca.leaf]] += 1
                self.kind[lid], self.own[lid] = 1, sid[ca.leaf]
        for s, lid in topo.lid.items():
            if s not in topo.failed_switches:
                self.kind[lid] = 2
        # the shortest route to each LID's switch; column n (-1) for a LID no port delivers
        self.dist = np.concatenate([switch_distances(ch, n), np.full((n, 1), -1, dtype=np.int8)], axis=1)
        known = ch.dest_switch[:width]
        self.dest = np.full(width, n, dtype=np.int64)
        self.dest[: len(known)] = np.where(known >= 0, known, n)
        self.counts = dict.fromkeys(RouteCheck.model_fields, 0)
        self.width, self.counted = width, 0  # columns counted so far

    @property
    def complete(self) -> bool:
        return self.counted == self.width

    def add(self, block: InTrees) -> None:
        self.count(block.cols, block.hops)

    def count(self, columns: slice, hops: np.ndarray) -> None:
        """Count the routes of a block of columns (`hops`: their route lengths, -1 where a route does not arrive):
        only the few entries that are lost or longer than the shortest are looked at one by one."""
        self.counted += hops.shape[1]
        shortest = self.dist.take(self.dest[columns], axis=1)
        off = hops != shortest  # lost or longer: a route that arrives is never shorter than the shortest
        off &= self.kind[columns] > 0
        if not off.any():
            return
        rows, cols = np.nonzero(off)
        h, best, lid = hops[rows, cols], shortest[rows, cols], cols + columns.start
        connected = (best >= 0) & self.alive[rows]
        lost, detour = connected & (h < 0), connected & (h > best)
        to_ca = self.kind[lid] == 1
        sources = self.cas_on[rows] - (self.own[lid] == rows)  # the leaf's CA ports but the destination itself
        c = self.counts
        c["ca_pair_detours"] += int(sources[detour & to_ca].sum())
        c["switch_to_ca_detours"] += int(np.count_nonzero(detour & to_ca))
        c["unreachable_ca_pairs"] += int(sources[lost & to_ca].sum())
        c["unreachable_switch_to_ca"] += int(np.count_nonzero(lost & to_ca))
        c["unreachable_switch_lids"] += int((1 + self.cas_on[rows])[lost & ~to_ca].sum())

    def result(self) -> RouteCheck:
        return RouteCheck(**self.counts)


def check_routes(
    topo: Topology, tables: Tables, ch: Channels | None = None, lengths: np.ndarray | None = None
) -> RouteCheck:
    """Detours and unreachable destinations of the routes, over the alive part of the fabric. `lengths`: the route
    length of every entry when the router measured them already (design.routing.common.RoutingTables.lengths)."""
    ch = ch or Channels(topo)
    if lengths is not None:
        counts = RouteCounts(topo, ch, lengths.shape[1])
        step = max(1, TREE_BLOCK // max(len(lengths), 1))
        for a in range(0, lengths.shape[1], step):  # blocks as in_trees': each pass stays in the cache
            counts.count(slice(a, a + step), lengths[:, a : a + step])
        return counts.result()
    lft = table_array(topo, tables)
    width = lft.shape[1]
    counts = RouteCounts(topo, ch, width)
    for block in in_trees(ch, lft, (ch.dest_switch[:width], ch.dest_port[:width])):
        counts.add(block)
    return counts.result()
