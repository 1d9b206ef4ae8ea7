"""FF1xx: the fabric and its port budget, computed with the designer's own sizing (one source of truth)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator

from ffplan.codes import lint as codes
from ffplan.design.sizing import (
    SizingError,
    ThreeLayerTree,
    TreeSize,
    TwoLayerSize,
    node_ports_per_tree,
    rail_places,
    rails_per_tree,
)
from ffplan.design.storage import gbps_to_gib_s, storage_ports, storage_target
from ffplan.diagnostics import Severity, YamlPath, plural
from ffplan.inventory import ResolvedHost
from ffplan.inventory.models import Attach
from ffplan.lint.context import LintContext
from ffplan.lint.helpers import collapse, more
from ffplan.lint.declare import Finding, rule


@dataclass
class _FloatingGroup:
    """Single-attached hosts of one group that the planner may put in any zone."""

    name: str
    index: int
    hosts: int = 0
    ports: int = 0


def _floating_groups(ctx: LintContext) -> list[_FloatingGroup]:
    groups: dict[str, _FloatingGroup] = {}
    for host in ctx.resolved.hosts:
        if host.settings.attach is Attach.EVERY_ZONE or host.settings.zone in ctx.zone_names:
            continue
        group = groups.setdefault(host.group, _FloatingGroup(host.group, host.group_index))
        group.hosts += 1
        group.ports += sum(nic.ports for nic in host.nics)
    return sorted(groups.values(), key=lambda g: (-g.ports, g.index))


def _zone_shape_text(ctx: LintContext, shape: TreeSize) -> str:
    return (
        f"{plural(shape.leaves, 'leaf', 'leaves')} x {shape.down_ports} down-ports of the {shape.radix}-port "
        f"'{ctx.inventory.fabric.switch_model}'"
    )


def _demand_parts(every_zone: int, zones: int, single: int, inter_zone: int, single_label: str) -> str:
    parts = []
    if single:
        parts.append(f"{single:,} {single_label}")
    if every_zone:
        parts.append(
            f"{zones} x {every_zone:,} every-zone (multi-homed)" if zones > 1 else f"{every_zone:,} every-zone"
        )
    if inter_zone:
        parts.append(plural(inter_zone, "inter-zone cable end"))
    return " + ".join(parts) or "nothing"


def _total_budget_hint(shape: TreeSize, over: int, largest: _FloatingGroup | None) -> str:
    options = []
    if largest is not None and largest.hosts:
        per_host = max(1, largest.ports // largest.hosts)
        fits = largest.hosts - math.ceil(over / per_host)
        if fits >= 0:
            options.append(f"group '{largest.name}' fits at most {fits:,} nodes ({plural(per_host, 'port')} each)")
    if shape.endpoint_ports < shape.max_endpoint_ports:
        options.append(f"raise fabric.ports_per_zone (up to {shape.max_endpoint_ports:,})")
    options.append("add a zone")
    options.append("use switches with more ports")
    return "; or ".join([options[0], ", or ".join(options[1:])])


@rule(
    codes.ZONE_PORT_BUDGET,
    Severity.ERROR,
    bad="""
    # 2 zones of 40-port switches hold 2 x 800 ports; 1,250 + 2 x 180 = 1,610 are needed
    groups:
      - {name: compute, role: compute, model: ff2-compute, count: 1250, hostname: "cn{index:04d}"}
      - {name: storage, role: storage, model: ff2-storage, count: 180, hostname: "st{index:03d}"}
    """,
    good="""
    # 1,200 + 2 x 180 + 8 management = 1,568 ports (+ inter-zone cable ends) fit in 1,600
    groups:
      - {name: compute, role: compute, model: ff2-compute, count: 1200, hostname: "cn{index:04d}"}
      - {name: storage, role: storage, model: ff2-storage, count: 180, hostname: "st{index:03d}"}
    """,
)
def zone_port_budget(ctx: LintContext) -> Iterator[Finding]:
    """
    Every zone is a two-layer fat-tree of the fabric's switch model, sized as the designer sizes it:
    `fabric.ports_per_zone` rounded up to whole leaves, or the full tree (k leaves x k/2 down-ports for
    k-port switches when non-blocking). Two budgets must hold:

    * per zone: the ports that must land in that zone (one port per zone of every multi-homed host, the
      hosts pinned to it with `settings.zone`, and the inter-zone cable ends) fit in the zone;
    * in total: all of the above plus the single-attached ports the planner spreads over the zones fit
      in all zones together.

    The finding says which budget, by how much it is exceeded, and what would fit.
    """
    shape = ctx.zone_shape
    if not isinstance(shape, (TwoLayerSize, ThreeLayerTree)):
        return  # FF102 or FF210 explains why the zone cannot be sized
    demand, zones = ctx.demand, ctx.zone_names
    if not zones:
        return  # FF108
    capacity = shape.endpoint_ports
    for i, zone in enumerate(zones):
        fixed = demand.fixed(zone)
        if fixed > capacity:
            parts = _demand_parts(demand.every_zone, 1, demand.pinned[zone], demand.inter_zone[zone], "pinned")
            yield Finding(
                ("fabric", "zones", i),
                f"zone '{zone}' has {capacity:,} endpoint ports ({_zone_shape_text(ctx, shape)}) but {fixed:,} must "
                f"land in it: {parts}; {fixed - capacity:,} over",
                "pin fewer hosts to this zone (settings.zone), lower its inter-zone links, or use switches with more ports",
            )
    total_capacity = capacity * len(zones)
    if demand.total <= total_capacity:
        return
    over = demand.total - total_capacity
    floating = _floating_groups(ctx)
    largest = floating[0] if floating else None
    single = demand.floating + sum(demand.pinned.values())
    yield Finding(
        ("groups", largest.index, "count") if largest else ("fabric", "zones"),
        f"the fabric has {total_capacity:,} endpoint ports ({len(zones)} zones x {capacity:,}: {_zone_shape_text(ctx, shape)}) "
        f"but the hosts need {demand.total:,}: "
        f"{_demand_parts(demand.every_zone, len(zones), single, sum(demand.inter_zone.values()), 'single-attached')}; {over:,} over",
        _total_budget_hint(shape, over, largest),
    )


@rule(
    codes.LEAF_SPINE_CAPACITY,
    Severity.ERROR,
    bad="""
    # 40-port switches: at most 40 leaves x 20 down-ports = 800 ports per two-layer zone
    fabric: {switch_model: QM8700, ports_per_zone: 1000, zones: [...]}
    """,
    good="""
    fabric: {switch_model: QM8700, ports_per_zone: 800, zones: [...]}
    """,
)
def leaf_spine_capacity(ctx: LintContext) -> Iterator[Finding]:
    """
    In a two-layer fat-tree every leaf connects to every spine, so a k-port spine reaches at most k
    leaves, and each leaf splits its k ports into down-ports (to hosts) and up-ports (to spines) by the
    oversubscription ratio. A zone asking for more endpoint ports than k leaves provide, or a switch
    whose split leaves no port on one side, cannot be built: add a zone, lower `ports_per_zone`, or use
    a switch with more ports.
    """
    shape = ctx.zone_shape
    if isinstance(shape, SizingError):
        where = "ports_per_zone" if ctx.inventory.fabric.ports_per_zone is not None else "oversubscription"
        yield Finding(("fabric", where), shape.message, shape.hint)


@rule(
    codes.LINK_SPEED_MISMATCH,
    Severity.WARNING,
    bad="""
    models:
      switches: {QM8700: {ports: 40, speed: HDR}}
      nics: {CX5-EDR: {speed: EDR}}
    """,
    good="""
    models:
      switches: {QM8700: {ports: 40, speed: HDR}}
      nics: {CX6-HDR: {speed: HDR}}
    """,
)
def link_speed_mismatch(ctx: LintContext) -> Iterator[Finding]:
    """
    An InfiniBand link trains at the highest speed both ends support. A NIC slower than the switches
    halves (or worse) the bandwidth of every port it sits on and skews the fabric's balance; a faster
    NIC wastes money. Usually this is a typo in the model, occasionally a deliberate mix: suppress the
    warning on that line if so.
    """
    switch = ctx.switch_model
    if switch is None:
        return
    for name in ctx.used_nic_models:
        nic = ctx.inventory.models.nics.get(name)
        if nic is not None and nic.speed is not switch.speed:
            yield Finding(
                ("models", "nics", name, "speed"),
                f"NIC model '{name}' runs at {nic.speed.value} ({nic.speed.gbps} Gb/s) but switch model "
                f"'{ctx.inventory.fabric.switch_model}' at {switch.speed.value} ({switch.speed.gbps} Gb/s): links train at the slower speed",
                f"use a {switch.speed.value} NIC, or suppress this line if the mix is deliberate",
            )


@rule(
    codes.XDR_BEYOND_THE_SIMULATOR,
    Severity.INFO,
    bad="""
    models:
      switches: {Q3400: {ports: 144, speed: XDR}}   # without a word about what verify can check
    """,
    good="""
    models:
      switches: {Q3400: {ports: 144, speed: XDR}}   # ffplan: disable=FF112 (OpenSM 3.3.24+ on the SM hosts)
    """,
)
def xdr_beyond_the_simulator(ctx: LintContext) -> Iterator[Finding]:
    """
    800 Gb/s (XDR, rate code 23) is known to OpenSM from 3.3.24 on; 3.3.23 and the simulator ibsim (which runs
    links up to NDR) cannot realize an IPoIB broadcast group at that rate. `ffplan verify` therefore boots XDR
    plans with the group at 400 Gb/s and reports the planned rate as "cannot be verified here"; every other
    check (cabling, LIDs, routes over ports >= 128, QoS) runs as usual. See docs/verify.md.
    """
    switch = ctx.switch_model
    if switch is not None and switch.speed.value == "XDR":
        yield Finding(
            ("models", "switches", ctx.inventory.fabric.switch_model, "speed"),
            f"switch model '{ctx.inventory.fabric.switch_model}' runs at XDR (800 Gb/s): the subnet managers need "
            "OpenSM >= 3.3.24 (or UFM), and `ffplan verify` reports the IPoIB group's rate=23 as cannot be verified "
            "in the simulator",
            "run OpenSM 3.3.24 or later on the SM hosts; suppress this line once that is so",
        )


def _attach_source(ctx: LintContext, host: ResolvedHost) -> YamlPath:
    """Where a host's `attach` comes from: the host, its group, the inventory defaults, or its role."""
    group_index = host.group_index
    group = ctx.inventory.groups[group_index]
    if host.host_index is not None and group.hosts[host.host_index].settings.attach is not None:
        return host.path + ("settings", "attach")
    if group.settings.attach is not None:
        return ("groups", group_index, "settings", "attach")
    if ctx.inventory.defaults.attach is not None:
        return ("defaults", "attach")
    return ("groups", group_index, "role")


