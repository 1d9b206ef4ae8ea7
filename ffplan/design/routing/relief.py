"""The tree router's relief of a spine position that lost core slots (docs/routing.md section 7, step 4): before the
spines are routed, source leaves send a share of their cross-pod destinations up other spines of their pod, and some
intra-pod destinations up the hurt spine in exchange, thousands of each computed at once.

Why: a spine that lost c of its K core slots keeps its pod's cross-pod traffic at its position on the K - c slots
left (the minimal repair moves no healthy pair), K / (K - c) of the intact load. Only the source leaves can send
less up that position. A leaf shift phase (leaf i's ports to leaf i+k's) must still put at most two destinations on
one link, so a source leaf may send at most two ports of one destination leaf up one spine: one move per (source
leaf, destination leaf) pair. Over every cross-pod pair through a hurt spine at position u whose index difference is
u mod rho (rho from K / c up, _share), the source leaf sends the destination leaf's port at u up the
((difference / rho + u) mod h)-th of the h healthy positions: a 1/rho share off every uplink of the hurt spine,
spread evenly over the other positions, each of their spines' uplinks (the destination's own core slot) and core
cables. That adds flows to the source leaf's uplink and the destination leaf's downlink at the new position; where
the same pod has a pair (a, b) whose source a moved something to position v and whose destination b received
something at v, a sends b's port at v up u instead (a Latin square over the pod's pairs, so each pair moves once):
that evens both leaves out again.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ffplan.plan.model import UNROUTED

if TYPE_CHECKING:
    from ffplan.design.routing.tree import TreeCase


def relieve(c: TreeCase) -> dict[tuple[int, int], np.ndarray]:
    """Move the leaves' entries (c.lft) as the module says. Returns, per (zone, pod) whose leaves moved cross-pod
    destinations, the change of the CA ports sending each alive destination (c.d) up each slot (alive destinations
    x U), for the spines' loads (TreeCase._spine_entries)."""
    r = c.r
    d = c.d
    sources = np.bincount(r.d_leaf[d][r.d_ca[d]], minlength=len(r.names))  # CA ports per leaf
    hurt = _hurt_positions(c, sources)
    if not hurt:
        return {}
    # a leaf's alive CA destinations by slot (columns of c.d), -1 where none or several share the slot
    single = r.d_ca[d] & (r.d_size[d] == 1)
    by_slot = np.full((len(r.names), max(r.U, 1)), -1, dtype=np.int64)
    k = np.nonzero(single)[0]
    by_slot[r.d_leaf[d][k], r.d_slot[d][k]] = k
    shared = np.bincount(r.d_leaf[d][k] * max(r.U, 1) + r.d_slot[d][k], minlength=by_slot.size) > 1
    by_slot.reshape(-1)[shared] = -1
    full = np.ones(len(r.names), dtype=bool)  # leaves that send every destination up its own slot
    full[r.choosing_leaves] = False
    moved: dict[tuple[int, int], np.ndarray] = {}
    zone, _, u, _ = hurt[0]  # (one position of one zone: _at_one_position)
    given = np.zeros((len(r.names), max(r.U, 1)), dtype=np.int64)  # [a, v]: a sent a far leaf's port at u up v
    taken = np.zeros_like(given)  # [b, v]: b's port at u came up v
    for _, pod, _, rho in hurt:
        _send_around(c, zone, pod, u, rho, by_slot, full, sources, given, taken, moved)
    for pod in sorted({pod for _, pod, _, _ in hurt} | set(r.pod[np.nonzero(taken.any(axis=1))[0]].tolist())):
        _even_out(c, zone, pod, u, by_slot, full, given, taken)
    return moved


def _hurt_positions(c: TreeCase, sources: np.ndarray) -> list[tuple[int, int, int, int]]:
    """(zone, pod, position, rho) of every alive spine that lost some core slots (a cable or its core), when they are
    all at one position of one zone and one per pod, and whose relief lowers the estimated maximum (_share); 1/rho is
    the share of the cross-pod pairs through it that moves."""
    r = c.r
    spines = r.spine_ids[c.alive[r.spine_ids]]
    slots = r.cu_to[spines] >= 0
    lost = (slots & ~(c.cu_ok[spines] & c.alive[np.maximum(r.cu_to[spines], 0)])).sum(axis=1)
    hurt = [(s, n_lost, n) for s, n_lost, n in zip(spines.tolist(), lost.tolist(), slots.sum(axis=1).tolist())]
    hurt = [(s, n_lost, n) for s, n_lost, n in hurt if 0 < n_lost < n]
    if not _at_one_position(c, [s for s, _, _ in hurt]):
        return []
    out = []
    for s, n_lost, n in hurt:
        rho = _share(c, s, n_lost, n, sources)
        if rho:
            out.append((int(r.zone[s]), int(r.pod[s]), int(r.position[s]), rho))
    return sorted(out)


