"""Fat-tree sizing for any radix: two-layer and three-layer (pod) trees for the design, and the cost comparison's
partial three-layer counts. The design's first step (`size_fabric`): every zone or plane sized, its switches in
their racks.

Two-layer, non-blocking: a leaf has k/2 ports down and k/2 up, every leaf reaches every spine, so a zone
holds at most k leaves and k/2 spines: k*k/2 endpoint ports in 3k/2 switches (k=40: 800 ports, 60 switches).
Three-layer (leaf/spine/core, Al-Fares et al.): pods of k/2 leaves and k/2 spines, each spine of pod position j
joined to the j-th group of core switches: k*k*k/4 endpoints in 5k*k/4 switches at full size (ThreeLayerTree).
The cost comparison counts a partial tree for N endpoints as ceil(N/(k/2)) edge, as many aggregation, and half
as many core switches (ThreeLayerSize), as the paper's tables do.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ffplan.codes.design import RACK_FULL_FOR_SWITCHES, RACK_POWER_FOR_SWITCHES
from ffplan.design.facility import Draw, host_draws, kw, model_draw, tightest
from ffplan.design.guids import KIND_CORE, KIND_LEAF, KIND_SPINE, switch_guids, synthetic_guid
from ffplan.diagnostics import Collector, InfeasibleError
from ffplan.ethernet.speeds import fabric_radix
from ffplan.inventory import LoadedInventory
from ffplan.inventory.models import Attach, Inventory, Rack
from ffplan.inventory.resolve import ResolvedHost, ResolvedInventory

if TYPE_CHECKING:  # lint imports the sizing math: the plan package stays unloaded until a design racks switches
    from ffplan.plan.model import Switch, SwitchTier


class SizingError(ValueError):
    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.message = message
        self.hint = hint


def split_ports(radix: int, oversubscription: float) -> tuple[int, int]:
    """Leaf (down, up) ports for a down:up ratio: 1.0 gives k/2 and k/2."""
    down = math.floor(radix * oversubscription / (1 + oversubscription) + 1e-9)
    return down, radix - down


def leaf_ports(radix: int, oversubscription: float) -> tuple[int, int]:
    """split_ports, refusing a leaf left without a down or an up port."""
    down, up = split_ports(radix, oversubscription)
    if down < 1 or up < 1:
        raise SizingError(
            f"a {radix}-port leaf at {oversubscription}:1 leaves {down} down and {up} up ports",
            "use a lower oversubscription ratio or a switch with more ports",
        )
    return down, up


@dataclass(frozen=True)
class TwoLayerSize:
    radix: int
    down_ports: int  # per leaf, towards endpoints
    up_ports: int  # per leaf, towards spines
    leaves: int
    spines: int
    links_per_leaf_spine: int  # parallel cables between one leaf and one spine

    @property
    def endpoint_ports(self) -> int:
        return self.leaves * self.down_ports

    @property
    def switches(self) -> int:
        return self.leaves + self.spines

    @property
    def leaf_spine_links(self) -> int:
        return self.leaves * self.up_ports

    @property
    def max_endpoint_ports(self) -> int:
        return self.radix * self.down_ports


def size_two_layer(radix: int, oversubscription: float = 1.0, endpoint_ports: int | None = None) -> TwoLayerSize:
    """Smallest two-layer zone of `radix`-port switches with at least `endpoint_ports` leaf down-ports.

    Without `endpoint_ports` the zone is built at full size (radix leaves). Spines are the smallest
    divisor of the leaf up-ports whose ports take every uplink, so each leaf has the same number of
    parallel cables to every spine (what balanced static routing needs).
    """
    down, up = leaf_ports(radix, oversubscription)
    max_ports = radix * down
    wanted = max_ports if endpoint_ports is None else endpoint_ports
    leaves = max(1, math.ceil(wanted / down))
    if leaves > radix:
        raise SizingError(
            f"{wanted:,} endpoint ports need {leaves} leaves of {down} down-ports, but a two-layer tree of {radix}-port "
            f"switches takes at most {radix} leaves ({max_ports:,} ports)",
            f"lower the zone to at most {max_ports:,} ports, add a zone, or use switches with more ports",
        )
    spines = next(s for s in range(1, up + 1) if up % s == 0 and s * radix >= leaves * up)
    return TwoLayerSize(radix, down, up, leaves, spines, up // spines)


@dataclass(frozen=True)
class ThreeLayerTree:
    """A buildable three-layer tree: equal pods, every leaf one link to every spine of its pod, spine position j
    of every pod linked to the cores of group j over `links_per_spine_core` parallel cables each."""

    radix: int
    down_ports: int  # per leaf, towards endpoints
    up_ports: int  # per leaf, one to each spine of its pod
    pods: int
    leaves_per_pod: int
    spine_up_ports: int  # per spine, towards the cores
    cores_per_group: int

    @property
    def spines_per_pod(self) -> int:
        return self.up_ports

    @property
    def leaves(self) -> int:
        return self.pods * self.leaves_per_pod

    @property
    def spines(self) -> int:
        return self.pods * self.spines_per_pod

    @property
    def cores(self) -> int:
        return self.spines_per_pod * self.cores_per_group

    @property
    def links_per_leaf_spine(self) -> int:
        return 1

    @property
    def links_per_spine_core(self) -> int:
        return self.spine_up_ports // self.cores_per_group

    @property
    def endpoint_ports(self) -> int:
        return self.leaves * self.down_ports

    @property
    def switches(self) -> int:
        return self.leaves + self.spines + self.cores

    @property
    def max_endpoint_ports(self) -> int:
        return self.radix * (self.radix - self.spine_up_ports) * self.down_ports


TreeSize = TwoLayerSize | ThreeLayerTree


def size_three_layer_tree(
    radix: int, oversubscription: float = 1.0, endpoint_ports: int | None = None
) -> ThreeLayerTree:
    """Smallest three-layer tree of `radix`-port switches with at least `endpoint_ports` leaf down-ports.

    Leaves split their ports by the oversubscription; spines are non-blocking (half down, half up). A pod holds
    up to radix/2 leaves and as many spines as a leaf has uplinks; the pods are equal (leaves dealt evenly). Each
    core group takes the same spine position of every pod; its cores are the fewest that divide the spines'
    uplinks evenly and have ports for every pod.
    """
    down, up = leaf_ports(radix, oversubscription)
    spine_down = radix // 2
    spine_up = radix - spine_down
    max_ports = radix * spine_down * down
    wanted = max_ports if endpoint_ports is None else endpoint_ports
    leaves = max(1, math.ceil(wanted / down))
    pods = math.ceil(leaves / spine_down)
    if pods > radix:
        raise SizingError(
            f"{wanted:,} endpoint ports need {pods} pods of {spine_down} leaves, but a three-layer tree of {radix}-port "
            f"switches takes at most {radix} pods ({max_ports:,} ports)",
            f"lower the tree to at most {max_ports:,} ports, add a plane or zone, or use switches with more ports",
        )
    per_group = next(g for g in range(1, spine_up + 1) if spine_up % g == 0 and g * radix >= pods * spine_up)
    return ThreeLayerTree(radix, down, up, pods, math.ceil(leaves / pods), spine_up, per_group)


@dataclass(frozen=True)
class ThreeLayerSize:
    radix: int
    endpoints: int
    leaves: int
    spines: int
    cores: int

    @property
    def switches(self) -> int:
        return self.leaves + self.spines + self.cores

    @property
    def links(self) -> dict[str, int]:
        half = self.radix // 2
        return {
            "endpoint-leaf": self.endpoints,
            "leaf-spine": self.leaves * half,
            "spine-core": self.spines * half,
        }


def size_three_layer(radix: int, endpoints: int) -> ThreeLayerSize:
    """Non-blocking three-layer fat-tree for `endpoints` access ports (k^3/4 at most)."""
    half = radix // 2
    full = radix**3 // 4
    if endpoints > full:
        raise SizingError(
            f"{endpoints:,} endpoints exceed a three-layer tree of {radix}-port switches ({full:,})",
            "use switches with more ports",
        )
    leaves = math.ceil(endpoints / half)
    spines = leaves
    cores = math.ceil(spines * half / radix)
    return ThreeLayerSize(radix, endpoints, leaves, spines, cores)


@dataclass(frozen=True)
class PortDemand:
    """NIC and inter-zone ports the zones must hold."""

    zones: tuple[str, ...]
    every_zone: int  # ports needed in each zone (dual-homed storage)
    pinned: dict[str, int]  # single-attached ports pinned to a zone
    floating: int  # single-attached ports the planner may put in any zone
    inter_zone: dict[str, int]  # inter-zone cable ends per zone

    def fixed(self, zone: str) -> int:
        return self.every_zone + self.pinned.get(zone, 0) + self.inter_zone.get(zone, 0)

    @property
    def total(self) -> int:
        return (
            self.every_zone * len(self.zones)
            + sum(self.pinned.values())
            + self.floating
            + sum(self.inter_zone.values())
        )


def port_demand(resolved: ResolvedInventory) -> PortDemand:
    inv = resolved.inventory
    zones = [z.name for z in inv.fabric.trees]
    pinned = {z: 0 for z in zones}
    every_zone = floating = 0
    for host in resolved.hosts:
        ports = sum(nic.ports for nic in host.nics)
        if host.settings.attach is Attach.EVERY_ZONE:
            every_zone += ports // max(1, len(zones))
        elif host.settings.zone in pinned:
            pinned[host.settings.zone] += ports
        else:
            floating += ports
    inter_zone = {z: 0 for z in zones}
    for link in inv.fabric.inter_zone_links:
        for z in link.zones:
            if z in inter_zone:
                inter_zone[z] += link.count
    return PortDemand(tuple(zones), every_zone, pinned, floating, inter_zone)


def rails_per_tree(resolved: ResolvedInventory) -> tuple[int, ResolvedHost] | None:
    """The most NIC ports one host has in one tree under rail-optimized placement (the rails), and that host."""
    zones = [z.name for z in resolved.inventory.fabric.trees]
    best: tuple[int, ResolvedHost] | None = None
    for host in resolved.hosts:
        per_tree = max(Counter(host.port_zones(zones)).values(), default=0)  # as placement deals them
        if per_tree and (best is None or per_tree > best[0]):
            best = (per_tree, host)
    return best


Place = tuple[int, int]  # (unit, position in the unit): one port on each of the unit's rail leaves
RailPlace = tuple[int, int, int]  # a place and the first of the node's consecutive rails there


def shared_place(used: dict[Place, set[int]], ports: int, rails: int) -> RailPlace | None:
    """A node with fewer ports than rails shares a place another such node opened: the first place, and the lowest
    run of `ports` free rails in it (so 127 DGX and two one-port UFM appliances fill NVIDIA's 128 places of 4 units)."""
    if ports >= rails:
        return None
    for place in sorted(used):
        taken = used[place]
        if len(taken) < rails:
            first = next((f for f in range(rails - ports + 1) if not taken & set(range(f, f + ports))), None)
            if first is not None:
                return (*place, first)
    return None


def node_ports_per_tree(resolved: ResolvedInventory) -> list[int]:
    """Each node's most ports in one tree (what it takes of a unit place), in inventory order; nodes off the fabric
    left out."""
    zones = [z.name for z in resolved.inventory.fabric.trees]
    hosts = sorted(resolved.hosts, key=lambda h: h.order)
    counts = [max(Counter(h.port_zones(zones)).values(), default=0) for h in hosts]
    return [c for c in counts if c]


def rail_places(ports_per_node: list[int], rails: int) -> int:
    """The unit places the nodes take, in order: a node with all rails takes a place of its own, smaller ones share
    (shared_place), as placement deals them in one tree."""
    used: dict[Place, set[int]] = {}
    for ports in ports_per_node:
        unit, member, first = shared_place(used, ports, rails) or (len(used), 0, 0)
        used.setdefault((unit, member), set()).update(range(first, first + ports))
    return len(used)


def rail_unit_ports(resolved: ResolvedInventory, radix: int) -> int | None:
    """Endpoint ports per tree of the whole scalable units the nodes need (rail-optimized placement: a unit is as
    many nodes as a leaf has down-ports, on one leaf per rail), or None without nodes on the fabric."""
    inv = resolved.inventory
    found = rails_per_tree(resolved)
    if found is None:
        return None
    down = leaf_ports(radix, inv.fabric.oversubscription)[0]
    places = rail_places(node_ports_per_tree(resolved), found[0])
    trees = 1 if inv.fabric.planes else len(inv.fabric.zones)
    units = max(1, math.ceil(places / (down * trees)))
    return units * found[0] * down


def zone_size(resolved: ResolvedInventory, radix: int) -> TreeSize:
    """Every zone or plane of an inventory has the same shape: `ports_per_zone`; without it the full tree, or, with
    rail-optimized placement, the whole scalable units the nodes need (as NVIDIA's reference architecture builds:
    127 DGX on 64-port switches are 4 units, 32 leaves and 16 spines, not the full tree's 64 + 32)."""
    inv = resolved.inventory
    ports = inv.fabric.ports_per_zone
    if ports is None and inv.fabric.placement == "rail-optimized":
        ports = rail_unit_ports(resolved, radix)
    if inv.fabric.topology == "three-layer-fat-tree":
        return size_three_layer_tree(radix, inv.fabric.oversubscription, ports)
    return size_two_layer(radix, inv.fabric.oversubscription, ports)


def subnet_of_zone(inv: Inventory) -> dict[str, str]:
    """Each plane is a subnet of its own; zones share one subnet, named after the inventory."""
    return {z.name: z.name if inv.fabric.planes else inv.name for z in inv.fabric.trees}


@dataclass(frozen=True)
class SizedFabric:
    """The sizing step's result: the shape every zone or plane shares and their switches in the racks, each with its
    GUID (the inventory's, else a placeholder); LIDs come with addressing."""

    size: TreeSize
    zones: tuple[str, ...]  # the zones or planes, in inventory order
    switches: tuple[Switch, ...]  # zone by zone: cores, spines, leaves, each in index order
    _tiers: dict[tuple[str, str], list[Switch]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        tiers: dict[tuple[str, str], list[Switch]] = defaultdict(list)
        for sw in self.switches:
            tiers[(sw.zone, sw.tier)].append(sw)
        object.__setattr__(self, "_tiers", dict(tiers))

    def tier(self, zone: str, tier: SwitchTier) -> list[Switch]:
        """A zone's switches of one tier, in index order."""
        return self._tiers.get((zone, tier), [])


def size_fabric(loaded: LoadedInventory) -> SizedFabric:
    """Size the zones or planes (all alike) and rack their switches."""
    inv = loaded.inventory
    size = zone_size(loaded.resolved, fabric_radix(inv))
    return SizedFabric(size, tuple(z.name for z in inv.fabric.trees), tuple(_rack_switches(loaded, size)))


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


def _within_budget(
    rack_list: list[str], first: str, racks: dict[str, Rack], draws: dict[str, Draw], add: Draw
) -> str | None:
    """The first rack from `first` on (then wrapping round the list) whose power budget and cooling still take
    `add` at peak; None when none does."""
    start = rack_list.index(first)
    for rack in rack_list[start:] + rack_list[:start]:
        limit = tightest(racks[rack])
        if limit is None or draws.get(rack, Draw()).peak_w + add.peak_w <= limit.watts:
            return rack
    return None


@dataclass(frozen=True)
class RackedSwitch:
    """Where the designer puts one switch: lint reads these (without the plan package), the design builds Switches."""

    zone_index: int  # 1-based position of its zone or plane
    zone: str
    tier: SwitchTier
    index: int  # 0-based within its zone and tier
    name: str
    kind: int  # GUID kind (KIND_LEAF, ...)
    rack: str
    u: int


def rack_switches(loaded: LoadedInventory, size: TreeSize) -> list[RackedSwitch]:
    """Switches fill their racks top-down in the free units (hosts keep theirs), an even share each unless a
    rack's power budget or cooling is spent (then the next rack of the list takes it); a rack without room or
    power for the next switch is an error (FF153, FF155)."""
    inv = loaded.inventory
    racks = loaded.resolved.racks
    sw_model = inv.models.switches[inv.fabric.switch_model]
    sw_draw = model_draw(sw_model)
    draws = host_draws(loaded)
    occupied = _occupied_units(loaded)
    collector = Collector(loaded.source.file, loaded.source.positions)
    switches = []
    tiers: list[tuple[SwitchTier, int, list[str], int]]
    next_u: dict[str, int] = {}  # switches fill racks top-down, whichever zone or tier comes first
    for zi, zone in enumerate(inv.fabric.trees, start=1):
        tiers = [
            ("spine", size.spines, zone.spine_racks, KIND_SPINE),
            ("leaf", size.leaves, zone.leaf_racks, KIND_LEAF),
        ]
        if isinstance(size, ThreeLayerTree):
            tiers.insert(0, ("core", size.cores, zone.core_racks or zone.spine_racks, KIND_CORE))
        for tier, count, rack_list, kind in tiers:
            for i, even in enumerate(_place_in_racks(list(rack_list), count)):
                name = _switch_name(zone.name, tier, i + 1, count)
                rack = _within_budget(list(rack_list), even, racks, draws, sw_draw)
                if rack is None:
                    limit = tightest(racks[even])
                    assert limit is not None  # a rack without limits takes any switch
                    collector.error(
                        RACK_POWER_FOR_SWITCHES,
                        ("fabric", inv.fabric.tree_key, zi - 1, f"{tier}_racks"),
                        f"no rack of {tier}_racks has power left for {name} ({kw(sw_draw.peak_w)}): rack '{even}' "
                        f"draws {kw(draws.get(even, Draw()).peak_w)} at peak against its {limit.what} of {kw(limit.watts)}",
                        f"add racks to {tier}_racks of zone '{zone.name}' or raise their power_kw / cooling",
                    )
                    raise InfeasibleError(collector.items)
                draws[rack] = draws.get(rack, Draw()) + sw_draw
                u = next_u.get(rack, racks[rack].units - sw_model.rack_units + 1)
                while u >= 1 and occupied[rack] & set(range(u, u + sw_model.rack_units)):
                    u -= 1
                if u < 1:
                    collector.error(
                        RACK_FULL_FOR_SWITCHES,
                        ("fabric", inv.fabric.tree_key, zi - 1, f"{tier}_racks"),
                        f"rack '{rack}' has no room left for {name} ({sw_model.rack_units} U)",
                        f"add racks to {tier}_racks of zone '{zone.name}' or move hosts out of '{rack}'",
                    )
                    raise InfeasibleError(collector.items)
                next_u[rack] = u - sw_model.rack_units
                switches.append(RackedSwitch(zi, zone.name, tier, i, name, kind, rack, u))
    return switches


def _rack_switches(loaded: LoadedInventory, size: TreeSize) -> list[Switch]:
    """The racked switches as the plan's Switches, each with its GUID (the inventory's, else a placeholder)."""
    from ffplan.plan.model import Switch

    inv = loaded.inventory
    radix = fabric_radix(inv)
    switches = []
    for r in rack_switches(loaded, size):
        given = inv.fabric.switch_guids.get(r.name)
        switches.append(
            Switch(
                name=r.name,
                zone=r.zone,
                tier=r.tier,
                index=r.index + 1,
                pod=_pod(size, r.tier, r.index),
                model=inv.fabric.switch_model,
                ports=radix,
                lid=1,
                guid_placeholder=given is None,
                rack=r.rack,
                u=r.u,  # a valid stand-in: addressing numbers every switch
                **switch_guids(
                    given.lower()
                    if given
                    else synthetic_guid(inv.fabric.guid_prefix, r.zone_index, r.kind, r.index + 1)
                ),
            )
        )
    return switches
