"""The cabling step (`cable`): every cable, node to leaf, between zones, leaf to spine, spine to core; and how long
each is and what it costs, from the floor plan (`floor`), which placement prices its choices by as well.

Model (stated in the plan as `design.cable_model`): racks sit on a grid, `rack_pitch_m` apart within a row
and `row_pitch_m` between rows. A cable between racks drops from each device to the overhead tray
(`tray_drop_m` per end), runs the Manhattan distance along the trays, and gets `slack_m` for the service
loop. Within one rack it runs the vertical distance between the two U positions plus the slack. The length
is rounded up to the next standard length; passive copper (DAC) up to the catalog's copper reach, active
optical (AOC) beyond, each priced by the catalog (the inventory's preset, else `list-price`, with the
inventory's `catalog:` overrides).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ffplan.catalog import CableEntry, CableType, apply_override, load_preset
from ffplan.design.sizing import SizedFabric, ThreeLayerTree
from ffplan.diagnostics import InputError
from ffplan.inventory import LoadedInventory
from ffplan.inventory.models import Rack
from ffplan.plan.model import Cable, CableEnd, CableModel, Switch

if TYPE_CHECKING:
    from ffplan.design.placement import Placement

DESIGN_PRESET = "list-price"  # cable prices in a currency, so the objective weighs copper against optics


@dataclass(frozen=True)
class Floor:
    """How a cable between two rack positions is laid and priced: the floor's cable model and the catalog's prices."""

    model: CableModel
    prices: CableEntry

    def cable(self, rack_a: Rack, u_a: float, rack_b: Rack, u_b: float) -> tuple[float, CableType, float]:
        """(standard length, type, catalog price) of a cable between two positions."""
        return cable_cost(self.model, self.prices, rack_a, u_a, rack_b, u_b)


def floor(loaded: LoadedInventory) -> Floor:
    """The floor model and the catalog's cable prices for this inventory."""
    inv = loaded.inventory
    preset = (inv.catalog.preset if inv.catalog else None) or DESIGN_PRESET
    catalog = load_preset(preset)
    if inv.catalog:
        catalog = apply_override(catalog, inv.catalog, f"inventory {loaded.source.file}", loaded.collector, ("catalog",),
                                 known_nodes=set(inv.models.nodes), known_switches=set(inv.models.switches))
        if loaded.collector.has_errors:
            raise InputError(loaded.collector.items)
    model = CableModel(
        rack_pitch_m=0.6,
        row_pitch_m=2.4,
        rack_unit_m=0.0445,
        tray_drop_m=1.5,
        slack_m=1.0,
        copper_max_m=float(catalog.cables.dac_max_m.value),
        standard_lengths_m=[0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0, 30.0, 50.0, 100.0],
        prices=f"{preset} ({catalog.currency})",
    )
    return Floor(model, catalog.cables)


def raw_length(model: CableModel, rack_a: Rack, u_a: float, rack_b: Rack, u_b: float) -> float:
    if rack_a.name == rack_b.name:
        return abs(u_a - u_b) * model.rack_unit_m + model.slack_m
    horizontal = abs(rack_a.slot - rack_b.slot) * model.rack_pitch_m + abs(rack_a.row - rack_b.row) * model.row_pitch_m
    return 2 * model.tray_drop_m + horizontal + model.slack_m


def standard_length(model: CableModel, length: float) -> float:
    lengths = model.standard_lengths_m
    i = bisect.bisect_left(lengths, length - 1e-9)
    if i == len(lengths):  # beyond the catalog: round up to whole metres
        return float(math.ceil(length))
    return lengths[i]


def cable_type(model: CableModel, length: float) -> CableType:
    return "DAC" if length <= model.copper_max_m + 1e-9 else "AOC"