def _at_one_position(c: TreeCase, spines: list[int]) -> bool:
    """The hurt spines are at one position of one zone, one per pod. Hurt spines at several positions (or several
    in a pod) leave fewer healthy positions to take the shares, and the shares meet on them: the leaf uplinks fill
    first (1,096 against the rebalance's 1,048 on the 1,024-port tree with three spines' cables down, 832 against
    640 on the 512-port tree with a core and two cables of another position), so those are left to the rebalance."""
    r = c.r
    places = {(int(r.zone[s]), int(r.position[s])) for s in spines}
    pods = [(int(r.zone[s]), int(r.pod[s])) for s in spines]
    return len(places) == 1 and len(set(pods)) == len(pods)


def _share(c: TreeCase, s: int, lost: int, slots: int, sources: np.ndarray) -> int:
    """rho: the hurt spine s's uplinks carry (1 - 1/rho) x slots / (slots - lost) of their busiest intact load; each
    source leaf of its pod sends 1/rho of its far leaves' ports at s's position elsewhere, and makes up for as many as
    it has pod mates (_even_out): the rest adds one leaf's flows to some of its uplinks. The rho, from slots / lost
    up, that keeps the busier of the two lowest (the first of equals); 0 when none is below the minimal repair's
    estimate (no relief: issue 11's rule, healthy routes move only for a lower maximum; the rebalance still may)."""
    r = c.r
    zone, pod, u = int(r.zone[s]), int(r.pod[s]), int(r.position[s])
    d = c.d
    sends = c.pod_sends(zone, pod)[:, u] * r.d_ca[d]
    far = (r.d_zone[d] == zone) & (r.d_pod[d] != pod)
    busiest = int(np.bincount(r.d_core_slot[d][far], weights=sends[far]).max(initial=0))
    leaves = r.leaf_ids[(r.zone[r.leaf_ids] == zone) & c.alive[r.leaf_ids]]
    mine = leaves[r.pod[leaves] == pod]
    flows = int(sources[mine].max(initial=0))
    leaf_top = int(c.up_load[mine].max(initial=0))
    healthy = max(r.U - 1, 1)
    first = max(1, round(slots / lost))
    # the minimal repair's: the uplinks left take the lost slots' share, and a core that lost one of several cables to
    # the spine sends down the others what all of them carried
    cables = r.cu_to[s][r.cu_to[s] >= 0]
    alive = r.cu_to[s][(r.cu_to[s] >= 0) & c.cu_ok[s]]
    kept = [int((cables == k).sum()) / int((alive == k).sum()) for k in np.unique(alive).tolist()]
    best, chosen = max(busiest * max([slots / (slots - lost), *kept]), leaf_top), 0
    for rho in range(first, 3 * first + 1):
        spine_top = busiest * slots * (rho - 1) / ((slots - lost) * rho)
        unmade = max(0.0, (len(leaves) - len(mine)) / rho - (len(mine) - 1))
        top = max(spine_top, leaf_top + flows * math.ceil(unmade / healthy))
        if top < best:
            best, chosen = top, rho
    return chosen