@rule(
    codes.EVERY_ZONE_COVERAGE,
    Severity.ERROR,
    bad="""
    # two zones, but the storage node has a single NIC port
    groups:
      - {name: storage, role: storage, model: one-nic-node, count: 4, hostname: "st{index}"}
    """,
    good="""
    groups:
      - {name: storage, role: storage, model: two-nic-node, count: 4, hostname: "st{index}"}
    """,
)
def every_zone_coverage(ctx: LintContext) -> Iterator[Finding]:
    """
    Hosts with `attach: every-zone` (storage servers by default) put one NIC port in each zone, so every
    compute node reaches storage without crossing zones. That needs exactly as many NIC ports as there
    are zones: with fewer, a zone is left without its path to the host; with more, the extra ports are
    not planned at all. A RoCE fabric's planes take a multiple: port k of a node is in plane k modulo the
    planes (dual-plane, 8 NICs: NICs 0, 2, 4, 6 in the first plane), one rail each.
    """
    zones, kind = len(ctx.zone_names), ctx.inventory.fabric.tree_key[:-1]
    if not zones:
        return  # FF108
    # RoCE planes take several rails each (a dual-plane node of 8 NICs: 4 per plane), and so do the planes of
    # multi-planar NICs (8 twin-planar NICs: 8 links in each of 2 planes); other InfiniBand planes one port each
    roce_planes = ctx.inventory.fabric.transport == "roce" and kind == "plane"
    nic_models = ctx.inventory.models.nics
    mismatches = []
    for host in ctx.resolved.hosts:
        ports = sum(nic.ports for nic in host.nics)
        rails = roce_planes or (
            kind == "plane" and any(m.planes > 1 for nic in host.nics if (m := nic_models.get(nic.model)))
        )
        if host.settings.attach is Attach.EVERY_ZONE and (ports % zones if rails else ports != zones):
            mismatches.append((_attach_source(ctx, host), (), (host.hostname, host.model, ports)))
    for path, _, (hostname, model, ports), count in collapse(mismatches):
        yield Finding(
            path,
            f"host '{hostname}'{more(count, 'hosts')} attaches to every {kind}, "
            f"but node model '{model}' has {plural(ports, 'NIC port')} for {plural(zones, kind)}",
            f"give '{model}' one NIC port per {kind} ({zones}), or set attach: single",
        )


