"""Count flows per directed switch-to-switch link, one destination tree at a time for all destinations at once.

The LFTs are destination-based: every flow from one leaf to one destination LID takes the same path. A phase of
a traffic pattern is therefore a set of *bundles* (source leaf, destination LID, flows), and the bundles are
walked hop by hop together over the LFTs as one (switches x LIDs) array: the work grows with leaves x
destinations, not with flows (all-to-all in a Fire-Flyer 2 zone is 600,000 flows but 28,000 bundles). A bundle
that does not arrive (an unrouted LID, a port to the wrong place, a loop) loads no link and counts as unroutable.

`Walker` follows one route switch by switch, for tests and diagnostics that want the path itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ffplan.design.deadlock import MAX_HOPS, Channels, table_array
from ffplan.plan.model import UNROUTED, LftLike
from ffplan.plan.topology import Topology


class RouteError(Exception):
    """A flow's walk ends in a dead end (unrouted LID, wrong CA, loop)."""


@dataclass
class Walker:
    """Paths over a set of LFTs (switch name -> ports by LID) on the plan's topology."""

    topo: Topology
    tables: Mapping[str, LftLike]
    _cache: dict[tuple[str, int], tuple] = field(default_factory=dict)

    def path(self, switch: str, lid: int) -> tuple:
        """Directed switch-to-switch links ((switch, port), ...) from `switch` to the destination, or raise."""
        key = (switch, lid)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        links = []
        v = switch
        for _ in range(MAX_HOPS):
            table = self.tables.get(v)
            if table is None or lid >= len(table):
                raise RouteError(f"{v} has no entry for LID {lid}")
            port = int(table[lid])
            if port == 0:
                if self.topo.lid.get(v) != lid:
                    raise RouteError(f"{v} delivers LID {lid} to itself")
                break
            if port == UNROUTED:
                raise RouteError(f"{v} does not route LID {lid}")
            what = self.topo.peer.get((v, port))
            if what is None:
                raise RouteError(f"{v} port {port} (for LID {lid}) is not connected")
            if what[0] == "ca":
                if what[1] != lid:
                    raise RouteError(f"{v} port {port} leads to LID {what[1]}, not {lid}")
                break
            links.append((v, port))
            v = what[1][0]
        else:
            raise RouteError(f"LID {lid} loops from {switch}")
        out = tuple(links)
        self._cache[key] = out
        return out


class TopologyArrays:
    """The topology as arrays: switches in `topo.lid` order, the alive switch-to-switch links as channels, per CA
    LID its leaf and leaf port, per switch its zone."""

    def __init__(self, topo: Topology):
        self.topo = topo
        self.channels = Channels(topo)
        self.switches = self.channels.switches
        self.sid = {s: i for i, s in enumerate(self.switches)}
        width = topo.max_lid + 1
        self.leaf_of = np.full(width, -1, dtype=np.int64)  # CA LID -> index of its leaf; -1 for other LIDs
        self.leaf_port = np.zeros(width, dtype=np.int64)
        for lid, ca in topo.ca_by_lid.items():
            self.leaf_of[lid], self.leaf_port[lid] = self.sid[ca.leaf], ca.leaf_port
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
    return Demand(keys // width, keys % width, weight.astype(np.int64), len(flows), int(np.bincount(src).max()),
                  int(np.bincount(dst).max()), cross)


def all_to_all_demand(net: TopologyArrays, groups: list[list[int]]) -> Demand:
    """Every CA port of a group to every port of the group on another host (the groups are the zones), aggregated
    without listing the flows: from leaf L to port d, the ports on L less those of d's host."""
    host_of = {lid: ca.host for lid, ca in net.topo.ca_by_lid.items()}
    leaves, dsts, weights = [], [], []
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
        r, col = np.nonzero(w)
        # in the order of their first flow: from the leaf's first port, or its first port of another host than d's
        host = np.unique(np.array([host_of[lid] for lid in ports]), return_inverse=True)[1]
        first = np.unique(leaf_row, return_index=True)[1]
        other = first.copy()
        for row, start in enumerate(first.tolist()):
            other[row] = next((i for i in range(start, len(ports)) if leaf_row[i] == row and host[i] != host[start]), start)
        source = np.where(host[first[r]] != host[col], first[r], other[r])
        first_flow = np.lexsort((col, source))
        r, col = r[first_flow], col[first_flow]
        leaves.append(np.array(leaves_in_order, dtype=np.int64)[r])
        dsts.append(np.array(ports, dtype=np.int64)[col])
        weights.append(w[r, col])
        flows += int(w.sum())
        inject = max(inject, len(ports) - min(len(cols) for cols in by_host.values()))
    if not leaves:
        return pair_demand(net, [])
    return Demand(np.concatenate(leaves), np.concatenate(dsts), np.concatenate(weights), flows, inject, inject, 0)


def count_loads(net: TopologyArrays, lft: np.ndarray, demand: Demand) -> tuple[np.ndarray, int]:
    """(flows per channel, unroutable flows): every bundle walked at once, one hop per step."""
    ch = net.channels
    pos, lid, bundle = demand.leaf, demand.dst, np.arange(len(demand.leaf))
    arrived = np.zeros(len(bundle), dtype=bool)
    walked_bundle, walked_channel = [], []
    for _ in range(MAX_HOPS):
        if not len(pos):
            break
        port = lft[pos, lid]
        home = (pos == net.leaf_of[lid]) & (port == net.leaf_port[lid])
        arrived[bundle[home]] = True
        channel = ch.chan[pos, port]
        go = ~home & (channel >= 0)  # the rest ends in a dead end: unrouted, or a port to the wrong place
        walked_bundle.append(bundle[go])
        walked_channel.append(channel[go])
        pos, lid, bundle = ch.next[pos[go], port[go]], lid[go], bundle[go]
    load = np.zeros(len(ch.ends), dtype=np.int64)
    if walked_bundle:
        b, c = np.concatenate(walked_bundle), np.concatenate(walked_channel)
        keep = arrived[b]  # a bundle that never arrives (dead end or loop) loads nothing
        load += np.bincount(c[keep], weights=demand.weight[b[keep]], minlength=len(ch.ends)).astype(np.int64)
    return load, int(demand.weight[~arrived].sum())
