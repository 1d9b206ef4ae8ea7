"""Where the routes go: the length of every (switch, LID) route over a set of LFTs, against the shortest path the
alive fabric allows. The design records the result in the plan (detours, unreachable LIDs); analyze and the failure
sweep report it.

A route from a CA port is the route from its leaf, so (switch, LID) routes cover CA sources too: a CA-to-CA pair is
counted once per source CA port.
"""

from __future__ import annotations

import numpy as np

from ffplan.fabric.arrays import Channels, Tables, table_array
from ffplan.fabric.walk import route_lengths
from ffplan.plan.model import RouteCheck
from ffplan.plan.topology import Topology


def route_hops(topo: Topology, tables: Tables, ch: Channels | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(hops, shortest): switch-to-switch links of the route from every switch (in `topo.lid` order) to every LID,
    -1 where it does not arrive; and the fewest links the alive fabric allows, -1 where nothing connects (int8: a
    route has at most MAX_HOPS links)."""
    ch = ch or Channels(topo)
    lft = table_array(topo, tables)
    n, width = lft.shape
    hops = route_lengths(ch, lft, (ch.dest_switch[:width], ch.dest_port[:width]))
    dest = ch.dest_switch[:width]
    dist = switch_distances(ch, n).astype(np.int8)
    shortest = np.where(dest[None, :] >= 0, dist[:, np.maximum(dest, 0)], np.int8(-1))
    return hops, shortest


def switch_distances(ch: Channels, n: int) -> np.ndarray:
    """Fewest alive links between every pair of switches (-1 where nothing connects): a breadth-first search from all
    switches at once, a port at a time (no n x n x n product)."""
    dist = np.full((n, n), -1, dtype=np.int64)
    np.fill_diagonal(dist, 0)
    seen = np.eye(n, dtype=bool)
    frontier = seen.copy()
    ports = np.nonzero((ch.next >= 0).any(axis=0))[0].tolist()
    for step in range(1, n):
        grown = np.zeros_like(frontier)
        for p in ports:
            hop = ch.next[:, p]
            has = hop >= 0
            grown[has] |= frontier[hop[has]]  # a switch is one step further than its neighbour's frontier
        grown &= ~seen
        if not grown.any():
            break
        dist[grown] = step
        seen |= grown
        frontier = grown
    return dist


def check_routes(topo: Topology, tables: Tables, ch: Channels | None = None) -> RouteCheck:
    """Detours and unreachable destinations of the routes, over the alive part of the fabric."""
    ch = ch or Channels(topo)
    hops, shortest = route_hops(topo, tables, ch)
    alive_sw = np.array([s not in topo.failed_switches for s in ch.switches])
    sid = {s: i for i, s in enumerate(ch.switches)}
    cas_on = np.zeros(len(ch.switches), dtype=np.int64)
    ca_lids, own = [], []
    for lid, ca in topo.ca_by_lid.items():
        if topo.cable_alive(ca.label) and ca.leaf not in topo.failed_switches:
            cas_on[sid[ca.leaf]] += 1
            ca_lids.append(lid)
            own.append(sid[ca.leaf])
    sw_lids = [lid for s, lid in topo.lid.items() if s not in topo.failed_switches]
    ca_lids_a = np.array(ca_lids, dtype=np.int64)
    h, best = hops[:, ca_lids_a], shortest[:, ca_lids_a]
    connected = (best >= 0) & alive_sw[:, None]
    lost = connected & (h < 0)
    detour = connected & (h > best)
    # CA sources: every CA port of the leaf but the destination itself
    columns = np.arange(len(ca_lids))

    def ca_pairs(routes: np.ndarray) -> int:
        return int((routes.sum(axis=1) * cas_on).sum() - routes[np.array(own, dtype=np.int64), columns].sum())

    hs, bs = hops[:, sw_lids], shortest[:, sw_lids]
    sw_lost = (bs >= 0) & alive_sw[:, None] & (hs < 0)
    return RouteCheck(
        ca_pair_detours=ca_pairs(detour),
        switch_to_ca_detours=int(detour[alive_sw].sum()),
        unreachable_ca_pairs=ca_pairs(lost),
        unreachable_switch_to_ca=int(lost.sum()),
        unreachable_switch_lids=int(sw_lost.sum() + (cas_on[:, None] * sw_lost).sum()),
    )
