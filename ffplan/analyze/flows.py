"""Walk LFTs and count flows per directed link.

A flow is (source CA LID, destination LID). All flows from one switch to one destination follow the same
path (the LFTs are destination-based), so flows are grouped per (first switch, destination) and each group's
path is walked once.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ffplan.plan.topology import Topology
from ffplan.plan.model import UNROUTED

MAX_HOPS = 64


class RouteError(Exception):
    """A flow's walk ends in a dead end (unrouted LID, wrong CA, loop)."""


@dataclass
class Walker:
    """Paths over a set of LFTs (switch name -> ports by LID) on the plan's topology."""

    topo: Topology
    tables: dict[str, list[int]]
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
            port = table[lid]
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

    def switch_hops(self, src_lid: int, dst_lid: int) -> int:
        """Switches a packet traverses from CA `src_lid` to LID `dst_lid`."""
        leaf = self.topo.ca_by_lid[src_lid].leaf
        return len(self.path(leaf, dst_lid)) + 1


@dataclass
class LinkLoad:
    fabric: dict[tuple[str, int], int]  # directed switch-to-switch link (switch, out port) -> flows
    inject: dict[int, int]  # CA LID -> flows it sends
    eject: dict[int, int]  # destination LID -> flows it receives
    unroutable: list[tuple[int, int]]
    flows: int


def count_loads(walker: Walker, flows: list[tuple[int, int]]) -> LinkLoad:
    topo = walker.topo
    groups: dict[tuple[str, int], int] = defaultdict(int)
    inject: dict[int, int] = defaultdict(int)
    eject: dict[int, int] = defaultdict(int)
    for s, d in flows:
        groups[(topo.ca_by_lid[s].leaf, d)] += 1
        inject[s] += 1
        eject[d] += 1
    load: dict[tuple[str, int], int] = defaultdict(int)
    bad: list[tuple[int, int]] = []
    bad_groups = set()
    for (sw, d), n in groups.items():
        try:
            for link in walker.path(sw, d):
                load[link] += n
        except RouteError:
            bad_groups.add((sw, d))
    if bad_groups:
        bad = [(s, d) for s, d in flows if (topo.ca_by_lid[s].leaf, d) in bad_groups]
    return LinkLoad(dict(load), dict(inject), dict(eject), bad, len(flows))


def fabric_links(topo: Topology) -> list[tuple[str, int]]:
    """Every alive directed switch-to-switch link (switch, out port)."""
    out = []
    for (sw, port), what in topo.peer.items():
        if what[0] != "switch" or sw in topo.failed_switches or what[1][0] in topo.failed_switches:
            continue
        if topo.port_label[(sw, port)] in topo.failed_cables:
            continue
        out.append((sw, port))
    return sorted(out)
