"""The comparison designs, counted: switches per layer and cables per kind, type and length.

The plan's own design is read from a Plan (what the designer built: zones or planes, two or three layers)
or, with `--gpus`, sized with the plan's node models and layout. Everything here reads only the plan. The
comparisons are sized with `ffplan.design.sizing`: the plan's nodes on one three-layer tree, and 8-NIC
nodes on a three-layer tree, rail-optimized or in planes: the catalog's reference node (DGX-A100 against
Fire-Flyer's one-NIC PCIe nodes, as the paper compares them), or the plan's own nodes when they have a NIC
per plane or rail (HGX-class nodes: then the designs differ only in their fabric). Designs that are sized
rather than placed get the catalog's assumed cable lengths.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ffplan.catalog import CableKind, CableType, PriceCatalog, ReferenceNode, Transport
from ffplan.design.sizing import size_three_layer, size_two_layer
from ffplan.plan.optics import TWIN_PORT_SPEEDS, fabric_speed, twin_port_transceivers
from ffplan.report.model import Basis, CableLot, Network

if TYPE_CHECKING:  # the plan model loads numpy; the CLI imports this module for the design names
    from ffplan.plan.model import Plan

FIRE_FLYER, PCIE_THREE_LAYER = "plan", "plan-ft3"  # the plan's own design; the plan's nodes on a three-layer tree
RENAMED = {"fire-flyer": FIRE_FLYER, "pcie-three-layer": PCIE_THREE_LAYER}  # the names before the plan layouts
THREE_LAYER, RAIL_OPTIMIZED, MULTI_PLANE = "ft3", "rail-optimized", "mpft"  # the catalog's reference node
ROCE_BUILD, IB_BUILD = "roce", "infiniband"  # a RoCE plan's layout built with each transport's parts (catalog builds)
TRANSPORT_OF: dict[str, Transport] = {ROCE_BUILD: "roce", IB_BUILD: "infiniband"}
DESIGNS = (FIRE_FLYER, PCIE_THREE_LAYER, THREE_LAYER, RAIL_OPTIMIZED, MULTI_PLANE, ROCE_BUILD, IB_BUILD)
FROM_PLAN = (FIRE_FLYER, PCIE_THREE_LAYER, ROCE_BUILD, IB_BUILD)
DEFAULT_WITH_ROCE_PLAN = (ROCE_BUILD, IB_BUILD)  # a RoCE plan: its InfiniBand and RoCE builds side by side
DEFAULT_WITH_PLAN = (FIRE_FLYER, PCIE_THREE_LAYER, THREE_LAYER)  # the Fire-Flyer paper's Table III
DEFAULT_WITH_MULTI_NIC_PLAN = (
    FIRE_FLYER,
    THREE_LAYER,
    RAIL_OPTIMIZED,
    MULTI_PLANE,
)  # nodes with a NIC per plane or rail
DEFAULT_WITHOUT_PLAN = (THREE_LAYER, RAIL_OPTIMIZED, MULTI_PLANE)
LAYER_WORDS = {2: "two-layer", 3: "three-layer"}


@dataclass(frozen=True)
class BuildParts:
    """The NICs and transceivers of a transport build, counted (its optical runs are fibre between them)."""

    transport: str
    nic: str
    nics: int
    switch_optic: str
    switch_optics: int
    nic_optic: str
    nic_optics: int


@dataclass(frozen=True)
class DesignCounts:
    key: str
    title: str
    description: str
    basis: Basis
    gpus: int
    nodes: dict[str, int]  # compute node model -> count
    gpus_per_node: int
    fabrics: list[Network]
    notes: tuple[str, ...] = ()
    transceivers: int | None = None  # counted on the plan's own cables (bom.csv's count); None: estimated from the lots
    parts: BuildParts | None = None  # the InfiniBand and RoCE builds only


@dataclass(frozen=True)
class ClusterShape:
    """What the designs share: GPUs, compute nodes, and the NIC ports of storage and management."""

    gpus: int
    compute_nodes: dict[str, int]
    gpus_per_node: int
    compute_ports: int  # all compute NIC ports
    storage_ports: int  # all storage NIC ports (dual-homed storage: both)
    management_ports: int
    basis: Basis
    node_model: str  # the main compute node model
    nics_per_node: int  # its NIC ports
    own_nodes: bool  # the 8-NIC comparisons are built of these nodes, not of the catalog's reference node

    @property
    def access_points(self) -> int:
        return self.compute_ports + self.storage_ports + self.management_ports


def gpus_of(plan: Plan, model: str) -> int:
    spec = plan.node_model(model)
    return spec.gpus if spec else 0


def gpu_model_of(plan: Plan, model: str) -> str | None:
    spec = plan.node_model(model)
    return spec.gpu_model if spec else None


def shape_from_plan(plan: Plan) -> ClusterShape:
    compute = Counter(n.model for n in plan.nodes if n.role == "compute")
    ports: Counter[str] = Counter()
    for node in plan.nodes:
        ports[node.role] += len(node.ports)
    gpus = sum(count * gpus_of(plan, model) for model, count in compute.items())
    per_node = max((gpus_of(plan, m) for m in compute), default=0)
    model, nics = _main_compute_model(plan)
    return ClusterShape(
        gpus,
        dict(sorted(compute.items())),
        per_node,
        ports["compute"],
        ports["storage"],
        ports["management"],
        "plan",
        model,
        nics,
        nics > 1,
    )


def _main_compute_model(plan: Plan) -> tuple[str, int]:
    """The compute node model most nodes have, and its NIC ports."""
    compute_nodes = [n for n in plan.nodes if n.role == "compute"]
    model = Counter(n.model for n in compute_nodes).most_common(1)[0][0]
    return model, next(len(n.ports) for n in compute_nodes if n.model == model)


def shape_for_gpus(plan: Plan, gpus: int) -> ClusterShape:
    """The plan's node models at another GPU count: its main compute model, as many nodes as the GPUs
    need; storage and management NIC ports as in the plan."""
    model, nic_ports = _main_compute_model(plan)
    per_node = gpus_of(plan, model)
    nodes = math.ceil(gpus / per_node)

    def ports(role: str) -> int:
        return sum(len(n.ports) for n in plan.nodes if n.role == role)

    return ClusterShape(
        gpus,
        {model: nodes},
        per_node,
        nodes * nic_ports,
        ports("storage"),
        ports("management"),
        "sizing",
        model,
        nic_ports,
        nic_ports > 1,
    )


def shape_of_reference(catalog: PriceCatalog, gpus: int) -> ClusterShape:
    """No plan: the catalog's reference node for `gpus`, no storage or management ports."""
    ref = catalog.reference
    nodes = math.ceil(gpus / ref.gpus)
    return ClusterShape(
        gpus,
        {catalog.reference_node: nodes},
        ref.gpus,
        nodes * ref.compute_nics,
        0,
        0,
        "sizing",
        catalog.reference_node,
        ref.compute_nics,
        False,
    )


