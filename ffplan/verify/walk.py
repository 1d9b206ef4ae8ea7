"""Reachability over installed tables given as dicts (what `dump_fts` printed, parsed): every CA pair and every
switch LID, with path lengths and the first few failures and their reason, on a discovered fabric. The walk is
fabric.walk's, over the fabric's array form (fabric.arrays.Channels.discovered).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ffplan.fabric.arrays import Channels
from ffplan.fabric.discovery import DiscoveredFabric
from ffplan.fabric.walk import Walked, walk

LID_BLOCK = 512  # destinations' worth of walks (every switch to LID_BLOCK LIDs) walked together


@dataclass
class WalkResult:
    pairs: int = 0
    reachable: int = 0
    hops: Counter = field(default_factory=Counter)  # switches traversed -> pairs
    failures: list[str] = field(default_factory=list)  # first few unreachable (src switch, dst) with the reason

    @property
    def broken(self) -> int:
        return self.pairs - self.reachable


class Tables:
    """The installed tables on a discovered fabric as arrays: its switches (in record order), their table entries
    (-1: none; walked as unrouted) and the CA ports cabled to each switch."""

    def __init__(self, topo: DiscoveredFabric, tables: dict[str, dict[int, int]], names: dict[str, str]):
        self.topo, self.names = topo, names
        self.switches = [g for g, k in topo.kind.items() if k == "Switch"]
        self.ch = Channels.discovered(topo, self.switches)
        self.index = {g: i for i, g in enumerate(self.switches)}
        width = max([len(self.ch.dest_switch) - 1, *(lid for t in tables.values() for lid in t)], default=0) + 1
        self.entry = np.full((len(self.switches), width), -1, dtype=np.int16)
        for g, table in tables.items():
            if g in self.index and table:
                self.entry[self.index[g], list(table)] = list(table.values())
        self.lft = np.where(self.entry < 0, 255, self.entry).astype(np.uint8)
        dest = np.full(width, -1, dtype=np.int64)
        dest[: len(self.ch.dest_switch)] = self.ch.dest_switch
        self.ch.dest_switch = dest
        port = np.zeros(width, dtype=np.int64)
        port[: len(self.ch.dest_port)] = self.ch.dest_port
        self.ch.dest_port = port
        self.nbr = topo.neighbours()
        # CA ports cabled to a switch, and their LIDs, in record order
        self.attach = {
            gp: peer[0]
            for gp in topo.port_lid
            if topo.kind.get(gp[0]) == "Ca"
            for peer in [self.nbr.get(gp)]
            if peer and topo.kind.get(peer[0]) == "Switch"
        }
        self.ca_ports = [gp for gp in topo.port_lid if topo.kind.get(gp[0]) == "Ca"]
        self.sources = Counter(self.attach.values())  # in the order of their first CA port

    def walk(self, start: np.ndarray, lids: np.ndarray, trace: bool = False) -> Walked:
        """fabric.walk from switches `start` (indexes) to `lids`; a route crosses each switch at most once."""
        return walk(self.ch, self.lft, start, lids, max_hops=len(self.switches) + 1, trace=trace)

    def why(self, w: Walked, k: int, lid: int) -> str:
        """Why walk `k` (to `lid`) did not arrive."""
        at = int(w.end[k])
        g = self.switches[at]
        name = self.names.get(g, g)
        if w.looping[k]:
            return f"forwarding loop through {name}"
        port = int(self.entry[at, lid])
        if port < 0:
            return f"no entry at {name}"
        if port == 0:
            return f"{name} keeps LID {lid} (port 0)"
        peer = self.nbr.get((g, port))
        if peer is None or self.topo.kind.get(peer[0]) != "Ca":
            return f"{name} port {port} is not connected"
        return f"{name} port {port} leads to {self.names.get(peer[0], peer[0])}"

    def pairs(self, walks: list[tuple[str, int, str, int]], max_failures: int) -> tuple[int, int, Counter, list[str]]:
        """(pairs, reachable pairs, switches traversed -> pairs, first failures) of `walks`: (source switch, LID,
        destination name, sources at the switch), walked in blocks of LID_BLOCK destinations' worth."""
        pairs = reachable = 0
        hops: Counter = Counter()
        failures: list[str] = []
        step = LID_BLOCK * max(len(self.switches), 1)
        for a in range(0, len(walks), step):
            block = walks[a : a + step]
            lids = np.array([lid for _, lid, _, _ in block], dtype=np.int64)
            n = np.array([n for _, _, _, n in block], dtype=np.int64)
            w = self.walk(np.array([self.index[g] for g, _, _, _ in block], dtype=np.int64), lids)
            pairs += int(n.sum())
            reachable += int(n[w.reached].sum())
            count = np.bincount(w.links[w.reached] + 1, weights=n[w.reached]).astype(np.int64)
            for h in np.flatnonzero(count).tolist():
                hops[h] += int(count[h])
            for k in np.flatnonzero(~w.reached)[: max(0, max_failures - len(failures))].tolist():
                g, lid, dst, _ = block[k]
                failures.append(f"{self.names.get(g, g)} -> LID {lid} ({dst}): {self.why(w, k, lid)}")
        return pairs, reachable, hops, failures


def walk_ca_pairs(
    topo: DiscoveredFabric,
    tables: dict[str, dict[int, int]],
    names: dict[str, str] | None = None,
    max_failures: int = 8,
) -> WalkResult:
    """Every CA port to every other CA port (from the switch it is cabled to)."""
    names = names or topo.desc
    t = Tables(topo, tables, names)
    walks = []
    for dst in t.ca_ports:
        own = t.attach.get(dst)
        walks += [
            (g, topo.port_lid[dst], names.get(dst[0], dst[0]), count - (g == own))
            for g, count in t.sources.items()
            if count - (g == own) > 0
        ]
    pairs, reachable, hops, failures = t.pairs(walks, max_failures)
    return WalkResult(pairs, reachable, hops, failures)


def walk_switch_lids(
    topo: DiscoveredFabric,
    tables: dict[str, dict[int, int]],
    names: dict[str, str] | None = None,
    max_failures: int = 8,
) -> WalkResult:
    """Switch LIDs (port 0: SMPs, PerfMgt, vendor MADs) from every other switch and every CA port cabled to one."""
    names = names or topo.desc
    t = Tables(topo, tables, names)
    walks = []
    for dst in t.switches:
        lid = topo.port_lid.get((dst, 0))
        if lid is None:
            continue
        walks += [
            (g, lid, names.get(dst, dst), (g != dst) + t.sources.get(g, 0))
            for g in t.switches
            if (g != dst) + t.sources.get(g, 0) > 0
        ]
    pairs, reachable, _, failures = t.pairs(walks, max_failures)
    return WalkResult(pairs, reachable, Counter(), failures)
