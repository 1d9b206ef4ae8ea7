"""Static routing: a full linear forwarding table (LFT) for every switch of the plan.

Algorithm (docs/routing.md has the long form):

* **Inside a zone: d-mod-k over a global destination order.** Every CA port of a zone gets an uplink index
  ("slot") u in 0..U-1; every leaf sends a destination up its uplink u, which goes to spine u mod S over
  parallel link u // S, and that spine sends it down its parallel link u // S to the destination's leaf. The
  ports of one leaf get distinct slots, so every spine downlink carries at most one of the leaf's ports and a
  shift permutation between leaves is contention-free. A leaf with fewer ports than uplinks leaves holes;
  the holes are dealt round-robin over the slots, so over the zone every slot carries the same number of
  destinations (within one) and every leaf's uplinks do too. Inside each leaf the roles are dealt so that
  every slot also carries the same number of compute (and of storage) ports: the balance OpenSM's ftree gets
  from its compute-node/IO-node split.
* **Across zones** the destinations of another zone are spread evenly over the inter-zone links between the
  two zones (a destination on a leaf that holds its own inter-zone link always enters through that link), and
  over the leaf uplinks towards the exit leaf (water-filling the same slot counters). In the later zone, a leaf
  holding links to the earlier zone sends that traffic straight over them, and every other leaf sends it up to
  the exit leaf's *exit spine* (the spine and parallel link of one of its holes, which no CA port of that leaf
  uses). That keeps exits off every down-then-up turn between two linked leaves, so the channel dependency
  graph stays acyclic (docs/routing.md, sections 2 and 3). Zones that are not directly linked are reached
  through the next zone on a shortest zone path.
* **Failed cables and switches** are never used. A leaf whose uplink is dead (or whose spine lost its cable to
  the destination's leaf) gives the affected destinations to its least-loaded valid uplinks, so with one of 20
  uplinks down no uplink carries more than ceil(D/19) of the leaf's D destinations.

The routes are then proven deadlock-free (ffplan.design.deadlock) before the plan is written.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Iterable

from ffplan.design.topology import Topology, build_topology, resolve_failed
from ffplan.diagnostics import COMMAND_LINE, Collector, InputError, StageError, did_you_mean
from ffplan.plan.model import Lft, Plan, Routing

ENGINE = "ffplan d-mod-k"
UNROUTED = 255  # OpenSM's OSM_NO_PATH: the switch drops packets for this LID
RULE_UNKNOWN_FAILED = "FF601"
ROLE_ORDER = {"compute": 0, "storage": 1, "management": 2}

__all__ = ["ENGINE", "UNROUTED", "RoutingTables", "compute_tables", "route", "routing_from_tables"]


@dataclass
class Dest:
    lid: int
    zone: str
    kind: str  # "ca" | "leaf" | "spine"
    switch: str  # the leaf the CA hangs on, the leaf itself, or the spine itself
    port: int  # leaf port of a CA; 0 for a switch


@dataclass
class RoutingTables:
    topo: Topology
    tables: dict[str, list[int]]  # switch -> ports indexed by LID
    max_lid: int
    failed: list[str]


def route(plan: Plan, failed: Iterable[str] = (), *, check: bool = True) -> Routing:
    """Route `plan` around `failed` (cable labels, switch names, `switch[port]`), prove the routes deadlock-free
    and return the plan's `Routing`. Raises StageError (FF601) for an unknown failed item and (FF602) for a
    channel dependency cycle."""
    failed = list(failed)
    topo = build_topology(plan)
    cables, switches, unknown = resolve_failed(topo, failed)
    if unknown:
        c = Collector("<plan>")
        for i in unknown:
            c.error(RULE_UNKNOWN_FAILED, ("failed", i), f"failed link '{failed[i]}' is neither a cable label nor a switch of the plan",
                    "use a cable label from cables.csv (z1-leaf01-p21), a switch name (z1-spine03) or switch[port]")
        raise StageError(c.items)
    rt = compute_tables(topo, cables, switches)
    rt.failed = sorted(set(failed))
    return routing_from_tables(rt, check=check)


def design_routing(loaded, plan: Plan, exclude: Iterable[str] = ()) -> Routing:
    """The design step: route around the inventory's `fabric.failed_links` plus `--exclude-link` items; an unknown
    item is reported at its place in the inventory (or as the command-line option)."""
    inv_failed = list(loaded.inventory.fabric.failed_links)
    extra = list(exclude)
    topo = build_topology(plan)
    cables, switches, unknown = resolve_failed(topo, inv_failed + extra)
    if unknown:
        # a bad input, exit 2: located in the inventory, or at the option when it came from the command line
        c = Collector(loaded.source.file, loaded.source.positions)
        option = Collector(COMMAND_LINE)
        names = sorted(set(topo.by_label) | set(topo.lid))
        valid = (f"valid: a cable label as in cables.csv ({min(topo.by_label)}), a switch name ({min(topo.lid)}) "
                 f"or switch[port] ({min(topo.lid)}[1])")
        for i in unknown:
            item = (inv_failed + extra)[i]
            hint = " ".join(filter(None, [did_you_mean(item, names), valid]))
            if i < len(inv_failed):
                c.error(RULE_UNKNOWN_FAILED, ("fabric", "failed_links", i),
                        f"failed link '{item}' is neither a cable label nor a switch of the plan", hint)
            else:
                option.error(RULE_UNKNOWN_FAILED, ("--exclude-link",),
                             f"--exclude-link '{item}' is neither a cable label nor a switch of the plan", hint)
        raise InputError(c.items + option.items)
    rt = compute_tables(topo, cables, switches)
    rt.failed = sorted(set(inv_failed + extra))
    return routing_from_tables(rt)


def routing_from_tables(rt: RoutingTables, check: bool = True) -> Routing:
    from ffplan.design.deadlock import prove_deadlock_free

    proof = prove_deadlock_free(rt.topo, rt.tables) if check else None
    lfts = [Lft(switch=name, ports=rt.tables[name]) for name in _switch_order(rt.topo)]
    return Routing(engine=ENGINE, max_lid=rt.max_lid, unrouted_port=UNROUTED, failed=rt.failed, deadlock=proof, lfts=lfts)


def _switch_order(topo: Topology) -> list[str]:
    return [s.name for s in topo.plan.switches]


# --------------------------------------------------------------------------------------------------- tables


def compute_tables(topo: Topology, failed_cables: set[str] = frozenset(), failed_switches: set[str] = frozenset()) -> RoutingTables:  # type: ignore[assignment]
    topo.failed_cables = set(failed_cables)
    topo.failed_switches = set(failed_switches)
    return _Router(topo).run()


class _Router:
    def __init__(self, topo: Topology):
        self.t = topo
        t = topo
        self.max_lid = t.max_lid
        alive = t.cable_alive
        # uplinks: leaf -> [(leaf port, spine, spine port) or None when dead]
        self.up: dict[str, list] = {}
        self.up_spine: dict[str, list[str]] = {}
        for leaf, ups in t.uplinks.items():
            self.up[leaf] = [(u.leaf_port, u.spine, u.spine_port) if alive(u.label) else None for u in ups]
            self.up_spine[leaf] = [u.spine for u in ups]
        # spine -> leaf -> [spine port or None] by parallel link index k
        self.down: dict[str, dict[str, list]] = {
            s: {leaf: [sp if alive(label) else None for sp, _, label in links] for leaf, links in per_leaf.items()}
            for s, per_leaf in t.downlinks.items()
        }
        self.sw_alive = {s: s not in t.failed_switches for s in t.lid}
        # spine -> leaves it still has an alive cable to
        self.spine_reach = {s: frozenset(leaf for leaf, ports in per_leaf.items() if any(p is not None for p in ports))
                            for s, per_leaf in self.down.items()}
        self.ca_alive = {lid: alive(ca.label) and self.sw_alive[ca.leaf] for lid, ca in t.ca_by_lid.items()}
        # inter-zone links, oriented per zone pair: (A, N) -> [(leaf in A, port, leaf in N, port)]
        self.iz: dict[tuple[str, str], list[tuple[str, int, str, int]]] = {}
        for link in t.inter_zone:
            if not alive(link.label):
                continue
            za, zb = t.zone_of[link.a_leaf], t.zone_of[link.b_leaf]
            self.iz.setdefault((za, zb), []).append((link.a_leaf, link.a_port, link.b_leaf, link.b_port))
            self.iz.setdefault((zb, za), []).append((link.b_leaf, link.b_port, link.a_leaf, link.a_port))
        # leaf -> zone N -> its own alive links to N (port, peer leaf)
        self.own_iz: dict[str, dict[str, list[int]]] = {}
        for (za, zn), links in self.iz.items():
            for a_leaf, a_port, _, _ in links:
                self.own_iz.setdefault(a_leaf, {}).setdefault(zn, []).append(a_port)
        self.zidx = {z: i for i, z in enumerate(t.zones)}
        self.next_zone = self._zone_paths()
        self.dests = self._destinations()
        self.dest_switch = {d.lid: d.switch for d in self.dests}

    # ------------------------------------------------------------------ set-up

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

    def _destinations(self) -> list[Dest]:
        t = self.t
        dests = []
        for name, lid in t.lid.items():
            if self.sw_alive[name]:
                dests.append(Dest(lid, t.zone_of[name], t.tier[name], name, 0))
        for lid, ca in t.ca_by_lid.items():
            if self.ca_alive[lid]:
                dests.append(Dest(lid, ca.zone, "ca", ca.leaf, ca.leaf_port))
        dests.sort(key=lambda d: d.lid)
        return dests

    # ------------------------------------------------------------------ slots

    def _intra_slots(self, zone: str) -> tuple[dict[int, int], list[int], list[int]]:
        """slot per CA/leaf LID of `zone`; per-slot CA counts; per-slot hole counts."""
        t = self.t
        leaves = t.leaves[zone]
        U = len(t.uplinks[leaves[0]]) if leaves else 0
        slot: dict[int, int] = {}
        total = [0] * U
        holes = [0] * U
        if U == 0:
            return slot, total, holes
        per_role: dict[str, list[int]] = {}
        P = 0
        for leaf in leaves:
            ports = [c for c in t.cas[leaf] if self.ca_alive[c.lid]]
            n = len(ports)
            h = (-n) % U
            self.holes[leaf] = [(P + j) % U for j in range(h)]
            for j in range(h):
                holes[(P + j) % U] += 1
            start = (P + h) % U
            cap = [0] * U
            for j in range(n):
                cap[(start + j) % U] += 1
            P = start
            by_role: dict[str, list] = {}
            for c in ports:
                by_role.setdefault(c.role, []).append(c)
            # the largest role picks first from the slots it has used least; smaller roles share the rest
            for role in sorted(by_role, key=lambda r: (-len(by_role[r]), ROLE_ORDER.get(r, 9), r)):
                counts = per_role.setdefault(role, [0] * U)
                for c in by_role[role]:
                    u = min((u for u in range(U) if cap[u] > 0), key=lambda u: (counts[u], total[u], (u - start) % U))
                    cap[u] -= 1
                    self.used_slots.setdefault(leaf, set()).add(u)
                    counts[u] += 1
                    total[u] += 1
                    slot[c.lid] = u
        # leaf LIDs: one more destination each, water-filled over a separate counter
        sw_count = [0] * U
        for i, leaf in enumerate(leaves):
            own_holes = set(self.holes.get(leaf, ()))
            u = min(range(U), key=lambda u: (u in own_holes, sw_count[u], (u - i) % U))
            sw_count[u] += 1
            slot[t.lid[leaf]] = u
        return slot, total, holes

    def _cross_slots(self, zone: str, total: list[int], holes: list[int]) -> dict[int, int]:
        """slot (uplink index) of every destination outside `zone`, water-filled after the zone's own."""
        U = len(total)
        slot: dict[int, int] = {}
        if U == 0:
            return slot
        T = list(total)
        sw = [0] * U
        for d in self.dests:
            if d.zone == zone or self.next_zone[zone].get(d.zone) is None:
                continue
            if d.kind == "ca":
                u = min(range(U), key=lambda u: (T[u], holes[u], u))
                T[u] += 1
            else:
                u = min(range(U), key=lambda u: (sw[u], u))
                sw[u] += 1
            slot[d.lid] = u
        return slot

    def _exits(self, zone: str) -> dict[int, tuple[str, int, str]]:
        """The inter-zone link (leaf in `zone`, its port, leaf across) each destination outside `zone` leaves by:
        spread evenly over the links to the next zone, a destination on a leaf with its own link to `zone`
        through that link."""
        t = self.t
        out: dict[int, tuple[str, int, str]] = {}
        for n in t.zones:
            links = self.iz.get((zone, n))
            if not links:
                continue
            count = [0] * len(links)
            direct, rest = [], []
            for d in self.dests:
                if d.zone == zone or self.next_zone[zone].get(d.zone) != n:
                    continue
                home = d.switch if d.kind != "spine" else None
                own = [i for i, l in enumerate(links) if l[2] == home] if d.zone == n and home else []
                (direct if own else rest).append((d, own))
            rest.sort(key=lambda x: (x[0].kind != "ca", x[0].lid))
            for d, own in direct + rest:
                i = min(own or range(len(links)), key=lambda i: (count[i], i))
                count[i] += 1
                out[d.lid] = (links[i][0], links[i][1], links[i][2])
        return out

    def _hole_uplinks(self, zone: str) -> None:
        """For every leaf of `zone` linked to an earlier zone: the slot of its first hole (a spine downlink that
        carries none of its CA ports). Traffic leaving the zone through that leaf comes down this spine only."""
        t = self.t
        S = len(t.spines[zone])
        for (za, zn), links in self.iz.items():
            if za != zone or self.zidx[zn] >= self.zidx[zone]:
                continue
            for a_leaf, _, _, _ in links:
                holes = self.holes.get(a_leaf) or []
                if holes and S:
                    self.exit_slot[a_leaf] = holes[0]
                    self.spine_exit.setdefault(t.spines[zone][holes[0] % S], []).append(a_leaf)

    # ------------------------------------------------------------------ tables

    def run(self) -> RoutingTables:
        t = self.t
        tables: dict[str, list[int]] = {}
        self.slot: dict[int, int] = {}
        self.holes: dict[str, list[int]] = {}
        self.used_slots: dict[str, set[int]] = {}  # leaf -> slots its CA ports own
        self.exit_slot: dict[str, int] = {}  # linked leaf of a later zone -> the slot exit traffic comes down
        self.spine_exit: dict[str, list[str]] = {}  # spine -> linked leaves whose exit slot is on it
        self.cross: dict[str, dict[int, int]] = {}
        self.exit: dict[str, dict[int, tuple[str, int]]] = {}
        for z in t.zones:
            s, total, holes = self._intra_slots(z)
            self.slot.update(s)
            self.cross[z] = self._cross_slots(z, total, holes)
        for z in t.zones:
            self.exit[z] = self._exits(z)
            self._hole_uplinks(z)
        for name in t.lid:
            table = [UNROUTED] * (self.max_lid + 1)
            if self.sw_alive[name]:
                if t.tier[name] == "leaf":
                    self._leaf_table(name, table)
                else:
                    self._spine_table(name, table)
            tables[name] = table
        return RoutingTables(t, tables, self.max_lid, [])

    def _leaf_table(self, leaf: str, table: list[int]) -> None:
        """Own LIDs and CA ports directly; the zone's destinations up their slot's uplink; other zones' through
        the exit leaf (a leaf of a later zone holding links to an earlier one sends that traffic straight over
        its own links). Dead or useless uplinks: least-loaded valid uplink instead; then a rebalancing pass.

        In a later zone, traffic towards an earlier zone climbs to the exit leaf's *exit spine* (the spine of
        one of its holes): routes between two linked leaves of such a zone turn down-then-up at a spine (a
        "valley", unavoidable with more than one linked leaf), and keeping exits off every valley spine is what
        keeps the channel dependency graph acyclic (docs/routing.md).
        """
        t = self.t
        zone = t.zone_of[leaf]
        up = self.up[leaf]
        up_spine = self.up_spine[leaf]
        U = len(up)
        S = len(t.spines[zone])
        cross = self.cross[zone]
        exits = self.exit[zone]
        own_iz = self.own_iz.get(leaf, {})
        next_zone = self.next_zone[zone]
        zi = self.zidx[zone]
        load = [0] * U
        reach = [self.spine_reach[up_spine[u]] if up[u] is not None else frozenset() for u in range(U)]

        exit_down = {x: (t.spines[zone][u % S], u // S) for x, u in self.exit_slot.items() if t.zone_of[x] == zone}
        slot = self.slot

        def valid(u: int, target: str, lid: int = 0) -> bool:
            # never bring a destination of a linked leaf down its exit downlink (spine, parallel link): that
            # downlink is for exits only (a spine sends a destination down the parallel link of its slot)
            if target not in reach[u]:
                return False
            ex = exit_down.get(target)
            return ex is None or not (up_spine[u] == ex[0] and slot.get(lid, -1) // S == ex[1])

        def reaches(u: int, target: str) -> bool:
            return target in reach[u]

        climbs: list[tuple[Dest, str, int]] = []  # (destination, leaf its spine must reach, preferred slot)
        pinned: list[tuple[Dest, str]] = []  # exits of a later zone: (destination, exit leaf)
        for d in self.dests:
            lid = d.lid
            if d.zone == zone:
                if d.switch == leaf:
                    table[lid] = d.port  # 0 for the leaf itself
                    continue
                if d.kind == "spine":
                    ks = [u for u in range(U) if up_spine[u] == d.switch and up[u] is not None]
                    if ks:
                        table[lid] = up[ks[t.index[leaf] % len(ks)]][0]
                    continue
                climbs.append((d, d.switch, self.slot[lid]))
            else:
                n = next_zone.get(d.zone)
                if n is None:
                    continue
                ex_leaf, ex_port, _ = exits[lid]
                if ex_leaf == leaf:
                    table[lid] = ex_port
                    continue
                mine = own_iz.get(n)
                if mine and self.zidx[n] < zi:
                    table[lid] = mine[lid % len(mine)]
                    continue
                if self.zidx[n] < zi and ex_leaf in self.exit_slot:
                    pinned.append((d, ex_leaf))
                    continue
                climbs.append((d, ex_leaf, cross[lid]))
        # exits of a later zone: up to the exit spine of the exit leaf, else of another linked leaf
        for d, ex_leaf in pinned:
            others = sorted(self._linked_leaves(zone, next_zone[d.zone]) - {ex_leaf}, key=lambda x: t.index[x])
            choices = [ex_leaf] + others
            for x in choices:
                u0 = self.exit_slot.get(x)
                if u0 is None:
                    continue
                spine = t.spines[zone][u0 % S]
                cands = [u for u in range(U) if up_spine[u] == spine and reaches(u, x)]
                if cands:
                    u = u0 if u0 in cands else min(cands, key=lambda u: (load[u], u))
                    table[d.lid] = up[u][0]
                    if d.kind == "ca":
                        load[u] += 1
                    break
        chosen: dict[int, int] = {}  # CA LID -> uplink index
        pending: list[tuple[Dest, str, int]] = []
        for d, target, u in climbs:
            if valid(u, target, d.lid):
                self._put(table, d, u, up, load, chosen)
            else:
                pending.append((d, target, u))
        for d, target, _ in pending:
            cands = [u for u in range(U) if valid(u, target, d.lid)]
            if cands:
                self._put(table, d, min(cands, key=lambda u: (load[u], u)), up, load, chosen)
        # rebalance: first the zone's own destinations, then all of them
        target_of = {d.lid: target for d, target, _ in climbs}
        zone_of_lid = {d.lid: d.zone for d, _, _ in climbs}
        alive = [u for u in range(U) if up[u] is not None]
        for own_zone in (True, False):
            counted = [lid for lid in chosen if (zone_of_lid[lid] == zone) or not own_zone]
            if not alive or not counted:
                continue
            cnt = [0] * U
            for lid in counted:
                cnt[chosen[lid]] += 1
            movable = sorted((lid for lid in counted if (zone_of_lid[lid] == zone) == own_zone), key=lambda lid: -lid)
            for _ in range(3):
                moved = False
                low = min(cnt[w] for w in alive)
                for lid in movable:
                    u = chosen[lid]
                    if cnt[u] - low < 2:
                        continue  # no uplink can take it with a gain: skip the search (most LIDs, always when intact)
                    v = min((v for v in alive if valid(v, target_of[lid], lid)), key=lambda v: (cnt[v], v))
                    if cnt[u] - cnt[v] < 2:
                        continue
                    cnt[u] -= 1
                    cnt[v] += 1
                    chosen[lid] = v
                    table[lid] = up[v][0]
                    moved = True
                    low = min(cnt[w] for w in alive)
                if not moved:
                    break

    @staticmethod
    def _put(table, d: Dest, u: int, up, load, chosen) -> None:
        table[d.lid] = up[u][0]
        if d.kind == "ca":
            load[u] += 1
            chosen[d.lid] = u

    def _linked_leaves(self, zone: str, to: str) -> set[str]:
        """Leaves of `zone` holding an alive link to zone `to`."""
        key = (zone, to)
        cache = self.__dict__.setdefault("_linked_cache", {})
        if key not in cache:
            cache[key] = {a for a, _, _, _ in self.iz.get(key, [])}
        return cache[key]

    def _spine_table(self, spine: str, table: list[int]) -> None:
        t = self.t
        zone = t.zone_of[spine]
        S = len(t.spines[zone])
        downs = self.down[spine]
        cross = self.cross[zone]
        exits = self.exit[zone]
        next_zone = self.next_zone[zone]
        leaves = t.leaves[zone]
        L = len(leaves)
        ti = t.index[spine]

        def port_to(leaf: str, u: int) -> int:
            links = downs.get(leaf) or []
            alive = [p for p in links if p is not None]
            if not alive:
                return UNROUTED
            k = u // S if S else 0
            if k < len(links) and links[k] is not None:
                return links[k]
            return alive[u % len(alive)]

        for d in self.dests:
            lid = d.lid
            if d.zone == zone:
                if d.switch == spine:
                    table[lid] = 0
                elif d.kind == "spine":
                    # another spine of the zone: down to a leaf that still reaches it (management traffic only)
                    i0 = (t.index[spine] + t.index[d.switch]) % L
                    for j in range(L):
                        leaf = leaves[(i0 + j) % L]
                        if self.sw_alive[leaf] and port_to(leaf, 0) != UNROUTED and any(
                                self.up[leaf][u] is not None and self.up_spine[leaf][u] == d.switch for u in range(len(self.up[leaf]))):
                            table[lid] = port_to(leaf, 0)
                            break
                else:
                    u = self.slot[lid]
                    if S and u % S != ti:
                        # only reached here by a leaf's fallback: use a parallel link none of the leaf's ports own
                        links = downs.get(d.switch) or []
                        used = self.used_slots.get(d.switch, set())
                        free = [k for k in range(len(links)) if links[k] is not None and k * S + ti not in used]
                        if free:
                            u = free[0] * S + ti
                    table[lid] = port_to(d.switch, u)
            else:
                n = next_zone.get(d.zone)
                if n is None:
                    continue
                ex_leaf = exits[lid][0]
                if self.zidx[n] < self.zidx[zone] and spine in self.spine_exit:
                    # an exit spine sends traffic for an earlier zone to the linked leaf it is the exit spine of
                    mine = self.spine_exit[spine]
                    x = ex_leaf if ex_leaf in mine else mine[0]
                    table[lid] = port_to(x, self.exit_slot[x])
                elif self.zidx[n] < self.zidx[zone] and ex_leaf in self.exit_slot:
                    table[lid] = port_to(ex_leaf, self.exit_slot[ex_leaf])
                else:
                    table[lid] = port_to(ex_leaf, cross[lid])