def _lot(kind: CableKind, count: int, length_m: float, catalog: PriceCatalog) -> CableLot:
    return CableLot(kind=kind, type=catalog.cables.type_for(length_m), length_m=length_m, count=count)


def _merge(lots: list[CableLot]) -> list[CableLot]:
    counts: Counter[tuple[CableKind, CableType, float]] = Counter()
    for lot in lots:
        counts[(lot.kind, lot.type, lot.length_m)] += lot.count
    order = {"node-leaf": 0, "leaf-spine": 1, "spine-core": 2, "inter-zone": 3}
    return [
        CableLot(kind=k, type=t, length_m=m, count=n)
        for (k, t, m), n in sorted(counts.items(), key=lambda kv: (order[kv[0][0]], kv[0][1], kv[0][2]))
        if n
    ]


def is_fire_flyer(plan: Plan) -> bool:
    """Fire-Flyer 2's shape: two-layer zones of one subnet, one NIC port per compute node."""
    return (
        plan.layout == "zones"
        and all(z.layers == 2 for z in plan.zones)
        and all(len(n.ports) == 1 for n in plan.nodes if n.role == "compute")
    )


def is_multi_plane(plan: Plan) -> bool:
    """DeepSeek-V3's MPFT shape: planes of two-layer trees."""
    return plan.layout == "planes" and all(z.layers == 2 for z in plan.zones)


