"""The design: an inventory through an ordered list of steps to a plan.

DESIGN_STEPS is the order, and `design` runs it: each step is one module's entry and takes what the steps before
it produced (as netlab's ordered topology transformations do), per zone or plane where that applies:

  sizing        sizing.size_fabric        every zone or plane sized alike, its switches in their racks
  placement     placement.place           NIC ports and inter-zone cable ends onto leaf ports
  cabling       cabling.cable             every cable, its length, type and price
  addressing    addressing.address        GUIDs and LIDs, per subnet
  routing       routing.route             the LFTs, per subnet
  QoS           qos.design_qos            SL/VL policy
  host profiles hosts.design_hosts        per-host files' model (reads the nodes and the QoS SLs)

The physical steps (sizing to addressing) become the plan's fabric; routing, QoS and host profiles read that plan.
A RoCE fabric (`fabric.transport: roce`) shares the physical steps and then takes ROCE_STEPS' last one instead:

  Ethernet      ffplan.design.ethernet    addresses, ASNs, BGP sessions, ECMP next-hop sets, lossless QoS
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, ParamSpec, TypeVar

from ffplan import __version__
from ffplan.codes.lint import ZONE_PORT_BUDGET
from ffplan.design.addressing import Addressing, address
from ffplan.design.cabling import Cabling, cable
from ffplan.design.floor import Floor, floor
from ffplan.design.facility import rack_powers
from ffplan.design.storage import storage_target
from ffplan.design.hosts import design_hosts
from ffplan.design.placement import Placement, place
from ffplan.design.qos import design_qos
from ffplan.design.routing import route
from ffplan.design.sizing import SizingError, size_fabric
from ffplan.diagnostics import Collector, InfeasibleError
from ffplan.ethernet.speeds import fabric_radix
from ffplan.inventory import LoadedInventory
from ffplan.plan.exports import cable_counts
from ffplan.plan.model import (
    PLAN_VERSION,
    Design,
    InventoryRef,
    NicModelSpec,
    NodeModelSpec,
    Plan,
    SolverInfo,
    StorageTargetPlan,
    SwitchModelSpec,
)
from ffplan.progress import StageCallback, no_progress

DESIGN_STEPS = ("sizing", "placement", "cabling", "addressing", "routing", "QoS", "host profiles")
ROCE_STEPS = ("sizing", "placement", "cabling", "addressing", "Ethernet")


def design_steps(loaded: LoadedInventory) -> tuple[str, ...]:
    """The steps `design` runs for this inventory's transport."""
    return ROCE_STEPS if loaded.inventory.fabric.transport == "roce" else DESIGN_STEPS


P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class DesignOptions:
    solver: str = "cbc"
    time_limit: float | None = None
    allow_imbalance: bool = False  # accept the best role balance the budgets allow instead of failing
    previous: Plan | None = None  # re-plan against this plan: keep what exists, move as little as possible
    exclude_links: tuple[str, ...] = ()  # cables / switches to route around, on top of fabric.failed_links


