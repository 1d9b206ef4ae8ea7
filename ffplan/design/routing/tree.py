"""The tree router: pure fat trees (no inter-zone links): planes, single zones and three-layer trees (leaf, spine,
core), array-based.

docs/routing.md section 5 has the long form. Every table is one row of a (switches x LIDs) numpy array.

* **Up*/down*, d-mod-k on two levels.** Every CA and leaf LID d has a *slot* u (the leaf uplink it is reached
  through: spine position u of every pod), dealt as in the two-layer router (distinct slots for the ports of one
  leaf, holes round-robin, roles balanced), and a *core slot* x (the spine uplink it is reached through from
  another pod): within a pod the destinations of one slot get distinct core slots, and over the pods each spine
  position's destinations are water-grown over its uplinks, role by role. A leaf sends d up uplink u; a spine of
  d's pod sends it down to d's leaf; a spine of another pod sends it up uplink x to a core, which sends it down to
  the spine at its position in d's pod. So the slots fix the whole path whoever sends: a shift permutation is
  contention-free and all-to-all reaches the bound on every link. Every route climbs then descends, so the
  channel dependency graph of the CA routes has no cycle (ranking: cores, spines, leaves).
* **Sparse leaves.** A CA port on a leaf with fewer CA ports than uplinks also owns some of that leaf's unused
  slots; each source leaf picks one of them for it (TreeRouter._choose_slots), so its incoming traffic comes down
  several spine-to-leaf links instead of one. Spines and cores route by destination as before, so any slot of the
  set gives a shortest up*/down* path.
* **Switch LIDs** (spines and cores; leaf LIDs are routed like CA ports): up*/down* from every leaf; a spine or
  core that must turn down then up does so only in one *transit pod* (at its first leaf, or between cores at its
  spines): loop-free, and no chain of such turns can close a cycle.
* **Failures** never use a failed cable or switch. A (leaf, destination) pair whose uplink cannot reach the
  destination any more, and a (spine, destination) pair whose core slot cannot, is *displaced* and placed on the
  valid uplink that carries the fewest all-to-all flows after the move (a destination's pairs one after another);
  every other pair keeps its route, except that after a spine-core cable or core failure a relief
  (ffplan.design.routing.relief) moves a share of the leaves' cross-pod entries off the hurt spine position and a
  greedy rebalance (ffplan.design.routing.rebalance) moves healthy entries while that lowers the maximum all-to-all
  flows per link. Entries whose route no longer arrives (a switch's own route when its spine lost
  the cable to the destination's leaf, switch LIDs) grow the destination's in-tree from the switches that reach it,
  shortest first, turning down then up only in the transit pod; where that finds no way, anywhere (those the
  deadlock proof drops when they close a cycle, see TreeRouter.proven_tables).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable

import numpy as np

from ffplan.fabric.arrays import Channels
from ffplan.fabric.deadlock import Dependencies
from ffplan.fabric.walk import in_trees, route_lengths
from ffplan.design.routing.common import RoutingTables, first_proven, unknown_failed
from ffplan.plan.model import UNROUTED, DeadlockProof
from ffplan.plan.topology import Topology, resolve_failed

if TYPE_CHECKING:
    from ffplan.inventory import LoadedInventory

NO = -1
LEAF_BLOCK = 1 << 19  # (leaf, destination) entries of the leaves' tables routed at once (_leaf_entries)
GROW_BLOCK = 1 << 18  # (switch, LID) walks of the in-trees grown at once (_grow)


@dataclass
class TreeTables:
    topo: Topology  # with this case's failed cables and switches marked
    lft: np.ndarray  # (switches in topo.lid order) x (max LID + 1), uint8
    grown: np.ndarray  # bool, same shape: entries grown with down-then-up turns at transit switches only (_grow)
    loose: np.ndarray  # bool: entries grown with such turns anywhere
    channels: Channels  # of `topo`
    lengths: np.ndarray | None  # after failures, the route lengths of the entries (RoutingTables.lengths)
    dependencies: np.ndarray | None  # after failures, their channel dependencies (RoutingTables.dependencies)


class TreeRouter:
    """The failure-independent part of a pure fat tree's routes, computed once: destinations, slots and core slots,
    and the port arrays. `tables(failed)` routes one case."""

    def __init__(
        self,
        topo: Topology,
        slots: dict[int, int],
        rebalance: Callable[[TreeCase], None] | None = None,
        relieve: Callable[[TreeCase], dict[tuple[int, int], np.ndarray]] | None = None,
    ):
        """`relieve` and `rebalance`: run on a case that lost a spine-core cable or a core, before the spines are
        routed (ffplan.design.routing.relief: its leaves' moves, and per (zone, pod) the change of what the pod sends
        up each slot) and after the cores are (ffplan.design.routing.rebalance); None leaves that step out, both None
        route such a case by the minimal repair alone."""
        self.topo = t = topo
        self.rebalance, self.relieve = rebalance, relieve
        self.names = list(t.lid)
        sid = self.sid = {s: i for i, s in enumerate(self.names)}
        n = len(self.names)
        self.width = t.max_lid + 1
        self.leaf_ids = np.array([sid[s] for z in t.zones for s in t.leaves[z]], dtype=np.int64)
        self.spine_ids = np.array([sid[s] for z in t.zones for s in t.spines[z]], dtype=np.int64)
        self.core_ids = np.array([sid[s] for z in t.zones for s in t.cores.get(z, [])], dtype=np.int64)
        self.pod = np.array([t.pod.get(s, 0) for s in self.names], dtype=np.int64)
        self.zone = np.array([t.zones.index(t.zone_of[s]) for s in self.names], dtype=np.int64)
        self.position = np.full(n, NO, dtype=np.int64)  # spine: index within its pod; core: its group (spine position)
        # leaf uplinks by slot u: port, spine, spine port, cable; spine uplinks by core slot x: port, core, core port
        U = max((len(v) for v in t.uplinks.values()), default=0)
        K = max((len(v) for v in t.core_uplinks.values()), default=0)
        self.U, self.K = U, K
        self.up_port = np.full((n, max(U, 1)), UNROUTED, dtype=np.int64)
        self.up_to = np.full((n, max(U, 1)), NO, dtype=np.int64)
        self.up_far_port = np.full((n, max(U, 1)), UNROUTED, dtype=np.int64)
        self.up_at: dict[str, tuple[int, int]] = {}  # a leaf uplink's cable label -> (leaf, u)
        for leaf, ups in t.uplinks.items():
            a = sid[leaf]
            for u, link in enumerate(ups):
                self.up_port[a, u], self.up_to[a, u], self.up_far_port[a, u] = (
                    link.leaf_port,
                    sid[link.spine],
                    link.spine_port,
                )
                self.up_at[link.label] = (a, u)
                self.position[sid[link.spine]] = u
        self.cu_port = np.full((n, max(K, 1)), UNROUTED, dtype=np.int64)
        self.cu_to = np.full((n, max(K, 1)), NO, dtype=np.int64)
        self.cu_far_port = np.full((n, max(K, 1)), UNROUTED, dtype=np.int64)
        self.cu_at: dict[str, tuple[int, int]] = {}  # a spine uplink's cable label -> (spine, x)
        for spine, cups in t.core_uplinks.items():
            s = sid[spine]
            for x, cl in enumerate(cups):
                self.cu_port[s, x], self.cu_to[s, x], self.cu_far_port[s, x] = cl.spine_port, sid[cl.core], cl.core_port
                self.cu_at[cl.label] = (s, x)
                self.position[sid[cl.core]] = self.position[s]
        pods = int(self.pod.max()) + 1 if n else 1
        positions = int(self.position.max()) + 1 if n else 1
        # (zone, pod, position) -> the spine there
        self.spine_at = np.full((len(t.zones), pods, max(positions, 1)), NO, dtype=np.int64)
        for s in self.spine_ids.tolist():
            self.spine_at[self.zone[s], self.pod[s], self.position[s]] = s
        # (spine, leaf) -> the spine that brings a destination down to the leaf when it was sent up to the spine
        self.last_spine = self.spine_at[self.zone[:, None], self.pod[None, :], self.position[:, None]].astype(np.int32)
        # destinations routed by slots: CA and leaf LIDs (spine and core LIDs: _Case._switch_lids)
        cas = sorted(t.ca_by_lid.items())
        lids = [lid for lid, _ in cas] + [t.lid[s] for s in t.lid if t.tier[s] == "leaf"]
        leaf_of = [sid[ca.leaf] for _, ca in cas] + [sid[s] for s in t.lid if t.tier[s] == "leaf"]
        port = [ca.leaf_port for _, ca in cas] + [0] * (len(lids) - len(cas))
        order = np.argsort(lids, kind="stable")
        self.d_lid = np.array(lids, dtype=np.int64)[order]
        self.d_leaf = np.array(leaf_of, dtype=np.int64)[order]
        self.d_port = np.array(port, dtype=np.int64)[order]
        self.d_ca = np.isin(self.d_lid, list(t.ca_by_lid))
        index = {lid: i for i, lid in enumerate(self.d_lid.tolist())}
        self.d_cable = {ca.label: index[lid] for lid, ca in cas}  # a CA port's cable label -> its destination
        self.d_slot = np.array([slots[lid] for lid in self.d_lid.tolist()], dtype=np.int64)
        self.d_slots, self.d_size = self._slot_sets()
        self.leaf_index = np.array([t.index[s] for s in self.names], dtype=np.int64)
        self._choice = self._choose_slots()
        self.d_pod = self.pod[self.d_leaf]
        self.d_zone = self.zone[self.d_leaf]
        self.d_core_slot = self._core_slots()
        self.switch_lids = np.array([t.lid[s] for s in self.names], dtype=np.int64)
        # the switches whose LIDs _switch_lids routes: those without CA ports (leaf LIDs are routed by slots)
        self.switch_targets = np.array([i for i, s in enumerate(self.names) if s not in t.cas], dtype=np.int64)
        self._intact: TreeTables | None = None
        self._channels: Channels | None = None
        self._intact_switch_columns: np.ndarray | None = None

    def _slot_sets(self) -> tuple[np.ndarray, np.ndarray]:
        """(slots, size): every destination's uplink slots, its own slot first, padded to U. A CA port on a leaf with
        fewer ports than uplinks also owns some of that leaf's unused slots (its holes, dealt round-robin over the
        leaf's CA ports in slot order), so its incoming traffic comes down several spine-to-leaf links instead of
        one; every other destination owns its slot only. The leaf's slots are taken cyclically from its first own
        slot after a hole (its own slots are dealt consecutively, intra_slots), so whichever k-th slot of their sets
        a source leaf picks, one leaf's destinations take a nearly contiguous run of slots, and the runs of the
        leaves (each starting elsewhere) spread a source leaf's traffic evenly over its uplinks."""
        sets = np.repeat(self.d_slot[:, None], max(self.U, 1), axis=1)
        size = np.ones(len(self.d_lid), dtype=np.int64)
        cas = np.nonzero(self.d_ca)[0]
        ports = np.bincount(self.d_leaf[cas], minlength=len(self.names))
        links = (self.up_to >= 0).sum(axis=1)
        for leaf in np.nonzero((ports > 0) & (ports < links))[0].tolist():  # the sparse leaves
            mine = cas[self.d_leaf[cas] == leaf]
            uplinks = int(links[leaf])
            own = set(self.d_slot[mine].tolist())
            start = min((u for u in own if (u - 1) % uplinks not in own), default=min(own))
            mine = mine[np.argsort((self.d_slot[mine] - start) % uplinks, kind="stable")]
            holes = sorted(set(range(uplinks)) - own, key=lambda u: (u - start) % uplinks)
            for j, u in enumerate(holes):
                i = mine[j % len(mine)]
                sets[i, size[i]] = u
                size[i] += 1
        return sets, size

    def _choose_slots(self) -> dict[int, np.ndarray]:
        """Source leaf -> the slot it sends every destination up (only when some destination owns several slots).
        Each leaf's LFT entry is its own, so different source leaves may reach one destination through different
        spines; every route still climbs then descends, shortest. Leaf by leaf, each destination of several slots
        takes the one whose uplink of this leaf and whose way down to the destination carry the fewest all-to-all
        flows after the move, ties to the k-th slot by the leaf's index: both the source leaf's uplinks and the
        destination's spine-to-leaf links fill evenly. Failure-independent: a failure moves only affected pairs."""
        spread = np.nonzero(self.d_size > 1)[0].tolist()
        if not spread:
            return {}
        sources = np.bincount(self.d_leaf[self.d_ca], minlength=len(self.names))
        sets = [self.d_slots[i, : self.d_size[i]].tolist() for i in spread]
        down = [[0] * len(slots) for slots in sets]  # flows per (destination, its k-th slot)
        single = self.d_ca & (self.d_size == 1)
        out = {}
        for a in self.leaf_ids.tolist():
            w = int(sources[a])
            fixed = single & (self.d_leaf != a)
            up = (np.bincount(self.d_slot[fixed], minlength=max(self.U, 1)) * w).tolist()
            chosen = self.d_slot.copy()
            index = int(self.leaf_index[a])
            for j, i in enumerate(spread):
                if self.d_leaf[i] == a:
                    continue
                slots, load = sets[j], down[j]
                k = min(
                    range(len(slots)),
                    key=lambda k: (max(up[slots[k]], load[k]), up[slots[k]] + load[k], (k - index) % len(slots)),
                )
                chosen[i] = slots[k]
                if self.d_ca[i]:
                    up[slots[k]] += w
                    load[k] += w
            out[a] = chosen
        return out

    @property
    def choosing_leaves(self) -> list[int]:
        """The source leaves that pick a slot of their own for some destinations (_choose_slots)."""
        return list(self._choice)

    def chosen_slots(self, leaf: int) -> np.ndarray:
        """The slot source `leaf` sends every destination up (_choose_slots)."""
        return self._choice.get(leaf, self.d_slot)

    def _core_slots(self) -> np.ndarray:
        """Core slot of every destination: its leaf's index in the zone mod K, d-mod-k one level up. The leaves of a
        pod (at most K) get distinct core slots, and so do any K consecutive leaves: a leaf shift permutation, whose
        sources of one pod send to consecutive leaves, never puts two destinations on one spine uplink."""
        if self.K == 0:
            return np.zeros(len(self.d_lid), dtype=np.int64)
        index = np.array([self.topo.index[s] for s in self.names], dtype=np.int64)
        return index[self.d_leaf] % self.K

    # ------------------------------------------------------------------ one case

    def case(self, failed: Iterable[str] = ()) -> TreeTables:
        """The tables of one failure case (failed items already known to be cables or switches of the plan)."""
        cables, switches, _ = resolve_failed(self.topo, list(failed))
        if not cables and not switches and self._intact is not None:
            return self._intact
        topo = dataclasses.replace(self.topo, failed_cables=set(cables), failed_switches=set(switches))
        out = TreeCase(self, topo).run()
        if not cables and not switches:
            self._intact = out
        return out

    def channels(self, topo: Topology) -> Channels:
        """Channels(topo) of a case's topology, from the intact topology's (built once)."""
        if self._channels is None:
            self._channels = Channels(dataclasses.replace(self.topo, failed_cables=set(), failed_switches=set()))
        return self._channels.of_case(topo)

    def intact_switch_columns(self) -> np.ndarray:
        """(switches x switch_targets): the intact tables' columns of the LIDs of `switch_targets`. They depend on the
        topology alone (TreeCase._switch_lids), so a failure case needs only these of the intact case."""
        lids = self.switch_lids[self.switch_targets]
        if self._intact is not None:
            return self._intact.lft[:, lids]
        if self._intact_switch_columns is None:
            case = TreeCase(self, dataclasses.replace(self.topo, failed_cables=set(), failed_switches=set()))
            case._switch_lids(False)
            self._intact_switch_columns = case.lft[:, lids]
        return self._intact_switch_columns

    def tables(
        self,
        failed: Iterable[str] = (),
        *,
        loaded: LoadedInventory | None = None,
        inventory_items: int = 0,
        drop: tuple[str, ...] = (),
    ) -> RoutingTables:
        """`case(failed)` as the zone router returns it (one table row per switch); `drop` names the grown entries
        to leave open: "loose", "grown" (see TreeTables)."""
        items = list(failed)
        unknown = resolve_failed(self.topo, items)[2]
        if unknown:
            raise unknown_failed(self.topo, items, unknown, loaded, inventory_items)
        case = self.case(items)
        lft = case.lft
        for name in drop:
            lft = np.where(getattr(case, name), np.uint8(UNROUTED), lft)
        return RoutingTables(
            case.topo,
            dict(zip(self.names, lft)),
            case.topo.max_lid,
            sorted(set(items)),
            case.channels,
            None if drop else case.lengths,  # dropped entries change their columns' lengths and dependencies
            None if drop else case.dependencies,
        )

    def proven_tables(
        self,
        failed: Iterable[str],
        intact_channels: Channels | None = None,
        *,
        loaded: LoadedInventory | None = None,
        inventory_items: int = 0,
    ) -> tuple[RoutingTables, DeadlockProof, Channels]:
        """(`tables(failed)`, its deadlock proof, its channels). When the grown entries close a cycle, the loose ones
        are left open (ffplan.fabric.reach counts them); StageError if that is not acyclic either."""
        items = list(failed)
        return first_proven(
            [
                lambda: self.tables(items, loaded=loaded, inventory_items=inventory_items),
                lambda: self.tables(items, loaded=loaded, inventory_items=inventory_items, drop=("loose",)),
            ],
            intact_channels,
        )