def layout_name(plan: Plan) -> str:
    """ "8 two-layer planes of 2,048 ports", "1 three-layer zone, 4 pods": what the plan's trees are."""
    trees = plan.zones
    word = "plane" if plan.layout == "planes" else "zone"
    layers = " and ".join(LAYER_WORDS[n] for n in sorted({z.layers for z in trees}))
    name = f"{len(trees)} {layers} {word}{'' if len(trees) == 1 else 's'}"
    pods = sorted({z.pods for z in trees if z.layers == 3})
    ports = {z.endpoint_ports for z in trees}
    if pods:
        return name + f", {'/'.join(map(str, pods))} pods" + (" each" if len(trees) > 1 else "")
    return name + (f" of {ports.pop():,} ports" if len(ports) == 1 else "")


def _plan_title(plan: Plan, fabric: Network, sized: bool) -> str:
    if is_fire_flyer(plan):
        return "Fire-Flyer (sized)" if sized else "Fire-Flyer (this plan)"
    return f"this plan{' (sized)' if sized else ''}: {fabric.name}"


def _plan_description(plan: Plan, shape: ClusterShape, fabric: Network, sized: bool) -> str:
    subnets = (
        "a subnet each, NIC i of a node in plane i"
        if plan.layout == "planes"
        else "one subnet" + (", dual-homed storage" if shape.storage_ports else "")
    )
    nics = f"{shape.nics_per_node} NIC port{'' if shape.nics_per_node == 1 else 's'} per compute node"
    planes = {m.name: m.planes for m in plan.nic_models}
    node = next((n for n in plan.nodes if n.role == "compute" and n.model == shape.node_model), None)
    cards = {p.sysimg_guid for p in node.ports} if node else set()
    if node and any(
        planes.get(p.nic_model, 1) > 1 for p in node.ports
    ):  # a multi-planar NIC is one card, a port per plane
        nics += f" on {len(cards)} multi-planar NICs (one cage and transceiver each)"
    basis = "sized for the GPUs, not placed" if sized else "counted from the plan"
    return f"{fabric.name} ({subnets}), {nics}, {plan.placement} placement; {basis}"


def _switch_model(plan: Plan) -> tuple[str, int]:
    """The plan's fabric switch model and its radix."""
    model = plan.fabric_switch_model
    return model, next(s.ports for s in plan.switch_models if s.name == model)


def _plan_counts(
    plan: Plan,
    shape: ClusterShape,
    fabric: Network,
    *,
    sized: bool,
    notes: tuple[str, ...] = (),
    transceivers: int | None = None,
) -> DesignCounts:
    """The plan's design: as built (`sized` False, counted from the plan) or re-sized for `shape`'s GPUs."""
    return DesignCounts(
        FIRE_FLYER,
        _plan_title(plan, fabric, sized=sized),
        _plan_description(plan, shape, fabric, sized=sized),
        "sizing" if sized else "plan",
        shape.gpus,
        shape.compute_nodes,
        shape.gpus_per_node,
        [fabric],
        notes,
        transceivers,
    )


def plan_design(plan: Plan, shape: ClusterShape) -> DesignCounts:
    """The plan's own design as built: switches by tier, every cable with its kind, type and length."""
    model, radix = _switch_model(plan)
    tiers = Counter(s.tier for s in plan.switches)
    lots = _merge([CableLot(kind=c.kind, type=c.type, length_m=c.length_m, count=1) for c in plan.cables])
    layers = max(z.layers for z in plan.zones)
    fabric = Network(
        name=layout_name(plan),
        topology=LAYER_WORDS[layers],
        basis="plan",
        access_points=shape.access_points,
        switch_model=model,
        radix=radix,
        switches={layer: tiers[layer] for layer in ("leaf", "spine", "core")},
        cables=lots,
    )
    speed = fabric_speed(plan)
    transceivers = twin_port_transceivers(plan, speed).total if speed in TWIN_PORT_SPEEDS else None
    return _plan_counts(plan, shape, fabric, sized=False, transceivers=transceivers)


