"""Walk linear forwarding tables hop by hop: reachability of every CA pair, path lengths, loops, black holes,
and the all-to-all flow count on every switch egress port.

Per destination LID the tables form an in-tree, so each switch is walked once per destination (memoised):
O(switches x LIDs) instead of O(CA pairs x hops).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ffplan.verify.parse import Topo


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


def walk(topo: Topo, tables: dict[str, dict[int, int]], names: dict[str, str] | None = None,
         max_failures: int = 8) -> WalkResult:
    names = names or topo.desc
    nbr = topo.neighbours()
    switches = [g for g, k in topo.kind.items() if k == "Switch"]
    lid_of_switch = {g: topo.port_lid.get((g, 0)) for g in switches}
    ca_ports = [(g, p) for (g, p) in topo.port_lid if topo.kind.get(g) == "Ca"]
    ca_lid = {gp: topo.port_lid[gp] for gp in ca_ports}
    # Sources: CA ports grouped by the switch they are cabled to.
    sources: Counter = Counter()
    attach: dict[tuple[str, int], str] = {}
    for gp in ca_ports:
        peer = nbr.get(gp)
        if peer and topo.kind.get(peer[0]) == "Switch":
            sources[peer[0]] += 1
            attach[gp] = peer[0]
    # Inter-switch links, directed, so loads over "all links" include idle ones (mean over the fabric).
    res = WalkResult()
    for (a, pa), (b, pb) in topo.links:
        if topo.kind.get(a) == "Switch" and topo.kind.get(b) == "Switch":
            res.load[(a, pa)] += 0
            res.load[(b, pb)] += 0
    for dst in ca_ports:
        dlid = ca_lid[dst]
        memo: dict[str, tuple[bool, int, str]] = {}  # switch -> (reached, switches traversed, reason)
        own_switch = attach.get(dst)

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
                    ok = lid_of_switch.get(sw) == dlid
                    why = "" if ok else f"{names.get(sw, sw)} keeps LID {dlid} (port 0)"
                else:
                    peer = nbr.get((sw, port))
                    if peer is None:
                        ok, why = False, f"{names.get(sw, sw)} port {port} is not connected"
                    elif topo.kind.get(peer[0]) == "Ca":
                        ok = ca_lid.get(peer) == dlid
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

        for sw, count in sources.items():
            n_src = count - (1 if sw == own_switch else 0)
            if n_src <= 0:
                continue
            ok, n, why = resolve(sw)
            res.pairs += n_src
            if ok:
                res.reachable += n_src
                res.hops[n] += n_src
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
