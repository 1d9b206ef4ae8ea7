"""The one walk over forwarding tables: packets entering switches towards destination LIDs, all moved one hop per
step together (numpy), over a fabric's array form (fabric.arrays.Channels). A walk arrives when it reaches the
switch and port where its LID is delivered; it stops at a dead end (an unrouted LID, a port to no switch or to the
wrong CA, port 0 of another switch); one still moving after `max_hops` steps is in a forwarding loop.

Every stage that follows routes uses it: the design's route check and deadlock proof (fabric.reach,
fabric.deadlock), analyze's flow loads and the failure sweep, verify's and reroute's reachability.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ffplan.fabric.arrays import BLOCK, MAX_HOPS, Channels


@dataclass
class Walked:
    reached: np.ndarray  # bool per walk
    links: np.ndarray  # switch-to-switch links crossed (int64)
    end: np.ndarray  # switch index where the walk stopped (or stood after max_hops steps)
    looping: np.ndarray  # bool: still moving after max_hops steps
    steps: list[tuple[np.ndarray, np.ndarray]]  # with trace=True: per step, (walk index, channel taken)

    def loads(self, weight: np.ndarray, channels: int, arrived_only: bool = True) -> np.ndarray:
        """Flows per channel: each walk's weight on every channel it took (only walks that arrived, by default)."""
        load = np.zeros(channels, dtype=np.int64)
        for k, c in self.steps:
            if arrived_only:
                keep = self.reached[k]
                k, c = k[keep], c[keep]
            load += np.bincount(c, weights=weight[k], minlength=channels).astype(np.int64)
        return load


def walk(
    ch: Channels,
    lft: np.ndarray,
    start: np.ndarray,
    lid: np.ndarray,
    max_hops: int = MAX_HOPS,
    trace: bool = False,
    dest: tuple[np.ndarray, np.ndarray] | None = None,
) -> Walked:
    """Walk from switch `start[k]` towards `lid[k]` for every k over `lft` ((switches x LIDs) ports, `ch.switches`
    order); with `trace`, the channel each walk takes at each step. `dest`: (switch, port) where each column of `lft`
    is delivered, instead of the fabric's (for a router's candidate column)."""
    dest_switch, dest_port = dest if dest is not None else (ch.dest_switch, ch.dest_port)
    count = len(start)
    pos = np.asarray(start, dtype=np.int64).copy()
    lid = np.asarray(lid, dtype=np.int64)
    reached = np.zeros(count, dtype=bool)
    links = np.zeros(count, dtype=np.int64)
    looping = np.zeros(count, dtype=bool)
    steps: list[tuple[np.ndarray, np.ndarray]] = []
    walking = np.arange(count)
    at, to = pos, lid
    for _ in range(max_hops):
        if not len(walking):
            break
        port = lft[at, to].astype(np.int64)
        home = (at == dest_switch[to]) & (port == dest_port[to])
        reached[walking[home]] = True
        nxt = ch.next[at, port]
        go = ~home & (nxt >= 0)
        walking, at, to = walking[go], nxt[go].astype(np.int64), to[go]
        if trace:
            steps.append((walking, ch.chan[pos[walking], port[go]].astype(np.int64)))
        pos[walking] = at
        links[walking] += 1
    looping[walking] = True
    return Walked(reached, links, pos, looping, steps)


def route_lengths(
    ch: Channels, lft: np.ndarray, dest: tuple[np.ndarray, np.ndarray], max_hops: int = MAX_HOPS
) -> np.ndarray:
    """Links of the route from every switch (the rows of `lft`) to each column's destination (`dest`: the switch and
    port where column j is delivered), -1 where it does not arrive: what `walk` from every switch gives
    (`reached`, `links`), without walking. The routes to one column form an in-tree, so a switch's route is one link
    longer than its next switch's: the lengths grow from the destinations, one length at a time over the entries
    still open (int8: a route that arrives has fewer than `max_hops` links). Columns in blocks of about BLOCK
    entries."""
    n, m = lft.shape
    out = np.full((n, m), -1, dtype=np.int8)
    step = max(1, BLOCK // max(n, 1))
    rows = np.arange(n)[:, None]
    for a in range(0, m, step):
        port = lft[:, a : a + step].astype(np.intp)
        cols = np.arange(port.shape[1])
        hops = out[:, a : a + port.shape[1]]
        at, home_port = dest[0][a : a + step], dest[1][a : a + step]
        has = at >= 0
        home = np.zeros(port.shape, dtype=bool)
        home[at[has], cols[has]] = port[at[has], cols[has]] == home_port[has]
        hops[home] = 0
        nxt = ch.next[rows, port]
        nxt[home] = -1  # arrived: the walk stops there
        i, j = np.nonzero(nxt >= 0)
        to = nxt[i, j]
        for length in range(1, max_hops):
            done = hops[to, j] >= 0
            if not done.any():
                break
            hops[i[done], j[done]] = length
            keep = ~done
            i, j, to = i[keep], j[keep], to[keep]
    return out
