"""The one array form of a fabric, built from the plan's topology or from a discovered fabric: the switches in a
fixed order, per (switch, port) the next switch and the channel id (a directed switch-to-switch link), and per
destination LID the switch and port where it is delivered (a switch's own LID: port 0). Forwarding tables are a
(switches x LIDs) array of ports: an InfiniBand LFT is the single-next-hop case (next-hop sets for ECMP will be a
second table form over the same channels). `fabric.walk` walks them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from ffplan.plan.model import LftLike

if TYPE_CHECKING:
    from ffplan.fabric.discovery import DiscoveredFabric
    from ffplan.opensm import Subnet
    from ffplan.plan.topology import Topology

MAX_HOPS = 64
BLOCK = 1 << 17  # (switch, LID) entries of the deadlock proof handled at once: its temporaries stay in the L2 cache
WALK_BLOCK = 1 << 16  # walks moved at once: fabric.walk holds about ten int64 arrays of this length
PORTS = 256  # an LFT entry is one byte: 255 is "unrouted"
# A switch's LFT: a list of ports by LID, or a row of the (switches x LIDs) array the tree router builds.
Tables = Mapping[str, LftLike]


class Channels:
    """The alive directed switch-to-switch links as integer ids; per (switch, port) the next switch and the channel id
    (-1 where the port leads to no alive switch); per LID where it is delivered (`dest_switch` -1: no port has it);
    per switch the CA ports cabled to it (`sources`)."""

    switches: list[str]
    next: np.ndarray
    chan: np.ndarray
    ends: list[tuple[int, int]]
    peer_of: np.ndarray
    src_of: np.ndarray
    port_of: np.ndarray
    alive: np.ndarray
    dest_switch: np.ndarray
    dest_port: np.ndarray
    sources: np.ndarray

    def __init__(self, topo: Topology):
        """The plan's topology without its failed cables and switches (switches in `topo.lid` order)."""
        self.switches = list(topo.lid)
        sid = {s: i for i, s in enumerate(self.switches)}
        width = max(topo.nports.values(), default=0) + 1
        failed, dead = topo.failed_switches, topo.failed_cables
        # one pass over the cabled ports, in (switch, port) order: with both ends alive a cable is dead only if failed
        links = []
        for (s, p), what in topo.peer.items():
            if what[0] != "switch" or not 0 < p < width or s in failed:
                continue
            far = what[1][0]
            if far not in failed and (not dead or topo.port_label[(s, p)] not in dead):
                links.append((sid[s], p, sid[far]))
        self._link_sorted(links)
        lids = topo.max_lid + 1
        self.dest_switch = np.full(lids, -1, dtype=np.int64)
        self.dest_port = np.zeros(lids, dtype=np.int64)
        self.dest_switch[list(topo.lid.values())] = np.arange(len(self.switches))
        cas = list(topo.ca_by_lid.items())
        self.dest_switch[[lid for lid, _ in cas]] = [sid[ca.leaf] for _, ca in cas]
        self.dest_port[[lid for lid, _ in cas]] = [ca.leaf_port for _, ca in cas]
        self.sources = np.array([len(topo.cas.get(s, ())) for s in self.switches], dtype=np.int64)

    @classmethod
    def discovered(cls, topo: DiscoveredFabric, guids: list[str]) -> Channels:
        """A discovered fabric's switches `guids` (in that order) and their links; the LIDs of the switches and of
        the CA ports cabled to them."""
        out = object.__new__(cls)
        out.switches = list(guids)
        index = {g: i for i, g in enumerate(guids)}
        links = []
        delivered: dict[int, tuple[int, int]] = {}
        sources = np.zeros(len(guids), dtype=np.int64)
        for i, g in enumerate(guids):
            if (g, 0) in topo.port_lid:
                delivered[topo.port_lid[(g, 0)]] = (i, 0)
        for end, other in topo.neighbours().items():
            if end[0] not in index:
                continue
            at = index[end[0]]
            if other[0] in index:
                links.append((at, end[1], index[other[0]]))
            elif topo.kind.get(other[0]) == "Ca" and other in topo.port_lid:
                delivered[topo.port_lid[other]] = (at, end[1])
                sources[at] += 1
        out._link_sorted(links)
        width = max(delivered, default=0) + 1
        out.dest_switch = np.full(width, -1, dtype=np.int64)
        out.dest_port = np.zeros(width, dtype=np.int64)
        for lid, (i, port) in delivered.items():
            out.dest_switch[lid], out.dest_port[lid] = i, port
        out.sources = sources
        return out

    @classmethod
    def of_subnet(cls, fab: Subnet, more_cas: Iterable[tuple[int, str, int]] = ()) -> Channels:
        """`discovered` of the planned (sub-)fabric as ibnetdiscover reads it back (`verify.expect.fabric_topo`),
        read from the Subnet itself: no dicts of ports and links to build first. `more_cas`: (LID, switch, port) of
        CA ports the Subnet does not list (SHARP Aggregation Nodes)."""
        out = object.__new__(cls)
        out.switches = [s.node_guid for s in fab.switches]
        index = {s.name: i for i, s in enumerate(fab.switches)}
        links: list[tuple[int, int, int]] = []
        for a, pa, b, pb in fab.links:
            if a in index and b in index:
                links += ((index[a], pa, index[b]), (index[b], pb, index[a]))
        out._link_sorted(links)
        cas = [(p.lid, index[p.leaf], p.leaf_port) for ca in fab.cas for p in ca.ports]
        cas += [(lid, index[switch], port) for lid, switch, port in more_cas]
        lid, at, port = np.array(cas, dtype=np.int64).reshape(-1, 3).T
        switch_lids = np.array([s.lid for s in fab.switches], dtype=np.int64)
        width = max(int(lid.max(initial=0)), int(switch_lids.max(initial=0))) + 1
        out.dest_switch = np.full(width, -1, dtype=np.int64)
        out.dest_port = np.zeros(width, dtype=np.int64)
        out.dest_switch[switch_lids] = np.arange(len(switch_lids))
        out.dest_switch[lid], out.dest_port[lid] = at, port
        out.sources = np.bincount(at, minlength=len(index)).astype(np.int64)
        return out

    def _link_sorted(self, links: list[tuple[int, int, int]]) -> None:
        """`_link` of the (switch, port, next switch) triples in any order."""
        at, port, to = np.array(links, dtype=np.int64).reshape(-1, 3).T
        order = np.lexsort((to, port, at))  # sorted(links) of numbers: a tenth of the CPU of sorting the tuples
        self._link(at[order], port[order], to[order])

    def _link(self, at: np.ndarray, port: np.ndarray, to: np.ndarray) -> None:
        """The links (switch, port, next switch), sorted by switch and port -> next, chan, ends, peer_of, src_of,
        port_of, alive. Channel ids follow that order: a switch's rise with its ports (deadlock's edges rely on it)."""
        width = max(PORTS, int(port.max(initial=0)) + 1)  # an Ethernet switch may have 256 ports
        self.next = np.full((len(self.switches), width), -1, dtype=np.int32)
        self.chan = np.full((len(self.switches), width), -1, dtype=np.int32)
        self.next[at, port] = to
        self.chan[at, port] = np.arange(len(at))
        self.ends = list(zip(at.tolist(), port.tolist()))  # channel id -> (switch index, port)
        self.peer_of = to.astype(np.int32)  # channel -> switch it enters
        self.src_of = at.astype(np.int32)
        self.port_of = port.astype(np.int32)
        self.alive = np.ones(len(self.ends), dtype=bool)

    def without(self, topo: Topology) -> Channels:
        """These channels with the failed cables and switches of `topo` taken out (ids stay; `alive` marks the rest):
        much cheaper than building them again, for the failure sweep."""
        out = object.__new__(Channels)
        out.switches, out.ends, out.peer_of, out.src_of = self.switches, self.ends, self.peer_of, self.src_of
        out.port_of = self.port_of
        out.dest_switch, out.dest_port, out.sources = self.dest_switch, self.dest_port, self.sources
        out.next, out.chan = self.next.copy(), self.chan.copy()
        dead = [
            c
            for c, (i, p) in enumerate(self.ends)
            if self.switches[i] in topo.failed_switches
            or self.switches[self.peer_of[c]] in topo.failed_switches
            or topo.port_label[(self.switches[i], p)] in topo.failed_cables
        ]
        for c in dead:
            i, p = self.ends[c]
            out.next[i, p] = out.chan[i, p] = -1
        out.alive = self.alive.copy()
        out.alive[dead] = False
        return out

    def of_case(self, topo: Topology) -> Channels:
        """What Channels(topo) builds (ids renumbered: only the alive links), from these channels of the intact
        topology: their links less the failed cables and switches of `topo`."""
        if not topo.failed_cables and not topo.failed_switches:
            return self
        index = {s: i for i, s in enumerate(self.switches)}
        dead = np.zeros(len(self.switches), dtype=bool)
        dead[[index[s] for s in topo.failed_switches if s in index]] = True
        keep = ~dead[self.src_of] & ~dead[self.peer_of]
        for label in topo.failed_cables:
            ends = topo.by_label.get(label, ())[1:]
            for a, b in zip(ends, ends[::-1]):  # the cable from either end, if both are switches
                if a in index and b in index:
                    for p in np.flatnonzero(self.next[index[a]] == index[b]).tolist():
                        if topo.port_label[(a, p)] == label:
                            keep[self.chan[index[a], p]] = False
        out = object.__new__(Channels)
        out.switches = self.switches
        out._link(self.src_of[keep], self.port_of[keep], self.peer_of[keep])
        out.dest_switch, out.dest_port, out.sources = self.dest_switch, self.dest_port, self.sources
        return out

    def name(self, c: int) -> str:
        i, p = self.ends[c]
        return f"{self.switches[i]}[{p}]"


def table_array(topo: Topology, tables: Tables) -> np.ndarray:
    """LFTs as one (switches x LIDs) array in `topo.lid` order (uint8: a port is at most 255)."""
    width = max((len(t) for t in tables.values()), default=0)
    out = np.empty((len(topo.lid), width), dtype=np.uint8)
    for i, s in enumerate(topo.lid):  # a row at a time: a table given as a list is not held as int64 all at once
        out[i] = tables[s]
    return out