@rule(
    codes.INTER_ZONE_SELF_LINK,
    Severity.ERROR,
    bad="""
    inter_zone_links:
      - {zones: [z1, z1], count: 4}
    """,
    good="""
    inter_zone_links:
      - {zones: [z1, z2], count: 4}
    """,
)
def inter_zone_self_link(ctx: LintContext) -> Iterator[Finding]:
    """
    Inter-zone links connect leaf ports of two different zones (for the rare traffic between them).
    A link whose two ends name the same zone would be an extra leaf-to-leaf cable inside a fat-tree,
    which breaks up*/down* routing; it is almost always a copy-paste slip.
    """
    for i, link in enumerate(ctx.inventory.fabric.inter_zone_links):
        if link.zones[0] == link.zones[1]:
            yield Finding(
                ("fabric", "inter_zone_links", i, "zones"),
                f"inter-zone link joins zone '{link.zones[0]}' to itself",
                "name two different zones",
            )


@rule(
    codes.INTER_ZONE_LINKS_BEYOND_TWO_ZONES,
    Severity.ERROR,
    bad="""
    inter_zone_links:
      - {zones: [z1, z2], count: 2}
      - {zones: [z2, z3], count: 2}
    """,
    good="""
    # two zones joined; further zones are independent planes
    inter_zone_links:
      - {zones: [z1, z2], count: 2}
    """,
)
def inter_zone_links_beyond_two_zones(ctx: LintContext) -> Iterator[Finding]:
    """
    ffplan's router sends cross-zone traffic over leaf-to-leaf inter-zone links and proves the routes
    free of credit loops on the channel dependency graph. Between two zones it keeps that graph acyclic
    by reserving, in the second zone, spine downlinks that exits use and entries never do. With links
    among three or more zones, traffic entering one zone and leaving it for another closes loops through
    the zones (the designer refuses such a plan with FF602), so this is caught here, before designing.
    Zones without inter-zone links are independent planes, as in the paper's multi-plane next generation.
    """
    linked = sorted({z for link in ctx.inventory.fabric.inter_zone_links for z in link.zones})
    if len(linked) > 2:
        yield Finding(
            ("fabric", "inter_zone_links"),
            f"inter-zone links join {len(linked)} zones ({', '.join(linked)}); ffplan routes between two zones only",
            "keep inter-zone links between one pair of zones; other zones stay independent planes",
        )


