"""The placement step: every NIC port onto a leaf port, and the inter-zone cable ends.

Balanced (the default): every role spread evenly over the leaves at the least cable cost, an integer program
(ffplan.design.placement_ilp). Rail-optimized: scalable units of nodes, NIC i of every node of a unit on the unit's
rail-i leaf (_rail_placement). With a previous plan (re-planning), what exists is kept: a port that stays on its
leaf keeps its leaf port; the ILP decides what stays (see placement_ilp.MOVE_PRICE).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Callable, Literal

from ffplan.codes.design import ROLE_IMBALANCE
from ffplan.design.floor import Floor
from ffplan.design.placement_ilp import DemandGroup, LeafGroup, PlacementSolution, balance_bounds, solve_placement
from ffplan.design.sizing import (
    Place,
    RailPlace,
    SizedFabric,
    SizingError,
    ThreeLayerTree,
    TreeSize,
    shared_place,
    subnet_of_zone,
)
from ffplan.diagnostics import Collector, InfeasibleError
from ffplan.inventory import LoadedInventory
from ffplan.inventory.models import Inventory, Rack
from ffplan.inventory.resolve import ResolvedHost
from ffplan.plan.model import Balance, Plan, Switch, ZoneSpec

INTER_ZONE = "inter-zone"


@dataclass
class PortSlot:
    """One NIC port to be placed: the host, NIC and port, and where it was in the previous plan."""

    host: ResolvedHost
    nic: str
    nic_model: str
    nic_index: int
    port: int
    card_guid: str | None  # the inventory's GUID of the card's port 1 (its base GUID), None for a placeholder
    previous: tuple[str, str, int] | None = None  # (zone, leaf, leaf port) in the previous plan
    link: int = 0  # a multi-planar NIC's plane: its port GUID is the card's base + plane (nic_index is the card's)

    @property
    def ident(self) -> tuple[str, str, int]:
        return (self.host.hostname, self.nic, self.port)


PlacedPort = tuple[str, Switch, int, PortSlot]  # (zone, leaf switch, leaf port, slot)


LinkEnd = tuple[str, int, int]  # (zone, leaf index, leaf port) of an inter-zone cable


@dataclass(frozen=True)
class Placement:
    """The placement step's result: the NIC ports on their leaf ports, the inter-zone cable ends, each zone's port
    budget and the role balance per leaf, and how the placement was found (the plan's design.solver)."""

    ports: list[PlacedPort]  # in zone, leaf, leaf port order
    inter_zone: list[tuple[LinkEnd, LinkEnd]]
    zones: list[ZoneSpec]
    balance: list[Balance]
    solution: PlacementSolution


def place(
    loaded: LoadedInventory,
    sized: SizedFabric,
    floor: Floor,
    solver: str = "cbc",
    time_limit: float | None = None,
    previous: Plan | None = None,
    allow_imbalance: bool = False,
) -> Placement:
    """Place every NIC port and inter-zone cable end on a leaf port. A balanced placement that misses the even share
    of a role is refused (FF152) unless `allow_imbalance`."""
    inv = loaded.inventory
    size, zones = sized.size, list(sized.zones)
    leaves = {z: sized.tier(z, "leaf") for z in zones}
    free = {(z, i): size.down_ports for z in zones for i in range(size.leaves)}
    inter_zone = _inter_zone_ends(inv, size, free)
    if inv.fabric.placement == "rail-optimized":
        on_leaf, fixed_port, result = _rail_placement(loaded, zones, size, free, leaves, previous)
        bounds: dict[str, tuple[int, int]] = {}
    else:
        on_leaf, fixed_port, result, bounds = _balanced_placement(
            loaded, zones, size, free, leaves, floor, solver, time_limit, previous
        )
    port_of = _number_ports(on_leaf, fixed_port, free, loaded.resolved.racks)
    ports: list[PlacedPort] = []
    for z in zones:
        for i, leaf in enumerate(leaves[z]):
            for slot in sorted(on_leaf[(z, i)], key=lambda s: port_of[s.ident]):
                ports.append((z, leaf, port_of[slot.ident], slot))
    zone_specs, balance = _summaries(loaded, zones, size, on_leaf, free, bounds)
    if not allow_imbalance and inv.fabric.placement == "balanced":
        _refuse_imbalance(loaded, zone_specs, balance)
    return Placement(ports, inter_zone, zone_specs, balance, result)


def _inter_zone_ends(inv: Inventory, size: TreeSize, free: dict[tuple[str, int], int]) -> list[tuple[LinkEnd, LinkEnd]]:
    """Inter-zone cable ends spread evenly over each zone's leaves, on the leaves' highest down-ports."""
    ends_in_zone: dict[str, int] = defaultdict(int)
    for link in inv.fabric.inter_zone_links:
        for z in link.zones:
            ends_in_zone[z] += link.count
    placed: dict[str, int] = defaultdict(int)
    pairs: list[tuple[LinkEnd, LinkEnd]] = []
    for link in inv.fabric.inter_zone_links:
        for _ in range(link.count):
            ends: list[LinkEnd] = []
            for z in link.zones:
                leaf = (placed[z] * size.leaves // ends_in_zone[z]) % size.leaves
                placed[z] += 1
                ends.append((z, leaf, free[(z, leaf)]))
                free[(z, leaf)] -= 1
            pairs.append((ends[0], ends[1]))
    return pairs


def _demand_groups(loaded: LoadedInventory, zones: list[str], previous: dict) -> list[DemandGroup]:
    """Identical ports (same rack, role and zone rule) form one group, members in inventory order."""
    by_key: dict[tuple, list[PortSlot]] = defaultdict(list)
    for host in sorted(loaded.resolved.hosts, key=lambda h: h.order):
        for zone_rule, slot in _host_slots(host, zones):
            slot.previous = previous.get(slot.ident)
            by_key[(host.rack, host.role.value, zone_rule)].append(slot)
    return [
        DemandGroup(key, key[1], tuple(zones) if key[2] == "*" else (key[2],), len(members), members)
        for key, members in sorted(by_key.items())
    ]


def _balanced_placement(
    loaded: LoadedInventory,
    zones: list[str],
    size: TreeSize,
    free: dict[tuple[str, int], int],
    leaves: dict[str, list[Switch]],
    floor: Floor,
    solver: str,
    time_limit: float | None,
    previous: Plan | None,
) -> tuple[dict[tuple[str, int], list[PortSlot]], dict[tuple, int], PlacementSolution, dict[str, tuple[int, int]]]:
    """The placement ILP: every role spread evenly over the leaves at the least cable cost (ffplan.design.placement)."""
    racks = loaded.resolved.racks
    # A previous port location counts only if that leaf port still exists and is still free for nodes.
    prev_location: dict[tuple[str, str, int], tuple[str, str, int]] = {}
    if previous is not None:
        leaf_index = {leaf.name: (z, i) for z in zones for i, leaf in enumerate(leaves[z])}
        for node in previous.nodes:
            for p in node.ports:
                zi = leaf_index.get(p.leaf)
                if zi and p.zone == zi[0] and p.leaf_port <= free[zi]:
                    prev_location[(node.hostname, p.nic, p.port)] = (p.zone, p.leaf, p.leaf_port)
    demands = _demand_groups(loaded, zones, prev_location)

    # Leaf groups: all leaves of a zone in one rack cost the same; re-planning needs each leaf on its own.
    leaf_groups = []
    for z in zones:
        by_key: dict[str, list[int]] = defaultdict(list)
        for i, leaf in enumerate(leaves[z]):
            by_key[leaf.name if previous is not None else leaf.rack].append(i)
        for key in sorted(by_key):
            idx = tuple(by_key[key])
            rack = leaves[z][idx[0]].rack
            leaf_groups.append(LeafGroup(z, key, rack, idx, sum(free[(z, i)] for i in idx)))
    leaf_u = {lg.key: sum(leaves[lg.zone][i].u for i in lg.leaves) / len(lg.leaves) for lg in leaf_groups}
    cost = {}
    for d in demands:
        host_rack = racks[d.members[0].host.rack]
        host_u = sum(m.host.u for m in d.members) / len(d.members)
        for lg in leaf_groups:
            cost[(d.key, lg.key)] = floor.cable(host_rack, host_u, racks[lg.rack], leaf_u[lg.key])[2]
    role_ports: dict[str, int] = defaultdict(int)
    for d in demands:
        role_ports[d.role] += d.count
    bounds = balance_bounds(role_ports, size.leaves * len(zones))
    prev_counts: dict[tuple, int] = defaultdict(int)
    for d in demands:
        for m in d.members:
            if m.previous and m.previous[0] in d.zones:
                prev_counts[(d.key, m.previous[0], m.previous[1])] += 1
    result = solve_placement(demands, leaf_groups, cost, bounds, solver, time_limit, dict(prev_counts) or None)
    on_leaf, fixed_port = _assign_leaves(demands, leaf_groups, result, free, size, racks, leaves)
    return on_leaf, fixed_port, result, bounds


def _rail_placement(
    loaded: LoadedInventory,
    zones: list[str],
    size: TreeSize,
    free: dict[tuple[str, int], int],
    leaves: dict[str, list[Switch]],
    previous: Plan | None,
) -> tuple[dict[tuple[str, int], list[PortSlot]], dict[tuple, int], PlacementSolution]:
    """Rail-optimized placement: a scalable unit is a run of as many leaves as a node has ports in the zone (its
    rails), with as many nodes as each of those leaves has down-ports (less any inter-zone cable ends there); the
    n-th port a node has in a zone goes to its unit's n-th rail leaf, on port j + 1 for the unit's j-th node, so the
    same port of every node of a unit meets on one leaf. Leaves beyond the last whole unit stay empty.

    A node with all its ports in one zone takes the first zone with room left for the nodes that must be there.
    Re-planning, a node keeps its place in a unit where it still fits; the others fill the free places, lowest unit
    and position first, in inventory order (so does every node of a first plan)."""
    hosts = sorted(loaded.resolved.hosts, key=lambda h: h.order)
    slots_of = {h.hostname: _host_slots(h, zones) for h in hosts}
    rails = max(
        (Counter(zone for zone, _ in slots).most_common(1)[0][1] for slots in slots_of.values() if slots), default=1
    )
    units = size.leaves // rails
    # inter-zone cable ends take a leaf's highest down-ports: a unit's nodes are as many as its fullest rail leaf has free
    room = {
        (z, unit): min(free[(z, unit * rails + rail)] for rail in range(rails)) for z in zones for unit in range(units)
    }
    capacity = {z: sum(room[(z, unit)] for unit in range(units)) for z in zones}
    was = (
        {(n.hostname, p.nic, p.port): (p.zone, p.leaf, p.leaf_port) for n in previous.nodes for p in n.ports}
        if previous
        else {}
    )
    ports_in = _rail_zones(hosts, slots_of, zones, capacity, was)
    place_of, used = _kept_rail_places(hosts, ports_in, leaves, rails, room, was)
    open_places = {
        z: iter(
            [
                (unit, member)
                for unit in range(units)
                for member in range(room[(z, unit)])
                if (unit, member) not in used[z]
            ]
        )
        for z in zones
    }
    on_leaf: dict[tuple[str, int], list[PortSlot]] = defaultdict(list)
    fixed_port: dict[tuple, int] = {}
    for host in hosts:
        for zone, zone_slots in ports_in[host.hostname].items():
            ports = len(zone_slots)
            where = place_of.get((host.hostname, zone)) or shared_place(used[zone], ports, rails)
            if where is None:
                opened = next(open_places[zone], None)
                if opened is None:
                    raise SizingError(
                        f"rail-optimized placement runs out of scalable units in '{zone}' at node "
                        f"{host.hostname}: {units} units on {rails} rail leaves each, {capacity[zone]} "
                        "places in all",
                        "raise fabric.ports_per_zone, add zones or planes, or plan fewer nodes",
                    )
                where = (*opened, 0)
            unit, member, first = where
            used[zone].setdefault((unit, member), set()).update(range(first, first + ports))
            for index, slot in enumerate(zone_slots):
                on_leaf[(zone, unit * rails + first + index)].append(slot)
                fixed_port[slot.ident] = member + 1
    result = PlacementSolution(
        counts={},
        kept={},
        moves=0,
        solver="rail-optimized",
        status="optimal",
        objective=0.0,
        gap=0.0,
        seconds=0.0,
        variables=0,
        constraints=0,
        slack={},
    )
    return on_leaf, fixed_port, result


def _rail_zones(
    hosts: list[ResolvedHost],
    slots_of: dict[str, list[tuple[str, PortSlot]]],
    zones: list[str],
    capacity: dict[str, int],
    was: dict[tuple[str, str, int], tuple[str, str, int]],
) -> dict[str, dict[str, list[PortSlot]]]:
    """Each node's ports per zone, in NIC order (its rails there). A node free to go anywhere takes its previous
    zone, else the first, that has room beside the nodes that must be there."""
    must = Counter(z for slots in slots_of.values() for z in dict.fromkeys(z for z, _ in slots) if z != "*")
    ports_in: dict[str, dict[str, list[PortSlot]]] = {}
    for host in hosts:
        slots = slots_of[host.hostname]
        if "*" in {zone for zone, _ in slots}:
            before = [was[slot.ident][0] for _, slot in slots if slot.ident in was and was[slot.ident][0] in zones]
            zone = next((z for z in dict.fromkeys(before[:1] + zones) if must[z] < capacity[z]), zones[-1])
            must[zone] += 1
            slots = [(zone, slot) for _, slot in slots]
        ports_in[host.hostname] = defaultdict(list)
        for zone, slot in slots:
            ports_in[host.hostname][zone].append(slot)
    return ports_in


def _kept_rail_places(
    hosts: list[ResolvedHost],
    ports_in: dict[str, dict[str, list[PortSlot]]],
    leaves: dict[str, list[Switch]],
    rails: int,
    room: dict[tuple[str, int], int],
    was: dict[tuple[str, str, int], tuple[str, str, int]],
) -> tuple[dict[tuple[str, str], RailPlace], dict[str, dict[Place, set[int]]]]:
    """Re-planning: (node, zone) -> the place and first rail it keeps, where its ports in the zone were on consecutive
    rail leaves of one unit, at one position, and the place still exists with those rails not kept by another node;
    and the rails kept per place of each zone."""
    leaf_at = {leaf.name: (z, i) for z, zone_leaves in leaves.items() for i, leaf in enumerate(zone_leaves)}
    place_of: dict[tuple[str, str], RailPlace] = {}
    used: dict[str, dict[Place, set[int]]] = defaultdict(dict)
    for host in hosts:
        for zone, zone_slots in ports_in[host.hostname].items():
            places, on_rails = set(), []
            for slot in zone_slots:
                prev_zone, prev_leaf, prev_port = was.get(slot.ident, ("", "", 0))
                if prev_zone != zone or prev_leaf not in leaf_at:
                    break
                unit, prev_rail = divmod(leaf_at[prev_leaf][1], rails)
                places.add((unit, prev_port - 1))
                on_rails.append(prev_rail)
            else:
                if len(places) == 1 and on_rails == list(range(on_rails[0], on_rails[0] + len(on_rails))):
                    unit, member = kept = places.pop()
                    taken = used[zone].get(kept, set())
                    if member < room.get((zone, unit), 0) and not taken & set(on_rails):
                        place_of[(host.hostname, zone)] = (unit, member, on_rails[0])
                        used[zone][kept] = taken | set(on_rails)
    for zone in {z for slots in ports_in.values() for z in slots}:
        used.setdefault(zone, {})
    return place_of, used


def _host_slots(host: ResolvedHost, zones: list[str]) -> list[tuple[str, PortSlot]]:
    """A host's NIC ports in NIC order with the zone each must land in ("*": any zone, the planner chooses)."""
    index = {nic.name: ni for ni, nic in enumerate(host.nics)}
    guid = {nic.name: nic.guid for nic in host.nics}
    slots = [
        PortSlot(host, nic.name, nic.model, ni, port, nic.guid)
        if nic.plane is None
        else PortSlot(host, nic.name, nic.model, index[nic.card], port, guid[nic.card], link=nic.plane)
        for ni, nic in enumerate(host.nics)
        for port in range(1, nic.ports + 1)
    ]
    return list(zip(host.port_zones(zones), slots))


def _assign_leaves(
    demands: list[DemandGroup],
    leaf_groups: list[LeafGroup],
    result: PlacementSolution,
    free: dict[tuple[str, int], int],
    size: TreeSize,
    racks: dict[str, Rack],
    leaves: dict[str, list[Switch]],
) -> tuple[dict[tuple[str, int], list[PortSlot]], dict[tuple, int]]:
    """Turn the ILP's counts per leaf group into ports per leaf.

    Kept ports go back to their leaf (and later their port). The others are dealt out in order: within a
    leaf group each role is split evenly over its leaves, the extra ones to the leaves with most room.
    """
    on_leaf: dict[tuple[str, int], list[PortSlot]] = defaultdict(list)
    fixed_port: dict[tuple, int] = {}
    pool: dict[tuple, list[PortSlot]] = {}
    kept_members: dict[tuple[str, str], list[tuple[PortSlot, int]]] = defaultdict(
        list
    )  # (zone, leaf): (slot, its port)
    budget = dict(result.kept)
    for d in demands:
        remaining = []
        for m in d.members:
            if m.previous and budget.get(where := (d.key, m.previous[0], m.previous[1]), 0) > 0:
                budget[where] -= 1
                prev_zone, prev_leaf, prev_leaf_port = m.previous
                kept_members[(prev_zone, prev_leaf)].append((m, prev_leaf_port))
            else:
                remaining.append(m)
        pool[d.key] = remaining
    for lg in leaf_groups:
        fill = {i: size.down_ports - free[(lg.zone, i)] for i in lg.leaves}
        if len(lg.leaves) == 1:  # a single leaf, as when re-planning
            leaf = lg.leaves[0]
            for m, leaf_port in kept_members.get((lg.zone, leaves[lg.zone][leaf].name), []):
                on_leaf[(lg.zone, leaf)].append(m)
                fixed_port[m.ident] = leaf_port
        per_role: dict[str, list[PortSlot]] = defaultdict(list)
        for d in demands:
            n = result.counts.get((d.key, lg.zone, lg.key), 0) - result.kept.get((d.key, lg.zone, lg.key), 0)
            taken, pool[d.key] = pool[d.key][:n], pool[d.key][n:]
            per_role[d.role].extend(taken)
        for leaf in lg.leaves:
            fill[leaf] += len(on_leaf[(lg.zone, leaf)])
        for role in sorted(per_role, key=lambda r: (-len(per_role[r]), r)):
            ports = sorted(per_role[role], key=_port_order(racks))
            share = _even_split(len(ports), lg.leaves, fill, size.down_ports)
            start = 0
            for leaf in lg.leaves:
                on_leaf[(lg.zone, leaf)].extend(ports[start : start + share[leaf]])
                start += share[leaf]
                fill[leaf] += share[leaf]
    return on_leaf, fixed_port


def _number_ports(
    on_leaf: dict[tuple[str, int], list[PortSlot]],
    fixed_port: dict[tuple, int],
    free: dict[tuple[str, int], int],
    racks: dict[str, Rack],
) -> dict[tuple, int]:
    """Kept ports keep their number; the others take the lowest free numbers, nodes of a rack together."""
    port_of: dict[tuple, int] = {}
    for (z, leaf), slots in on_leaf.items():
        taken = {fixed_port[s.ident] for s in slots if s.ident in fixed_port}
        open_ports = (p for p in range(1, free[(z, leaf)] + 1) if p not in taken)
        for s in sorted(slots, key=_port_order(racks)):
            port_of[s.ident] = fixed_port.get(s.ident) or next(open_ports)
    return port_of


def _summaries(
    loaded: LoadedInventory,
    zones: list[str],
    size: TreeSize,
    on_leaf: dict[tuple[str, int], list[PortSlot]],
    free: dict[tuple[str, int], int],
    bounds: dict[str, tuple[int, int]],
) -> tuple[list[ZoneSpec], list[Balance]]:
    subnet_of = subnet_of_zone(loaded.inventory)
    layers: Literal[2, 3] = 3 if isinstance(size, ThreeLayerTree) else 2
    cores, pods, links_per_spine_core = (
        (size.cores, size.pods, size.links_per_spine_core) if isinstance(size, ThreeLayerTree) else (0, 1, 0)
    )
    zone_specs = []
    role_count: dict[tuple[str, int], dict[str, int]] = {}
    for z in zones:
        used: dict[str, int] = defaultdict(int)
        for i in range(size.leaves):
            counts: dict[str, int] = defaultdict(int)
            for slot in on_leaf[(z, i)]:
                counts[slot.host.role.value] += 1
            counts[INTER_ZONE] = size.down_ports - free[(z, i)]
            role_count[(z, i)] = counts
            for r, n in counts.items():
                used[r] += n
        used["free"] = size.endpoint_ports - sum(used.values())
        zone_specs.append(
            ZoneSpec(
                name=z,
                subnet=subnet_of[z],
                layers=layers,
                leaves=size.leaves,
                spines=size.spines,
                cores=cores,
                pods=pods,
                down_ports=size.down_ports,
                up_ports=size.up_ports,
                links_per_leaf_spine=size.links_per_leaf_spine,
                links_per_spine_core=links_per_spine_core,
                endpoint_ports=size.endpoint_ports,
                used_ports=dict(sorted(used.items())),
            )
        )
    balance = []
    for role in sorted(bounds):
        per_leaf = [c.get(role, 0) for c in role_count.values()]
        lo, hi = bounds[role]
        balance.append(
            Balance(role=role, min_per_leaf=min(per_leaf), max_per_leaf=max(per_leaf), lower_bound=lo, upper_bound=hi)
        )
    return zone_specs, balance


def _refuse_imbalance(loaded: LoadedInventory, zones: list[ZoneSpec], balance: list[Balance]) -> None:
    """Balance is a hard requirement: where the ILP needed slack, say which role and why, and stop."""
    c = Collector(loaded.source.file, loaded.source.positions)
    for b in balance:
        if b.max_per_leaf - b.min_per_leaf <= 1:
            continue
        group = next(i for i, g in enumerate(loaded.inventory.groups) if g.role.value == b.role)
        per_zone = {z.name: z.used_ports.get(b.role, 0) for z in zones}
        c.error(
            ROLE_IMBALANCE,
            ("groups", group),
            f"role '{b.role}' cannot be spread within one per leaf: the best placement has {b.min_per_leaf}-{b.max_per_leaf} "
            f"per leaf where {b.lower_bound}-{b.upper_bound} is the even share (per zone: "
            + ", ".join(f"{z} {n}" for z, n in per_zone.items())
            + ")",
            "remove settings.zone pins or change counts so each zone can take an even share; "
            "or pass --allow-imbalance to accept this placement",
        )
    if c.items:
        raise InfeasibleError(c.items)


def _port_order(racks: dict[str, Rack]) -> Callable[[PortSlot], tuple]:
    """Nodes of one rack contiguous, racks in floor order, bottom-up within a rack."""

    def key(slot: PortSlot) -> tuple:
        r = racks[slot.host.rack]
        return (r.row, r.slot, r.name, slot.host.u, slot.host.hostname, slot.nic, slot.port)

    return key


def _even_split(count: int, leaves: tuple[int, ...], fill: dict[int, int], capacity: int) -> dict[int, int]:
    """floor or ceil of count/len(leaves) per leaf; the extra ones go to the leaves with most room left."""
    base, extra = divmod(count, len(leaves))
    share = {leaf: base for leaf in leaves}
    for leaf in sorted(leaves, key=lambda i: (fill[i] + base, i))[:extra]:
        share[leaf] += 1
    over = [leaf for leaf in leaves if fill[leaf] + share[leaf] > capacity]
    if over:
        raise AssertionError(f"leaf split overflow on leaves {over}")  # the ILP's group capacity prevents this
    return share
