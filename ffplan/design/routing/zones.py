"""The zone router: two-layer zones joined by inter-zone links (Fire-Flyer 2's), a full linear forwarding table
(LFT) for every switch of one subnet.

Algorithm (docs/routing.md has the long form):

* **Inside a zone: d-mod-k over a global destination order.** Every CA port of a zone gets an uplink index
  ("slot") u in 0..U-1; every leaf sends a destination up its uplink u, which goes to spine u mod S over
  parallel link u // S, and that spine sends it down its parallel link u // S to the destination's leaf. The
  ports of one leaf get distinct slots, so every spine downlink carries at most one of the leaf's ports and a
  shift permutation between leaves is contention-free. A leaf with fewer ports than uplinks leaves holes;
  the holes are dealt round-robin over the slots, so over the zone every slot carries the same number of
  destinations (within one) and every leaf's uplinks do too. Inside each leaf the roles are dealt so that
  every slot also carries the same number of compute (and of storage) ports: the balance OpenSM's ftree gets
  from its compute-node/IO-node split. Slots come from the plan, not from what is alive, so a failure never
  moves a healthy route.
* **Across zones** the destinations of another zone are spread evenly, role by role, over the inter-zone links
  between the two zones (a destination on a leaf that holds its own inter-zone link always enters through that
  link): its *exit*. A leaf holding its own link to the next zone sends that zone's traffic straight over it (the
  shortest path), except to a destination that enters through its own leaf's link. Every spine of the later zone
  of a linked pair has a *home* linked leaf: traffic for the earlier zone comes down a spine only to its home, and
  the linked leaves never send each other's LIDs through a spine homed at the receiver (their CA pairs to each
  other are all placed by load, like displaced pairs below). Nothing that entered the
  later zone can then reach an exit, so the channel dependency graph has no cycle through both zones, switch routes
  included (docs/routing.md, section 3). Zones that are not directly linked are reached through the next zone on a
  shortest zone path.
* **Failed cables and switches** are never used. A (source leaf, destination) pair whose slot is unusable (dead
  uplink, or the slot's spine lost its cable to the destination's leaf) is *displaced*: the displaced pairs are
  placed one by one on the valid uplink whose uplink and spine downlink stay within the most traffic of the
  destination's role any link carried before, keep a leaf shift phase at two flows on a link, then carry the least
  traffic of all roles after the move (flows weighted by the source leaf's ports), so the pairs of one destination spread over different spines instead of all
  doubling one downlink. Pairs that are not displaced keep their route.
  Switch routes a failure leaves open go through one transit leaf per spine (down-then-up turns that cannot chain).

The routes are then proven deadlock-free (ffplan.fabric.deadlock) before the plan is written.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

import numpy as np

from ffplan.design.routing.common import ROLE_ORDER, RoutingTables, first_proven, intra_slots, unknown_failed
from ffplan.plan.model import UNROUTED, DeadlockProof
from ffplan.plan.topology import Topology, resolve_failed

if TYPE_CHECKING:
    from ffplan.fabric.arrays import Channels
    from ffplan.inventory import LoadedInventory

HOME = ""  # climb target: whichever linked leaf the chosen spine is homed at
# Per-link loads the displaced pairs are balanced on: compute->compute, compute->storage, all->all flows
# (the analyze patterns A, C and B of docs/routing.md).
LOAD_COMPUTE, LOAD_STORAGE, LOAD_ALL, LOADS = 0, 1, 2, 3


@dataclass(frozen=True)
class Dest:
    lid: int
    zone: str
    kind: str  # "ca" | "leaf" | "spine"
    switch: str  # the leaf the CA hangs on, the leaf itself, or the spine itself
    port: int  # leaf port of a CA; 0 for a switch
    role: str  # node role of a CA; the tier for a switch


class ZoneRouter:
    """Everything about a plan's routes that does not depend on failures, computed once: destinations, slots,
    holes and cross-zone slots. `tables(failed)` routes one failure case; it never changes this state or the
    topology, so one ZoneRouter serves any number of cases (the failure sweep)."""

    def __init__(self, topo: Topology):
        self.topo = topo
        t = topo
        self.zidx = {z: i for i, z in enumerate(t.zones)}
        self.dests = self._destinations()
        self.slot: dict[int, int] = {}  # CA / leaf LID -> uplink index in its zone
        self.holes: dict[str, list[int]] = {}  # leaf -> slots none of its CA ports own
        self.used_slots: dict[str, set[int]] = {}  # leaf -> slots its CA ports own
        self.cross: dict[str, dict[int, int]] = {}  # zone -> LID outside it -> uplink index
        for z in t.zones:
            total, holes = self._intra_slots(z)
            self.cross[z] = self._cross_slots(z, total, holes)
        # flows a source leaf sends to one destination in the balance loads: (compute sources, all sources)
        self.sources = {leaf: (sum(1 for c in cas if c.role == "compute"), len(cas)) for leaf, cas in t.cas.items()}
        # computed once per router (see tables()): the intact case (by fill_open_routes), its climbs by spine (by
        # id of the case), every case's inter-zone exits (by its alive inter-zone links and destinations)
        self._intact_cases: dict[bool, _Case] = {}
        self._climbs_by_spine: dict[int, dict[str, dict[str, list[tuple[Dest, str, int]]]]] = {}
        self._zone_exits: dict[tuple, dict[str, dict[int, _Exit]]] = {}
        # the CA destinations as arrays, for the loads
        self.switch_id = {s: i for i, s in enumerate(t.lid)}
        cas = sorted(t.ca_by_lid.items())
        self.ca_lid = np.array([lid for lid, _ in cas], dtype=np.int64)
        self.ca_zone = np.array([self.zidx[ca.zone] for _, ca in cas], dtype=np.int64)
        self.ca_role = np.array([ROLE_ORDER.get(ca.role, len(ROLE_ORDER)) for _, ca in cas], dtype=np.int64)
        self.ca_leaf = np.array([self.switch_id[ca.leaf] for _, ca in cas], dtype=np.int64)

    def tables(
        self,
        failed: Iterable[str] = (),
        *,
        loaded: LoadedInventory | None = None,
        inventory_items: int = 0,
        fill_open_routes: bool = True,
    ) -> RoutingTables:
        items = list(failed)
        cables, switches, unknown = resolve_failed(self.topo, items)
        if unknown:
            raise unknown_failed(self.topo, items, unknown, loaded, inventory_items)
        topo = dataclasses.replace(self.topo, failed_cables=set(cables), failed_switches=set(switches))
        base = self._intact(fill_open_routes) if cables or switches else None
        case = _Case(self, topo, fill_open_routes=fill_open_routes, base=base)
        tables = case.run_from(base) if base is not None and case.can_follow(base) else case.run()
        return RoutingTables(topo, tables, topo.max_lid, sorted(set(items)))

    def proven_tables(
        self,
        failed: Iterable[str],
        intact_channels: Channels | None = None,
        *,
        loaded: LoadedInventory | None = None,
        inventory_items: int = 0,
    ) -> tuple[RoutingTables, DeadlockProof, Channels]:
        """(`tables(failed)`, its deadlock proof, its channels). When the down-then-up turns of several broken spines
        close a cycle, the open switch routes are left open instead (ffplan.fabric.reach counts them) and proven
        again; raises StageError if that is not acyclic either. `intact_channels`: the plan's Channels, to derive the
        case's from (faster, for the sweep)."""
        items = list(failed)
        return first_proven(
            [
                lambda: self.tables(items, loaded=loaded, inventory_items=inventory_items),
                lambda: self.tables(items, loaded=loaded, inventory_items=inventory_items, fill_open_routes=False),
            ],
            intact_channels,
        )

    def _intact(self, fill_open_routes: bool) -> _Case:
        """The routes of the intact plan, computed once: failure cases start from them."""
        if fill_open_routes not in self._intact_cases:
            case = _Case(self, self.topo, fill_open_routes=fill_open_routes)
            case.run()
            self._intact_cases[fill_open_routes] = case
        return self._intact_cases[fill_open_routes]

    def climbs_by_spine(self, base: _Case) -> dict[str, dict[str, list[tuple[Dest, str, int]]]]:
        """leaf -> spine -> the (destination, target, uplink) pairs of `base` that climb to that spine."""
        key = id(base)
        if key not in self._climbs_by_spine:
            out: dict[str, dict[str, list[tuple[Dest, str, int]]]] = {}
            for leaf, climbs in base.climbs.items():
                port_u = {link[0]: u for u, link in enumerate(base.up[leaf]) if link is not None}
                per = out.setdefault(leaf, {})
                table = base.tables[leaf]
                for d, target, _ in climbs:
                    u = port_u.get(table[d.lid])
                    if u is not None:
                        per.setdefault(base.up_spine[leaf][u], []).append((d, target, u))
            self._climbs_by_spine[key] = out
        return self._climbs_by_spine[key]

    # ------------------------------------------------------------------ set-up (intact plan)

    def _destinations(self) -> list[Dest]:
        t = self.topo
        dests = [Dest(lid, t.zone_of[name], t.tier[name], name, 0, t.tier[name]) for name, lid in t.lid.items()]
        dests += [Dest(lid, ca.zone, "ca", ca.leaf, ca.leaf_port, ca.role) for lid, ca in t.ca_by_lid.items()]
        dests.sort(key=lambda d: d.lid)
        return dests

    def _intra_slots(self, zone: str) -> tuple[list[int], list[int]]:
        """Slots of the CA and leaf LIDs of `zone` (into self.slot); returns per-slot CA counts and hole counts."""
        slots = intra_slots(self.topo, zone)
        self.slot.update(slots.slot)
        self.holes.update(slots.holes)
        self.used_slots.update(slots.used)
        return slots.total, slots.hole_count

    def _cross_slots(self, zone: str, total: list[int], holes: list[int]) -> dict[int, int]:
        """Uplink index of every destination outside `zone`, water-filled after the zone's own."""
        U = len(total)
        slot: dict[int, int] = {}
        if U == 0:
            return slot
        T = list(total)
        sw = [0] * U
        for d in self.dests:
            if d.zone == zone:
                continue
            if d.kind == "ca":
                u = min(range(U), key=lambda u: (T[u], holes[u], u))
                T[u] += 1
            else:
                u = min(range(U), key=lambda u: (sw[u], u))
                sw[u] += 1
            slot[d.lid] = u
        return slot