def plan_design_sized(plan: Plan, shape: ClusterShape, catalog: PriceCatalog) -> DesignCounts:
    """The plan's layout at `shape`'s GPUs (sizing only, no placement): as many planes as it has, each sized
    for its share of the ports; one three-layer tree; or zones of its shape, as many as the ports need."""
    model, radix = _switch_model(plan)
    if plan.layout == "planes":
        planes = len(plan.zones)
        fabric = multi_plane(model, radix, planes, math.ceil(shape.access_points / planes), catalog)
        notes: tuple[str, ...] = ()
    elif plan.zones[0].layers == 3:
        fabric = tree("one three-layer tree", model, radix, shape.access_points, catalog, three_layers=True)
        notes = ()
    else:
        fabric, notes = _zones_sized(plan, shape, model, radix, catalog)
    return _plan_counts(plan, shape, fabric, sized=True, notes=notes)


def _zones_sized(
    plan: Plan, shape: ClusterShape, model: str, radix: int, catalog: PriceCatalog
) -> tuple[Network, tuple[str, ...]]:
    """Two-layer zones of the plan's shape, as many as the ports (NICs and inter-zone link ends) need."""
    zone = plan.zones[0]  # every zone of a plan has the same shape
    planned = len(plan.zones)
    inter_zone = sum(1 for c in plan.cables if c.kind == "inter-zone")
    ports = shape.access_points + 2 * inter_zone
    zones = max(planned, math.ceil(ports / zone.endpoint_ports))
    notes: tuple[str, ...] = ()
    if zones > planned:
        notes = (
            f"This plan's layout: {ports:,} ports (NICs and inter-zone link ends) exceed the plan's "
            f"{planned} zones of {zone.endpoint_ports:,}, so the sized design has {zones} zones.",
        )
    lengths = catalog.sized_lengths
    lots = [
        _lot("node-leaf", shape.access_points, lengths.node_leaf_m.value, catalog),
        _lot("leaf-spine", zones * zone.leaves * zone.up_ports, lengths.leaf_spine_m.value, catalog),
        _lot("inter-zone", inter_zone, lengths.leaf_spine_m.value, catalog),
    ]
    fabric = Network(
        name=f"{zones} two-layer zones of {zone.endpoint_ports:,} ports",
        topology="two-layer",
        basis="sizing",
        access_points=shape.access_points,
        switch_model=model,
        radix=radix,
        switches={"leaf": zones * zone.leaves, "spine": zones * zone.spines, "core": 0},
        cables=_merge(lots),
    )
    return fabric, notes


def tree(
    name: str,
    switch_model: str,
    radix: int,
    access_points: int,
    catalog: PriceCatalog,
    node_leaf: list[CableLot] | None = None,
    three_layers: bool = False,
    sized_ports: int | None = None,
) -> Network:
    """A non-blocking fat-tree for `access_points`: two layers when one zone holds them (unless
    `three_layers`), else three. `node_leaf` replaces the assumed node cables with known ones; `sized_ports`
    (default `access_points`) is what the leaves are sized for, when whole units are built (rail-optimized)."""
    lengths = catalog.sized_lengths
    ports = sized_ports or access_points
    lots = node_leaf or [_lot("node-leaf", access_points, lengths.node_leaf_m.value, catalog)]
    if not three_layers and ports <= size_two_layer(radix).endpoint_ports:
        two = size_two_layer(radix, 1.0, ports)
        switches = {"leaf": two.leaves, "spine": two.spines, "core": 0}
        lots = lots + [_lot("leaf-spine", two.leaf_spine_links, lengths.leaf_spine_m.value, catalog)]
    else:
        three = size_three_layer(radix, ports)
        switches = {"leaf": three.leaves, "spine": three.spines, "core": three.cores}
        lots = lots + [
            _lot("leaf-spine", three.links["leaf-spine"], lengths.leaf_spine_m.value, catalog),
            _lot("spine-core", three.links["spine-core"], lengths.spine_core_m.value, catalog),
        ]
    topology = "three-layer" if switches["core"] else "two-layer"
    return Network(
        name=name,
        topology=topology,
        basis="sizing",
        access_points=access_points,
        switch_model=switch_model,
        radix=radix,
        switches=switches,
        cables=_merge(lots),
    )


