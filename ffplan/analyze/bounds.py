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

from collections.abc import Iterator
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


Kind = tuple[np.ndarray, np.ndarray, np.ndarray, list[str], str]


def _kinds(net: TopologyArrays, leaf: np.ndarray, home: np.ndarray) -> list[Kind]:
    """The kinds of cut in the order a tie between bounds names them, for bundles from switch `leaf` to a CA port on
    switch `home` (-1: no CA port), each as (the bundles it takes, their keys, each channel's key or -1, the keys'
    names, the cut's label): out of every leaf, into every leaf, inter-zone links out of every zone, and in a
    three-layer tree the spine-core links out of and into every pod."""
    ch = net.channels
    zone = net.zone_of_switch
    at = np.maximum(home, 0)
    away = home != leaf  # bundles to a port on the source leaf cross no switch-to-switch link
    to_ca = away & (home >= 0)
    cross = to_ca & (zone[at] != zone[leaf])
    # three-layer trees: a pod is (zone, pod) as one key; 0 for switches in no pod (cores, two-layer trees)
    pod = np.array([net.topo.pod.get(s, 0) for s in net.switches], dtype=np.int64)
    pods = int(pod.max()) + 1
    pod_key = zone * pods + pod
    pod_names = [f"{p} of zone {z}" for z in net.topo.zones for p in range(pods)]
    tier = np.array([net.topo.tier[s] for s in net.switches])
    spine_core = (tier[ch.src_of] == "spine") & (tier[ch.peer_of] == "core")
    core_spine = (tier[ch.src_of] == "core") & (tier[ch.peer_of] == "spine")
    inter_pod = to_ca & ~cross & (pod[leaf] > 0) & (pod_key[leaf] != pod_key[at])
    crossing = zone[ch.src_of] != zone[ch.peer_of]
    return [
        (away, leaf, ch.src_of, net.switches, "links out of leaf {}"),
        (to_ca, home, ch.peer_of, net.switches, "links into leaf {}"),
        (cross, zone[leaf], np.where(crossing, zone[ch.src_of], -1), net.topo.zones, "inter-zone links out of zone {}"),
        (
            inter_pod,
            pod_key[leaf],
            np.where(spine_core, pod_key[ch.src_of], -1),
            pod_names,
            "spine-core links out of pod {}",
        ),
        (
            inter_pod,
            pod_key[at],
            np.where(core_spine, pod_key[ch.peer_of], -1),
            pod_names,
            "spine-core links into pod {}",
        ),
    ]


def cuts(net: TopologyArrays, demand: Demand) -> Iterator[Cut]:
    """The cuts of the lower bound for the bundles of `demand` over the channels of `net`, in the order a tie between
    bounds names them (`_kinds`), each with its bundles' weights."""
    for taken, keys, link_keys, names, label in _kinds(net, demand.leaf, net.leaf_of[demand.dst]):
        order = np.argsort(link_keys, kind="stable")  # channel ids by key
        bounds = np.searchsorted(link_keys[order], np.arange(len(names) + 1))
        for key, ws in _groups(keys[taken], demand.weight[taken]):
            yield Cut(label.format(names[key]), ws, order[bounds[key] : bounds[key + 1]])


