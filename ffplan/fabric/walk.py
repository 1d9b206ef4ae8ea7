"""The one walk over forwarding tables: packets entering switches towards destination LIDs, all moved one hop per
step together (numpy), over a fabric's array form (fabric.arrays.Channels). A walk arrives when it reaches the
switch and port where its LID is delivered; it stops at a dead end (an unrouted LID, a port to no switch or to the
wrong CA, port 0 of another switch); one still moving after `max_hops` steps is in a forwarding loop.

Every stage that follows routes uses it: the design's route check and deadlock proof (fabric.reach,
fabric.deadlock), analyze's flow loads and the failure sweep, verify's and reroute's reachability.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ffplan.fabric.arrays import MAX_HOPS, Channels

TREE_BLOCK = 1 << 18  # (switch, LID) entries of the in-trees handled at once: a few arrays of them stay in the cache


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


@dataclass
class InTrees:
    """The in-trees of a block of columns of a set of LFTs: `hops` (switches x the block's columns, int8) is each
    switch's route length to the column's destination (-1 where it does not arrive), `chan` the channel its entry
    takes (-1: none, or arrived) and `to`, flat over the block, the entry of the next switch on the route
    (`hops.size`, an entry past the block, where there is none)."""

    cols: slice
    hops: np.ndarray
    chan: np.ndarray
    to: np.ndarray


def in_trees(
    ch: Channels, lft: np.ndarray, dest: tuple[np.ndarray, np.ndarray], max_hops: int = MAX_HOPS
) -> Iterator[InTrees]:
    """The route lengths from every switch (the rows of `lft`) to each column's destination (`dest`: the switch and
    port where column j is delivered), a block of columns at a time: what `walk` from every switch gives (`reached`,
    `links`), without walking. The routes to one column form an in-tree, so a switch's route is one link longer than
    its next switch's: the entries whose next entry has length L - 1 have length L, found for every entry of the block
    at once, a length at a time. Blocks of TREE_BLOCK entries, so each pass stays in the cache."""
    n, m = lft.shape
    chan_of = ch.chan.ravel()
    peer_of = np.append(ch.peer_of, np.int32(-1))  # channel -1: no next switch
    row_base = (np.arange(n, dtype=np.intp) * ch.chan.shape[1])[:, None]
    step = max(1, TREE_BLOCK // max(n, 1))
    for a in range(0, m, step):
        port = lft[:, a : a + step]
        b = port.shape[1]
        chan = chan_of.take(row_base + port)
        at, home_port = dest[0][a : a + b], dest[1][a : a + b]
        cols = np.flatnonzero(at >= 0)
        home = cols[port[at[cols], cols] == home_port[cols]]
        lengths = np.full(n * b + 1, -1, dtype=np.int8)  # the last entry: where dead ends lead, never arrives
        lengths[at[home] * b + home] = 0
        chan[at[home], home] = -1  # arrived: the walk stops there
        nxt = peer_of.take(chan)
        to = np.where(nxt >= 0, nxt * b + np.arange(b), n * b).ravel()
        hops = lengths[:-1]
        for length in range(1, max_hops):
            grown = lengths.take(to) == length - 1  # only entries still open: a set entry's next is one shorter
            if not grown.any():
                break
            np.copyto(hops, np.int8(length), where=grown)
        yield InTrees(slice(a, a + b), hops.reshape(n, b), chan, to)


@dataclass
class RouteLengths:
    """`route_lengths` of a set of LFTs on the channels `ch` (its switches are the rows, its LIDs delivered where it
    says), as a router measured them: a later stage over the same tables (reroute's reachability) takes them instead
    of measuring again."""

    ch: Channels
    links: np.ndarray  # (switches x LIDs) int8, -1 where a route does not arrive within MAX_HOPS links


def route_lengths(
    ch: Channels, lft: np.ndarray, dest: tuple[np.ndarray, np.ndarray], max_hops: int = MAX_HOPS
) -> np.ndarray:
    """Links of the route from every switch (the rows of `lft`) to each column's destination (`dest`: the switch and
    port where column j is delivered), -1 where it does not arrive (int8: a route that arrives has fewer than
    `max_hops` links): `in_trees` put together."""
    out = np.empty(lft.shape, dtype=np.int8)
    for block in in_trees(ch, lft, dest, max_hops):
        out[:, block.cols] = block.hops
    return out
