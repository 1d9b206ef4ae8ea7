"""Deadlock freedom of the routes: the channel dependency graph (CDG) must be acyclic.

A channel is a directed switch-to-switch link. Whenever a route uses link c1 and then link c2, a packet can
hold a buffer of c1 while it waits for credits on c2: the CDG gets the edge c1 -> c2. With no cycle in the
CDG no set of packets can wait on each other in a ring, so credit-loop deadlock is impossible (Dally and
Seitz). Links to and from CA ports cannot be on a cycle (a CA port never forwards), so they are left out.

The routes to one destination form an in-tree (every switch has one next hop), so every (switch, LID) entry
adds at most one dependency: the graph is built for all LIDs at once with numpy, and checked with Kahn's
algorithm on integer channel ids.

Scope (all traffic on data VLs): every route from a CA port to every LID (CA ports and switches), and every
route from a switch's port 0 to every CA port (replies of a switch's agents to PerfMgt and vendor MADs). Routes
from a switch to another switch carry only subnet management packets, on VL15, which has no credit flow
control and so no credit loop; they are checked to be free of forwarding loops instead. docs/routing.md
explains why they cannot share the data VLs' graph: a spine-to-spine route of a two-layer zone must turn down
then up, and with both directions of one spine pair the leaf-spine turns of the CA routes close a cycle.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ffplan.plan.topology import Topology
from ffplan.diagnostics import Collector, StageError
from ffplan.plan.model import DeadlockProof, LftLike

RULE_DEADLOCK = "FF602"
RULE_LOOP = "FF604"
SCOPE = ("every route from a CA port (to every LID) and from a switch's port 0 to every CA port (data VLs); "
         "switch-to-switch routes (VL15) checked loop-free")
MAX_HOPS = 64
BLOCK = 1 << 21  # (switch, LID) entries walked at once
# A switch's LFT: a list of ports by LID, or a row of the (switches x LIDs) array the tree router builds.
Tables = Mapping[str, LftLike]


class Channels:
    """The alive directed switch-to-switch links of a topology as integer ids, and per (switch, port) the next
    switch and the channel id (-1 where the port leads to no alive switch)."""

    def __init__(self, topo: Topology):
        self.switches = list(topo.lid)
        sid = {s: i for i, s in enumerate(self.switches)}
        width = max(topo.nports.values(), default=0) + 1
        self.next = np.full((len(self.switches), 256), -1, dtype=np.int32)
        self.chan = np.full((len(self.switches), 256), -1, dtype=np.int32)
        self.ends: list[tuple[int, int]] = []  # channel id -> (switch index, port)
        for i, s in enumerate(self.switches):
            if s in topo.failed_switches:
                continue
            for p in range(1, width):
                what = topo.peer.get((s, p))
                if what is None or what[0] != "switch":
                    continue
                other = what[1][0]
                if other in topo.failed_switches or not topo.cable_alive(topo.port_label[(s, p)]):
                    continue
                self.next[i, p] = sid[other]
                self.chan[i, p] = len(self.ends)
                self.ends.append((i, p))
        self.peer_of = np.array([self.next[i, p] for i, p in self.ends], dtype=np.int32)  # channel -> switch it enters
        self.src_of = np.array([i for i, _ in self.ends], dtype=np.int32)
        self.alive = np.ones(len(self.ends), dtype=bool)

    def without(self, topo: Topology) -> Channels:
        """These channels with the failed cables and switches of `topo` taken out (ids stay; `alive` marks the rest):
        much cheaper than building them again, for the failure sweep."""
        out = object.__new__(Channels)
        out.switches, out.ends, out.peer_of, out.src_of = self.switches, self.ends, self.peer_of, self.src_of
        out.next, out.chan = self.next.copy(), self.chan.copy()
        dead = [c for c, (i, p) in enumerate(self.ends)
                if self.switches[i] in topo.failed_switches or self.switches[self.peer_of[c]] in topo.failed_switches
                or topo.port_label[(self.switches[i], p)] in topo.failed_cables]
        for c in dead:
            i, p = self.ends[c]
            out.next[i, p] = out.chan[i, p] = -1
        out.alive = self.alive.copy()
        out.alive[dead] = False
        return out

    def name(self, c: int) -> str:
        i, p = self.ends[c]
        return f"{self.switches[i]}[{p}]"


def table_array(topo: Topology, tables: Tables) -> np.ndarray:
    """LFTs as one (switches x LIDs) array in `topo.lid` order (uint8: a port is at most 255)."""
    return np.array([np.asarray(tables[s], dtype=np.uint8) for s in topo.lid], dtype=np.uint8)


def channel_dependencies(
    topo: Topology, tables: Tables, ch: Channels | None = None,
) -> tuple[Channels, np.ndarray]:
    """(channels, dependency edges as an (E, 2) array of channel ids) of every route in the data-VL scope. The LIDs
    are independent of each other: they are walked in blocks of about BLOCK entries, so memory stays flat."""
    ch = ch or Channels(topo)
    lft = table_array(topo, tables)
    n, width = lft.shape
    is_switch_lid = np.zeros(width, dtype=bool)
    is_switch_lid[[topo.lid[s] for s in ch.switches]] = True
    has_cas = np.array([bool(topo.cas.get(s)) for s in ch.switches], dtype=bool)
    count = max(len(ch.ends), 1)
    step = max(1, BLOCK // max(n, 1))
    codes = [_dependencies(ch, lft[:, a:a + step], is_switch_lid[a:a + step], has_cas, count)
             for a in range(0, width, step)]
    code = _distinct(np.concatenate(codes)) if codes else np.zeros(0, dtype=np.int64)
    return ch, np.stack([code // count, code % count], axis=1)


def _dependencies(ch: Channels, lft: np.ndarray, is_switch_lid: np.ndarray, has_cas: np.ndarray, count: int) -> np.ndarray:
    """The dependencies of one block of LID columns, each (c1, c2) as the integer c1 * count + c2."""
    n, width = lft.shape
    rows = np.arange(n)[:, None]
    nxt = ch.next[rows, lft]  # next switch per (switch, LID), -1 at the end of the route or a dead end
    c1 = ch.chan[rows, lft]
    # a switch is on some route in scope: to a CA LID always (every switch is a source), to a switch LID when it is
    # on the path from a switch with CA ports
    active = np.zeros((n, width), dtype=bool)
    active[:, ~is_switch_lid] = True
    frontier = np.zeros((n, width), dtype=bool)
    frontier[has_cas, :] = True
    frontier[:, ~is_switch_lid] = False
    for _ in range(MAX_HOPS):
        if not frontier.any():
            break
        active |= frontier
        i, lid = np.nonzero(frontier)
        j = nxt[i, lid]
        keep = j >= 0
        frontier = np.zeros_like(frontier)
        frontier[j[keep], lid[keep]] = True
        frontier &= ~active
    i, lid = np.nonzero(active & (nxt >= 0))
    second = c1[nxt[i, lid], lid]
    keep = second >= 0
    return _distinct(c1[i, lid][keep].astype(np.int64) * count + second[keep])  # one integer per (c1, c2)


def _distinct(codes: np.ndarray) -> np.ndarray:
    """The distinct values, sorted. Not np.unique: from numpy 2.3 it hashes, 10-30 times slower than a sort for
    millions of distinct values (a third of a large design's routing stage)."""
    codes = np.sort(codes)
    first = np.ones(len(codes), dtype=bool)
    first[1:] = codes[1:] != codes[:-1]
    return codes[first]


def _acyclic(count: int, edges: np.ndarray) -> np.ndarray:
    """Kahn's algorithm, a whole layer of sources per step; returns the channels left on or behind a cycle (empty
    when the graph is acyclic). Steps: the longest dependency chain, a handful on a fat tree."""
    src, dst = edges[:, 0], edges[:, 1]
    indeg = np.bincount(dst, minlength=count)
    removed = np.zeros(count, dtype=bool)
    live = np.ones(len(edges), dtype=bool)
    while True:
        layer = (indeg == 0) & ~removed
        if not layer.any():
            break
        removed |= layer
        out = live & layer[src]
        live &= ~out
        indeg -= np.bincount(dst[out], minlength=count)
    return np.nonzero(~removed)[0]


def find_cycle(ch: Channels, edges: np.ndarray, left: np.ndarray) -> list[int]:
    import networkx as nx  # only to name a cycle: ~0.2 s of start-up that design, analyze and reroute need not pay

    keep = np.isin(edges[:, 0], left) & np.isin(edges[:, 1], left)
    g: nx.DiGraph[int] = nx.DiGraph()
    g.add_edges_from(map(tuple, edges[keep].tolist()))
    return [a for a, _ in nx.find_cycle(g)]


def switch_route_loops(topo: Topology, tables: Tables, ch: Channels) -> list[tuple[str, str]]:
    """(source switch, destination switch) pairs whose route loops (switch-to-switch routes, VL15)."""
    lids = np.array([topo.lid[s] for s in ch.switches])
    n = len(lids)
    to_switches = np.array([np.asarray(tables[s])[lids] for s in topo.lid], dtype=np.int32)
    nxt = ch.next[np.arange(n)[:, None], to_switches]  # (switch, destination switch index)
    pos = np.repeat(np.arange(n)[:, None], n, axis=1)
    cols = np.arange(n)[None, :].repeat(n, axis=0)
    for _ in range(MAX_HOPS):
        step = nxt[pos, cols]
        moving = step >= 0
        if not moving.any():
            return []
        pos = np.where(moving, step, pos)
    looping = np.nonzero(nxt[pos, cols] >= 0)
    return [(ch.switches[a], ch.switches[b]) for a, b in zip(*looping)]


def ranking(topo: Topology) -> dict[str, tuple[int, str]]:
    """OpenSM updn-style ranking: BFS distance from the first zone's top tier (roots: its cores in a three-layer
    tree, else its spines), ties broken by GUID."""
    roots = (topo.cores.get(topo.zones[0]) or topo.spines[topo.zones[0]]) if topo.zones else []
    adj: dict[str, set[str]] = {s: set() for s in topo.lid}
    for (s, _), what in topo.peer.items():
        if what[0] == "switch":
            adj[s].add(what[1][0])
    dist = {r: 0 for r in roots}
    queue = list(roots)
    for v in queue:
        for w in sorted(adj[v]):
            if w not in dist:
                dist[w] = dist[v] + 1
                queue.append(w)
    return {s: (dist.get(s, 1 << 20), topo.guid[s]) for s in topo.lid}


def prove_deadlock_free(topo: Topology, tables: Tables, ch: Channels | None = None) -> DeadlockProof:
    ch, edges = channel_dependencies(topo, tables, ch)
    left = _acyclic(len(ch.ends), edges)
    c = Collector("<plan>")
    if len(left):
        ring = " -> ".join(ch.name(x) for x in find_cycle(ch, edges, left))
        c.error(RULE_DEADLOCK, ("routing",), f"the routes have a credit loop (channel dependency cycle): {ring}",
                "the plan was not written; report this with the inventory (it is a routing bug), or remove the failed links that force it")
    loops = switch_route_loops(topo, tables, ch)
    if loops:
        c.error(RULE_LOOP, ("routing",), f"{len(loops)} switch-to-switch routes loop, e.g. {loops[0][0]} -> {loops[0][1]}",
                "the plan was not written; report this with the inventory (it is a routing bug)")
    if c.items:
        raise StageError(c.items)
    rank = ranking(topo)
    position = {s: i for i, s in enumerate(sorted(ch.switches, key=lambda s: rank[s]))}
    key = np.array([position[s] for s in ch.switches])  # rank, then GUID, as one integer
    a, b = edges[:, 0], edges[:, 1]
    v, w, x = ch.src_of[a], ch.peer_of[a], ch.peer_of[b]
    valleys = int(np.count_nonzero((key[w] > key[v]) & (key[x] < key[w]))) if len(edges) else 0
    return DeadlockProof(method="channel dependency graph", scope=SCOPE, channels=len(ch.ends), dependencies=len(edges),
                         acyclic=True, valley_turns=valleys)
