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

import numpy as np

from ffplan.codes.design import ROUTING_DEADLOCK, SWITCH_ROUTE_LOOP
from ffplan.diagnostics import Collector, StageError
from ffplan.fabric.arrays import BLOCK, MAX_HOPS, Channels, Tables, table_array
from ffplan.plan.model import DeadlockProof
from ffplan.plan.topology import Topology

SCOPE = (
    "every route from a CA port (to every LID) and from a switch's port 0 to every CA port (data VLs); "
    "switch-to-switch routes (VL15) checked loop-free"
)


def channel_dependencies(
    topo: Topology,
    tables: Tables,
    ch: Channels | None = None,
) -> tuple[Channels, np.ndarray]:
    """(channels, dependency edges as an (E, 2) array of channel ids, sorted) of every route in the data-VL scope.
    The LIDs are independent of each other: they are walked in blocks of about BLOCK entries, so memory stays flat."""
    ch = ch or Channels(topo)
    lft = table_array(topo, tables)
    n, width = lft.shape
    found = Dependencies(topo, ch, width)
    step = max(1, BLOCK // max(n, 1))
    for a in range(0, width, step):
        found.add_columns(lft, slice(a, a + step))
    return ch, found.edges()


class Dependencies:
    """The channel dependencies of the routes in the data-VL scope, added a block of LID columns at a time (each
    column's in-tree on its own), so a pass over the in-trees for something else (the tree router's route lengths)
    finds them on the way. A dependency c1 -> c2 is c1 and the port c2 leaves from at c1's far end: one bit of a
    (channels x ports) set keeps each once, instead of sorting the tens of millions found (one per entry)."""

    def __init__(self, topo: Topology, ch: Channels, width: int):
        self.ch = ch
        self.is_switch_lid = np.zeros(width, dtype=bool)
        self.is_switch_lid[[topo.lid[s] for s in ch.switches]] = True
        self.sources = np.flatnonzero([bool(topo.cas.get(s)) for s in ch.switches])  # the switches with CA ports
        self.ports = ch.chan.shape[1]
        # (c1 + 1, port) of every entry: its first row, of the entries that take no channel, counts for nothing
        self.found = np.zeros((len(ch.ends) + 1) * self.ports, dtype=bool)

    def add_columns(self, lft: np.ndarray, cols: slice | np.ndarray) -> None:
        """The dependencies of the columns `cols` of the tables `lft` (switches x LIDs)."""
        port = lft[:, cols]
        n, b = port.shape
        entry = (np.arange(n, dtype=np.intp) * self.ports)[:, None] + port  # the (switch, port) of each entry, flat
        hop = self.ch.next.take(entry)  # the next switch, -1 where the route stops
        to = np.where(hop >= 0, hop * b + np.arange(b), n * b).ravel()
        self.add(cols, port, self.ch.chan.take(entry), to)

    def add(
        self,
        cols: slice | np.ndarray,
        port: np.ndarray,
        chan: np.ndarray,
        to: np.ndarray,
        skip: np.ndarray | None = None,
    ) -> None:
        """The dependencies of the columns `cols` in the in-trees' form (fabric.walk.InTrees): each entry's port
        (switches x columns), the channel it takes (-1: none) and, flat over the block, the next switch's entry (the
        block's size where there is none); `skip` (bool per column): the columns to leave out. Every entry that takes
        a channel marks it with the port its next entry leaves from; edges() drops those that take no channel there."""
        n, b = port.shape
        code = chan.astype(np.intp).ravel()
        code += 1
        code *= self.ports
        code += np.append(port, np.uint8(0)).take(to)
        entries = code.reshape(n, b)
        if skip is not None:
            entries[:, skip] = 0
        # a switch is on some route in scope: to a CA LID always (every switch is a source), to a switch LID when it is
        # on the path from a switch with CA ports (what a walk from each of them passes, up to MAX_HOPS - 1 links on):
        # their entries, then the entries one step further at a time, each once (a walk from an entry reached before
        # goes the same way)
        switch_cols = np.flatnonzero(self.is_switch_lid[cols])
        if len(switch_cols):
            active = np.zeros(n * b, dtype=bool)
            reached = (self.sources[:, None] * b + switch_cols).ravel()
            active[reached] = True
            for _ in range(MAX_HOPS - 1):
                nxt = to[reached]
                reached = np.unique(nxt[nxt < n * b])
                reached = reached[~active[reached]]
                if not len(reached):
                    break
                active[reached] = True
            entries[:, switch_cols] *= active.reshape(n, b)[:, switch_cols]
        self.found[code] = True

    def edges(self) -> np.ndarray:
        """The dependencies found, as an (E, 2) array of channel ids sorted by (c1, c2): a switch's channel ids rise
        with its port numbers (Channels._link)."""
        code = np.flatnonzero(self.found[self.ports :])
        first, port = code // self.ports, code % self.ports
        second = self.ch.chan[self.ch.peer_of[first], port].astype(np.int64)
        keep = second >= 0
        return np.stack([first[keep], second[keep]], axis=1)


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


def switch_route_loops(topo: Topology, lft: np.ndarray, ch: Channels) -> list[tuple[str, str]]:
    """(source switch, destination switch) pairs whose route loops (switch-to-switch routes, VL15) over the LFT
    array `lft`."""
    n = len(ch.switches)
    lids = np.array([topo.lid[s] for s in ch.switches], dtype=np.int64)
    rows = np.arange(n)[:, None]
    port = lft[:, lids].astype(np.int64)  # (switch, destination switch)
    nxt = ch.next[rows, port]
    home = (rows == ch.dest_switch[lids]) & (port == ch.dest_port[lids])
    # the step of every route as a map of (switch, destination) entries, flat; n * n: stopped (arrived or dead end)
    step = np.where(home | (nxt < 0), n * n, nxt * n + np.arange(n)).ravel()
    # the routes that stop within MAX_HOPS + 1 steps (a route of MAX_HOPS links ends, one that still moves after it
    # loops): those whose next entry stops within one step less, a step more at a time until none is added (a
    # route's few links on a fat tree: a few passes over bytes, not MAX_HOPS over the whole map)
    stops = np.append(step == n * n, True)  # the last: the stopped state
    for _ in range(MAX_HOPS):
        more = stops.take(step)
        more &= ~stops[:-1]
        if not more.any():
            break
        stops[:-1] |= more
    looping = ~stops[:-1]
    return [(ch.switches[k // n], ch.switches[k % n]) for k in np.flatnonzero(looping).tolist()]


def ranking(topo: Topology) -> dict[str, tuple[int, str]]:
    """OpenSM updn-style ranking: BFS distance from the first zone's top tier (roots: its cores in a three-layer
    tree, else its spines), ties broken by GUID."""
    roots = (topo.cores.get(topo.zones[0]) or topo.spines[topo.zones[0]]) if topo.zones else []
    adj: dict[str, set[str]] = {s: set() for s in topo.lid}
    for kind, a, b in topo.by_label.values():  # the switch-to-switch cables: a third of topo.peer's entries
        if kind != "node-leaf":
            adj[a].add(b)
            adj[b].add(a)
    dist = {r: 0 for r in roots}
    queue = list(roots)
    for v in queue:
        for w in adj[v]:  # (any order: a breadth-first search's distances do not depend on it)
            if w not in dist:
                dist[w] = dist[v] + 1
                queue.append(w)
    return {s: (dist.get(s, 1 << 20), topo.guid[s]) for s in topo.lid}


def prove_deadlock_free(
    topo: Topology, tables: Tables, ch: Channels | None = None, edges: np.ndarray | None = None
) -> DeadlockProof:
    """The proof of `tables`; `edges`: their channel dependencies on `ch` when the router found them on the way."""
    if edges is None:
        ch, edges = channel_dependencies(topo, tables, ch)
    assert ch is not None
    left = _acyclic(len(ch.ends), edges)
    c = Collector("<plan>")
    if len(left):
        ring = " -> ".join(ch.name(x) for x in find_cycle(ch, edges, left))
        c.error(
            ROUTING_DEADLOCK,
            ("routing",),
            f"the routes have a credit loop (channel dependency cycle): {ring}",
            "the plan was not written; report this with the inventory (it is a routing bug), or remove the failed links that force it",
        )
    loops = switch_route_loops(topo, table_array(topo, tables), ch)
    if loops:
        c.error(
            SWITCH_ROUTE_LOOP,
            ("routing",),
            f"{len(loops)} switch-to-switch routes loop, e.g. {loops[0][0]} -> {loops[0][1]}",
            "the plan was not written; report this with the inventory (it is a routing bug)",
        )
    if c.items:
        raise StageError(c.items)
    rank = ranking(topo)
    position = {s: i for i, s in enumerate(sorted(ch.switches, key=lambda s: rank[s]))}
    key = np.array([position[s] for s in ch.switches])  # rank, then GUID, as one integer
    a, b = edges[:, 0], edges[:, 1]
    v, w, x = ch.src_of[a], ch.peer_of[a], ch.peer_of[b]
    valleys = int(np.count_nonzero((key[w] > key[v]) & (key[x] < key[w]))) if len(edges) else 0
    return DeadlockProof(
        method="channel dependency graph",
        scope=SCOPE,
        channels=len(ch.ends),
        dependencies=len(edges),
        acyclic=True,
        valley_turns=valleys,
    )