# The unicast LID range of an InfiniBand subnet is 0x0001-0xBFFF; 0xC000 and above are multicast.
MAX_UNICAST_LID = 0xBFFF


@rule(
    codes.LID_SPACE_EXCEEDED,
    Severity.ERROR,
    bad="""
    # 2 zones of 256-port switches (768 switches) and 62,020 NIC ports: 62,788 LIDs
    fabric: {switch_model: SW256, zones: [...two zones...]}
    """,
    good="""
    # at most 49,151 switches + NIC ports per subnet: split the cluster into two inventories
    fabric: {switch_model: SW256, zones: [...one zone...]}
    """,
)
def lid_space_exceeded(ctx: LintContext) -> Iterator[Finding]:
    """
    The designer gives every switch and every NIC port its own LID (LMC 0), and an InfiniBand subnet has
    unicast LIDs 1 to 0xBFFF (49,151) only; above that, LIDs are multicast and OpenSM cannot assign them
    to ports. A fabric within the port budget of its zones can still exceed it: two zones of 256-port
    switches hold 65,536 ports. Such a cluster needs several subnets (one inventory each).
    """
    shape = ctx.zone_shape
    if not isinstance(shape, (TwoLayerSize, ThreeLayerTree)):
        return  # FF102 or FF210 explains why the zone cannot be sized
    demand = ctx.demand
    if ctx.inventory.fabric.planes:  # a subnet per plane: the fullest plane counts
        switches = shape.switches
        nic_ports = max((demand.fixed(z) for z in ctx.zone_names), default=0) + demand.floating
    else:
        switches = shape.switches * len(ctx.zone_names)
        nic_ports = demand.total - sum(demand.inter_zone.values())
    needed = switches + nic_ports
    if needed > MAX_UNICAST_LID:
        yield Finding(
            ("fabric", "zones"),
            f"the fabric needs {needed:,} LIDs ({switches:,} switches + {nic_ports:,} NIC ports), over the "
            f"{MAX_UNICAST_LID:,} unicast LIDs of a subnet (0x0001-0xBFFF) by {needed - MAX_UNICAST_LID:,}",
            "split the cluster into several subnets (one inventory each), or plan fewer NIC ports",
        )