class TreeCase:
    def __init__(self, r: TreeRouter, topo: Topology):
        self.r, self.t = r, topo
        n = len(r.names)
        self.alive = np.array([s not in topo.failed_switches for s in r.names])
        self.ch = r.channels(topo)
        # port on a towards b over any alive cable (the lowest port), UNROUTED when none
        self.link = np.full((n, n), UNROUTED, dtype=np.int64)
        a, port = np.nonzero(self.ch.next >= 0)  # by switch, then port
        pair, lowest = np.unique(a * n + self.ch.next[a, port], return_index=True)  # the first: the lowest port
        self.link.ravel()[pair] = port[lowest]
        self.up_ok = self._alive_links(r.up_to, r.up_at)
        self.cu_ok = self._alive_links(r.cu_to, r.cu_at)
        self.lft = np.full((n, r.width), UNROUTED, dtype=np.uint8)
        self.taken_over: dict[int, list[int]] = {}  # core -> the alive destinations displaced spines moved onto it
        self.core_index = np.full(n, NO, dtype=np.int64)  # core -> its column of core_flows
        self.core_index[r.core_ids] = np.arange(len(r.core_ids))
        self.grown = np.zeros((n, r.width), dtype=bool)
        self.lengths: np.ndarray | None = None  # after failures, of the final tables (_grow_in_trees)
        self.dependencies: np.ndarray | None = None  # likewise
        self.loose = np.zeros((n, r.width), dtype=bool)

    def _alive_links(self, to: np.ndarray, at: dict[str, tuple[int, int]]) -> np.ndarray:
        """The uplinks (`to`: their far ends, `at`: by cable label) whose cable and both ends are alive."""
        ok: np.ndarray = (to >= 0) & self.alive[:, None] & self.alive[np.maximum(to, 0)]
        for label in self.t.failed_cables:
            if label in at:
                ok[at[label]] = False
        return ok

    def run(self) -> TreeTables:
        r = self.r
        d_alive = self.alive[r.d_leaf]
        d_alive[[r.d_cable[label] for label in self.t.failed_cables if label in r.d_cable]] = False
        self.d = np.nonzero(d_alive)[0]  # alive destinations (indexes into r.d_*)
        self.reach = self._spine_reach()
        self._leaf_entries()
        cores_lost, only_cores_lost = self._cores_lost()
        self.sent_around = self.r.relieve(self) if self.r.relieve is not None and only_cores_lost else {}
        self._spine_entries()
        self._core_entries()
        if self.r.rebalance is not None and cores_lost:
            self.r.rebalance(self)
        self._switch_lids(bool(self.t.failed_cables or self.t.failed_switches))
        self._grow_in_trees()
        return TreeTables(self.t, self.lft, self.grown, self.loose, self.ch, self.lengths, self.dependencies)

    def _cores_lost(self) -> tuple[bool, bool]:
        """(some, only): a spine-core cable or a core failed; every failure is one (the relief's even shares assume
        the rest intact)."""
        t = self.t
        cores = {c for z in t.zones for c in t.cores.get(z, [])}
        lost = [s in cores for s in t.failed_switches]
        lost += [t.by_label.get(label, ("",))[0] == "spine-core" for label in t.failed_cables]
        return any(lost), bool(lost) and all(lost)

    def _spine_reach(self) -> np.ndarray:
        """reach[s, leaf]: spine s brings a destination down to `leaf` up*/down* (down directly in its pod; else up
        some alive core slot whose core reaches the spine at s's position in the leaf's pod, which reaches the leaf)."""
        r = self.r
        n = len(r.names)
        down = (self.link != UNROUTED) & self.alive[:, None] & self.alive[None, :]
        reach = np.zeros((n, n), dtype=bool)
        leaves = r.leaf_ids
        for s in r.spine_ids.tolist():
            if not self.alive[s]:
                continue
            same = (r.pod[leaves] == r.pod[s]) & (r.zone[leaves] == r.zone[s])
            reach[s, leaves[same]] = down[s, leaves[same]]
            if r.K == 0:
                continue
            other = leaves[~same & (r.zone[leaves] == r.zone[s])]
            far = r.spine_at[r.zone[s], r.pod[other], r.position[s]]  # the spine at s's position in the leaf's pod
            cores = r.cu_to[s][self.cu_ok[s]]
            via = down[cores][:, far].any(axis=0) if len(cores) else np.zeros(len(other), dtype=bool)
            reach[s, other] = via & down[far, other]
        return reach

    # ------------------------------------------------------------------ CA and leaf destinations

    def _leaf_entries(self) -> None:
        r, lft = self.r, self.lft
        d = self.d
        lid, dleaf = r.d_lid[d], r.d_leaf[d]
        ca = r.d_ca[d]
        sources = np.bincount(r.d_leaf[d][ca], minlength=len(r.names))  # CA ports per leaf
        self.up_load = np.zeros(r.up_to.shape, dtype=np.int64)  # all-to-all flows per leaf uplink
        self.down_load = np.zeros((len(r.names), len(r.names)), dtype=np.int64)  # per (spine, leaf) downlink
        displaced: list[tuple[int, int]] = []  # (leaf, destination index)
        leaves = r.leaf_ids[self.alive[r.leaf_ids]]
        step = max(1, LEAF_BLOCK // max(len(d), 1))
        for b in range(0, len(leaves), step):  # (leaves x destinations) of a block of leaves at once
            a = leaves[b : b + step, None]
            slot = np.stack([r.chosen_slots(leaf)[d] for leaf in a[:, 0].tolist()])
            own = dleaf == a
            same_zone = r.d_zone[d] == r.zone[a]
            U = self.up_load.shape[1]
            cell = a * U + slot  # (leaf, slot), flat: take is several times faster than 2-D fancy indexing
            spine = r.up_to.take(cell)
            valid = self.up_ok.take(cell) & self.reach.take(np.maximum(spine, 0) * len(r.names) + dleaf)
            valid &= ~own & same_zone & (spine >= 0)
            ports = np.where(own, r.d_port[d], np.where(valid, r.up_port.take(cell), UNROUTED))
            for leaf, row in zip(a[:, 0].tolist(), ports):  # a row at a time: the 2-D assignment costs twice more
                lft[leaf, lid] = row
            rows, cols = np.nonzero(~own & same_zone & ~valid)
            displaced += zip(a[rows, 0].tolist(), cols.tolist())
            w = np.where(valid, sources[a] * ca, 0)
            self.up_load[a[:, 0]] += _bincount(np.arange(len(a))[:, None] * U + slot, w, (len(a), U))
            # summed per (spine, destination leaf) first: the block's leaves climb to a few dozen spines
            ups = np.unique(r.up_to[a[:, 0]])
            ups = ups[ups >= 0]
            at = np.zeros(len(r.names), dtype=np.intp)  # a spine's row among them
            at[ups] = np.arange(len(ups))
            to = np.arange(len(r.names))  # the destination's leaf: down_load's column
            summed = _bincount(at[spine] * len(to) + dleaf, w, (len(ups), len(to)))
            _add_at(self.down_load, np.broadcast_arrays(self._last_spine(ups[:, None], to), to), summed)
        self._place(displaced, sources)

    def _last_spine(self, spine: np.ndarray, leaf: np.ndarray) -> np.ndarray:
        """The spine that brings a destination down to `leaf` when it was sent up to `spine`."""
        r = self.r
        if r.K == 0:
            return spine
        far: np.ndarray = r.last_spine[spine, leaf]
        return far

    def _place(self, displaced: list[tuple[int, int]], sources: np.ndarray) -> None:
        """Each displaced (leaf, destination) pair on the valid uplink whose uplink and last downlink carry the
        fewest flows after the move; a destination's pairs one after another, so they spread over the spines."""
        r, lft = self.r, self.lft
        displaced.sort(key=lambda p: (int(r.d_lid[self.d[p[1]]]), p[0]))
        for a, i in displaced:
            di = self.d[i]
            leaf = int(r.d_leaf[di])
            spines = r.up_to[a]
            ok = self.up_ok[a] & (spines >= 0) & self.reach[np.maximum(spines, 0), leaf]
            cands = np.nonzero(ok)[0]
            if not len(cands):
                continue
            far = self._last_spine(spines[cands], np.full(len(cands), leaf))
            w = int(sources[a]) if r.d_ca[di] else 0
            load = np.maximum(self.up_load[a, cands], self.down_load[far, leaf]) + w
            rotation = (cands - a) % max(r.U, 1)
            k = int(np.lexsort((rotation, self.up_load[a, cands] + self.down_load[far, leaf], load))[0])
            u = int(cands[k])
            lft[a, r.d_lid[di]] = r.up_port[a, u]
            self.up_load[a, u] += w
            self.down_load[far[k], leaf] += w

    def _spine_entries(self) -> None:
        """A spine sends a destination of its pod down to its leaf (the destination's own cable when it is the slot's
        spine), and one of another pod up its core slot, or the valid core slot with the fewest flows. The spines of
        one pod share their destinations: a pod's spines are routed at once."""
        r, lft = self.r, self.lft
        d = self.d
        lid, dleaf, x = r.d_lid[d], r.d_leaf[d], r.d_core_slot[d]
        dzone, dpod = r.d_zone[d], r.d_pod[d]
        up_load = np.zeros(r.cu_to.shape, dtype=np.int64)  # flows per spine uplink
        down_load = np.zeros((len(r.names), len(r.names)), dtype=np.int64)  # flows per (core, spine) downlink
        # all-to-all flows of each destination arriving at each core, a destination's row (_core_entries spreads them
        # over its cables)
        self.core_flows = np.zeros((len(d), len(r.core_ids)), dtype=np.int64)
        displaced: list[tuple[int, int, int]] = []  # (spine, destination index, its flows through the spine)
        spines = r.spine_ids[self.alive[r.spine_ids]]
        pods = r.zone[spines] * (int(r.pod.max(initial=0)) + 1) + r.pod[spines]
        for key in np.unique(pods).tolist():
            group = spines[pods == key]  # the alive spines of one pod, in spine order
            zone, pod = int(r.zone[group[0]]), int(r.pod[group[0]])
            mine = np.nonzero((dzone == zone) & (dpod == pod))[0]
            lft[group[:, None], lid[mine]] = self.link[group[:, None], dleaf[mine]]
            if r.K == 0:
                continue
            # the pod's CA ports send a destination through a spine when their leaf chose its slot for it
            sends = self.pod_sends(zone, pod)
            if (zone, pod) in self.sent_around:
                sends = sends + self.sent_around[(zone, pod)]
            sends = sends * r.d_ca[d][:, None]
            # (spine, destination) pairs of other pods, one row per spine: the reachable ones go up their core slot
            others = np.nonzero((dzone == zone) & (dpod != pod))[0]
            reach = self.reach[group][:, dleaf[others]]  # rows, then columns: several times faster than 2-D
            # whether core slot x of a spine takes a destination to pod q depends on (spine, x, q) alone
            far = r.spine_at[zone][:, r.position[group]].T  # (spines x pods): the spine at its position there
            core = r.cu_to[group]
            way = self.cu_ok[group][:, :, None] & (self.link[core[:, :, None], far[:, None, :]] != UNROUTED)
            cell = x[others] * far.shape[1] + dpod[others]  # a destination's (core slot, pod)
            up = way.reshape(len(group), -1)[:, cell]
            valid = reach & up
            w = sends[others][:, r.position[group]].T
            flows = np.where(valid, w, 0)
            ports = np.where(valid, r.cu_port[group][:, x[others]], UNROUTED)
            entries = lid[others]
            for s, row in zip(group.tolist(), ports):  # a row at a time: the 2-D assignment costs twice more
                lft[s, entries] = row
            # the flows of each (spine, core slot, pod): up the spine's core slot, down its core to the spine there
            summed = _bincount(np.arange(len(group))[:, None] * way[0].size + cell, flows, way.shape)
            up_load[group] += summed.sum(axis=2)
            _add_at(down_load, np.broadcast_arrays(core[:, :, None], far[:, None, :]), summed)
            # a destination after another, its spines' cores in one row: a few times fewer cache misses than by spine
            cells = others * self.core_flows.shape[1] + self.core_index[core][:, x[others]]
            np.add.at(self.core_flows.reshape(-1), cells.T.ravel(), flows.T.ravel())
            row, col = np.nonzero(reach & ~up)
            displaced += zip(group[row].tolist(), others[col].tolist(), w[row, col].tolist())
        # a destination's own cable from its slot's spine (the first such slot of its set)
        slots, size = r.d_slots[d], r.d_size[d]
        for k in reversed(range(int(size.max(initial=1)))):
            slot = slots[:, k]
            spine = r.up_to[dleaf, slot]
            at = np.maximum(spine, 0)
            cable = (k < size) & (spine >= 0) & self.up_ok[dleaf, slot] & self.alive[at]
            cable &= (r.zone[at] == dzone) & (r.pod[at] == dpod)
            lft[spine[cable], lid[cable]] = r.up_far_port[dleaf[cable], slot[cable]]
        self._place_up(displaced, up_load, down_load)

    def _place_up(self, displaced: list[tuple[int, int, int]], up_load: np.ndarray, down_load: np.ndarray) -> None:
        """The displaced (spine, destination, flows) pairs, a destination's one after another: each source spine takes
        the valid core slot whose uplink and core downlink carry the fewest flows, so they spread over the cores into
        the destination's pod. Tens of thousands of pairs after a core failure, each weighing a spine's few cores
        (_SpineSlots) over plain Python rows of the loads it reads."""
        r = self.r
        slots: dict[int, _SpineSlots] = {}  # source spine -> its valid core slots and their flows
        down: dict[int, list[int]] = {}  # far spine -> flows per core down to it
        # (spine, far spine) -> the cores of its valid core slots that reach far: (core, core index, its cables to far)
        ways: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
        lid = r.d_lid[self.d].tolist()
        displaced.sort(key=lambda p: (lid[p[1]], p[0]))
        spine = np.array([p[0] for p in displaced], dtype=np.int64)
        to = r.d_pod[self.d][[p[1] for p in displaced]]
        fars = r.spine_at[r.zone[spine], to, r.position[spine]].tolist()  # the spine at the same position there
        rows, chosen, entries = [], [], []
        current, flows = -1, list[int]()  # the destination of the pairs at hand, its core_flows row
        for (s, i, w), far in zip(displaced, fars):
            if s not in slots:
                cands = np.nonzero(self.cu_ok[s] & (r.cu_to[s] >= 0))[0]
                rank = (cands - s) % max(r.K, 1)
                slots[s] = _SpineSlots(cands.tolist(), r.cu_to[s, cands].tolist(), rank.tolist(), up_load[s].tolist())
            if (s, far) not in ways:
                cores = np.array(list(slots[s].by_core), dtype=np.int64)
                cores = cores[self.link[cores, far] != UNROUTED]
                cables = (self.ch.next[cores] == far).sum(axis=1)
                ways[(s, far)] = list(zip(cores.tolist(), self.core_index[cores].tolist(), cables.tolist()))
                down.setdefault(far, down_load[:, far].tolist())
            way = ways[(s, far)]
            if not way:
                continue
            if i != current:
                if current >= 0:
                    self.core_flows[current] = flows
                current, flows = i, self.core_flows[i].tolist()
            x, core, index = slots[s].least_way(way, down[far], flows, w)
            slots[s].take(x, core, w)
            rows.append(s)
            chosen.append(x)
            entries.append(lid[i])
            down[far][core] += w
            flows[index] += w
            self.taken_over.setdefault(core, []).append(i)
        if current >= 0:
            self.core_flows[current] = flows
        self.lft[rows, entries] = r.cu_port[rows, chosen]

    def pod_sends(self, zone: int, pod: int) -> np.ndarray:
        """(alive destinations x U): the CA ports of one pod's alive leaves that send each destination up each slot."""
        r = self.r
        U = max(r.U, 1)
        sources = np.bincount(r.d_leaf[self.d][r.d_ca[self.d]], minlength=len(r.names))
        leaves = r.leaf_ids[(r.zone[r.leaf_ids] == zone) & (r.pod[r.leaf_ids] == pod)]
        leaves = leaves[self.alive[leaves]]
        sends = np.zeros((len(self.d), U), dtype=np.int64)
        # the leaves that send every destination up its own slot at once, the others leaf by leaf
        own = np.array([a not in r._choice for a in leaves.tolist()], dtype=bool)
        sends[np.arange(len(self.d)), r.d_slot[self.d]] = sources[leaves[own]].sum()
        if not own.all():
            chosen = np.stack([r.chosen_slots(a)[self.d] for a in leaves[~own].tolist()])
            weights = np.broadcast_to(sources[leaves[~own]][:, None], chosen.shape)
            sends += _bincount(np.arange(len(self.d)) * U + chosen, weights, sends.shape)
        return sends

    def _core_entries(self) -> None:
        """A core sends a destination down to the spine at its position in the destination's pod: over the cable of
        that spine's uplink at the destination's core slot when it is this core's, else over its lowest alive cable
        to that spine. A core whose group has fewer cores than a spine has uplinks has several cables to each spine:
        the destinations it takes over (displaced spines moved them onto it, or their own cable into the spine is
        dead) go down the one of them that carries the fewest flows (_spread)."""
        r, lft = self.r, self.lft
        d = self.d
        lid, pod, x = r.d_lid[d], r.d_pod[d], r.d_core_slot[d]
        cores = r.core_ids[self.alive[r.core_ids]]
        for zone in np.unique(r.zone[cores]).tolist():
            rows = np.nonzero(r.d_zone[d] == zone)[0]  # the zone's destinations
            group = cores[r.zone[cores] == zone]
            step = max(1, LEAF_BLOCK // max(len(rows), 1))
            for b in range(0, len(group), step):  # (cores x destinations) of a block of cores at once
                c = group[b : b + step, None]
                # flat take, several times faster than 2-D fancy indexing (a missing spine, -1, wraps as there)
                spine_at = r.spine_at[zone]
                far = spine_at.take(pod[rows] * spine_at.shape[1] + r.position[c])
                cell = far * r.cu_to.shape[1] + x[rows]  # (spine, core slot)
                slot_core = r.cu_to.take(cell)
                mine = (slot_core == c) & self.cu_ok.take(cell)
                ports = np.where(mine, r.cu_far_port.take(cell), self.link.take(c * len(r.names) + np.maximum(far, 0)))
                ports = np.where(far >= 0, ports, UNROUTED)
                may_move = ~mine & (far >= 0) & (ports != UNROUTED)
                for k, core in enumerate(c[:, 0].tolist()):
                    taken = np.zeros(len(d), dtype=bool)
                    taken[self.taken_over.get(core, [])] = True
                    moved = (taken[rows] | (slot_core[k] == core)) & may_move[k]
                    if moved.any():
                        self._spread(core, rows, far[k], x[rows], ports[k], mine[k], moved)
                entries = lid[rows]
                for core, row in zip(c[:, 0].tolist(), ports):  # a row at a time: the 2-D assignment costs twice more
                    lft[core, entries] = row

    def _spread(
        self,
        c: int,
        rows: np.ndarray,
        far: np.ndarray,
        x: np.ndarray,
        ports: np.ndarray,
        mine: np.ndarray,
        moved: np.ndarray,
    ) -> None:
        """Core c's `moved` destinations (of `rows`, going down to spines `far`) onto its cables to their spine, in
        place in `ports`: the most flows first, each on the cable that carries the fewest flows so far (its own
        destinations' and those placed before), ties to the (core slot mod n)-th of its n cables to that spine. So a
        lost core's destinations spread evenly over the cables that are left instead of piling on a few of them."""
        nxt = self.ch.next
        flows = self.core_flows[rows, self.core_index[c]]
        load = np.bincount(ports[mine], weights=flows[mine], minlength=nxt.shape[1]).astype(np.int64)
        cables_to: dict[int, np.ndarray] = {}  # spine -> c's alive cables to it (ports, lowest first)
        lids = self.r.d_lid[self.d[rows]]
        for k in sorted(np.nonzero(moved)[0].tolist(), key=lambda k: (-int(flows[k]), int(lids[k]))):
            spine = int(far[k])
            if spine not in cables_to:
                cables_to[spine] = np.nonzero(nxt[c] == spine)[0]
            cables = cables_to[spine]
            n = len(cables)
            best = int(cables[min(range(n), key=lambda i: (int(load[cables[i]]), (i - int(x[k])) % n))])
            ports[k] = best
            load[best] += int(flows[k])

    # ------------------------------------------------------------------ switch LIDs and what up*/down* leaves open

    def _switch_lids(self, failed: bool) -> None:
        """Every switch to every spine and core LID (and its own). Intact: straight up*/down* from every leaf, and from
        a spine or core that must turn down then up, through the transit pod (_intact_switch_routes). After a failure
        the intact entries stay wherever their route still arrives; only the others are grown again (_grow)."""
        r, lft = self.r, self.lft
        targets = r.switch_targets[self.alive[r.switch_targets]]
        if failed:
            intact = r.intact_switch_columns()[:, self.alive[r.switch_targets]]
            lft[:, r.switch_lids[targets]] = np.where(self.alive[:, None], intact, UNROUTED)
        else:
            lft[:, r.switch_lids[targets]] = self._intact_switch_routes(targets)
        grow = targets[self._open(r.switch_lids[targets], targets, np.zeros(len(targets), dtype=np.int64))]
        self._grow(r.switch_lids[grow], grow, np.zeros(len(grow), dtype=np.int64))
        if not failed:
            self.grown[:, r.switch_lids[targets]] = False  # the intact routes: nothing to drop

    def _intact_switch_routes(self, targets: np.ndarray) -> np.ndarray:
        """(switches x targets): every switch's port towards spine or core `target` in the intact tree (UNROUTED
        outside its zone): a leaf climbs at the target's position, a spine at that position climbs to a core (or, for
        a core target, goes straight to it), a core of that group goes down to the target spine (or, for a core
        target, to the transit pod's spine there); every other spine and core reaches the transit pod (a spine of it
        goes down to the transit leaf, the others up to a core, a core down to the transit pod's spine at its
        position), whose transit leaf climbs at the target's position. The targets of a zone at once."""
        r, link = self.r, self.link
        if not hasattr(self, "_valley_ok"):
            self._prepare_growth()
        n = len(r.names)
        out = np.full((n, len(targets)), UNROUTED, dtype=np.int64)
        core_target = np.array([self.t.tier[r.names[t]] == "core" for t in targets.tolist()], dtype=bool)
        climb = r.cu_port[np.arange(n), r.pod % max(r.K, 1)]  # a spine's uplink to a core of its group
        for zone in np.unique(r.zone[targets]).tolist():
            transit = self._transit_leaf.get(zone, NO)
            if transit == NO:
                continue
            pod_t = r.pod[transit]
            k = np.flatnonzero(r.zone[targets] == zone)  # the zone's targets: their columns
            to, j, core = targets[k], r.position[targets[k]], core_target[k][None, :]
            mine = r.zone == zone
            leaves, spines, cores = (np.flatnonzero(mine & (self._tier == tier)) for tier in range(3))
            out[np.ix_(leaves, k)] = r.up_port[np.ix_(leaves, j)]
            at_j = r.position[spines][:, None] == j
            elsewhere = np.where(r.pod[spines] == pod_t, link[spines, transit], climb[spines])[:, None]
            out[np.ix_(spines, k)] = np.where(
                at_j, np.where(core, link[np.ix_(spines, to)], climb[spines][:, None]), elsewhere
            )
            below = r.spine_at[zone, pod_t, np.maximum(r.position[cores], 0)]  # the transit pod's spine there
            group = r.position[cores][:, None] == j
            out[np.ix_(cores, k)] = np.where(group & ~core, link[np.ix_(cores, to)], link[cores, below][:, None])
            out[to, k] = 0
        return out

    def _prepare_growth(self) -> None:
        self._transit_leaf: dict[int, int] = {}  # zone index -> its transit leaf
        self._valley_ok = self._transit()
        self._tier = np.array(
            [{"leaf": 0, "spine": 1, "core": 2}[self.t.tier[s]] for s in self.r.names], dtype=np.int64
        )
        used = np.nonzero((self.ch.next >= 0).any(axis=0))[0]
        self._ports = used
        self._hop = hop = self.ch.next[:, used]
        self._has, self._nb = hop >= 0, np.maximum(hop, 0)
        # preference among equally short next hops: higher tier, then lower port
        self._rank = np.where(self._has, self._tier[self._nb] * 1024 - used[None, :], -(1 << 20))
        # a next hop one tier down outside the transit pod: a strictly grown route may not climb after it
        self._descends_to_plain = (self._tier[:, None] > self._tier[self._nb]) & ~self._valley_ok[self._nb]

    def _transit(self) -> np.ndarray:
        """The switches where a grown route may turn down then up: the spines and the first leaf of one pod, the first
        pod whose first leaf, its uplinks and its spines are alive (the intact switch routes turn there too). With
        every such turn in one pod, and all of them at one leaf or between cores at its spines, no chain of them
        closes a cycle: after the turn a route climbs to a core, whose way back into that pod is the spine it came
        from (a U-turn), and elsewhere it only descends."""
        r = self.r
        where = np.zeros(len(r.names), dtype=bool)
        for zone, leaves in self.t.leaves.items():
            spines = self.t.spines[zone]
            for leaf in (
                name
                for name in leaves
                if self.t.index[name] % len(leaves) == 0
                or self.t.pod.get(name) != self.t.pod.get(leaves[self.t.index[name] - 1])
            ):
                a = self.r.sid[leaf]
                pod = [self.r.sid[s] for s in spines if self.t.pod.get(s) == self.t.pod.get(leaf)]
                if self.alive[a] and self.alive[pod].all() and self.up_ok[a][r.up_to[a] >= 0].all():
                    self._transit_leaf[int(r.zone[a])] = a
                    where[a] = True
                    where[pod] = True
                    break
        return where

    def _grow_in_trees(self) -> None:
        """Every alive CA and leaf LID whose route does not arrive from some alive switch (only after failures). The
        route lengths of every alive LID (the switch LIDs are final by now) are measured over the whole tables at
        once and kept for the route check (RoutingTables.lengths), the grown columns measured again; the channel
        dependencies for the deadlock proof (RoutingTables.dependencies) are found in the same pass over the in-trees,
        those of the grown columns from their final entries."""
        r = self.r
        if not self.t.failed_cables and not self.t.failed_switches:
            return
        d = self.d
        at = np.full(r.width, NO, dtype=np.int64)  # where each column is delivered: -1 for the LIDs of nothing alive
        port = np.zeros(r.width, dtype=np.int64)
        at[r.d_lid[d]], port[r.d_lid[d]] = r.d_leaf[d], r.d_port[d]
        targets = r.switch_targets[self.alive[r.switch_targets]]
        at[r.switch_lids[targets]] = targets
        self.lengths = np.empty(self.lft.shape, dtype=np.int8)
        may_grow = np.zeros(r.width, dtype=bool)
        may_grow[r.d_lid[d]] = True
        open_ = np.zeros(r.width, dtype=bool)
        found = Dependencies(self.t, self.ch, r.width)
        for block in in_trees(self.ch, self.lft, (at, port)):
            self.lengths[:, block.cols] = block.hops
            open_[block.cols] = may_grow[block.cols] & ((block.hops < 0) & self.alive[:, None]).any(axis=0)
            found.add(block.cols, self.lft[:, block.cols], block.chan, block.to, skip=open_[block.cols])
        grow = np.flatnonzero(open_)
        self._grow(grow, at[grow], port[grow])
        self.lengths[:, grow] = route_lengths(self.ch, self.lft[:, grow], (at[grow], port[grow]))
        found.add_columns(self.lft, grow)
        self.dependencies = found.edges()

    def _open(self, lids: np.ndarray, at: np.ndarray, port: np.ndarray) -> np.ndarray:
        """The indexes of `lids` (delivered at switch `at`, port `port`) whose route does not arrive from some alive
        switch: the only ones _grow changes (the LIDs' in-trees are independent, so all are measured at once)."""
        lengths = route_lengths(self.ch, self.lft[:, lids], (at, port))
        return np.nonzero(((lengths < 0) & self.alive[:, None]).any(axis=0))[0]

    def _grow(self, lids: np.ndarray, at: np.ndarray, port: np.ndarray) -> None:
        """Grow the in-trees of `lids` (delivered at switch `at`, port `port`) with down-then-up turns at transit
        switches only, then whatever is still open with them anywhere (marked loose: the deadlock proof decides
        whether those stay). The in-trees are independent: each pass measures and grows a block of them at once. Only
        the LIDs the strict pass left open get the second: every switch it grew arrives (it continues a route that
        does)."""
        if not hasattr(self, "_valley_ok"):
            self._prepare_growth()
        step = max(1, GROW_BLOCK // max(len(self.r.names), 1))
        for strict in (True, False):
            left = np.zeros(len(lids), dtype=bool)
            for a in range(0, len(lids), step):
                block = slice(a, a + step)
                hops, clean = self._route_lengths(lids[block], at[block], port[block])
                left[block] = self._grow_pass(lids[block], hops, clean, strict)
            lids, at, port = lids[left], at[left], port[left]

    def _grow_pass(self, lids: np.ndarray, hops: np.ndarray, clean: np.ndarray, strict: bool) -> np.ndarray:
        """The in-trees of `lids` (`hops`, `clean`: their _route_lengths, switches x LIDs), each on its own: the entries
        of alive switches whose route does not arrive are opened and grown from the switches whose route does, shortest
        total route first (a LID's open entries of its shortest at once), ties to the higher tier; a down-then-up turn
        only at a transit switch (_transit). Only the open (switch, LID) entries are weighed: a handful per LID, those
        of every LID of the block at once. Returns per LID whether some stay open (those of a LID none of whose open
        entries has a way left stay so)."""
        hop, ports, tier, has, nb = self._hop, self._ports, self._tier, self._has, self._nb
        n, b = hops.shape
        rows, cols = np.nonzero((hops < 0) & self.alive[:, None])  # the open entries
        left = np.zeros(b, dtype=bool)
        if not len(rows):
            return left
        if strict:
            hops[~clean] = -1  # kept, but no strictly grown route continues over them
        table = self.lft[:, lids]
        table[rows, cols] = UNROUTED
        succ = np.where(table == UNROUTED, -1, self.ch.next[np.arange(n)[:, None], np.minimum(table, 255)])
        marks = self.grown if strict else self.loose
        while len(rows):
            near = nb[rows]
            via = np.where(has[rows], hops[near, cols[:, None]], -1)  # route length from the next switch
            cand = via >= 0
            if strict:  # no turn down then up at a switch outside the transit pod
                after = succ[near, cols[:, None]]
                climbs = (after >= 0) & (tier[np.maximum(after, 0)] > tier[near])
                cand &= ~(self._descends_to_plain[rows] & climbs)
            best = np.where(cand, via, 1 << 20).min(axis=1)
            shortest = np.full(b, 1 << 20, dtype=best.dtype)
            np.minimum.at(shortest, cols, best)
            m = shortest[cols]
            stuck = m == 1 << 20  # no way left for any open entry of the LID: the rest stays open
            left[cols[stuck]] = True
            now = (best == m) & ~stuck
            grow, c, m = rows[now], cols[now], m[now]
            k = np.where(cand[now] & (via[now] == m[:, None]), self._rank[grow], -(1 << 30)).argmax(axis=1)
            table[grow, c] = ports[k]
            succ[grow, c] = hop[grow, k]
            marks[grow, lids[c]] = True
            hops[grow, c] = m + 1
            rows, cols = rows[~now & ~stuck], cols[~now & ~stuck]
        self.lft[:, lids] = table
        return left

    def _route_lengths(self, lids: np.ndarray, at: np.ndarray, port: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(links, clean), (switches x `lids`): switch-to-switch links of every switch's route to each LID (by its
        column of the tables), delivered at switch `at`, port `port`, -1 where it does not arrive; and whether the
        route turns down then up only at a transit switch (a grown route may continue only over such a route). From
        the in-trees (fabric.walk.in_trees): a route is clean when its turn at the next switch is and the next
        switch's route is, found a length at a time."""
        tier, ch, n = self._tier, self.ch, len(self.r.names)
        links = np.empty((n, len(lids)), dtype=np.int64)
        clean = np.empty((n, len(lids)), dtype=bool)
        for block in in_trees(ch, self.lft[:, lids], (at, port), 64):
            hops, to = block.hops.ravel(), block.to
            b = block.hops.shape[1]
            turns = np.flatnonzero(hops >= 2)  # the routes with a turn at their next switch
            pos = to[turns]
            prev, here, after = turns // b, pos // b, to[pos] // b
            ok = np.ones(len(hops) + 1, dtype=bool)  # the last: where a route ends
            ok[turns] = (tier[prev] <= tier[here]) | (tier[after] <= tier[here]) | self._valley_ok[here]
            for length in range(2, int(hops.max(initial=0)) + 1):
                e = turns[hops[turns] == length]
                ok[e] &= ok[to[e]]  # the next switch's route is one link shorter: already settled
            links[:, block.cols] = block.hops
            clean[:, block.cols] = ok[:-1].reshape(n, b)
        links[~self.alive] = -1
        return links, clean


class _SpineSlots:
    """A displaced spine's valid core slots (_place_up): their flows (`loads`, per slot), grouped by core, and each
    core's slot of the fewest flows, the lowest tie rank of equal ones (`least`), kept as slots take flows. The slots
    of one core share its way down, so the least way weighs a core (at its least slot) instead of every slot: the
    same choice, with a few times less Python work."""

    def __init__(self, slots: list[int], cores: list[int], ranks: list[int], loads: list[int]):
        self.loads = loads
        self.rank = dict(zip(slots, ranks))
        self.by_core: dict[int, list[int]] = {}  # core -> its slots, lowest rank first
        for _, x, core in sorted(zip(ranks, slots, cores)):
            self.by_core.setdefault(core, []).append(x)
        self.least = {core: min(group, key=loads.__getitem__) for core, group in self.by_core.items()}

    def least_way(
        self, way: list[tuple[int, int, int]], to_far: list[int], flows: list[int], w: int
    ) -> tuple[int, int, int]:
        """(slot, core, core index) of the core slot with the least (max(uplink, core downlink) + w, uplink + core
        downlink, rank) among the cores of `way` ((core, core index, the core's cables to the far spine) each): `to_far`
        per core, `flows` of the destination per core index. A lower uplink never has a larger key, so a core's best is
        its least slot. Plain Python numbers (the same float64 arithmetic as numpy's), the second key weighed only on
        a tie of the first: run for tens of thousands of displaced pairs."""
        loads, least, rank = self.loads, self.least, self.rank
        best, second, tie, chosen = math.inf, math.inf, 0, (0, 0, 0)
        for core, index, cables in way:
            # a core sends a destination down one of its cables to the spine: the destination's flows there stack on
            # it, the others spread over them (_spread)
            stacked = flows[index]
            way_down = (to_far[core] - stacked) / cables + stacked
            x = least[core]
            load = loads[x]  # exact integers: compared with the floats as numpy's float64 would
            key = (load if load > way_down else way_down) + w
            if key > best:
                continue
            both = load + way_down
            if key < best or both < second or (both == second and rank[x] < tie):
                best, second, tie, chosen = key, both, rank[x], (x, core, index)
        return chosen

    def take(self, x: int, core: int, w: int) -> None:
        """Slot x (of `core`) takes w flows more."""
        self.loads[x] += w
        self.least[core] = min(self.by_core[core], key=self.loads.__getitem__)


def _bincount(cells: np.ndarray, weights: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The integer `weights` summed per cell (flat indexes into `shape`), as an int64 array of `shape`: the unbuffered
    add of int64 into a 1-D array (numpy's fast path), half the CPU of a bincount's float weights."""
    out = np.zeros(int(np.prod(shape)), dtype=np.int64)
    np.add.at(out, cells.ravel(), weights.astype(np.int64, copy=False).ravel())
    return out.reshape(shape)


def _add_at(target: np.ndarray, index: tuple[np.ndarray, ...], weights: np.ndarray) -> None:
    """np.add.at(target, index, weights) (negative indexes wrap) on the flat view: the unbuffered add of a 1-D
    integer array is numpy's fast path, several times faster than the multi-index one."""
    np.add.at(target.reshape(-1), np.ravel_multi_index(index, target.shape, mode="wrap"), weights)
