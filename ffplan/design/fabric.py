"""From a validated inventory to the physical fabric: switches, placement, port layout, cables, GUIDs, LIDs.

With a previous plan (re-planning), what exists is kept: a port that stays on its leaf keeps its leaf port,
every surviving port keeps its LID and GUID, switches keep theirs, and new ports take free leaf ports and
unused LIDs. The placement ILP decides what stays (see MOVE_PRICE).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Callable, Iterator, Literal

from ffplan.catalog import CableEntry
from ffplan.design.cabling import cable_cost, cable_model
from ffplan.design.placement import DemandGroup, LeafGroup, PlacementResult, balance_bounds, solve_placement
from ffplan.design.sizing import SizingError, ThreeLayerTree, TreeSize, zone_size
from ffplan.diagnostics import Collector, InfeasibleError
from ffplan.inventory import LoadedInventory
from ffplan.inventory.models import Attach, Inventory, Rack, Role
from ffplan.inventory.resolve import ResolvedHost
from ffplan.plan.model import LID_BLOCK, MAX_LID, Balance, Cable, CableEnd, CableModel, Node, NodePort, Plan, Switch, ZoneSpec
from ffplan.progress import StageCallback, no_progress

INTER_ZONE = "inter-zone"
KIND_SPINE, KIND_LEAF, KIND_CA, KIND_CORE = 1, 2, 3, 4
SUBNET_MANAGERS = 2  # master and standby
MIN_CA_GUIDS_PER_HOST = 16  # room for 4 NICs of up to 2 ports: card base GUID at +4*nic, port p at base + p - 1


def synthetic_guid(prefix: str, zone: int, kind: int, index: int) -> str:
    """Placeholder GUID: OUI (24 bits) | zone (8) | kind (8: 1 spine, 2 leaf, 3 CA) | index (24)."""
    return f"0x{int(prefix, 16):06x}{zone:02x}{kind:02x}{index:06x}"


def switch_guids(node_guid: str) -> dict[str, str]:
    """A Quantum switch reports its node GUID as the GUID of port 0 and as its system image GUID."""
    return {"node_guid": node_guid, "port_guid": node_guid, "sysimg_guid": node_guid}


def hca_port_guids(card_guid: str, port: int) -> dict[str, str]:
    """An mlx5 port is a device of its own: node GUID = port GUID = the card's base GUID + port - 1, and the
    card's ports share the base as system image GUID. (ibsim's rule, port GUID = node GUID + port, is the
    simulator's alone: see ffplan.render.opensm.simulator_topology.)"""
    port_guid = f"0x{int(card_guid, 16) + port - 1:016x}"
    return {"node_guid": port_guid, "port_guid": port_guid, "sysimg_guid": card_guid}


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

    @property
    def ident(self) -> tuple[str, str, int]:
        return (self.host.hostname, self.nic, self.port)


PlacedPort = tuple[str, Switch, int, PortSlot]  # (zone, leaf switch, leaf port, slot)
LinkEnd = tuple[str, int, int]  # (zone, leaf index, leaf port) of an inter-zone cable


@dataclass
class PhysicalDesign:
    switches: list[Switch]
    nodes: list[Node]
    cables: list[Cable]
    zones: list[ZoneSpec]
    balance: list[Balance]
    placement: PlacementResult
    cable_model: CableModel
    cable_cost: float  # catalog price of all cables
    sm_hosts: list[str]  # the subnet manager hosts, master first (see _sm_port_lids)


def _switch_name(zone: str, tier: str, index: int, count: int) -> str:
    return f"{zone}-{tier}{index:0{max(2, len(str(count)))}d}"


