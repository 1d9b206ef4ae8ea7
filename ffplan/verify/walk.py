"""Walk linear forwarding tables hop by hop: reachability of every CA pair and of every switch LID, path lengths,
loops, black holes, and the all-to-all flow count on every switch egress port.

Per destination LID the tables form an in-tree, so each switch is walked once per destination (memoised):
O(switches x LIDs) instead of O(CA pairs x hops).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from ffplan.fabric.discovery import DiscoveredFabric


@dataclass
class WalkResult:
    pairs: int = 0
    reachable: int = 0
    hops: Counter = field(default_factory=Counter)  # switches traversed -> pairs
    failures: list[str] = field(default_factory=list)  # first few unreachable (src switch, dst) with the reason
    failure_count: int = 0
    load: Counter = field(default_factory=Counter)  # (switch guid, egress port) -> all-to-all flows (switch-switch links)

    @property
    def broken(self) -> int:
        return self.pairs - self.reachable

    def load_stats(self) -> tuple[int, float, int]:
        """(max, mean, links) over inter-switch directed links that exist in the fabric."""
        if not self.load:
            return 0, 0.0, 0
        vals = list(self.load.values())
        return max(vals), sum(vals) / len(vals), len(vals)


class Tables:
    """The installed tables on a topology, walked per destination LID; each switch resolved once per LID."""

    def __init__(self, topo: DiscoveredFabric, tables: dict[str, dict[int, int]], names: dict[str, str]):
        self.topo, self.tables, self.names = topo, tables, names
        self.nbr = topo.neighbours()
        self.switches = [g for g, k in topo.kind.items() if k == "Switch"]
        self.lid_of_switch = {g: topo.port_lid.get((g, 0)) for g in self.switches}
        self.ca_ports = [(g, p) for (g, p) in topo.port_lid if topo.kind.get(g) == "Ca"]
        self.ca_lid = {gp: topo.port_lid[gp] for gp in self.ca_ports}
        # Sources: CA ports grouped by the switch they are cabled to.
        self.sources: Counter = Counter()
        self.attach: dict[tuple[str, int], str] = {}
        for gp in self.ca_ports:
            peer = self.nbr.get(gp)
            if peer and topo.kind.get(peer[0]) == "Switch":
                self.sources[peer[0]] += 1
                self.attach[gp] = peer[0]

    def resolver(self, dlid: int) -> Callable[[str], tuple[bool, int, str]]:
        """resolve(switch) -> (reached, switches traversed, reason) for packets to `dlid` entering `switch`."""
        names, tables, nbr, topo = self.names, self.tables, self.nbr, self.topo
        memo: dict[str, tuple[bool, int, str]] = {}

        def resolve(start: str) -> tuple[bool, int, str]:
            path: list[str] = []
            on_path: set[str] = set()
            sw = start
            while True:
                if sw in memo:  # continue from a known switch: every switch before it adds one
                    ok, n, why = memo[sw]
                    break
                if sw in on_path:
                    ok, n, why = False, 0, f"forwarding loop through {names.get(sw, sw)}"
                    break
                on_path.add(sw)
                path.append(sw)
                port = tables.get(sw, {}).get(dlid)
                if port is None:
                    ok, why = False, f"no entry at {names.get(sw, sw)}"
                elif port == 0:
                    ok = self.lid_of_switch.get(sw) == dlid
                    why = "" if ok else f"{names.get(sw, sw)} keeps LID {dlid} (port 0)"
                else:
                    peer = nbr.get((sw, port))
                    if peer is None:
                        ok, why = False, f"{names.get(sw, sw)} port {port} is not connected"
                    elif topo.kind.get(peer[0]) == "Ca":
                        ok = self.ca_lid.get(peer) == dlid
                        why = "" if ok else f"{names.get(sw, sw)} port {port} leads to {names.get(peer[0], peer[0])}"
                    else:
                        sw = peer[0]
                        continue
                # `sw` (the last on the path) ends the walk: it is the one switch traversed from itself
                memo[path.pop()] = (ok, 1 if ok else 0, why)
                n = 1 if ok else 0
                break
            for s in reversed(path):
                n = n + 1 if ok else 0
                memo[s] = (ok, n, why)
            return memo[start] if start in memo else (ok, n, why)

        return resolve


def walk(topo: DiscoveredFabric, tables: dict[str, dict[int, int]], names: dict[str, str] | None = None,
         max_failures: int = 8, count_loads: bool = True) -> WalkResult:
    names = names or topo.desc
    t = Tables(topo, tables, names)
    nbr = t.nbr
    # Inter-switch links, directed, so loads over "all links" include idle ones (mean over the fabric).
    res = WalkResult()
    for (a, pa), (b, pb) in topo.links:
        if topo.kind.get(a) == "Switch" and topo.kind.get(b) == "Switch":
            res.load[(a, pa)] += 0
            res.load[(b, pb)] += 0
    for dst in t.ca_ports:
        dlid = t.ca_lid[dst]
        resolve = t.resolver(dlid)
        own_switch = t.attach.get(dst)
        for sw, count in t.sources.items():
            n_src = count - (1 if sw == own_switch else 0)
            if n_src <= 0:
                continue
            ok, n, why = resolve(sw)
            res.pairs += n_src
            if ok:
                res.reachable += n_src
                res.hops[n] += n_src
                if not count_loads:
                    continue
                # all-to-all load: walk the (memoised, loop-free) path again, adding this switch's sources
                s = sw
                while True:
                    port = tables[s][dlid]
                    peer = nbr[(s, port)]
                    if topo.kind.get(peer[0]) != "Switch":
                        break
                    res.load[(s, port)] += n_src
                    s = peer[0]
            else:
                res.failure_count += n_src
                if len(res.failures) < max_failures:
                    res.failures.append(f"{names.get(sw, sw)} -> LID {dlid} ({names.get(dst[0], dst[0])}): {why}")
    return res


@dataclass
class SwitchLidResult:
    """Switch LIDs (port 0: SMPs, PerfMgt, vendor MADs) reached from every other switch and every CA port."""

    pairs: int = 0
    reachable: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def broken(self) -> int:
        return self.pairs - self.reachable


def walk_switch_lids(topo: DiscoveredFabric, tables: dict[str, dict[int, int]], names: dict[str, str] | None = None,
                     max_failures: int = 8) -> SwitchLidResult:
    names = names or topo.desc
    t = Tables(topo, tables, names)
    res = SwitchLidResult()
    for dst in t.switches:
        dlid = t.lid_of_switch[dst]
        if dlid is None:
            continue
        resolve = t.resolver(dlid)
        for sw in t.switches:
            # from the switch itself (1 source unless it is the destination) and from the CA ports cabled to it
            n_src = (0 if sw == dst else 1) + t.sources.get(sw, 0)
            if n_src == 0:
                continue
            ok, _, why = resolve(sw)
            res.pairs += n_src
            if ok:
                res.reachable += n_src
            elif len(res.failures) < max_failures:
                res.failures.append(f"{names.get(sw, sw)} -> LID {dlid} ({names.get(dst, dst)}): {why}")
    return res
