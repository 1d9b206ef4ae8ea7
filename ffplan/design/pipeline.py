"""The design pipeline: size, place, cable, address (fabric), then route, QoS and host profiles."""

from __future__ import annotations

from dataclasses import dataclass

from ffplan import __version__
from ffplan.design.fabric import PhysicalDesign, build_fabric
from ffplan.design.hosts import design_hosts
from ffplan.design.qos import design_qos
from ffplan.design.routing import route
from ffplan.design.sizing import SizingError
from ffplan.diagnostics import Collector, InfeasibleError
from ffplan.inventory import LoadedInventory
from ffplan.plan.exports import cable_counts
from ffplan.plan.model import (PLAN_VERSION, Design, InventoryRef, NicModelSpec, NodeModelSpec, Plan, SolverInfo,
                               SwitchModelSpec)
from ffplan.progress import StageCallback, no_progress

@dataclass(frozen=True)
class DesignOptions:
    solver: str = "cbc"
    time_limit: float | None = None
    allow_imbalance: bool = False  # accept the best role balance the budgets allow instead of failing
    previous: Plan | None = None  # re-plan against this plan: keep what exists, move as little as possible
    exclude_links: tuple[str, ...] = ()  # cables / switches to route around, on top of fabric.failed_links


def design(loaded: LoadedInventory, options: DesignOptions = DesignOptions(), on_stage: StageCallback = no_progress) -> Plan:
    """The plan of an inventory; `on_stage` is told each of DESIGN_STAGES as it starts."""
    inv = loaded.inventory
    try:
        fabric = build_fabric(loaded, options.solver, options.time_limit, options.previous, on_stage)
    except SizingError as exc:
        c = Collector(loaded.source.file, loaded.source.positions)
        c.error("FF101", ("fabric",), exc.message, exc.hint)
        raise InfeasibleError(c.items) from None
    if not options.allow_imbalance and inv.fabric.placement == "balanced":
        _refuse_imbalance(loaded, fabric)
    p = fabric.placement
    plan = Plan(
        plan_version=PLAN_VERSION,
        generator=f"ffplan {__version__}",
        inventory=InventoryRef(name=inv.name, file=loaded.source.file.split("/")[-1], sha256=loaded.sha256),
        switch_models=[
            SwitchModelSpec(name=name, ports=m.ports, speed=m.speed.value, data_vls=m.data_vls, power_w=m.power_w,
                            rack_units=m.rack_units, vendor_id=m.vendor_id, device_id=m.device_id)
            for name, m in sorted(inv.models.switches.items())
        ],
        nic_models=[
            NicModelSpec(name=name, vendor_id=m.vendor_id, device_id=m.pci_id.split(":")[1])
            for name, m in sorted(inv.models.nics.items())
        ],
        node_models=[
            NodeModelSpec(name=name, gpus=sum(1 for dev in m.devices if dev.kind == "gpu"),
                          gpu_model=next((dev.model for dev in m.devices if dev.kind == "gpu"), None),
                          power_w=m.power_w, peak_power_w=m.peak_power_w, rack_units=m.rack_units)
            for name, m in sorted(inv.models.nodes.items())
        ],
        catalog=inv.catalog,
        fabric_switch_model=inv.fabric.switch_model,
        layout="planes" if inv.fabric.planes else "zones",
        placement=inv.fabric.placement,
        zones=fabric.zones,
        switches=fabric.switches,
        nodes=fabric.nodes,
        sm_hosts=fabric.sm_hosts,
        cables=fabric.cables,
        design=Design(
            solver=SolverInfo(solver=p.solver, status=p.status, objective=p.objective, gap=p.gap,
                              variables=p.variables, constraints=p.constraints),
            balance=fabric.balance,
            cable_model=fabric.cable_model,
            cable_cost=fabric.cable_cost,
            cable_totals={f"{kind} {length:g}m": n for kind, length, n in cable_counts(fabric.cables)},
        ),
    )
    on_stage("routing")
    routing = route(plan, options.exclude_links, loaded=loaded)
    on_stage("QoS")
    plan = plan.model_copy(update={"routing": routing, "qos": design_qos(loaded, plan)})
    # Host profiles last: they read the plan's nodes and QoS (the SLs).
    on_stage("host profiles")
    plan = plan.model_copy(update={"hosts": design_hosts(loaded, plan)})
    return plan


def _refuse_imbalance(loaded: LoadedInventory, fabric: PhysicalDesign) -> None:
    """Balance is a hard requirement: where the ILP needed slack, say which role and why, and stop."""
    c = Collector(loaded.source.file, loaded.source.positions)
    for b in fabric.balance:
        if b.max_per_leaf - b.min_per_leaf <= 1:
            continue
        group = next(i for i, g in enumerate(loaded.inventory.groups) if g.role.value == b.role)
        zones = {z.name: z.used_ports.get(b.role, 0) for z in fabric.zones}
        c.error(
            "FF152", ("groups", group),
            f"role '{b.role}' cannot be spread within one per leaf: the best placement has {b.min_per_leaf}-{b.max_per_leaf} "
            f"per leaf where {b.lower_bound}-{b.upper_bound} is the even share (per zone: "
            + ", ".join(f"{z} {n}" for z, n in zones.items()) + ")",
            "remove settings.zone pins or change counts so each zone can take an even share; "
            "or pass --allow-imbalance to accept this placement",
        )
    if c.items:
        raise InfeasibleError(c.items)

