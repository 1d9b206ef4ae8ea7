"""Lower bounds on the maximum flows per switch-to-switch link that ANY destination-based routing (any set of
LFTs) can reach for a given set of flows on this topology.

All flows that leave one switch for one destination take the same path (an LFT entry is per destination), so
they form an unsplittable *bundle* of weight = number of flows. For a cut -- a set of M links every bundle of
some set must cross exactly once -- the bundles are jobs scheduled on M identical machines, and the maximum
link load is at least the classic makespan bounds:

* ceil(total weight / M)  (the fluid bound);
* the largest bundle;
* (k+1) * w_(kM+1) for k = 1, 2, ...: among the kM+1 heaviest bundles some link gets k+1 of them.

For equal weights w (all-to-all: every source of a leaf sends to every destination) the last one is exact:
w * ceil(n / M). Cuts used: the links out of every leaf (bundles from that leaf to destinations elsewhere), the
links into every leaf (bundles from other switches to destinations on it), the inter-zone links out of every
zone (bundles from the zone to destinations outside it), and in a three-layer tree the spine-core links out of and
into every pod (bundles from its leaves to destinations in other pods, and into it).
"""

from __future__ import annotations

from collections import defaultdict

from ffplan.plan.topology import Topology


def bin_bound(weights: list[int], machines: int) -> int:
    if not weights or machines <= 0:
        return 0
    w = sorted(weights, reverse=True)
    best = max(-(-sum(w) // machines), w[0])
    k = 1
    while k * machines < len(w):
        best = max(best, (k + 1) * w[k * machines])
        k += 1
    return best


def lower_bound(topo: Topology, flows: list[tuple[int, int]], links: list[tuple[str, int]]) -> tuple[int, str]:
    """(bound, the cut that gives it) for `flows` over the alive directed links `links`."""
    out_links: dict[str, int] = defaultdict(int)
    in_links: dict[str, int] = defaultdict(int)
    zone_out: dict[str, int] = defaultdict(int)
    pod_out: dict[tuple[str, int], int] = defaultdict(int)
    pod_in: dict[tuple[str, int], int] = defaultdict(int)
    for sw, port in links:
        peer, _ = topo.switch_peer(sw, port)
        out_links[sw] += 1
        in_links[peer] += 1
        if topo.zone_of[peer] != topo.zone_of[sw]:
            zone_out[topo.zone_of[sw]] += 1
        if topo.tier[sw] == "spine" and topo.tier[peer] == "core":
            pod_out[(topo.zone_of[sw], topo.pod[sw])] += 1
        elif topo.tier[sw] == "core" and topo.tier[peer] == "spine":
            pod_in[(topo.zone_of[peer], topo.pod[peer])] += 1
    bundles: dict[tuple[str, int], int] = defaultdict(int)
    for s, d in flows:
        bundles[(topo.ca_by_lid[s].leaf, d)] += 1
    by_src: dict[str, list[int]] = defaultdict(list)
    by_dst: dict[str, list[int]] = defaultdict(list)
    by_zone: dict[str, list[int]] = defaultdict(list)
    by_pod_src: dict[tuple[str, int], list[int]] = defaultdict(list)
    by_pod_dst: dict[tuple[str, int], list[int]] = defaultdict(list)
    for (sw, d), w in bundles.items():
        home = topo.ca_by_lid[d].leaf if d in topo.ca_by_lid else None
        if home == sw:
            continue
        by_src[sw].append(w)
        if home is not None:
            by_dst[home].append(w)
            if topo.zone_of[home] != topo.zone_of[sw]:
                by_zone[topo.zone_of[sw]].append(w)
            elif sw in topo.pod and topo.pod[sw] != topo.pod[home]:
                by_pod_src[(topo.zone_of[sw], topo.pod[sw])].append(w)
                by_pod_dst[(topo.zone_of[home], topo.pod[home])].append(w)
    best, where = 0, "no flow crosses a switch-to-switch link"
    cuts: list[tuple[dict, dict, str]] = [
        (by_src, out_links, "links out of leaf {}"), (by_dst, in_links, "links into leaf {}"),
        (by_zone, zone_out, "inter-zone links out of zone {}"),
        (by_pod_src, pod_out, "spine-core links out of pod {0[1]} of zone {0[0]}"),
        (by_pod_dst, pod_in, "spine-core links into pod {0[1]} of zone {0[0]}")]
    for bundles_by, machines, label in cuts:
        for key, ws in bundles_by.items():
            b = bin_bound(ws, machines.get(key, 0))
            if b > best:
                best, where = b, label.format(key)
    return best, where
