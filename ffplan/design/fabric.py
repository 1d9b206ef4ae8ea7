"""From a validated inventory to the physical fabric: switches, placement, port layout, cables, GUIDs, LIDs."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ffplan.design.cabling import DEFAULT_CABLE_MODEL, cable_cost
from ffplan.design.placement import DemandGroup, LeafGroup, PlacementResult, balance_bounds, solve_placement
from ffplan.design.sizing import TwoLayerSize, zone_size
from ffplan.inventory import LoadedInventory
from ffplan.inventory.models import Attach, Rack
from ffplan.inventory.resolve import ResolvedHost
from ffplan.plan.model import (
    Balance,
    Cable,
    CableEnd,
    Node,
    NodePort,
    Switch,
    ZoneSpec,
)

INTER_ZONE = "inter-zone"
KIND_SPINE, KIND_LEAF, KIND_CA = 1, 2, 3


def synthetic_guid(prefix: str, zone: int, kind: int, index: int) -> str:
    """Placeholder GUID: OUI (24 bits) | zone (8) | kind (8: 1 spine, 2 leaf, 3 CA) | index (24)."""
    return f"0x{int(prefix, 16):06x}{zone:02x}{kind:02x}{index:06x}"


def _guid_plus(guid: str, delta: int) -> str:
    return f"0x{int(guid, 16) + delta:016x}"


@dataclass
class PortSlot:
    """One NIC port to be placed: the host, NIC and port, and the zone rule."""

    host: ResolvedHost
    nic: str
    nic_index: int
    port: int
    given_guid: str | None


@dataclass
class Fabric:
    size: TwoLayerSize
    switches: list[Switch]
    nodes: list[Node]
    cables: list[Cable]
    zones: list[ZoneSpec]
    balance: list[Balance]
    placement: PlacementResult


def _switch_name(zone: str, tier: str, index: int, count: int) -> str:
    return f"{zone}-{tier}{index:0{max(2, len(str(count)))}d}"


def _place_in_racks(racks: list[str], count: int) -> list[str]:
    """Fill racks in order, an even share each: switch i goes to racks[i * len // count]."""
    return [racks[i * len(racks) // count] for i in range(count)]


def build_fabric(loaded: LoadedInventory, solver: str = "cbc", time_limit: float | None = None) -> Fabric:
    inv = loaded.inventory
    resolved = loaded.resolved
    racks: dict[str, Rack] = resolved.racks
    model_name = inv.fabric.switch_model
    sw_model = inv.models.switches[model_name]
    size = zone_size(inv, sw_model.ports)
    zones = [z.name for z in inv.fabric.zones]
    prefix = inv.fabric.guid_prefix
    cm = DEFAULT_CABLE_MODEL

    # ---- switches, placed in their racks top-down
    switches: list[Switch] = []
    leaf_names: dict[str, list[str]] = {}
    spine_names: dict[str, list[str]] = {}
    for zi, zone in enumerate(inv.fabric.zones, start=1):
        for tier, count, rack_list, kind, names in (
            ("spine", size.spines, zone.spine_racks, KIND_SPINE, spine_names),
            ("leaf", size.leaves, zone.leaf_racks, KIND_LEAF, leaf_names),
        ):
            names[zone.name] = []
            next_u: dict[str, int] = {}
            for i, rack in enumerate(_place_in_racks(list(rack_list), count)):
                name = _switch_name(zone.name, tier, i + 1, count)
                u = next_u.get(rack, racks[rack].units - sw_model.rack_units + 1)
                next_u[rack] = u - sw_model.rack_units
                given = inv.fabric.switch_guids.get(name)
                switches.append(
                    Switch(
                        name=name, zone=zone.name, tier=tier, index=i + 1, model=model_name, ports=sw_model.ports,
                        node_guid=given.lower() if given else synthetic_guid(prefix, zi, kind, i + 1),
                        lid=0, guid_placeholder=given is None, rack=rack, u=max(1, u),
                    )
                )
                names[zone.name].append(name)
    by_name = {s.name: s for s in switches}

    # ---- inter-zone links: spread over the leaves, each on a leaf's last down-port
    free = {(z, i): size.down_ports for z in zones for i in range(size.leaves)}
    inter_zone_ends: list[tuple[tuple[str, int, int], tuple[str, int, int]]] = []  # (zone, leaf, port) pairs
    ends_placed: dict[str, int] = defaultdict(int)
    for link in inv.fabric.inter_zone_links:
        for _ in range(link.count):
            ends = []
            for z in link.zones:
                k = ends_placed[z]
                ends_placed[z] += 1
                leaf = (k * size.leaves // _links_in_zone(inv, z)) % size.leaves
                port = free[(z, leaf)]
                free[(z, leaf)] -= 1
                ends.append((z, leaf, port))
            inter_zone_ends.append((ends[0], ends[1]))

    # ---- demand groups: identical ports share rack, role and zone rule
    slots_by_key: dict[tuple, list[PortSlot]] = defaultdict(list)
    for host in sorted(resolved.hosts, key=lambda h: h.order):
        attach = host.settings.attach
        for ni, nic in enumerate(host.nics):
            for port in range(1, nic.ports + 1):
                slot = PortSlot(host, nic.name, ni, port, nic.guid if port == 1 else None)
                if attach is Attach.EVERY_ZONE:
                    zone_rule = zones[ni % len(zones)]
                    key = (host.rack, host.role.value, zone_rule)
                elif host.settings.zone:
                    key = (host.rack, host.role.value, host.settings.zone)
                else:
                    key = (host.rack, host.role.value, "*")
                slots_by_key[key].append(slot)
    demands = []
    for key in sorted(slots_by_key):
        rack, role, zone_rule = key
        members = slots_by_key[key]
        demands.append(DemandGroup(key, role, tuple(zones) if zone_rule == "*" else (zone_rule,), len(members), members))

    # ---- leaf groups: leaves of one zone in one rack cost the same
    leaf_groups = []
    for z in zones:
        by_rack: dict[str, list[int]] = defaultdict(list)
        for i, name in enumerate(leaf_names[z]):
            by_rack[by_name[name].rack].append(i)
        for rack in sorted(by_rack):
            idx = tuple(by_rack[rack])
            leaf_groups.append(LeafGroup(z, rack, idx, sum(free[(z, i)] for i in idx)))
    leaf_u = {
        (lg.zone, lg.rack): sum(by_name[leaf_names[lg.zone][i]].u for i in lg.leaves) / len(lg.leaves)
        for lg in leaf_groups
    }
    cost = {}
    for d in demands:
        host_rack = racks[d.members[0].host.rack]
        host_u = sum(m.host.u for m in d.members) / len(d.members)
        for lg in leaf_groups:
            cost[(d.key, lg.rack)] = cable_cost(cm, host_rack, host_u, racks[lg.rack], leaf_u[(lg.zone, lg.rack)])[2]
    role_ports: dict[str, int] = defaultdict(int)
    for d in demands:
        role_ports[d.role] += d.count
    role_ports[INTER_ZONE] = 0  # placed up front; balanced by construction
    total_leaves = size.leaves * len(zones)
    bounds = balance_bounds({r: n for r, n in role_ports.items() if r != INTER_ZONE}, total_leaves)
    result = solve_placement(demands, leaf_groups, cost, bounds, solver, time_limit)

    # ---- split each leaf group's counts over its leaves, then number ports
    on_leaf: dict[tuple[str, int], list[PortSlot]] = defaultdict(list)
    members_left = {d.key: list(d.members) for d in demands}
    for lg in leaf_groups:
        fill = {i: size.down_ports - free[(lg.zone, i)] for i in lg.leaves}  # inter-zone ends already there
        per_role: dict[str, list[PortSlot]] = defaultdict(list)
        for d in demands:
            n = result.counts.get((d.key, lg.zone, lg.rack), 0)
            taken, members_left[d.key] = members_left[d.key][:n], members_left[d.key][n:]
            per_role[d.role].extend(taken)
        for role in sorted(per_role, key=lambda r: (-len(per_role[r]), r)):
            ports = sorted(per_role[role], key=_port_order(racks))
            share = _even_split(len(ports), lg.leaves, fill, size.down_ports)
            start = 0
            for leaf in lg.leaves:
                on_leaf[(lg.zone, leaf)].extend(ports[start:start + share[leaf]])
                start += share[leaf]
                fill[leaf] += share[leaf]

    # ---- addressing and cables
    nodes_ports: dict[str, list[NodePort]] = defaultdict(list)
    cables: list[Cable] = []
    node_cable_rows = []
    for z in zones:
        for i, leaf_name in enumerate(leaf_names[z]):
            leaf = by_name[leaf_name]
            for p, slot in enumerate(sorted(on_leaf[(z, i)], key=_port_order(racks)), start=1):
                node_cable_rows.append((z, leaf, p, slot))
    host_guid_index = {h.hostname: h.order for h in resolved.hosts}
    for z, leaf, p, slot in node_cable_rows:
        host = slot.host
        if slot.given_guid:
            port_guid = slot.given_guid.lower()
            node_guid = _guid_plus(port_guid, -slot.port)
        else:
            node_guid = synthetic_guid(prefix, 0, KIND_CA, host_guid_index[host.hostname] * 16 + slot.nic_index * 4)
            port_guid = _guid_plus(node_guid, slot.port)
        length, kind, _ = cable_cost(cm, racks[host.rack], host.u, racks[leaf.rack], leaf.u)
        label = f"{leaf.name}-p{p:02d}"
        cables.append(Cable(label=label, kind="node-leaf", a=CableEnd(device=host.hostname, port=slot.nic),
                            b=CableEnd(device=leaf.name, port=p), length_m=length, type=kind, zone=z))
        nodes_ports[host.hostname].append(
            NodePort(nic=slot.nic, port=slot.port, node_guid=node_guid, port_guid=port_guid,
                     guid_placeholder=slot.given_guid is None, lid=0, zone=z, leaf=leaf.name, leaf_port=p, cable=label)
        )
    for (za, la, pa), (zb, lb, pb) in inter_zone_ends:
        a, b = by_name[leaf_names[za][la]], by_name[leaf_names[zb][lb]]
        length, kind, _ = cable_cost(cm, racks[a.rack], a.u, racks[b.rack], b.u)
        cables.append(Cable(label=f"{a.name}-p{pa:02d}", kind="inter-zone", a=CableEnd(device=a.name, port=pa),
                            b=CableEnd(device=b.name, port=pb), length_m=length, type=kind, zone=za))
    for z in zones:
        for li, leaf_name in enumerate(leaf_names[z]):
            leaf = by_name[leaf_name]
            for u in range(size.up_ports):
                spine = by_name[spine_names[z][u % size.spines]]
                port = size.down_ports + u + 1
                spine_port = li * size.links_per_leaf_spine + u // size.spines + 1
                length, kind, _ = cable_cost(cm, racks[leaf.rack], leaf.u, racks[spine.rack], spine.u)
                cables.append(Cable(label=f"{leaf.name}-p{port:02d}", kind="leaf-spine", a=CableEnd(device=leaf.name, port=port),
                                    b=CableEnd(device=spine.name, port=spine_port), length_m=length, type=kind, zone=z))

    # ---- LIDs: switches zone by zone (spines, then leaves), then CA ports by zone, leaf and port
    lid = 1
    numbered = []
    for sw in switches:
        numbered.append(sw.model_copy(update={"lid": lid}))
        lid += 1
    switches = numbered
    ca_lids = {}
    for z, leaf, p, slot in node_cable_rows:
        ca_lids[(slot.host.hostname, slot.nic, slot.port)] = lid
        lid += 1
    nodes = []
    for host in sorted(resolved.hosts, key=lambda h: h.order):
        ports = sorted(
            (np.model_copy(update={"lid": ca_lids[(host.hostname, np.nic, np.port)]}) for np in nodes_ports[host.hostname]),
            key=lambda np: (np.nic, np.port),
        )
        nodes.append(Node(hostname=host.hostname, group=host.group, role=host.role.value, model=host.model,
                          rack=host.rack, u=host.u, ports=ports))

    # ---- zone summaries and balance
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
        zone_specs.append(ZoneSpec(name=z, leaves=size.leaves, spines=size.spines, down_ports=size.down_ports,
                                   up_ports=size.up_ports, links_per_leaf_spine=size.links_per_leaf_spine,
                                   endpoint_ports=size.endpoint_ports, used_ports=dict(sorted(used.items()))))
    balance = []
    for role in sorted(bounds):
        per_leaf = [c.get(role, 0) for c in role_count.values()]
        lo, hi = bounds[role]
        balance.append(Balance(role=role, min_per_leaf=min(per_leaf), max_per_leaf=max(per_leaf), lower_bound=lo, upper_bound=hi))
    cables.sort(key=lambda c: (_kind_order(c.kind), c.label))
    return Fabric(size, switches, nodes, cables, zone_specs, balance, result)


def _links_in_zone(inv, zone: str) -> int:
    return sum(link.count for link in inv.fabric.inter_zone_links if zone in link.zones)


def _kind_order(kind: str) -> int:
    return {"leaf-spine": 0, "inter-zone": 1, "node-leaf": 2}[kind]


def _port_order(racks: dict[str, Rack]):
    """Nodes of one rack contiguous, racks in floor order, bottom-up within a rack."""

    def key(slot: PortSlot):
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