def _send_around(
    c: TreeCase,
    zone: int,
    pod: int,
    u: int,
    rho: int,
    by_slot: np.ndarray,
    full: np.ndarray,
    sources: np.ndarray,
    given: np.ndarray,
    taken: np.ndarray,
    moved: dict[tuple[int, int], np.ndarray],
) -> None:
    """The 1/rho share of the cross-pod pairs out of the pod and into it that went through position u goes up a
    healthy position instead (into the pod too: a lost cable or core also leaves the pod's spine fewer ways in)."""
    r, lft = c.r, c.lft
    leaves = r.leaf_ids[(r.zone[r.leaf_ids] == zone) & c.alive[r.leaf_ids] & full[r.leaf_ids]]
    mine = leaves[r.pod[leaves] == pod]
    far = leaves[r.pod[leaves] != pod]
    a, b = (np.concatenate(x) for x in zip(_pairs(mine, far), _pairs(far, mine)))
    col = by_slot[b, u]  # b's port at the hurt position
    gap = (r.leaf_index[b] - r.leaf_index[a]) % _index_span(c, zone)
    pick = (col >= 0) & (gap % rho == u % rho)  # (several hurt positions of a pod: other pairs)
    a, b, col, gap = a[pick], b[pick], col[pick], gap[pick]
    healthy, count = _healthy_positions(c, zone, u)
    pa, pb = r.pod[a], r.pod[b]
    v = healthy[pa, (gap // rho + u) % np.maximum(count[pa], 1)]
    lid = r.d_lid[c.d[col]]
    spine = r.up_to[a, np.maximum(v, 0)]
    ok = (v >= 0) & (lft[a, lid] == r.up_port[a, u]) & c.up_ok[a, np.maximum(v, 0)] & (spine >= 0)
    ok &= (healthy[pb] == v[:, None]).any(axis=1)  # the position is healthy in b's pod as well
    ok &= c.alive[np.maximum(spine, 0)] & c.reach[np.maximum(spine, 0), b]
    # a sends at most two ports of b up one spine (a leaf shift phase): here b's port at v alone, so far
    ok &= _ports_sent(c, a, b, np.maximum(v, 0), by_slot) == 1
    a, b, col, v, lid = a[ok], b[ok], col[ok], v[ok], lid[ok]
    lft[a, lid] = r.up_port[a, v]
    np.add.at(given, (a, v), 1)
    np.add.at(taken, (b, v), 1)
    for p in np.unique(r.pod[a]).tolist():
        k = r.pod[a] == p
        change = moved.setdefault((zone, p), np.zeros((len(c.d), max(r.U, 1)), dtype=np.int64))
        np.add.at(change, (col[k], np.full(int(k.sum()), u)), -sources[a[k]])
        np.add.at(change, (col[k], v[k]), sources[a[k]])


def _pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (a, b) of the two sets."""
    return np.repeat(a, len(b)), np.tile(b, len(a))


def _even_out(
    c: TreeCase,
    zone: int,
    pod: int,
    u: int,
    by_slot: np.ndarray,
    full: np.ndarray,
    given: np.ndarray,
    taken: np.ndarray,
) -> None:
    """Within one pod, source a sends destination leaf b's port at v up position u where a gave a cross-pod
    destination from u to v and b took one from u at v (each still unmatched): a Latin square over the pod's (a, b)
    pairs, v = the ((index of b - index of a) mod L - 1)-th position other than u, so no pair moves twice."""
    r, lft = c.r, c.lft
    leaves = _pod_leaves(c, zone, pod)
    leaves = leaves[full[leaves]]
    spine = r.spine_at[zone, pod, u]
    if len(leaves) < 2 or spine < 0 or not c.alive[spine]:
        return
    others = np.array([p for p in range(max(r.U, 1)) if p != u], dtype=np.int64)
    a, b = (x.ravel() for x in np.meshgrid(leaves, leaves, indexing="ij"))
    keep = a != b
    a, b = a[keep], b[keep]
    span = int(np.count_nonzero((r.zone[r.leaf_ids] == zone) & (r.pod[r.leaf_ids] == pod)))
    v = others[((r.leaf_index[b] - r.leaf_index[a]) % span - 1) % len(others)]
    col = by_slot[b, v]
    ok = (given[a, v] > 0) & (taken[b, v] > 0) & (col >= 0)
    lid = r.d_lid[c.d[np.maximum(col, 0)]]
    ok &= (lft[a, lid] == r.up_port[a, v]) & c.up_ok[a, u] & (c.link[spine, b] != UNROUTED)
    ok &= _ports_sent(c, a, b, np.full(len(a), u), by_slot) == 1
    a, b, v, lid = a[ok], b[ok], v[ok], lid[ok]
    lft[a, lid] = r.up_port[a, u]
    np.subtract.at(given, (a, v), 1)
    np.subtract.at(taken, (b, v), 1)


def _ports_sent(c: TreeCase, a: np.ndarray, b: np.ndarray, v: np.ndarray, by_slot: np.ndarray) -> np.ndarray:
    """How many CA ports of leaf b source leaf a sends up its uplink v, per (a, b, v)."""
    r = c.r
    cols = by_slot[b]  # (pairs x U)
    lids = r.d_lid[c.d[np.maximum(cols, 0)]]
    sent = (c.lft[a[:, None], lids] == r.up_port[a, v][:, None]) & (cols >= 0)
    out: np.ndarray = sent.sum(axis=1)
    return out


def _healthy_positions(c: TreeCase, zone: int, u: int) -> tuple[np.ndarray, np.ndarray]:
    """(pods x U, pods): per pod of the zone, the positions other than u whose spine is alive with every core slot
    alive, in order and -1 padded, and how many."""
    r = c.r
    spines = r.spine_at[zone]  # (pods x positions)
    at = np.maximum(spines, 0)
    slots = r.cu_to[at] >= 0
    whole = ((c.cu_ok[at] & c.alive[np.maximum(r.cu_to[at], 0)]) | ~slots).all(axis=2)
    ok = (spines >= 0) & c.alive[at] & whole
    ok[:, u] = False
    out = np.full((len(spines), max(r.U, 1)), -1, dtype=np.int64)
    for p in range(len(spines)):
        where = np.nonzero(ok[p])[0]
        out[p, : len(where)] = where
    return out, ok.sum(axis=1)


def _pod_leaves(c: TreeCase, zone: int, pod: int) -> np.ndarray:
    r = c.r
    leaves = r.leaf_ids[(r.zone[r.leaf_ids] == zone) & (r.pod[r.leaf_ids] == pod)]
    out: np.ndarray = leaves[c.alive[leaves]]
    return out


def _index_span(c: TreeCase, zone: int) -> int:
    """The number of leaf indexes of a zone (the leaf shift's modulus)."""
    r = c.r
    leaves = r.leaf_ids[r.zone[r.leaf_ids] == zone]
    return int(r.leaf_index[leaves].max()) + 1
