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

from collections.abc import Callable, Iterator
from dataclasses import dataclass

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


@dataclass
class Cut:
    """Links every bundle of `weights` must cross exactly once: `links` are channel ids of the topology the cut was
    taken on (a sweep's case counts those of them still alive)."""

    name: str
    weights: np.ndarray
    links: np.ndarray


def cuts(net: TopologyArrays, demand: Demand) -> Iterator[Cut]:
    """The cuts of the lower bound for the bundles of `demand` over the channels of `net`, in the order a tie between
    bounds names them: out of every leaf, into every leaf, inter-zone links out of every zone, and in a three-layer
    tree the spine-core links out of and into every pod. Made one kind at a time: each kind's bundles are sorted by
    their key, and holding all five sorted copies of 8.4 M bundles (16,384 ports all-to-all) took 500 MB."""
    ch = net.channels
    zone = net.zone_of_switch
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
    inter_pod = to_ca & ~cross & (pod[demand.leaf] > 0) & (pod_key[demand.leaf] != pod_key[np.maximum(home, 0)])
    crossing = zone[ch.src_of] != zone[ch.peer_of]
    kinds: list[tuple[np.ndarray, Callable[[np.ndarray], np.ndarray], np.ndarray, list[str], str]] = [
        (away, lambda taken: demand.leaf[taken], ch.src_of, net.switches, "links out of leaf {}"),
        (to_ca, lambda taken: home[taken], ch.peer_of, net.switches, "links into leaf {}"),
        (
            cross,
            lambda taken: zone[demand.leaf[taken]],
            np.where(crossing, zone[ch.src_of], -1),
            net.topo.zones,
            "inter-zone links out of zone {}",
        ),
        (
            inter_pod,
            lambda taken: pod_key[demand.leaf[taken]],
            np.where(spine_core, pod_key[ch.src_of], -1),
            pod_names,
            "spine-core links out of pod {}",
        ),
        (
            inter_pod,
            lambda taken: pod_key[home[taken]],
            np.where(core_spine, pod_key[ch.peer_of], -1),
            pod_names,
            "spine-core links into pod {}",
        ),
    ]
    for taken, keys_of, link_keys, names, label in kinds:
        order = np.argsort(link_keys, kind="stable")  # channel ids by key
        bounds = np.searchsorted(link_keys[order], np.arange(len(names) + 1))
        for key, ws in _groups(keys_of(taken), demand.weight[taken]):
            yield Cut(label.format(names[key]), ws, order[bounds[key] : bounds[key + 1]])


def lower_bound(net: TopologyArrays, demand: Demand) -> tuple[int, str]:
    """(bound, the cut that gives it) for the bundles of `demand` over the alive channels of `net`."""
    best, where = 0, "no flow crosses a switch-to-switch link"
    alive = net.channels.alive
    for cut in cuts(net, demand):
        b = bin_bound(cut.weights, int(alive[cut.links].sum()))
        if b > best:
            best, where = b, cut.name
    return best, where


def _groups(keys: np.ndarray, weights: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """(key, its weights) per distinct key, in the order the keys first come. The keys are indices (of a switch, a
    zone, a pod): below 65,536 they are sorted as 16-bit integers, which numpy's stable sort does by radix."""
    if not len(keys):
        return []
    if int(keys.min()) >= 0 and int(keys.max()) < 1 << 16:
        keys = keys.astype(np.uint16)
    order = np.argsort(keys, kind="stable")
    keys, weights = keys[order], weights[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    groups = [(int(keys[s]), weights[s:e]) for s, e in zip(starts, np.r_[starts[1:], len(keys)])]
    first = order[starts]  # where each key first comes in the bundles
    return [groups[i] for i in np.argsort(first)]