@rule(
    codes.ZONES_OR_PLANES,
    Severity.ERROR,
    bad="""
    fabric: {switch_model: QM9700, zones: [...], planes: [...]}
    """,
    good="""
    fabric: {switch_model: QM9700, planes: [...]}   # independent subnets; or zones: one subnet
    """,
)
def zones_or_planes(ctx: LintContext) -> Iterator[Finding]:
    """
    A fabric is a set of zones (fat trees that share one subnet and one subnet manager, joined by inter-zone
    links) or a set of planes (fat trees that are subnets of their own, with a subnet manager each and no
    links between them; NIC i of a node goes to plane i). One fabric cannot be both: say which.
    """
    fabric = ctx.inventory.fabric
    if fabric.zones and fabric.planes:
        yield Finding(
            ("fabric", "planes"),
            "the fabric lists both zones and planes",
            "keep zones (one subnet, joined by inter-zone links) or planes (a subnet each), not both",
        )
    elif not fabric.zones and not fabric.planes:
        yield Finding(
            ("fabric",),
            "the fabric lists no zones and no planes",
            "add zones: [{name: z1, leaf_racks: [...], spine_racks: [...]}] (or planes: with the same entries)",
        )


@rule(
    codes.LINKS_BETWEEN_TREES,
    Severity.ERROR,
    bad="""
    fabric:
      planes: [{name: p0, ...}, {name: p1, ...}]
      inter_zone_links: [{zones: [p0, p1], count: 4}]
    """,
    good="""
    fabric:
      planes: [{name: p0, ...}, {name: p1, ...}]   # planes meet only inside the nodes
    """,
)
def links_between_trees(ctx: LintContext) -> Iterator[Finding]:
    """
    Planes are separate subnets: a cable between them would join two subnets, each with its own subnet manager
    and LIDs, which InfiniBand does not route (that takes a router). Traffic between planes crosses inside a node
    (NVLink, PXN). Three-layer trees are routed as pure fat trees; leaf-to-leaf links between them would need the
    two-layer router's inter-zone rules, which ffplan has only for two-layer zones.
    """
    fabric = ctx.inventory.fabric
    if not fabric.inter_zone_links:
        return
    if fabric.planes:
        yield Finding(
            ("fabric", "inter_zone_links"),
            "planes are independent subnets; inter_zone_links would join them",
            "remove inter_zone_links (planes meet inside the nodes), or make the trees zones of one subnet",
        )
    elif fabric.topology == "three-layer-fat-tree":
        yield Finding(
            ("fabric", "inter_zone_links"),
            "ffplan routes inter-zone links between two-layer zones only",
            "remove inter_zone_links, or make the zones two-layer-fat-tree",
        )


@rule(
    codes.RAIL_LAYOUT,
    Severity.ERROR,
    bad="""
    # 8 NICs per node (8 rails) on trees of 12 leaves
    fabric: {placement: rail-optimized, ports_per_zone: 384, ...}
    """,
    good="""
    # 16 leaves: 2 scalable units of 8 rail leaves
    fabric: {placement: rail-optimized, ports_per_zone: 512, ...}
    """,
)
def rail_layout(ctx: LintContext) -> Iterator[Finding]:
    """
    Rail-optimized placement (DGX SuperPOD style) builds scalable units: as many nodes as a leaf has down-ports,
    on as many leaves as a node has ports in the tree (its rails); port n of every node of a unit goes to the
    unit's rail-n leaf, on the node's position in the unit. The leaves of a tree must therefore come in whole
    units (a multiple of the rails), and the nodes must fit in the units.
    """
    shape, fabric = ctx.zone_shape, ctx.inventory.fabric
    if (
        fabric.placement != "rail-optimized"
        or not isinstance(shape, (TwoLayerSize, ThreeLayerTree))
        or not ctx.zone_names
    ):
        return
    found = rails_per_tree(ctx.resolved)
    if found is None:
        return
    rails, host = found
    units, rest = divmod(shape.leaves, rails)
    if units == 0 or rest:
        yield Finding(
            ("fabric", "placement"),
            f"host '{host.hostname}' has {plural(rails, 'port')} in one tree (its rails), but a tree has "
            f"{plural(shape.leaves, 'leaf', 'leaves')}, not a multiple of {rails}",
            f"size the trees in whole scalable units of {rails} leaves (fabric.ports_per_zone a multiple of "
            f"{rails * shape.down_ports}), or use placement: balanced",
        )
        return
    places = rail_places(node_ports_per_tree(ctx.resolved), rails)  # nodes with fewer ports than rails share one
    trees = len(ctx.zone_names) if not fabric.planes else 1
    capacity = units * shape.down_ports * trees
    if places > capacity:
        yield Finding(
            ("fabric", "placement"),
            f"the nodes need {places:,} unit positions, but the {plural(units * trees, 'scalable unit')} of "
            f"{shape.down_ports} nodes hold {capacity:,}",
            "raise fabric.ports_per_zone, add trees, or plan fewer nodes",
        )