def _place_in_racks(racks: list[str], count: int) -> list[str]:
    """Fill racks in order, an even share each: switch i goes to racks[i * len // count]."""
    return [racks[i * len(racks) // count] for i in range(count)]


def _occupied_units(loaded: LoadedInventory) -> dict[str, set[int]]:
    inv = loaded.inventory
    used: dict[str, set[int]] = defaultdict(set)
    for h in loaded.resolved.hosts:
        units = inv.models.nodes[h.model].rack_units if h.model in inv.models.nodes else 1
        used[h.rack].update(range(h.u, h.u + units))
    return used


def _pod(size: TreeSize, tier: str, index: int) -> int | None:
    """1-based pod of a three-layer tree's leaf or spine (0-based index within its tier)."""
    if not isinstance(size, ThreeLayerTree) or tier == "core":
        return None
    return index // (size.leaves_per_pod if tier == "leaf" else size.spines_per_pod) + 1


def _build_switches(loaded: LoadedInventory, size: TreeSize, racks: dict[str, Rack]) -> list[Switch]:
    """Switches fill their racks top-down in the free units (hosts keep theirs); a full rack is an error."""
    inv = loaded.inventory
    sw_model = inv.models.switches[inv.fabric.switch_model]
    occupied = _occupied_units(loaded)
    collector = Collector(loaded.source.file, loaded.source.positions)
    switches = []
    tiers: list[tuple[Literal["leaf", "spine", "core"], int, list[str], int]]
    next_u: dict[str, int] = {}  # switches fill racks top-down, whichever zone or tier comes first
    for zi, zone in enumerate(inv.fabric.trees, start=1):
        tiers = [("spine", size.spines, zone.spine_racks, KIND_SPINE), ("leaf", size.leaves, zone.leaf_racks, KIND_LEAF)]
        if isinstance(size, ThreeLayerTree):
            tiers.insert(0, ("core", size.cores, zone.core_racks or zone.spine_racks, KIND_CORE))
        for tier, count, rack_list, kind in tiers:
            for i, rack in enumerate(_place_in_racks(list(rack_list), count)):
                name = _switch_name(zone.name, tier, i + 1, count)
                u = next_u.get(rack, racks[rack].units - sw_model.rack_units + 1)
                while u >= 1 and occupied[rack] & set(range(u, u + sw_model.rack_units)):
                    u -= 1
                if u < 1:
                    collector.error(
                        "FF153", ("fabric", inv.fabric.tree_key, zi - 1, f"{tier}_racks"),
                        f"rack '{rack}' has no room left for {name} ({sw_model.rack_units} U)",
                        f"add racks to {tier}_racks of zone '{zone.name}' or move hosts out of '{rack}'",
                    )
                    raise InfeasibleError(collector.items)
                next_u[rack] = u - sw_model.rack_units
                given = inv.fabric.switch_guids.get(name)
                switches.append(Switch(
                    name=name, zone=zone.name, tier=tier, index=i + 1, pod=_pod(size, tier, i), model=inv.fabric.switch_model,
                    ports=sw_model.ports,
                    lid=1, guid_placeholder=given is None, rack=rack, u=u,  # a valid stand-in: _address numbers every switch
                    **switch_guids(given.lower() if given else synthetic_guid(inv.fabric.guid_prefix, zi, kind, i + 1)),
                ))
    return switches


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


def build_fabric(
    loaded: LoadedInventory, solver: str = "cbc", time_limit: float | None = None, previous: Plan | None = None,
    on_stage: StageCallback = no_progress,
) -> PhysicalDesign:
    on_stage("sizing")
    inv = loaded.inventory
    racks: dict[str, Rack] = loaded.resolved.racks
    size = zone_size(inv, inv.models.switches[inv.fabric.switch_model].ports)
    zones = [z.name for z in inv.fabric.trees]
    cm, prices = cable_model(loaded)

    switches = _build_switches(loaded, size, racks)
    by_name = {s.name: s for s in switches}
    tier_names = {(z, tier): [s.name for s in switches if s.zone == z and s.tier == tier]
                  for z in zones for tier in ("leaf", "spine", "core")}
    leaf_names = {z: tier_names[(z, "leaf")] for z in zones}
    free = {(z, i): size.down_ports for z in zones for i in range(size.leaves)}
    inter_zone = _inter_zone_ends(inv, size, free)

    on_stage("placement")
    if inv.fabric.placement == "rail-optimized":
        on_leaf, fixed_port, result = _rail_placement(loaded, zones, size)
        bounds: dict[str, tuple[int, int]] = {}
    else:
        on_leaf, fixed_port, result, bounds = _balanced_placement(loaded, zones, size, free, by_name, leaf_names, cm, prices,
                                                                  solver, time_limit, previous)
    port_of = _number_ports(on_leaf, fixed_port, free, size, racks)

    on_stage("cabling")
    placed_rows: list[PlacedPort] = []  # in zone/leaf/port order
    for z in zones:
        for i, leaf_name in enumerate(leaf_names[z]):
            for slot in sorted(on_leaf[(z, i)], key=lambda s: port_of[s.ident]):
                placed_rows.append((z, by_name[leaf_name], port_of[slot.ident], slot))
    cables = _cables(zones, size, placed_rows, inter_zone, by_name, tier_names, racks, cm, prices)

    on_stage("addressing")
    sm_hosts = subnet_manager_hosts(loaded)
    switches, nodes = _address(loaded, switches, placed_rows, previous, sm_hosts)
    zone_specs, balance = _summaries(loaded, zones, size, on_leaf, free, bounds)
    total = round(sum(prices.price(c.type, c.length_m) for c in cables), 2)
    return PhysicalDesign(switches, nodes, cables, zone_specs, balance, result, cm, total, sm_hosts)


def _balanced_placement(
    loaded: LoadedInventory, zones: list[str], size: TreeSize, free: dict[tuple[str, int], int], by_name: dict[str, Switch],
    leaf_names: dict[str, list[str]], cm: CableModel, prices: CableEntry, solver: str, time_limit: float | None,
    previous: Plan | None,
) -> tuple[dict[tuple[str, int], list[PortSlot]], dict[tuple, int], PlacementResult, dict[str, tuple[int, int]]]:
    """The placement ILP: every role spread evenly over the leaves at the least cable cost (ffplan.design.placement)."""
    racks = loaded.resolved.racks
    # A previous port location counts only if that leaf port still exists and is still free for nodes.
    prev_location: dict[tuple[str, str, int], tuple[str, str, int]] = {}
    if previous is not None:
        leaf_index = {name: (z, i) for z in zones for i, name in enumerate(leaf_names[z])}
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
        for i, name in enumerate(leaf_names[z]):
            by_key[name if previous is not None else by_name[name].rack].append(i)
        for key in sorted(by_key):
            idx = tuple(by_key[key])
            rack = by_name[leaf_names[z][idx[0]]].rack
            leaf_groups.append(LeafGroup(z, key, rack, idx, sum(free[(z, i)] for i in idx)))
    leaf_u = {lg.key: sum(by_name[leaf_names[lg.zone][i]].u for i in lg.leaves) / len(lg.leaves) for lg in leaf_groups}
    cost = {}
    for d in demands:
        host_rack = racks[d.members[0].host.rack]
        host_u = sum(m.host.u for m in d.members) / len(d.members)
        for lg in leaf_groups:
            cost[(d.key, lg.key)] = cable_cost(cm, prices, host_rack, host_u, racks[lg.rack], leaf_u[lg.key])[2]
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
    on_leaf, fixed_port = _assign_leaves(demands, leaf_groups, result, free, size, racks, leaf_names)
    return on_leaf, fixed_port, result, bounds


def _rail_placement(loaded: LoadedInventory, zones: list[str],
                    size: TreeSize) -> tuple[dict[tuple[str, int], list[PortSlot]], dict[tuple, int], PlacementResult]:
    """Rail-optimized placement: a scalable unit is as many nodes as a leaf has down-ports, on as many leaves as a
    node has ports in the zone (its rails); the n-th port a node has in a zone goes to its unit's n-th rail leaf, on
    the node's position in the unit, so the same port of every node of a unit meets on one leaf. Nodes fill the
    units in inventory order; a node with all its ports in one zone takes the first zone with room."""
    hosts = sorted(loaded.resolved.hosts, key=lambda h: h.order)
    slots_of = {h.hostname: _host_slots(h, zones) for h in hosts}
    rails = max((Counter(zone for zone, _ in slots).most_common(1)[0][1] for slots in slots_of.values() if slots), default=1)
    units = size.leaves // rails
    placed = {z: 0 for z in zones}  # nodes placed per zone
    on_leaf: dict[tuple[str, int], list[PortSlot]] = defaultdict(list)
    fixed_port: dict[tuple, int] = {}
    for host in hosts:
        slots = slots_of[host.hostname]
        targets = {zone for zone, _ in slots}
        if "*" in targets:  # floating: all its ports go to the first zone with room for one more node
            zone = next((z for z in zones if placed[z] < units * size.down_ports), zones[-1])
            slots = [(zone, slot) for _, slot in slots]
        rail_of: dict[str, int] = defaultdict(int)
        for zone, slot in slots:
            position = placed[zone]
            unit, member = divmod(position, size.down_ports)
            leaf = unit * rails + rail_of[zone]
            if unit >= units:
                raise SizingError(f"rail-optimized placement runs out of scalable units in '{zone}' at node {host.hostname}: "
                                  f"{units} units of {size.down_ports} nodes on {rails} rail leaves",
                                  "raise fabric.ports_per_zone, add zones or planes, or plan fewer nodes")
            rail_of[zone] += 1
            on_leaf[(zone, leaf)].append(slot)
            fixed_port[slot.ident] = member + 1
        for zone in dict.fromkeys(z for z, _ in slots):
            placed[zone] += 1
    result = PlacementResult(counts={}, kept={}, moves=0, solver="rail-optimized", status="Optimal", objective=0.0,
                             gap=0.0, seconds=0.0, variables=0, constraints=0, slack={})
    return on_leaf, fixed_port, result


def _host_slots(host: ResolvedHost, zones: list[str]) -> list[tuple[str, PortSlot]]:
    """A host's NIC ports in NIC order with the zone each must land in ("*": any zone, the planner chooses)."""
    slots = []
    for ni, nic in enumerate(host.nics):
        for port in range(1, nic.ports + 1):
            if host.settings.attach is Attach.EVERY_ZONE:
                zone = zones[ni % len(zones)]
            else:
                zone = host.settings.zone or "*"
            slots.append((zone, PortSlot(host, nic.name, nic.model, ni, port, nic.guid)))
    return slots


def _cables(zones: list[str], size: TreeSize, placed_rows: list[PlacedPort], inter_zone: list[tuple[LinkEnd, LinkEnd]],
            by_name: dict[str, Switch], tier_names: dict[tuple[str, str], list[str]], racks: dict[str, Rack],
            cm: CableModel, prices: CableEntry) -> list[Cable]:
    """Every cable: node to leaf, between zones, leaf to spine and (three layers) spine to core."""
    cables: list[Cable] = []

    def cable(label: str, kind: Literal["node-leaf", "leaf-spine", "spine-core", "inter-zone"], zone: str,
              a: tuple[str, int | str, str, float], b: tuple[str, int, str, float]) -> None:
        length, cable_type, _ = cable_cost(cm, prices, racks[a[2]], a[3], racks[b[2]], b[3])
        cables.append(Cable(label=label, kind=kind, a=CableEnd(device=a[0], port=a[1]), b=CableEnd(device=b[0], port=b[1]),
                            length_m=length, type=cable_type, zone=zone))

    def end(switch: Switch, port: int) -> tuple[str, int, str, float]:
        return (switch.name, port, switch.rack, switch.u)

    for z, leaf, leaf_port, slot in placed_rows:
        cable(f"{leaf.name}-p{leaf_port:02d}", "node-leaf", z, (slot.host.hostname, slot.nic, slot.host.rack, slot.host.u),
              end(leaf, leaf_port))
    for (za, la, pa), (zb, lb, pb) in inter_zone:
        a, b = by_name[tier_names[(za, "leaf")][la]], by_name[tier_names[(zb, "leaf")][lb]]
        cable(f"{a.name}-p{pa:02d}", "inter-zone", za, end(a, pa), end(b, pb))
    for z in zones:
        leaves = [by_name[n] for n in tier_names[(z, "leaf")]]
        spines = [by_name[n] for n in tier_names[(z, "spine")]]
        for li, leaf in enumerate(leaves):
            for u in range(size.up_ports):
                port = size.down_ports + u + 1
                if isinstance(size, ThreeLayerTree):  # one cable to each spine of its pod
                    pod, local = divmod(li, size.leaves_per_pod)
                    spine, spine_port = spines[pod * size.spines_per_pod + u], local + 1
                else:
                    spine = spines[u % size.spines]
                    spine_port = li * size.links_per_leaf_spine + u // size.spines + 1
                cable(f"{leaf.name}-p{port:02d}", "leaf-spine", z, end(leaf, port), end(spine, spine_port))
        if isinstance(size, ThreeLayerTree):
            cores = [by_name[n] for n in tier_names[(z, "core")]]
            spine_down = size.radix - size.spine_up_ports
            for si, spine in enumerate(spines):
                pod, position = divmod(si, size.spines_per_pod)
                for x in range(size.spine_up_ports):
                    port = spine_down + x + 1
                    core = cores[position * size.cores_per_group + x % size.cores_per_group]
                    core_port = pod * size.links_per_spine_core + x // size.cores_per_group + 1
                    cable(f"{spine.name}-p{port:02d}", "spine-core", z, end(spine, port), end(core, core_port))
    cables.sort(key=lambda c: (_kind_order(c.kind), c.label))
    return cables


def _assign_leaves(demands: list[DemandGroup], leaf_groups: list[LeafGroup], result: PlacementResult,
                   free: dict[tuple[str, int], int], size: TreeSize, racks: dict[str, Rack],
                   leaf_names: dict[str, list[str]]) -> tuple[dict[tuple[str, int], list[PortSlot]], dict[tuple, int]]:
    """Turn the ILP's counts per leaf group into ports per leaf.

    Kept ports go back to their leaf (and later their port). The others are dealt out in order: within a
    leaf group each role is split evenly over its leaves, the extra ones to the leaves with most room.
    """
    on_leaf: dict[tuple[str, int], list[PortSlot]] = defaultdict(list)
    fixed_port: dict[tuple, int] = {}
    pool: dict[tuple, list[PortSlot]] = {}
    kept_members: dict[tuple[str, str], list[tuple[PortSlot, int]]] = defaultdict(list)  # (zone, leaf): (slot, its port)
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
            for m, leaf_port in kept_members.get((lg.zone, leaf_names[lg.zone][leaf]), []):
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
                on_leaf[(lg.zone, leaf)].extend(ports[start:start + share[leaf]])
                start += share[leaf]
                fill[leaf] += share[leaf]
    return on_leaf, fixed_port


def _number_ports(on_leaf: dict[tuple[str, int], list[PortSlot]], fixed_port: dict[tuple, int],
                  free: dict[tuple[str, int], int], size: TreeSize, racks: dict[str, Rack]) -> dict[tuple, int]:
    """Kept ports keep their number; the others take the lowest free numbers, nodes of a rack together."""
    port_of: dict[tuple, int] = {}
    for (z, leaf), slots in on_leaf.items():
        taken = {fixed_port[s.ident] for s in slots if s.ident in fixed_port}
        open_ports = (p for p in range(1, free[(z, leaf)] + 1) if p not in taken)
        for s in sorted(slots, key=_port_order(racks)):
            port_of[s.ident] = fixed_port.get(s.ident) or next(open_ports)
    return port_of


def subnet_manager_hosts(loaded: LoadedInventory) -> list[str]:
    """The master and standby subnet manager: the first two management nodes (inventory order), else the first two
    nodes. On planes each runs one SM per plane, on its port in that plane."""
    hosts = sorted(loaded.resolved.hosts, key=lambda h: h.order)
    managers = [h.hostname for h in hosts if h.role == Role.MANAGEMENT][:SUBNET_MANAGERS]
    return managers or [h.hostname for h in hosts[:SUBNET_MANAGERS]]


def subnet_of_zone(inv: Inventory) -> dict[str, str]:
    """Each plane is a subnet of its own; zones share one subnet, named after the inventory."""
    return {z.name: z.name if inv.fabric.planes else inv.name for z in inv.fabric.trees}


def ca_guids_per_host(loaded: LoadedInventory) -> int:
    """Synthetic CA GUIDs per host: 4 per NIC (a card's ports), at least 16, a power of two."""
    nics = max((len(h.nics) for h in loaded.resolved.hosts), default=1)
    stride = MIN_CA_GUIDS_PER_HOST
    while stride < 4 * nics:
        stride *= 2
    return stride


def _address(loaded: LoadedInventory, switches: list[Switch], placed_rows: list[PlacedPort],
             previous: Plan | None, sm_hosts: list[str]) -> tuple[list[Switch], list[Node]]:
    """GUIDs and LIDs. Kept from the previous plan where the device survives; new ones never collide. LIDs are per
    subnet; in each, the ports of the subnet manager hosts take the top LID block (_sm_port_lids)."""
    inv = loaded.inventory
    subnet_of = subnet_of_zone(inv)
    prev_switch = {s.name: s for s in previous.switches} if previous else {}
    prev_port = {(n.hostname, p.nic, p.port): p for n in previous.nodes for p in n.ports} if previous else {}
    lid_of_switch: dict[str, int] = {}
    lid_of: dict[tuple, int] = {}
    sm_rank = {host: i for i, host in enumerate(sm_hosts)}
    for subnet in dict.fromkeys(subnet_of.values()):
        in_subnet = {z for z, s in subnet_of.items() if s == subnet}
        subnet_switches = [sw for sw in switches if sw.zone in in_subnet]
        rows = sorted((r for r in placed_rows if r[0] in in_subnet), key=lambda r: (r[0], r[1].index, r[2]))
        used_lids = ({prev_switch[sw.name].lid for sw in subnet_switches if sw.name in prev_switch}
                     | {prev_port[r[3].ident].lid for r in rows if r[3].ident in prev_port})
        next_lid = _lid_allocator(used_lids, loaded.source.file)
        for sw in subnet_switches:
            old = prev_switch.get(sw.name)
            lid_of_switch[sw.name] = old.lid if old else next(next_lid)
        sm_slots = sorted((slot for _, _, _, slot in rows if slot.host.hostname in sm_rank),
                          key=lambda slot: (sm_rank[slot.host.hostname], slot.nic, slot.port))
        subnet_lids: dict[tuple, int] = {}
        for _, _, _, slot in rows:
            if slot.host.hostname not in sm_rank:
                kept_port = prev_port.get(slot.ident)
                subnet_lids[slot.ident] = kept_port.lid if kept_port else next(next_lid)
        taken = {lid_of_switch[sw.name] for sw in subnet_switches} | set(subnet_lids.values())
        subnet_lids.update(_sm_port_lids(sm_slots, taken, used_lids, prev_port))
        lid_of.update(subnet_lids)
    numbered = [sw.model_copy(update={"lid": lid_of_switch[sw.name]}) for sw in switches]

    # Synthetic CA GUIDs index hosts by inventory order; re-planning keeps old ones and appends after them.
    stride = ca_guids_per_host(loaded)
    used_index = {(int(p.node_guid, 16) & 0xFFFFFF) // stride for p in prev_port.values() if p.guid_placeholder}
    fresh_index = iter(i for i in range(1 << 20) if i not in used_index)
    host_index: dict[str, int] = {}
    ports_of: dict[str, list[NodePort]] = defaultdict(list)
    for z, leaf, p, slot in sorted(placed_rows, key=lambda r: (r[0], r[1].index, r[2])):
        old_port = prev_port.get(slot.ident)
        if slot.card_guid:
            card_guid, placeholder = slot.card_guid.lower(), False
        elif old_port is not None and old_port.guid_placeholder:
            card_guid, placeholder = old_port.sysimg_guid, True
        else:
            if previous is None:
                index = slot.host.order
            else:
                index = host_index.setdefault(slot.host.hostname, next(fresh_index))
            card_guid = synthetic_guid(inv.fabric.guid_prefix, 0, KIND_CA, index * stride + slot.nic_index * 4)
            placeholder = True
        ports_of[slot.host.hostname].append(NodePort(
            nic=slot.nic, nic_model=slot.nic_model, port=slot.port, guid_placeholder=placeholder,
            **hca_port_guids(card_guid, slot.port),
            lid=lid_of[slot.ident], zone=z, leaf=leaf.name, leaf_port=p, cable=f"{leaf.name}-p{p:02d}",
        ))
    nodes = [
        Node(hostname=h.hostname, group=h.group, role=h.role.value, model=h.model, rack=h.rack, u=h.u,
             ports=sorted(ports_of[h.hostname], key=lambda np: (np.nic, np.port)))
        for h in sorted(loaded.resolved.hosts, key=lambda h: h.order)
    ]
    return numbered, nodes


def _sm_port_lids(sm_slots: list[PortSlot], taken: set[int], used: set[int],
                  prev_port: dict[tuple[str, str, int], NodePort]) -> dict[tuple, int]:
    """LIDs for the subnet manager hosts' ports, all in one 64-LID block at or above the highest other LID.

    OpenSM sizes every switch's LFT from the highest LID present, rounded up to a whole 64-LID block, and its
    file engine writes the file's entries into it unchecked (osm_switch.c alloc_lft, osm_ucast_file.c add_path).
    The running SM's own port is always present, so with it in the top block the table covers every planned LID,
    whatever else is down at a cold start. Re-planning keeps SM ports' LIDs that are already in such a block.
    """
    top = max(taken, default=0) // LID_BLOCK
    previous = {slot.ident: prev_port[slot.ident].lid for slot in sm_slots if slot.ident in prev_port}
    blocks = {lid // LID_BLOCK for lid in previous.values()}
    block = blocks.pop() if len(blocks) == 1 and min(blocks) >= top else top
    kept = {ident: lid for ident, lid in previous.items() if lid // LID_BLOCK == block}
    # never hand out a LID another device had (caches still map it), except these ports' own previous LIDs
    avoid = (taken | used) - set(previous.values())
    free = [lid for lid in range(block * LID_BLOCK, (block + 1) * LID_BLOCK) if lid and lid not in avoid | set(kept.values())]
    fresh = [slot for slot in sm_slots if slot.ident not in kept]
    if len(fresh) > len(free):  # the next block up is empty: move them all there
        block = max(taken | set(kept.values()) | used) // LID_BLOCK + 1
        kept, fresh = {}, sm_slots
        free = list(range(block * LID_BLOCK, min((block + 1) * LID_BLOCK, MAX_LID + 1)))
    if len(fresh) > len(free):
        raise SizingError(f"the subnet manager hosts ({', '.join(dict.fromkeys(s.host.hostname for s in sm_slots))}) have "
                          f"{len(sm_slots)} ports; they must share one {LID_BLOCK}-LID block at or above every "
                          f"other LID, within the unicast LIDs (up to 0x{MAX_LID:X})",
                          "give the first two management nodes fewer InfiniBand ports, or the fabric fewer ports")
    return kept | {slot.ident: lid for slot, lid in zip(fresh, free)}


def _lid_allocator(used: set[int], file: str) -> Iterator[int]:
    """Free LIDs of one subnet, lowest first."""
    for lid in range(1, MAX_LID + 1):
        if lid not in used:
            yield lid
    c = Collector(file)
    c.error("FF154", ("fabric",), f"the fabric needs more LIDs than the {MAX_LID:,} unicast LIDs of a subnet",
            "split the fabric into smaller subnets (fewer zones or ports per zone)")
    raise InfeasibleError(c.items)


def _summaries(loaded: LoadedInventory, zones: list[str], size: TreeSize, on_leaf: dict[tuple[str, int], list[PortSlot]],
               free: dict[tuple[str, int], int], bounds: dict[str, tuple[int, int]]) -> tuple[list[ZoneSpec], list[Balance]]:
    subnet_of = subnet_of_zone(loaded.inventory)
    layers: Literal[2, 3] = 3 if isinstance(size, ThreeLayerTree) else 2
    cores, pods, links_per_spine_core = ((size.cores, size.pods, size.links_per_spine_core)
                                         if isinstance(size, ThreeLayerTree) else (0, 1, 0))
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
        zone_specs.append(ZoneSpec(
            name=z, subnet=subnet_of[z], layers=layers, leaves=size.leaves, spines=size.spines, cores=cores, pods=pods,
            down_ports=size.down_ports, up_ports=size.up_ports, links_per_leaf_spine=size.links_per_leaf_spine,
            links_per_spine_core=links_per_spine_core,
            endpoint_ports=size.endpoint_ports, used_ports=dict(sorted(used.items())),
        ))
    balance = []
    for role in sorted(bounds):
        per_leaf = [c.get(role, 0) for c in role_count.values()]
        lo, hi = bounds[role]
        balance.append(Balance(role=role, min_per_leaf=min(per_leaf), max_per_leaf=max(per_leaf), lower_bound=lo, upper_bound=hi))
    return zone_specs, balance


def _kind_order(kind: str) -> int:
    return {"spine-core": -1, "leaf-spine": 0, "inter-zone": 1, "node-leaf": 2}[kind]


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
