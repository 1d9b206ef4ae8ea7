"""Deadlock freedom of the routes: the channel dependency graph (CDG) must be acyclic.

A channel is a directed switch-to-switch link. Whenever a route uses link c1 and then link c2, a packet can
hold a buffer of c1 while it waits for credits on c2: the CDG gets the edge c1 -> c2. With no cycle in the
CDG no set of packets can wait on each other in a ring, so credit-loop deadlock is impossible (Dally and
Seitz). Links to and from CA ports cannot be on a cycle (a CA port never forwards), so they are left out.

The routes to one destination form an in-tree (every switch has one next hop), so the graph is built per
destination in time linear in the number of switches, not per source-destination pair.

Scope: every route that carries data, i.e. every route *from a CA port* (to every CA port and every switch
LID). Routes sourced at a switch's own port 0 carry no data: a switch's management agent only answers MADs
(subnet management packets ride VL15, which has no credit flow control). They cannot all be up*/down* anyway:
a route between two spines of a two-layer zone necessarily turns down then up. docs/routing.md explains why
including them would make a proof impossible without buying any safety for data traffic.
"""

from __future__ import annotations

import networkx as nx

from ffplan.design.topology import Topology
from ffplan.diagnostics import Collector, StageError
from ffplan.plan.model import DeadlockProof

RULE_DEADLOCK = "FF602"
SCOPE = "every route from a CA port (to every CA port and switch); routes sourced at a switch's port 0 excluded"


def channel_dependencies(topo: Topology, tables: dict[str, list[int]]):
    """(channels, dependency edges) where a channel is (switch, out port) to a switch and an edge is a pair of
    channel ids. Every route from a CA port contributes its consecutive pairs."""
    switches = list(topo.lid)
    sid = {s: i for i, s in enumerate(switches)}
    chan: dict[tuple[int, int], int] = {}
    # per switch and port: (next switch, channel id), or None for a CA port, a dead or an unconnected port
    hops: list[list] = []
    for i, s in enumerate(switches):
        row: list = [None] * (topo.nports[s] + 1)
        if s not in topo.failed_switches:
            for p in range(1, topo.nports[s] + 1):
                what = topo.peer.get((s, p))
                if what is not None and what[0] == "switch":
                    other = what[1][0]  # type: ignore[index]
                    if other not in topo.failed_switches and topo.cable_alive(topo.port_label[(s, p)]):
                        row[p] = (sid[other], chan.setdefault((i, p), len(chan)))
        hops.append(row)
    rows = [tables[s] for s in switches]
    has_ca = [bool(topo.cas.get(s)) for s in switches]
    max_lid = max(len(r) for r in rows) - 1
    edges: set[tuple[int, int]] = set()
    n = len(switches)
    rng = range(n)
    for lid in range(1, max_lid + 1):
        hop = [hops[i][rows[i][lid]] if rows[i][lid] < len(hops[i]) else None for i in rng]
        active = _active(hop, has_ca)
        for i in active:
            h = hop[i]
            if h is not None:
                h2 = hop[h[0]]
                if h2 is not None:
                    edges.add((h[1], h2[1]))
    return chan, edges, switches


def _active(hop: list, sources: list[bool]) -> list[int]:
    """Switches on some route from a switch with CA ports (the CA -> switch-LID routes)."""
    seen = [False] * len(hop)
    out = []
    for i, src in enumerate(sources):
        if not src:
            continue
        v = i
        steps = 0
        while not seen[v] and steps <= len(hop):
            seen[v] = True
            out.append(v)
            h = hop[v]
            if h is None:
                break
            v = h[0]
            steps += 1
    return out


def ranking(topo: Topology) -> dict[str, tuple[int, str]]:
    """OpenSM updn-style ranking: BFS distance from the first zone's spines (roots), ties broken by GUID."""
    roots = topo.spines[topo.zones[0]] if topo.zones else []
    adj: dict[str, set[str]] = {s: set() for s in topo.lid}
    for (s, _), what in topo.peer.items():
        if what[0] == "switch":
            adj[s].add(what[1][0])  # type: ignore[index]
    dist = {r: 0 for r in roots}
    queue = list(roots)
    for v in queue:
        for w in sorted(adj[v]):
            if w not in dist:
                dist[w] = dist[v] + 1
                queue.append(w)
    return {s: (dist.get(s, 1 << 20), topo.guid[s]) for s in topo.lid}


def prove_deadlock_free(topo: Topology, tables: dict[str, list[int]]) -> DeadlockProof:
    chan, edges, switches = channel_dependencies(topo, tables)
    g = nx.DiGraph()
    g.add_nodes_from(range(len(chan)))
    g.add_edges_from(edges)
    if not nx.is_directed_acyclic_graph(g):
        cycle = nx.find_cycle(g)
        names = {c: f"{switches[i]}[{p}]" for (i, p), c in chan.items()}
        ring = " -> ".join(names[a] for a, _ in cycle)
        c = Collector("<plan>")
        c.error(RULE_DEADLOCK, ("routing",), f"the routes have a credit loop (channel dependency cycle): {ring}",
                "the plan was not written; report this with the inventory (it is a routing bug), or remove the failed links that force it")
        raise StageError(c.items)
    rank = ranking(topo)
    by_id = {c: key for key, c in chan.items()}
    valleys = 0
    for a, b in edges:
        (i, p) = by_id[a]
        (j, q) = by_id[b]
        v, w = switches[i], switches[j]
        x = topo.peer[(w, q)][1][0]  # type: ignore[index]
        if rank[w] > rank[v] and rank[x] < rank[w]:  # went down into w, then up out of it
            valleys += 1
    return DeadlockProof(method="channel dependency graph", scope=SCOPE, channels=len(chan), dependencies=len(edges),
                         acyclic=True, valley_turns=valleys)
