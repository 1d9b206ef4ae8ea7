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

import numpy as np

from ffplan.analyze.flows import Demand, TopologyArrays


def bin_bound(weights: list[int] | np.ndarray, machines: int) -> int:
    if not len(weights) or machines <= 0:
        return 0
    w = np.sort(np.asarray(weights, dtype=np.int64))[::-1]
    best = max(-(-int(w.sum()) // machines), int(w[0]))
    k = np.arange(1, -(-len(w) // machines))  # every k with k * machines < len(w)
    if len(k):
        best = max(best, int(((k + 1) * w[k * machines]).max()))
    return best


def lower_bound(net: TopologyArrays, demand: Demand) -> tuple[int, str]:
    """(bound, the cut that gives it) for the bundles of `demand` over the alive channels of `net`."""
    ch = net.channels
    zone = net.zone_of_switch
    n = len(net.switches)
    out_links = np.bincount(ch.src_of, minlength=n)
    in_links = np.bincount(ch.peer_of, minlength=n)
    crossing = zone[ch.src_of] != zone[ch.peer_of]
    zone_out = np.bincount(zone[ch.src_of][crossing], minlength=len(net.topo.zones))
    home = net.leaf_of[demand.dst]
    away = home != demand.leaf  # bundles to a port on the source leaf cross no switch-to-switch link
    to_ca = away & (home >= 0)
    cross = to_ca & (zone[np.maximum(home, 0)] != zone[demand.leaf])
    # three-layer trees: a pod is (zone, pod) as one key; 0 for switches in no pod (cores, two-layer trees)
    pod = np.array([net.topo.pod.get(s, 0) for s in net.switches], dtype=np.int64)
    pods = int(pod.max()) + 1
    pod_key = zone * pods + pod
    pod_names = [f"{p} of zone {z}" for z in net.topo.zones for p in range(pods)]
    tier = np.array([net.topo.tier[s] for s in net.switches])
    spine_core = (tier[ch.src_of] == "spine") & (tier[ch.peer_of] == "core")
    core_spine = (tier[ch.src_of] == "core") & (tier[ch.peer_of] == "spine")
    pod_out = np.bincount(pod_key[ch.src_of][spine_core], minlength=len(pod_names))
    pod_in = np.bincount(pod_key[ch.peer_of][core_spine], minlength=len(pod_names))
    home_key = pod_key[np.maximum(home, 0)]
    inter_pod = to_ca & ~cross & (pod[demand.leaf] > 0) & (pod_key[demand.leaf] != home_key)
    best, where = 0, "no flow crosses a switch-to-switch link"
    for keys, weights, machines, names, label in (
            (demand.leaf[away], demand.weight[away], out_links, net.switches, "links out of leaf {}"),
            (home[to_ca], demand.weight[to_ca], in_links, net.switches, "links into leaf {}"),
            (zone[demand.leaf[cross]], demand.weight[cross], zone_out, net.topo.zones, "inter-zone links out of zone {}"),
            (pod_key[demand.leaf[inter_pod]], demand.weight[inter_pod], pod_out, pod_names, "spine-core links out of pod {}"),
            (home_key[inter_pod], demand.weight[inter_pod], pod_in, pod_names, "spine-core links into pod {}")):
        for key, ws in _groups(keys, weights):
            b = bin_bound(ws, int(machines[key]))
            if b > best:
                best, where = b, label.format(names[key])
    return best, where


def _groups(keys: np.ndarray, weights: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """(key, its weights) per distinct key, in the order the keys first come."""
    if not len(keys):
        return []
    order = np.argsort(keys, kind="stable")
    keys, weights = keys[order], weights[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    groups = [(int(keys[s]), weights[s:e]) for s, e in zip(starts, np.r_[starts[1:], len(keys)])]
    first = order[starts]  # where each key first comes in the bundles
    return [groups[i] for i in np.argsort(first)]