def cable_cost(model: CableModel, prices: CableEntry, rack_a: Rack, u_a: float, rack_b: Rack, u_b: float) -> tuple[float, CableType, float]:
    """(standard length, type, catalog price) of a cable between two positions."""
    length = standard_length(model, raw_length(model, rack_a, u_a, rack_b, u_b))
    kind = cable_type(model, length)
    return length, kind, prices.price(kind, length)


@dataclass(frozen=True)
class Cabling:
    """The cabling step's result: every cable (spine-core, leaf-spine, inter-zone, node-leaf, each kind by label) and
    their catalog price."""

    cables: list[Cable]
    cost: float


def cable(loaded: LoadedInventory, sized: SizedFabric, placement: Placement, floor: Floor) -> Cabling:
    """Every cable: node to leaf and between zones where placement put them; leaf to spine and (three layers) spine
    to core as sizing.py describes the trees: in a pod, leaf l's up-port u to spine u on its down-port l + 1; spine
    position j of every pod to the cores of group j, pod p on each core's ports p * links_per_spine_core + 1 on."""
    racks = loaded.resolved.racks
    size = sized.size
    cables: list[Cable] = []

    def lay(label: str, kind: Literal["node-leaf", "leaf-spine", "spine-core", "inter-zone"], zone: str,
            a: tuple[str, int | str, str, float], b: tuple[str, int, str, float]) -> None:
        length, cable_type, _ = floor.cable(racks[a[2]], a[3], racks[b[2]], b[3])
        cables.append(Cable(label=label, kind=kind, a=CableEnd(device=a[0], port=a[1]), b=CableEnd(device=b[0], port=b[1]),
                            length_m=length, type=cable_type, zone=zone))

    def end(switch: Switch, port: int) -> tuple[str, int, str, float]:
        return (switch.name, port, switch.rack, switch.u)

    for z, leaf, leaf_port, slot in placement.ports:
        lay(f"{leaf.name}-p{leaf_port:02d}", "node-leaf", z, (slot.host.hostname, slot.nic, slot.host.rack, slot.host.u),
            end(leaf, leaf_port))
    for (za, la, pa), (zb, lb, pb) in placement.inter_zone:
        a, b = sized.tier(za, "leaf")[la], sized.tier(zb, "leaf")[lb]
        lay(f"{a.name}-p{pa:02d}", "inter-zone", za, end(a, pa), end(b, pb))
    for z in sized.zones:
        spines = sized.tier(z, "spine")
        for li, leaf in enumerate(sized.tier(z, "leaf")):
            for u in range(size.up_ports):
                port = size.down_ports + u + 1
                if isinstance(size, ThreeLayerTree):  # one cable to each spine of its pod
                    pod, local = divmod(li, size.leaves_per_pod)
                    spine, spine_port = spines[pod * size.spines_per_pod + u], local + 1
                else:
                    spine = spines[u % size.spines]
                    spine_port = li * size.links_per_leaf_spine + u // size.spines + 1
                lay(f"{leaf.name}-p{port:02d}", "leaf-spine", z, end(leaf, port), end(spine, spine_port))
        if isinstance(size, ThreeLayerTree):
            cores = sized.tier(z, "core")
            spine_down = size.radix - size.spine_up_ports
            for si, spine in enumerate(spines):
                pod, position = divmod(si, size.spines_per_pod)
                for x in range(size.spine_up_ports):
                    port = spine_down + x + 1
                    core = cores[position * size.cores_per_group + x % size.cores_per_group]
                    core_port = pod * size.links_per_spine_core + x // size.cores_per_group + 1
                    lay(f"{spine.name}-p{port:02d}", "spine-core", z, end(spine, port), end(core, core_port))
    cables.sort(key=lambda c: (_kind_order(c.kind), c.label))
    return Cabling(cables, round(sum(floor.prices.price(c.type, c.length_m) for c in cables), 2))


def _kind_order(kind: str) -> int:
    return {"spine-core": -1, "leaf-spine": 0, "inter-zone": 1, "node-leaf": 2}[kind]