class _Steps:
    """Runs the steps in DESIGN_STEPS order, telling the observer each as it starts."""

    def __init__(self, on_stage: StageCallback, steps: tuple[str, ...]):
        self._on_stage = on_stage
        self._order: Iterator[str] = iter(steps)

    def __call__(self, name: str, entry: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        expected = next(self._order, None)
        if name != expected:
            raise AssertionError(f"design step '{name}' run where the steps have {expected!r}")
        self._on_stage(name)
        return entry(*args, **kwargs)


def design(
    loaded: LoadedInventory, options: DesignOptions = DesignOptions(), on_stage: StageCallback = no_progress
) -> Plan:
    """The plan of an inventory; `on_stage` is told each of its design_steps as it starts."""
    step = _Steps(on_stage, design_steps(loaded))
    try:
        sized = step("sizing", size_fabric, loaded)
        cable_floor = floor(loaded)  # how placement and cabling price a cable
        placement = step(
            "placement",
            place,
            loaded,
            sized,
            cable_floor,
            options.solver,
            options.time_limit,
            options.previous,
            options.allow_imbalance,
        )
        cabling = step("cabling", cable, loaded, sized, placement, cable_floor)
        addressing = step("addressing", address, loaded, sized, placement, options.previous)
    except SizingError as exc:
        c = Collector(loaded.source.file, loaded.source.positions)
        c.error(ZONE_PORT_BUDGET, ("fabric",), exc.message, exc.hint)
        raise InfeasibleError(c.items) from None
    plan = _physical_plan(loaded, placement, cabling, addressing, cable_floor)
    if loaded.inventory.fabric.transport == "roce":
        from ffplan.design.ethernet import design_ethernet

        return plan.model_copy(update={"ethernet": step("Ethernet", design_ethernet, loaded, plan)})
    routing = step("routing", route, plan, options.exclude_links, loaded=loaded)
    plan = plan.model_copy(update={"routing": routing})
    plan = plan.model_copy(update={"qos": step("QoS", design_qos, loaded, plan)})
    return plan.model_copy(update={"hosts": step("host profiles", design_hosts, loaded, plan)})


def _physical_plan(
    loaded: LoadedInventory, placement: Placement, cabling: Cabling, addressing: Addressing, cable_floor: Floor
) -> Plan:
    """The plan of the physical steps' results, with the inventory's models and catalog, before routing."""
    inv = loaded.inventory
    p = placement.solution
    target, source = storage_target(loaded)
    roce = inv.fabric.transport == "roce"  # its Ethernet switch models have no InfiniBand speed
    return Plan(
        plan_version=PLAN_VERSION,
        generator=f"ffplan {__version__}",
        inventory=InventoryRef(name=inv.name, file=loaded.source.file.split("/")[-1], sha256=loaded.sha256),
        switch_models=[
            # ports as the fabric uses them: a RoCE switch's at the link speed (its breakout ports)
            SwitchModelSpec(
                name=name,
                ports=fabric_radix(inv) if name == inv.fabric.switch_model else m.ports,
                speed=None if roce and m.ethernet else m.speed.value,
                data_vls=m.data_vls,
                power_w=m.power_w,
                rack_units=m.rack_units,
                vendor_id=m.vendor_id,
                device_id=m.device_id,
            )
            for name, m in sorted(inv.models.switches.items())
        ],
        nic_models=[
            NicModelSpec(name=name, vendor_id=m.vendor_id, device_id=m.pci_id.split(":")[1], planes=m.planes)
            for name, m in sorted(inv.models.nics.items())
        ],
        node_models=[
            NodeModelSpec(
                name=name,
                gpus=sum(1 for dev in m.devices if dev.kind == "gpu"),
                gpu_model=next((dev.model for dev in m.devices if dev.kind == "gpu"), None),
                power_w=m.power_w,
                peak_power_w=m.peak_power_w,
                rack_units=m.rack_units,
            )
            for name, m in sorted(inv.models.nodes.items())
        ],
        catalog=inv.catalog,
        fabric_switch_model=inv.fabric.switch_model,
        layout="planes" if inv.fabric.planes else "zones",
        placement=inv.fabric.placement,
        zones=placement.zones,
        switches=addressing.switches,
        nodes=addressing.nodes,
        sm_hosts=addressing.sm_hosts,
        cables=cabling.cables,
        racks=rack_powers(loaded, addressing.switches),
        storage_target=StorageTargetPlan(gib_s_per_gpu=target, source=source),
        design=Design(
            solver=SolverInfo(
                solver=p.solver,
                status=p.status,
                objective=p.objective,
                gap=p.gap,
                variables=p.variables,
                constraints=p.constraints,
            ),
            balance=placement.balance,
            cable_model=cable_floor.model,
            cable_cost=cabling.cost,
            cable_totals={f"{kind} {length:g}m": n for kind, length, n in cable_counts(cabling.cables)},
        ),
    )