@dataclass
class _Exit:
    leaf: str  # leaf of the source zone holding the link
    port: int
    peer: str  # leaf across
    direct: bool  # the destination hangs on `peer` (or is `peer`): it enters through its own leaf's link


@dataclass
class _Case:
    """One failure case: liveness, the inter-zone exits and spine homes that follow from it, and the tables."""

    r: ZoneRouter
    t: Topology
    fill_open_routes: bool = True
    # the intact case a failure case starts from: its inter-zone exits and spine homes stay where they still work, so
    # a failed inter-zone link moves only the destinations and spines it carried (not every cross-zone route)
    base: _Case | None = None
    tables: dict[str, list[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        t, r = self.t, self.r
        alive = t.cable_alive
        self.sw_alive = {s: s not in t.failed_switches for s in t.lid}
        # uplinks: leaf -> [(leaf port, spine, spine port) or None when dead]
        self.up = {
            leaf: [(u.leaf_port, u.spine, u.spine_port) if alive(u.label) else None for u in ups]
            for leaf, ups in t.uplinks.items()
        }
        self.up_spine = {leaf: [u.spine for u in ups] for leaf, ups in t.uplinks.items()}
        # spine -> leaf -> [spine port or None] by parallel link index k
        self.down = {
            s: {leaf: [sp if alive(label) else None for sp, _, label in links] for leaf, links in per_leaf.items()}
            for s, per_leaf in t.downlinks.items()
        }
        # spine -> leaves it still has an alive cable to
        self.spine_reach = {
            s: frozenset(leaf for leaf, ports in per_leaf.items() if any(p is not None for p in ports))
            for s, per_leaf in self.down.items()
        }
        self.ca_alive = {lid: alive(ca.label) and self.sw_alive[ca.leaf] for lid, ca in t.ca_by_lid.items()}
        self.dests = [d for d in r.dests if (self.ca_alive[d.lid] if d.kind == "ca" else self.sw_alive[d.switch])]
        # inter-zone links, oriented per zone pair: (A, N) -> [(leaf in A, port, leaf in N, port)]
        self.iz: dict[tuple[str, str], list[tuple[str, int, str, int]]] = {}
        for link in t.inter_zone:
            if not alive(link.label):
                continue
            za, zb = t.zone_of[link.a_leaf], t.zone_of[link.b_leaf]
            self.iz.setdefault((za, zb), []).append((link.a_leaf, link.a_port, link.b_leaf, link.b_port))
            self.iz.setdefault((zb, za), []).append((link.b_leaf, link.b_port, link.a_leaf, link.a_port))
        # leaf -> zone N -> its own alive links to N (ports)
        self.own_iz: dict[str, dict[str, list[int]]] = {}
        for (_, zn), links in self.iz.items():
            for a_leaf, a_port, _, _ in links:
                self.own_iz.setdefault(a_leaf, {}).setdefault(zn, []).append(a_port)
        self.linked = {key: {a for a, _, _, _ in links} for key, links in self.iz.items()}
        self.next_zone = self._zone_paths()
        exits_key = (tuple((k, tuple(v)) for k, v in sorted(self.iz.items())), tuple(d.lid for d in self.dests))
        if exits_key not in r._zone_exits:
            r._zone_exits[exits_key] = {z: self._exits(z) for z in t.zones}
        self.exit = r._zone_exits[exits_key]
        self._templates: dict[str, tuple] = {}  # zone -> _zone_template
        self._homed_slots_of: dict[str, dict[int, int]] = {}  # zone -> _homed_slot's answers
        self.climbs: dict[str, list[tuple[Dest, str, int]]] = {}  # leaf -> (destination, target, slot) it climbs with
        self._free_slots: dict[tuple[str, str], int | None] = {}  # (spine, leaf) -> slot of a displaced pair's downlink
        self.home: dict[str, str] = {}  # spine of a later zone -> the linked leaf it sends the earlier zone's LIDs to
        for z in t.zones:
            self._homes(z)
        self.homed = set(self.home.values())
        # linked leaves of a later zone (homes or not): what enters the zone climbs from them
        self.entries = {a for (za, zn), links in self.iz.items() if r.zidx[zn] < r.zidx[za] for a, _, _, _ in links}
        self.homed_slots: dict[str, list[int]] = {}  # linked leaf -> uplink indexes (of any leaf) to spines homed there
        for zone in t.zones:
            S = len(t.spines[zone])
            U = len(t.uplinks[t.leaves[zone][0]]) if t.leaves[zone] else 0
            for u in range(U):
                home = self.home.get(t.spines[zone][u % S]) if S else None
                if home is not None:
                    self.homed_slots.setdefault(home, []).append(u)
        # balance loads of displaced pairs, per leaf uplink and per (spine, leaf) downlink (see _count_loads)
        self.up_load: dict[str, np.ndarray] = {}
        self.down_load = np.zeros((0, 0, 2 * LOADS), dtype=np.int64)
        self.shift_load: dict[
            str, np.ndarray
        ] = {}  # leaf -> (uplink, leaf) -> its CA pairs to that leaf up that uplink
        self._ports_of: dict[str, list[Dest]] = {}  # leaf -> its alive CA ports (for _make_room)
        self._port_us: dict[str, dict[int, int]] = {}  # leaf -> its alive uplink ports -> uplink index
        self._spine_ids_of: dict[str, np.ndarray] = {}  # leaf -> switch id of each uplink's spine

    # ------------------------------------------------------------------ cross-zone set-up

    def _zone_paths(self) -> dict[str, dict[str, str | None]]:
        zones = self.t.zones
        adj = {z: [n for n in zones if (z, n) in self.iz] for z in zones}
        out: dict[str, dict[str, str | None]] = {}
        for a in zones:
            first: dict[str, str | None] = {a: None}
            q = deque([a])
            while q:
                z = q.popleft()
                for n in adj[z]:
                    if n not in first:
                        first[n] = n if z == a else first[z]
                        q.append(n)
            out[a] = {b: first.get(b) for b in zones if b != a}
        return out

    def _exits(self, zone: str) -> dict[int, _Exit]:
        """The inter-zone link each destination outside `zone` leaves by: spread evenly, role by role, over the
        links to the next zone; a destination on a leaf with its own link to `zone` through that link."""
        out: dict[int, _Exit] = {}
        for n in self.t.zones:
            links = self.iz.get((zone, n))
            if not links:
                continue
            count: dict[str, list[int]] = {}
            total = [0] * len(links)
            direct: list[tuple[Dest, list[int]]] = []
            rest: list[tuple[Dest, list[int]]] = []
            for d in self.dests:
                if d.zone == zone or self.next_zone[zone].get(d.zone) != n:
                    continue
                home = d.switch if d.kind != "spine" else None
                own = [i for i, link in enumerate(links) if link[2] == home] if d.zone == n and home else []
                (direct if own else rest).append((d, own))
            rest.sort(key=lambda x: (x[0].kind != "ca", x[0].lid))
            kept = self._kept_exits(zone, links)
            for d, own in direct + rest:
                per_role = count.setdefault(d.role, [0] * len(links))
                if not own and d.lid in kept:
                    rest_at = kept[d.lid]
                    per_role[rest_at] += 1
                    total[rest_at] += 1
            for d, own in direct + rest:
                if not own and d.lid in kept:
                    a_leaf, a_port, b_leaf, _ = links[kept[d.lid]]
                    out[d.lid] = _Exit(a_leaf, a_port, b_leaf, False)
                    continue
                per_role = count.setdefault(d.role, [0] * len(links))
                i = min(own or range(len(links)), key=lambda i: (per_role[i], total[i], i))
                per_role[i] += 1
                total[i] += 1
                a_leaf, a_port, b_leaf, _ = links[i]
                out[d.lid] = _Exit(a_leaf, a_port, b_leaf, bool(own))
        return out

    def _kept_exits(self, zone: str, links: list[tuple[str, int, str, int]]) -> dict[int, int]:
        """Destination LID -> index in `links` of the intact case's exit, for the exits whose link is still alive
        (none for the intact case itself)."""
        if self.base is None:
            return {}
        index = {(a_leaf, a_port): i for i, (a_leaf, a_port, _, _) in enumerate(links)}
        return {
            lid: index[(e.leaf, e.port)]
            for lid, e in self.base.exit.get(zone, {}).items()
            if not e.direct and (e.leaf, e.port) in index
        }

    def _homes(self, zone: str) -> None:
        """Every spine of `zone`, when `zone` is linked to an earlier zone, gets a *home*: one of the linked leaves, dealt
        round-robin. Traffic for the earlier zone comes down a spine only to its home leaf, and the linked leaves
        never send each other's LIDs through a spine homed at the receiving leaf. So no route that entered the zone
        can reach an exit: the channel dependency graph has no cycle through the two zones (docs/routing.md)."""
        t, r = self.t, self.r
        linked = sorted(
            {
                a
                for (za, zn), links in self.iz.items()
                if za == zone and r.zidx[zn] < r.zidx[zone]
                for a, _, _, _ in links
            },
            key=lambda x: t.index[x],
        )
        if not linked:
            return
        spines = t.spines[zone]
        S = len(spines)
        cap = -(-S // len(linked))
        # a spine homed at x carries x's LIDs only from the zone's other leaves: the other linked leaves move x's ports
        # of its slots to spines not homed at x. Home x's compute slots first, its hole last: the moved pairs then go
        # down x's storage and hole downlinks, which carry no compute flows, and x's hole downlink, the only one into
        # x with room in the all-CA all-to-all, stays open to them (docs/routing.md, section 3)
        cost = {x: [0] * S for x in linked}
        for x in linked:
            compute = {self.r.slot[c.lid] for c in t.cas[x] if c.role == "compute"}
            used = self.r.used_slots.get(x, set())
            for u in range(len(t.uplinks[x])):
                cost[x][u % S] += 0 if u in compute else 1 if u in used else 2
        count = dict.fromkeys(linked, 0)
        if self.base is not None:  # a spine keeps its intact home while that leaf is still linked and reachable
            for spine, x in self.base.home.items():
                if spine in spines and x in count and self.sw_alive[spine] and x in self.spine_reach[spine]:
                    self.home[spine] = x
                    count[x] += 1
        pairs = sorted(
            (cost[x][i], (j - i) % len(linked), i, x)
            for i in range(S)
            for j, x in enumerate(linked)
            if self.sw_alive[spines[i]] and x in self.spine_reach[spines[i]]
        )
        for fill in (cap, S):  # cheapest pairs first, at most `cap` spines per leaf; then whatever is left
            for _, _, i, x in pairs:
                if spines[i] not in self.home and count[x] < fill:
                    self.home[spines[i]] = x
                    count[x] += 1

    # ------------------------------------------------------------------ tables

    def run(self) -> dict[str, list[int]]:
        t = self.t
        size = t.max_lid + 1
        climbs: dict[str, list[tuple[Dest, str, int]]] = {}
        for name in t.lid:
            table = self.tables[name] = [UNROUTED] * size
            if not self.sw_alive[name]:
                continue
            if t.tier[name] == "leaf":
                climbs[name] = self._leaf_fixed(name, table)
            else:
                self._spine_table(name, table)
        displaced = []
        for leaf, todo in climbs.items():
            displaced += self._leaf_slots(leaf, todo)
        self.climbs = climbs
        self._count_loads()
        self._place_displaced(displaced)
        if self.fill_open_routes:
            self._fill_open_routes()
        return self.tables

    def can_follow(self, base: _Case) -> bool:
        """Whether this case can start from `base`'s routes: only leaf-spine cables and spines failed, and the
        cross-zone structure (inter-zone links, spine homes) is the same."""
        kinds = {self.t.by_label[c][0] for c in self.t.failed_cables}
        return (
            kinds <= {"leaf-spine"}
            and all(self.t.tier[s] == "spine" for s in self.t.failed_switches)
            and self.home == base.home
            and self.iz == base.iz
            and self.fill_open_routes == base.fill_open_routes
        )

    def run_from(self, base: _Case) -> dict[str, list[int]]:
        """Re-route incrementally from `base` (the intact routes): the tables of spines that failed or lost a cable
        are recomputed, every switch's entries for spine LIDs too, and of every leaf only the pairs whose spine became
        unusable are displaced and placed again over the loads of everything else, which keeps its route."""
        t, r = self.t, self.r
        broken = {
            s
            for s in t.lid
            if t.tier[s] == "spine"
            and (not self.sw_alive[s] or any(p is None for links in self.down[s].values() for p in links))
        }
        self.tables = {s: list(table) for s, table in base.tables.items()}
        self.climbs = base.climbs
        gone = [d.lid for d in r.dests if d.kind == "spine" and not self.sw_alive[d.switch]]
        spine_dests = [d for d in self.dests if d.kind == "spine"]
        for s in broken:
            table = self.tables[s] = [UNROUTED] * (t.max_lid + 1)
            if self.sw_alive[s]:
                self._spine_table(s, table)
        self.up_load = {leaf: load.copy() for leaf, load in base.up_load.items()}
        self.down_load = base.down_load.copy()
        self.shift_load = {leaf: load.copy() for leaf, load in base.shift_load.items()}
        displaced = []
        by_spine = r.climbs_by_spine(base)
        for name, table in self.tables.items():
            for lid in gone:
                table[lid] = UNROUTED
            if not self.sw_alive[name]:
                self.tables[name] = [UNROUTED] * (t.max_lid + 1)
                continue
            zone = t.zone_of[name]
            for d in spine_dests:
                if d.zone == zone and d.switch != name:
                    table[d.lid] = (
                        self._spine_to_spine(name, d.switch)
                        if t.tier[name] == "spine"
                        else self._leaf_to_spine(name, d.switch)
                    )
            if t.tier[name] != "leaf":
                continue
            for s in broken:
                for d, target, u in by_spine[name].get(s, ()):
                    if not self._valid(name, u, target, d):
                        displaced.append((name, d, target))
                        self._add_load(
                            name, u, base._down_target(name, u, target), [-x for x in self._weights(name, d)]
                        )
        self._place_displaced(displaced)
        if self.fill_open_routes:
            self._fill_open_routes()
        return self.tables

    def _next_switch(self, switch: str, lid: int) -> str | None:
        what = self.t.peer.get((switch, self.tables[switch][lid]))
        return what[1][0] if what is not None and what[0] == "switch" else None

    def _transit(self, spine: str) -> str | None:
        """The one leaf that carries every down-then-up turn into or out of `spine` (its home in a later zone)."""
        home = self.home.get(spine)
        if home is not None:
            return home
        reach = self.spine_reach[spine]
        leaves = self.t.leaves[self.t.zone_of[spine]]
        return next((leaf for leaf in leaves if leaf in reach and self.sw_alive[leaf]), None)

    def _fill_open_routes(self) -> None:
        """Routes the steps above leave open because of a failure: a spine that lost its cable to a leaf reaches that
        leaf's LIDs (and exits behind it) down its transit leaf, which sends them on; a leaf that lost its uplink to a
        spine reaches it up another spine, which sends it down the spine's transit leaf. These are the only
        down-then-up turns inside a zone, and all turns at a spine's transit leaf m either leave that spine (s -> m ->
        x) or enter it (y -> m -> s): a chain from one to the other would need the U-turn m -> s -> m, so one spine's
        turns cannot close a cycle. Turns of several spines can; the deadlock proof decides (route() drops these
        routes when they do)."""
        t = self.t
        for spine in (s for s in t.lid if t.tier[s] == "spine" and self.sw_alive[s]):
            table = self.tables[spine]
            m = self._transit(spine)
            if m is None or UNROUTED not in table:
                continue
            for d in self.dests:
                if table[d.lid] != UNROUTED or (d.kind == "spine" and d.zone == t.zone_of[spine]):
                    continue
                nxt = self._next_switch(m, d.lid)
                if nxt is not None and nxt != spine and not (d.switch in self.homed and self.home.get(nxt) == d.switch):
                    table[d.lid] = self._port_to(spine, m, 0)
        for leaf in (s for s in t.lid if t.tier[s] == "leaf" and self.sw_alive[s]):
            table = self.tables[leaf]
            if UNROUTED not in table:
                continue
            up = self.up[leaf]
            U = len(up)
            for d in self.dests:
                if table[d.lid] != UNROUTED or d.kind != "spine" or t.zone_of[d.switch] != t.zone_of[leaf]:
                    continue
                m = self._transit(d.switch)
                for j in range(U):
                    link = up[(d.lid + j) % U]
                    if (
                        link is not None
                        and m != leaf
                        and self._next_switch(link[1], d.lid) == m
                        and not (leaf in self.entries and self.home.get(link[1]) == m)
                    ):
                        table[d.lid] = link[0]
                        break

    def _zone_template(self, zone: str) -> tuple[dict[str, list[Dest]], list[Dest], list[tuple[Dest, str, int]]]:
        """For the leaves of `zone` without inter-zone links of their own: (leaf -> its own LIDs, the zone's spine
        LIDs, every climb as in _leaf_fixed); a leaf's climbs are these without the ones to itself."""
        if zone not in self._templates:
            r = self.r
            zi = r.zidx[zone]
            own: dict[str, list[Dest]] = {}
            spines: list[Dest] = []
            climbs: list[tuple[Dest, str, int]] = []
            exits, cross, next_zone = self.exit[zone], r.cross[zone], self.next_zone[zone]
            for d in self.dests:
                if d.zone == zone:
                    if d.kind == "spine":
                        spines.append(d)
                    else:
                        own.setdefault(d.switch, []).append(d)
                        climbs.append((d, d.switch, r.slot[d.lid]))
                    continue
                n = next_zone.get(d.zone)
                if n is None:
                    continue
                ex = exits[d.lid]
                if r.zidx[n] < zi:
                    u = self._homed_slot(zone, d.lid)
                    climbs.append((d, ex.leaf, u) if u is not None else (d, HOME, cross[d.lid]))
                else:
                    climbs.append((d, ex.leaf, cross[d.lid]))
            self._templates[zone] = (own, spines, climbs)
        return self._templates[zone]

    def _homed_slot(self, zone: str, lid: int) -> int | None:
        """The uplink index whose spine takes `lid`, a destination in an earlier zone, from any leaf of `zone` down to
        its exit leaf; None when no spine is homed there. Intact: the exit leaf's homed slots by the cross slot. A
        failure case keeps the intact case's slot wherever the exit and that spine's home stay, and deals the others to
        the exit leaf's least used homed slot, so a lost inter-zone link moves only the routes that used it."""
        if zone not in self._homed_slots_of:
            r = self.r
            base = self.base._homed_slots_of.get(zone, {}) if self.base is not None else {}
            kept_exit = self.base.exit.get(zone, {}) if self.base is not None else {}
            exits, cross, zi = self.exit[zone], r.cross[zone], r.zidx[zone]
            out: dict[int, int] = {}
            todo = []
            count: dict[int, int] = {}
            for d in self.dests:
                n = self.next_zone[zone].get(d.zone) if d.zone != zone else None
                if n is None or r.zidx[n] >= zi:
                    continue
                homed = self.homed_slots.get(exits[d.lid].leaf)
                if not homed:
                    continue
                u = base.get(d.lid)
                old = kept_exit.get(d.lid)
                if u in homed and old is not None and old.leaf == exits[d.lid].leaf:
                    out[d.lid] = u
                    count[u] = count.get(u, 0) + 1
                elif self.base is None:
                    out[d.lid] = homed[cross[d.lid] % len(homed)]
                else:
                    todo.append((d.lid, homed))
            for lid, homed in todo:
                u = min(homed, key=lambda u: (count.get(u, 0), (homed.index(u) - cross[lid]) % len(homed)))
                out[lid] = u
                count[u] = count.get(u, 0) + 1
            self._homed_slots_of[zone] = out
        return self._homed_slots_of[zone].get(lid)

    def _leaf_fixed(self, leaf: str, table: list[int]) -> list[tuple[Dest, str, int]]:
        """The entries of `leaf` that need no uplink choice: its own LIDs and CA ports, spine LIDs, traffic over its
        own inter-zone links. Returns the destinations that climb to a spine: (destination, the leaf that spine must
        reach, preferred slot)."""
        t, r = self.t, self.r
        zone = t.zone_of[leaf]
        if leaf not in self.own_iz:
            # most leaves: the zone's climbs are the same for all of them but for the leaf's own LIDs
            own, spines, climbs = self._zone_template(zone)
            for d in own.get(leaf, ()):
                table[d.lid] = d.port
            for d in spines:
                table[d.lid] = self._leaf_to_spine(leaf, d.switch)
            return [c for c in climbs if c[1] != leaf]
        zi = r.zidx[zone]
        own_iz = self.own_iz.get(leaf, {})
        next_zone = self.next_zone[zone]
        exits = self.exit[zone]
        cross = r.cross[zone]
        climbs = []
        for d in self.dests:
            lid = d.lid
            if d.zone == zone:
                if d.switch == leaf:
                    table[lid] = d.port  # 0 for the leaf itself
                elif d.kind == "spine":
                    table[lid] = self._leaf_to_spine(leaf, d.switch)
                else:
                    climbs.append((d, d.switch, r.slot[lid]))
                continue
            n = next_zone.get(d.zone)
            if n is None:
                continue
            ex = exits[lid]
            mine = own_iz.get(n)
            if ex.leaf == leaf:
                table[lid] = ex.port
            elif mine and (r.zidx[n] < zi or not ex.direct):
                # the shortest path: straight over this leaf's own link (a destination that enters through its own
                # leaf's link from another leaf of this zone is as close through that link: keep the exit)
                table[lid] = mine[lid % len(mine)]
            elif r.zidx[n] < zi:
                # leaving a later zone: up to a spine homed at the exit leaf (spread over them by the cross slot)
                u = self._homed_slot(zone, lid)
                if u is not None:
                    climbs.append((d, ex.leaf, u))
                else:
                    climbs.append((d, HOME, cross[lid]))  # no spine homed there any more: any home
            else:
                climbs.append((d, ex.leaf, cross[lid]))
        return climbs

    def _valid(self, leaf: str, u: int, target: str, d: Dest) -> bool:
        """Can `leaf` send `d` up uplink u, towards leaf `target` (HOME: the spine's home leaf)? The uplink is alive and
        its spine reaches the target; traffic for an earlier zone only comes down a spine to its home leaf, and a
        linked leaf never sends another linked leaf's LIDs through a spine homed there."""
        if self.up[leaf][u] is None:
            return False
        spine = self.up_spine[leaf][u]
        home = self.home.get(spine)
        if target == HOME:
            return home is not None
        if target in self.homed and home is not None:
            if d.zone != self.t.zone_of[leaf]:
                if home != target:
                    return False  # leaving through the target's link: only down a spine homed there
            elif leaf in self.entries and home == target:
                return False
        return target in self.spine_reach[spine]

    def _down_target(self, leaf: str, u: int, target: str) -> str:
        return self.home[self.up_spine[leaf][u]] if target == HOME else target

    def _leaf_slots(self, leaf: str, climbs: list[tuple[Dest, str, int]]) -> list[tuple[str, Dest, str]]:
        """Every climbing destination up its slot's uplink where valid; returns the displaced (leaf, dest, target)."""
        table = self.tables[leaf]
        up = self.up[leaf]
        port = [link[0] if link is not None else None for link in up]
        reach = [self.spine_reach[s] for s in self.up_spine[leaf]]
        homed = self.homed
        displaced = []
        # a linked leaf of a later zone places all its CA pairs to the other linked leaves by load, not only the ones
        # the homes rule moves off their slot: its pairs to the receiver's storage ports can then leave the downlinks
        # that carry no compute flows to the compute pairs the rule moves (B 822 -> 784 on FF2, docs/routing.md)
        balanced = homed if leaf in self.entries else frozenset()
        zone = self.t.zone_of[leaf]
        for d, target, u in climbs:
            if target in balanced and d.kind == "ca" and d.zone == zone:
                displaced.append((leaf, d, target))
                continue
            # the common case inline: alive uplink, its spine reaches the target, no home rule involved (_valid
            # holds only for an alive uplink too)
            uplink_port = port[u]
            if uplink_port is not None and (
                (target in reach[u] and target not in homed) or self._valid(leaf, u, target, d)
            ):
                table[d.lid] = uplink_port
            else:
                displaced.append((leaf, d, target))
        return displaced

    def _place_displaced(self, displaced: list[tuple[str, Dest, str]]) -> None:
        """Place every displaced (leaf, destination) pair on a valid uplink: one whose uplink and spine downlink stay
        within the most flows of the destination's role any link carried before (else exceed it least), then keep a
        leaf shift phase at two flows on a link (at most one pair of the source leaf more than d-mod-k's one), then
        carry the fewest flows of all roles after the move (on the busier of the two links, then on the other), then of
        the destination's role; a destination's pairs are placed one after another, so they spread over the spines
        instead of all doubling one downlink."""
        if not displaced:
            return
        t, sid = self.t, self.r.switch_id
        displaced.sort(key=lambda x: (x[1].lid, t.index[x[0]], x[0]))
        # per load: the most any link carries before the displaced pairs come; a pair that keeps its role's load within
        # it raises no pattern's maximum (a compute pair down a storage port's downlink), so the all-CA load decides
        cap = [
            max([int(self.down_load[..., k].max())] + [int(load[:, k].max()) for load in self.up_load.values()])
            for k in range(2 * LOADS)
        ]
        for leaf, d, target in displaced:
            U = len(self.up[leaf])
            cands = [u for u in range(U) if self._valid(leaf, u, target, d)]
            if not cands:
                continue
            w = self._weights(leaf, d)
            base = 0 if d.zone == t.zone_of[leaf] else LOADS
            role = base + (LOAD_COMPUTE if d.role == "compute" else LOAD_STORAGE if d.role == "storage" else LOAD_ALL)
            every = base + LOAD_ALL
            i = t.index[leaf]

            def key(u: int) -> tuple:
                down = self._down_target(leaf, u, target)
                a, b = (x.tolist() for x in self._link_loads(leaf, u, down))
                if base:
                    # cross-zone: every leaf's traffic to an exit leaf meets on the inter-zone links anyway; what this
                    # choice can balance is the leaf's own uplinks
                    return (a[every] + w[every], b[every], (u - i) % U)
                load = max(a[role], b[role]) + w[role]
                shift = self.shift_load[leaf][u, sid[down]] + 1
                return (
                    max(0, load - cap[role]),
                    max(0, shift - 2),
                    max(a[every], b[every]) + w[every],
                    # then the less loaded of the two links: a leaf's uplinks fill evenly where its pairs' downlinks
                    # (all near the maximum) decide the max
                    min(a[every], b[every]) + w[every],
                    load,
                    b[role] + b[every],
                    (u - i) % U,
                )

            u = min(cands, key=key)
            if not base and target in self.homed:
                a, b = self._link_loads(leaf, u, target)
                if max(a[every], b[every]) + w[every] > cap[every] and self._make_room(leaf, d, cands, w, cap):
                    u = min(cands, key=key)
            link = self.up[leaf][u]
            assert link is not None, "_valid holds only for an alive uplink"
            self.tables[leaf][d.lid] = link[0]
            self._add_load(leaf, u, self._down_target(leaf, u, target), w)

    def _make_room(self, leaf: str, d: Dest, cands: list[int], w: list[int], cap: list[int]) -> bool:
        """A zone-local pair into a linked leaf x of a later zone that fits on no valid downlink into x within `cap`
        (the most flows of each load any link carried before the displaced pairs came): move one pair another leaf
        sends to x off the downlink of one of `cands` onto another of that leaf's uplinks, where its uplink, its
        downlink (a spine homed at x is open to a leaf without inter-zone links) and its shift phase stay within cap
        and 2, and the first pair then fits there. The homes rule keeps the other linked leaves off x's homed spines,
        so their pairs into x crowd its other downlinks; the unlinked leaves' pairs make room for them (on FF2 all go
        to x's hole downlink, the one that carries none of their other ports of x: B 784 -> 780 in z2,
        docs/routing.md, section 3). Returns whether a pair moved."""
        t, sid = self.t, self.r.switch_id
        x = d.switch
        every, role = LOAD_ALL, LOAD_COMPUTE if d.role == "compute" else LOAD_STORAGE
        if x not in self._ports_of:
            self._ports_of[x] = [p for p in self.dests if p.kind == "ca" and p.switch == x]
        ports = self._ports_of[x]
        on: dict[str, list[tuple[str, int, Dest]]] = {}  # spine -> pairs (source leaf, uplink, destination) down to x
        for y in t.leaves[t.zone_of[leaf]]:
            if y in (leaf, x) or not self.sw_alive[y]:
                continue
            port_u = self._port_u(y)
            table = self.tables[y]
            for p in ports:
                uy = port_u.get(table[p.lid])
                if uy is not None:
                    on.setdefault(self.up_spine[y][uy], []).append((y, uy, p))
        sx = sid[x]
        limit = np.array(cap[:LOADS])
        into_x = self.down_load[:, sx, :LOADS]
        rooms: dict[tuple[str, str], list[int]] = {}  # (leaf y, role) -> y's uplinks that take such a pair to x

        def room(y: str, p: Dest, wy: list[int]) -> list[int]:
            """y's valid uplinks whose uplink and downlink to x take the pair within the caps, in a shift phase of 2."""
            if (y, p.role) not in rooms:
                ok = (self.up_load[y][:, :LOADS] + wy[:LOADS] <= limit).all(axis=1)
                ok &= (into_x[self._spine_ids(y)] + wy[:LOADS] <= limit).all(axis=1)
                ok &= self.shift_load[y][:, sx] < 2
                rooms[(y, p.role)] = [u2 for u2 in np.flatnonzero(ok).tolist() if self._valid(y, u2, x, p)]
            return rooms[(y, p.role)]

        # first a move that keeps the moved pair's leaf at d-mod-k's balance: its uplinks within one destination of
        # each other (from one of its busiest to a less busy one) and at most one port of x per downlink (no shift
        # phase above one flow on a link); then one within the loads' caps and a shift phase of two
        # the candidate uplinks least loaded first: the pair goes where room is made, so the leaf's uplinks stay even
        order = sorted(cands, key=lambda u: (int(self.up_load[leaf][u, every]), u))
        for keep_balance in (True, False):
            for u in order:
                a, b = (load.tolist() for load in self._link_loads(leaf, u, x))
                if any(a[k] + w[k] > cap[k] for k in (every, role)) or self.shift_load[leaf][u, sx] >= 2:
                    continue
                for y, uy, p in on.get(self.up_spine[leaf][u], ()):
                    wy = self._weights(y, p)
                    if any(b[k] - wy[k] + w[k] > cap[k] for k in (every, role)):
                        continue
                    up, shift = self.up_load[y][:, every], self.shift_load[y][:, sx]
                    fits = [
                        u2
                        for u2 in room(y, p, wy)
                        if u2 != uy and (not keep_balance or (shift[u2] == 0 and up[u2] + wy[every] <= up[uy]))
                    ]
                    if fits:
                        busiest = np.maximum(up, into_x[self._spine_ids(y), every])
                        u2 = min(fits, key=lambda u2: (int(busiest[u2]), u2))
                        link = self.up[y][u2]
                        assert link is not None, "_valid holds only for an alive uplink"
                        self.tables[y][p.lid] = link[0]
                        self._add_load(y, uy, x, [-k for k in wy])
                        self._add_load(y, u2, x, wy)
                        return True
        return False

    def _spine_ids(self, leaf: str) -> np.ndarray:
        """The switch id of each uplink's spine of the leaf (to index down_load with)."""
        if leaf not in self._spine_ids_of:
            self._spine_ids_of[leaf] = np.array([self.r.switch_id[s] for s in self.up_spine[leaf]], dtype=np.int64)
        return self._spine_ids_of[leaf]

    def _port_u(self, leaf: str) -> dict[int, int]:
        """The leaf's alive uplink ports -> uplink index."""
        if leaf not in self._port_us:
            self._port_us[leaf] = {link[0]: u for u, link in enumerate(self.up[leaf]) if link is not None}
        return self._port_us[leaf]

    def _weights(self, leaf: str, d: Dest) -> list[int]:
        """The pair's flows in the balance loads: zone-local traffic in the first three, cross-zone in the last three
        (the analyze patterns run per zone or across zones, so the two never add up on one link)."""
        w = [0] * (2 * LOADS)
        if d.kind == "ca":
            compute, every = self.r.sources[leaf]
            base = 0 if d.zone == self.t.zone_of[leaf] else LOADS
            w[base + LOAD_COMPUTE] = compute if d.role == "compute" else 0
            w[base + LOAD_STORAGE] = compute if d.role == "storage" else 0
            w[base + LOAD_ALL] = every
        return w

    def _count_loads(self) -> None:
        """Loads of the pairs already placed, on every leaf uplink and spine downlink (for the displaced ones)."""
        t, r = self.t, self.r
        sid = r.switch_id
        n = len(sid)
        self.up_load = {leaf: np.zeros((len(ups), 2 * LOADS), dtype=np.int64) for leaf, ups in self.up.items()}
        self.down_load = np.zeros((n, n, 2 * LOADS), dtype=np.int64)
        self.shift_load = {leaf: np.zeros((len(ups), n), dtype=np.int64) for leaf, ups in self.up.items()}
        lids, dzone, drole, dleaf = r.ca_lid, r.ca_zone, r.ca_role, r.ca_leaf
        alive = np.array([self.ca_alive[lid] for lid in lids.tolist()])
        home_id = np.full(n, -1, dtype=np.int64)
        for spine, home in self.home.items():
            home_id[sid[spine]] = sid[home]
        for leaf, ups in self.up.items():
            if not self.sw_alive[leaf]:
                continue
            zone = t.zone_of[leaf]
            port_u = np.full(256, -1, dtype=np.int64)
            for slot, link in enumerate(ups):
                if link is not None:
                    port_u[link[0]] = slot
            u = port_u[np.asarray(self.tables[leaf], dtype=np.int64)[lids]]
            keep = (u >= 0) & alive
            u, lid, z, role, own = u[keep], lids[keep], dzone[keep], drole[keep], dleaf[keep]
            spine = np.array([sid[x] for x in self.up_spine[leaf]], dtype=np.int64)[u]
            cross = z != r.zidx[zone]
            exit_leaf = np.array(
                [sid[self.exit[zone][x].leaf] if x in self.exit[zone] else -1 for x in lid.tolist()], dtype=np.int64
            )
            target = np.where(cross, np.where(home_id[spine] >= 0, home_id[spine], exit_leaf), own)
            compute, every = r.sources[leaf]
            w = np.zeros((len(u), 2 * LOADS), dtype=np.int64)
            rows = np.arange(len(u))
            base = cross * LOADS
            w[rows, base + LOAD_COMPUTE] = compute * (role == ROLE_ORDER["compute"])
            w[rows, base + LOAD_STORAGE] = compute * (role == ROLE_ORDER["storage"])
            w[rows, base + LOAD_ALL] = every
            np.add.at(self.up_load[leaf], u, w)
            np.add.at(self.down_load, (spine, target), w)
            if every:
                np.add.at(self.shift_load[leaf], (u[~cross], own[~cross]), 1)

    def _link_loads(self, leaf: str, u: int, target: str) -> tuple[np.ndarray, np.ndarray]:
        """The loads of uplink u of `leaf` and of its spine's downlink to `target`."""
        sid = self.r.switch_id
        return self.up_load[leaf][u], self.down_load[sid[self.up_spine[leaf][u]], sid[target]]

    def _add_load(self, leaf: str, u: int, target: str, w: list[int]) -> None:
        for load in self._link_loads(leaf, u, target):
            load += w
        if w[LOAD_ALL]:  # a zone-local CA pair (removed when negative)
            self.shift_load[leaf][u, self.r.switch_id[target]] += 1 if w[LOAD_ALL] > 0 else -1

    def _port_to(self, spine: str, leaf: str, u: int) -> int:
        """The spine's port to `leaf` for slot u: parallel link u // S, else another alive one."""
        links = self.down[spine].get(leaf)
        if not links:
            return UNROUTED
        S = len(self.t.spines[self.t.zone_of[spine]])
        k = u // S if S else 0
        port = links[k] if k < len(links) else None
        if port is not None:
            return port
        alive = [p for p in links if p is not None]
        return alive[u % len(alive)] if alive else UNROUTED

    def _spine_to_spine(self, spine: str, other: str) -> int:
        """Another spine of the zone: down to a leaf that still reaches it, the other spine's transit leaf first (see
        _fill_open_routes)."""
        t = self.t
        leaves = t.leaves[t.zone_of[spine]]
        L = len(leaves)
        i0 = (t.index[spine] + t.index[other]) % L
        m = self._transit(other)
        for leaf in ([m] if m else []) + [leaves[(i0 + j) % L] for j in range(L)]:
            port = self._port_to(spine, leaf, 0)
            if (
                self.sw_alive[leaf]
                and port != UNROUTED
                and any(link is not None and self.up_spine[leaf][u] == other for u, link in enumerate(self.up[leaf]))
            ):
                return port
        return UNROUTED

    def _leaf_to_spine(self, leaf: str, spine: str) -> int:
        """A spine of the leaf's zone: straight up (parallel links by leaf index); UNROUTED when no uplink is alive."""
        up = self.up[leaf]
        ports = [link[0] for u, link in enumerate(up) if link is not None and self.up_spine[leaf][u] == spine]
        return ports[self.t.index[leaf] % len(ports)] if ports else UNROUTED

    def _spine_table(self, spine: str, table: list[int]) -> None:
        t, r = self.t, self.r
        zone = t.zone_of[spine]
        S = len(t.spines[zone])
        cross = r.cross[zone]
        exits = self.exit[zone]
        next_zone = self.next_zone[zone]
        ti = t.index[spine]
        ports: dict[tuple[str, int], int] = {}  # (leaf, slot) -> port: a few hundred keys for all destinations
        # leaf -> the port every displaced destination below it takes (its slot is another spine's), when it does not
        # depend on the destination's slot: one dictionary look-up for most of the zone's destinations
        displaced: dict[str, int | None] = {}

        def port(leaf: str, u: int) -> int:
            p = ports.get((leaf, u))
            if p is None:
                p = ports[(leaf, u)] = self._port_to(spine, leaf, u)
            return p

        for d in self.dests:
            lid = d.lid
            if d.zone == zone:
                if d.kind != "spine":  # a CA port or a leaf, below one of this spine's leaves
                    u = r.slot[lid]
                    if S and u % S != ti:
                        leaf = d.switch
                        if leaf not in displaced:
                            free = self._free_slot(spine, leaf)
                            displaced[leaf] = None if free is None else port(leaf, free)
                        fixed = displaced[leaf]
                        table[lid] = port(leaf, u) if fixed is None else fixed
                    else:
                        table[lid] = port(d.switch, u)
                elif d.switch == spine:
                    table[lid] = 0
                else:
                    table[lid] = self._spine_to_spine(spine, d.switch)
                continue
            n = next_zone.get(d.zone)
            if n is None:
                continue
            if r.zidx[n] < r.zidx[zone]:
                home = self.home.get(spine)
                if home is not None:
                    table[lid] = port(home, cross[lid])
            else:
                table[lid] = port(exits[lid].leaf, cross[lid])

    def _free_slot(self, spine: str, leaf: str) -> int | None:
        """The slot a spine brings a displaced pair down with (the destination's slot is another spine's): a parallel
        link none of the leaf's ports own; None: the destination's own parallel link."""
        key = (spine, leaf)
        if key not in self._free_slots:
            S = len(self.t.spines[self.t.zone_of[spine]])
            ti = self.t.index[spine]
            links = self.down[spine].get(leaf) or []
            used = self.r.used_slots.get(leaf, set())
            ks = [k for k in range(len(links)) if links[k] is not None and k * S + ti not in used]
            self._free_slots[key] = ks[0] * S + ti if ks else None
        return self._free_slots[key]