def lower_bound(net: TopologyArrays, demand: Demand) -> tuple[int, str]:
    """(bound, the cut that gives it) for the bundles of `demand` over the alive channels of `net`. Whether a cut
    takes a bundle, and its key, depend on the bundle's (source leaf, destination leaf) pair alone, so the bundles
    are counted once per pair and weight (`_pairs`) and every cut's `bin_bound` is taken at once from each key's
    histogram of weights (`_histogram_bounds`); cut by cut over `cuts` where that histogram would be too large."""
    best, where = 0, "no flow crosses a switch-to-switch link"
    alive = net.channels.alive
    pairs = _pairs(net, demand)
    if pairs is None:
        for cut in cuts(net, demand):
            b = bin_bound(cut.weights, int(alive[cut.links].sum()))
            if b > best:
                best, where = b, cut.name
        return best, where
    pair_of, hist, values, leaf, home = pairs
    for taken, keys, link_keys, names, label in _kinds(net, leaf, home):
        on = link_keys >= 0
        machines = np.bincount(link_keys[on], weights=alive[on], minlength=len(names)).astype(np.int64)
        key_hist = np.stack(
            [np.bincount(keys[taken], weights=hist[taken, v], minlength=len(names)) for v in range(len(values))],
            axis=1,
        ).astype(np.int64)
        bounds = _histogram_bounds(key_hist, values, machines)
        if int(bounds.max()) > best:
            best = int(bounds.max())
            tied = taken & (bounds == best)[np.where(taken, keys, 0)]
            where = label.format(names[int(keys[pair_of[np.argmax(tied[pair_of])]])])  # the first bundle's key
    return best, where


PAIR_CELLS = 1 << 23  # (source leaf, destination leaf, weight) cells of `_pairs` at most


def _pairs(
    net: TopologyArrays, demand: Demand
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The bundles of `demand` by (source leaf, destination leaf) pair: (each bundle's pair, per pair and weight value
    its bundles, the weight values ascending, each pair's source and destination switch, -1 for a destination that is
    no CA port). The leaves are the switches with CA ports; None where a bundle leaves another switch, or the pairs
    times the weight values exceed PAIR_CELLS."""
    if not len(demand.leaf) or int(demand.weight.min()) < 0 or int(demand.weight.max()) >= PAIR_CELLS:
        return None
    leaves = np.flatnonzero(np.bincount(net.leaf_of[net.leaf_of >= 0], minlength=len(net.switches)))
    count = len(leaves) + 1  # the leaves, and no CA port
    index = np.full(len(net.switches) + 1, len(leaves), dtype=np.int32)  # by switch; the last: -1, no CA port
    index[leaves] = np.arange(len(leaves), dtype=np.int32)
    src = index[demand.leaf]
    present = np.bincount(demand.weight)
    values = np.flatnonzero(present)
    if (src == len(leaves)).any() or len(leaves) * count * len(values) > PAIR_CELLS:
        return None
    value_of = np.zeros(len(present), dtype=np.int32)
    value_of[values] = np.arange(len(values), dtype=np.int32)
    pair_of = src * count + index[net.leaf_of[demand.dst]]
    hist = np.bincount(pair_of * len(values) + value_of[demand.weight], minlength=len(leaves) * count * len(values))
    switch = np.append(leaves, -1)
    return pair_of, hist.reshape(-1, len(values)), values, np.repeat(leaves, count), np.tile(switch, len(leaves))


def _histogram_bounds(hist: np.ndarray, values: np.ndarray, machines: np.ndarray) -> np.ndarray:
    """`bin_bound` of every key at once from its bundles' histogram `hist` (keys x weight `values`, ascending) over
    its `machines` (0 for a key without bundles or links): the sorted weights only matter through the histogram, in
    which the largest k with k * machines inside one weight's run of ranks gives that run's (k + 1) * weight."""
    hist = hist[:, ::-1]  # heaviest first
    weight = values[::-1].astype(np.int64)
    heavier = np.cumsum(hist, axis=1)  # per key and weight: bundles at least that heavy
    count, total = heavier[:, -1], hist @ weight
    m = np.maximum(machines, 1)[:, None]
    k = (heavier - 1) // m  # the largest k whose rank k * machines is among the bundles this heavy
    run = (hist > 0) & (k >= 1) & (k * m >= heavier - hist)  # ... and within this weight's run of ranks
    ranked = np.where(run, (k + 1) * weight, 0).max(axis=1, initial=0)
    heaviest = weight[np.argmax(hist > 0, axis=1)]
    bound = np.maximum(np.maximum(-(-total // m[:, 0]), heaviest), ranked)
    return np.where((count > 0) & (machines > 0), bound, 0)


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