@rule(
    codes.TREE_SHAPE_UNUSED,
    Severity.WARNING,
    bad="""
    fabric: {topology: three-layer-fat-tree, ports_per_zone: 512, ...}   # 64-port switches: one pod
    """,
    good="""
    fabric: {topology: two-layer-fat-tree, ports_per_zone: 512, ...}
    """,
)
def tree_shape_unused(ctx: LintContext) -> Iterator[Finding]:
    """
    `core_racks` only place the core switches of a three-layer tree; on a two-layer tree they are ignored. A
    three-layer tree whose ports fit in one pod pays for a core layer that joins nothing: a two-layer tree of the
    same switches holds those ports with fewer switches and one hop less.
    """
    fabric, shape = ctx.inventory.fabric, ctx.zone_shape
    if fabric.topology == "two-layer-fat-tree":
        for i, tree in enumerate(fabric.trees):
            if tree.core_racks:
                yield Finding(
                    ("fabric", fabric.tree_key, i, "core_racks"),
                    f"'{tree.name}' is a two-layer tree: its core_racks are not used",
                    "remove core_racks, or set fabric.topology: three-layer-fat-tree",
                )
    elif isinstance(shape, ThreeLayerTree) and shape.pods == 1:
        yield Finding(
            ("fabric", "topology"),
            f"every three-layer tree is a single pod of {plural(shape.leaves, 'leaf', 'leaves')}: its "
            f"{plural(shape.cores, 'core switch', 'core switches')} join nothing",
            "use topology: two-layer-fat-tree, or raise fabric.ports_per_zone past one pod",
        )


@rule(
    codes.STORAGE_BANDWIDTH_PER_GPU,
    Severity.WARNING,
    bad="""
    # 1 storage server with 2 HDR ports (46.6 GiB/s) for 64 GPUs: 0.73 GiB/s per GPU, under the default 1 GiB/s
    """,
    good="""
    storage: {gib_s_per_gpu: 0.7}     # the cluster's own target, said in the inventory
    """,
)
def storage_bandwidth_per_gpu(ctx: LintContext) -> Iterator[Finding]:
    """
    Training reads its data and writes checkpoints through the storage servers: every GPU needs its share.
    The target is `storage.gib_s_per_gpu`, else about 1 GiB/s per GPU (the GPU-server hardware guide
    among the project's sources). What the fabric can deliver at most is the storage servers' NIC ports
    together (their speed, every port of a dual-homed server counted) divided by the compute nodes' GPUs;
    `ffplan analyze --pattern storage-read` gives what the planned routes deliver (the busiest link or port
    bounds every flow). Only inventories with storage servers and GPUs are checked.
    """
    ports, gbps, gpus = storage_ports(ctx.loaded)
    if not ports or not gpus:
        return
    target, source = storage_target(ctx.loaded)
    per_gpu = gbps_to_gib_s(gbps) / gpus
    if per_gpu + 1e-9 < target:
        where: YamlPath = ("storage", "gib_s_per_gpu") if ctx.inventory.storage else ("groups",)
        yield Finding(
            where,
            f"{ports} storage NIC ports ({gbps:,.0f} Gb/s, {gbps_to_gib_s(gbps):,.1f} GiB/s) give {gpus:,} GPUs "
            f"{per_gpu:.2f} GiB/s each, under the target {target:g} GiB/s per GPU ({source})",
            "add storage servers or faster NICs, or set storage.gib_s_per_gpu to the cluster's own target",
        )