def pcie_three_layer(
    shape: ClusterShape, switch_model: str, radix: int, catalog: PriceCatalog, node_leaf: list[CableLot] | None
) -> DesignCounts:
    """The same nodes and NIC ports on one three-layer tree. With a plan, the node cables are the plan's:
    same nodes, same leaf positions; only the layers above the leaves change."""
    fabric = tree("three-layer tree", switch_model, radix, shape.access_points, catalog, node_leaf, three_layers=True)
    own = shape.own_nodes  # HGX-class nodes are not the paper's PCIe nodes
    return DesignCounts(
        PCIE_THREE_LAYER,
        "same nodes, three-layer" if own else "PCIe three-layer",
        f"the same {'' if own else 'PCIe '}nodes and NIC ports on one three-layer fat-tree",
        "sizing",
        shape.gpus,
        shape.compute_nodes,
        shape.gpus_per_node,
        [fabric],
    )


def multi_plane(switch_model: str, radix: int, planes: int, nodes: int, catalog: PriceCatalog) -> Network:
    """`planes` independent fat-trees (NIC i of every node in plane i, no links between planes), each
    sized for `nodes` endpoints: two layers while they fit (k*k/2), else three."""
    plane = tree("plane", switch_model, radix, nodes, catalog)
    return plane.model_copy(
        update={
            "name": f"{planes} {plane.topology} planes of {nodes:,} ports",
            "access_points": planes * nodes,
            "switches": {layer: planes * count for layer, count in plane.switches.items()},
            "cables": [lot.model_copy(update={"count": planes * lot.count}) for lot in plane.cables],
        }
    )


def rail_optimized(
    switch_model: str, radix: int, rails: int, nodes: int, catalog: PriceCatalog, extra_ports: int = 0
) -> Network:
    """DGX SuperPOD style: scalable units of k/2 nodes, NIC i of every node in a unit to the unit's rail-i
    leaf (rails leaves per unit, one down-port per node); above the leaves one fat-tree, two layers while
    the leaves fit (at most k), else three. Leaves come in whole units, a partial unit included; `extra_ports`
    (storage and management ports, rail_free_ports) sit in the units' free places."""
    unit = radix // 2
    units = math.ceil(nodes / unit)
    return tree(
        f"rail-optimized tree, {units} scalable units of {unit} nodes x {rails} rails",
        switch_model,
        radix,
        nodes * rails + extra_ports,
        catalog,
        sized_ports=units * unit * rails,
    )


def rail_free_ports(radix: int, rails: int, nodes: int) -> int:
    """Leaf ports the whole units leave free beside `nodes` nodes of `rails` ports: where the plan puts nodes with
    fewer ports than rails (UFM appliances, storage), as placement shares a unit place among them."""
    unit = radix // 2
    return (math.ceil(nodes / unit) * unit - nodes) * rails


LAYOUTS = {  # layout -> (title, description)
    THREE_LAYER: ("three-layer", "one three-layer fat-tree of all compute NICs"),
    RAIL_OPTIMIZED: (
        "rail-optimized",
        "rail-optimized, scalable units of k/2 nodes with NIC i on the unit's rail-i leaf",
    ),
    MULTI_PLANE: ("multi-plane", "multi-plane, NIC i in plane i, each plane an independent fat-tree"),
}


def comparison_node(shape: ClusterShape, catalog: PriceCatalog) -> tuple[str, ReferenceNode]:
    """The nodes the 8-NIC designs are built of: the plan's own when they have a NIC per plane or rail
    (all their NICs on the compute fabric), else the catalog's reference node."""
    if not shape.own_nodes:
        return catalog.reference_node, catalog.reference
    entry = catalog.nodes.get(shape.node_model)
    title = entry.title if entry and entry.title else shape.node_model
    return shape.node_model, ReferenceNode(title, shape.gpus_per_node, shape.nics_per_node, 0)


def reference_design(
    layout: str, shape: ClusterShape, switch_model: str, radix: int, catalog: PriceCatalog
) -> DesignCounts:
    """The comparison node (`comparison_node`: DGX-A100, HGX-H800, or the plan's own) for the same GPUs,
    its compute NICs in `layout`, and a storage fabric for its storage NICs plus the shape's storage and
    management ports (the Fire-Flyer fabric carries storage in-band, so the other cluster must carry it
    somewhere too)."""
    model, ref = comparison_node(shape, catalog)
    nodes = math.ceil(shape.gpus / ref.gpus)
    compute_ports = nodes * ref.compute_nics
    storage_points = nodes * ref.storage_nics + shape.storage_ports + shape.management_ports
    if layout == THREE_LAYER:
        compute = tree("compute tree", switch_model, radix, compute_ports, catalog, three_layers=True)
    elif layout == RAIL_OPTIMIZED:
        # the plan's own rail-optimized nodes: its storage and management ports fill the units' free places, as
        # the plan puts them (a separate fabric for them counted switches the plan does not have)
        shared = shape.own_nodes and 0 < storage_points <= rail_free_ports(radix, ref.compute_nics, nodes)
        compute = rail_optimized(switch_model, radix, ref.compute_nics, nodes, catalog, storage_points if shared else 0)
        storage_points = 0 if shared else storage_points
    else:
        compute = multi_plane(switch_model, radix, ref.compute_nics, nodes, catalog)
    fabrics = [compute]
    if storage_points:
        fabrics.append(tree("storage fabric", switch_model, radix, storage_points, catalog))
    title, description = LAYOUTS[layout]
    return DesignCounts(
        layout,
        f"{ref.title} {title}",
        ("the plan's nodes, " if shape.own_nodes else "") + f"{ref.gpus} GPUs, {ref.compute_nics} compute + "
        f"{ref.storage_nics} storage NICs per node; {description}"
        + ("; separate storage fabric" if storage_points else ""),
        "sizing",
        nodes * ref.gpus,
        {model: nodes},
        ref.gpus,
        fabrics,
    )


class BuildError(ValueError):
    """A transport build the report cannot make: no RoCE plan, or no build in the catalog at the plan's speed."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.message, self.hint = message, hint


def transport_build(key: str, plan: Plan, shape: ClusterShape, catalog: PriceCatalog) -> DesignCounts:
    """A RoCE plan's layout (its planes, or one tree) for the same NIC ports, built of one transport's parts at the
    plan's link speed (the catalog's `builds`): switches sized for the build switch's radix, the catalog's sized
    cable lengths, a NIC per NIC port, a transceiver per switch cage with an optical port and per optical NIC port.
    The RoCE and InfiniBand builds follow the same rules, so they differ only in what they are built of."""
    transport = TRANSPORT_OF[key]
    if plan.ethernet is None:
        raise BuildError(
            f"the {key} build compares a RoCE plan's transports, and this plan is InfiniBand",
            "compare it with plan, plan-ft3, ft3, rail-optimized or mpft",
        )
    gbps = plan.ethernet.link_gbps
    build = catalog.builds.get(transport, {}).get(gbps)
    if build is None:
        raise BuildError(
            f"catalog '{catalog.name}' has no {transport} build at {gbps}G",
            "use --preset list-price, whose builds give both transports at 400G",
        )
    radix = catalog.switches[build.switch].ports
    assert radix is not None  # PriceCatalog._builds_are_complete
    planes = len(plan.zones) if plan.layout == "planes" else 1
    if planes > 1:
        fabric = multi_plane(build.switch, radix, planes, math.ceil(shape.access_points / planes), catalog)
    else:
        fabric = tree(f"{LAYER_WORDS[2]} tree", build.switch, radix, shape.access_points, catalog)
    optical = {
        kind: sum(lot.count for lot in fabric.cables if lot.type == "AOC" and lot.kind == kind)
        for kind in ("node-leaf", "leaf-spine", "spine-core", "inter-zone")
    }
    nic_optics = optical["node-leaf"]
    switch_ports = nic_optics + 2 * (optical["leaf-spine"] + optical["spine-core"] + optical["inter-zone"])
    parts = BuildParts(
        transport,
        build.nic,
        shape.access_points,
        build.switch_optic,
        math.ceil(switch_ports / build.ports_per_cage),
        build.nic_optic,
        nic_optics,
    )
    name = "RoCE" if transport == "roce" else "InfiniBand"
    return DesignCounts(
        key,
        f"{name} build: {build.switch}",
        f"{fabric.name} of {build.switch} ({radix} ports at {gbps}G), "
        f"{build.nic} NICs, optics per cage; the plan's layout, sized",
        "sizing",
        shape.gpus,
        shape.compute_nodes,
        shape.gpus_per_node,
        [fabric],
        transceivers=parts.switch_optics + parts.nic_optics,
        parts=parts,
    )