@rule(
    codes.PLANAR_NIC_BEYOND_PLANES,
    Severity.ERROR,
    bad="""
    nics:
      CX8-2x400: {ports: 1, planes: 2, speed: NDR}   # each cage's two 400G links go to two planes
    fabric:
      zones: [{name: za, ...}]                       # no planes: one link would have nowhere to go
    """,
    good="""
    fabric:
      planes: [{name: pa, ...}, {name: pb, ...}]      # link 1 of every cage in pa, link 2 in pb
    """,
)
def planar_nic_beyond_planes(ctx: LintContext) -> Iterator[Finding]:
    """
    A multi-planar NIC (a ConnectX-8 SuperNIC as 2 x 400G, `planes: 2` on its NIC model) splits each cage into
    one link per plane, and each link must land in a different plane: link k of a cage on its rail's leaf in the
    k-th plane. A fabric with fewer planes than the NIC feeds (or zones, which share one subnet and are no
    planes) leaves links with no plane of their own: two links of one cage in one tree, or a link unplanned.
    Checked for the NIC models the hosts use.
    """
    planes = len(ctx.inventory.fabric.planes)
    used = {nic.model for host in ctx.resolved.hosts for nic in host.nics}
    for name, model in ctx.inventory.models.nics.items():
        if name in used and model.planes > max(planes, 1):
            has = plural(planes, "plane") if planes else "no planes (its trees are zones of one subnet)"
            yield Finding(
                ("models", "nics", name, "planes"),
                f"NIC model '{name}' feeds {plural(model.planes, 'plane')} from each cage, but the fabric has {has}",
                f"list {model.planes} fabric.planes (link k of every cage lands in the k-th), or set planes: 1 "
                "on the NIC model",
            )


@rule(
    codes.PLANAR_NIC_FUNCTIONS,
    Severity.ERROR,
    bad="""
    nics: {CX8-2x400: {ports: 1, planes: 2, speed: NDR}}
    devices:
      - {name: mlx5_0, kind: nic, model: CX8-2x400, pcie_switch: sw0, bus_id: "0000:19:00.0"}   # plane b missing
    """,
    good="""
    devices:
      - {name: mlx5_0, kind: nic, model: CX8-2x400, pcie_switch: sw0, bus_id: "0000:19:00.0"}   # plane 0
      - {name: mlx5_1, kind: nic, model: CX8-2x400, pcie_switch: sw0, bus_id: "0000:19:00.1"}   # plane 1
    """,
)
def planar_nic_functions(ctx: LintContext) -> Iterator[Finding]:
    """
    A multi-planar NIC shows the OS one PCI function and one InfiniBand device per plane (a twin-planar
    ConnectX-8 at 0000:19:00.0 and .1 is mlx5_0 and mlx5_1): the node model lists each as a device, and
    function f is the card's link in plane f. A card (the devices whose bus ids differ only in the function)
    that lacks a plane's function leaves that plane without the NIC's link; a function beyond the planes, or a
    card mixing models, has no plane to go to. Each device is reported where it is written.
    """
    nic_models = ctx.inventory.models.nics
    for node_name, node in ctx.inventory.models.nodes.items():
        cards: dict[str, list[tuple[int, str, int]]] = {}
        for i, dev in enumerate(node.devices):
            model = nic_models.get(dev.model)
            if dev.kind == "nic" and model and model.planes > 1:
                cards.setdefault(dev.bus_id[:-1], []).append((i, dev.model, int(dev.bus_id[-1])))
        for card, functions in cards.items():
            first, model_name, _ = functions[0]
            planes = nic_models[model_name].planes
            have = sorted(f for _, _, f in functions)
            if have != list(range(planes)) or any(m != model_name for _, m, _ in functions):
                yield Finding(
                    ("models", "nodes", node_name, "devices", first, "bus_id"),
                    f"multi-planar NIC card {card}x of node model '{node_name}' lists functions "
                    f"{', '.join(map(str, have))} ({', '.join(sorted({m for _, m, _ in functions}))}), but "
                    f"'{model_name}' feeds {plural(planes, 'plane')}: functions 0-{planes - 1}, one device each",
                    f"list one device of model '{model_name}' per plane, bus ids {card}0 to {card}{planes - 1}",
                )
