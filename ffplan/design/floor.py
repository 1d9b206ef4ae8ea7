"""The floor plan (`floor`): how a cable between two rack positions is laid, how long it is and what it costs.
Placement prices its choices by it and cabling prices every cable by it.

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

from ffplan.catalog import CableEntry, CableType, apply_override, load_preset
from ffplan.diagnostics import InputError
from ffplan.inventory import LoadedInventory
from ffplan.inventory.models import Rack
from ffplan.plan.model import CableModel

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
        catalog = apply_override(
            catalog,
            inv.catalog,
            f"inventory {loaded.source.file}",
            loaded.collector,
            ("catalog",),
            known_nodes=set(inv.models.nodes),
            known_switches=set(inv.models.switches),
        )
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


def cable_cost(
    model: CableModel, prices: CableEntry, rack_a: Rack, u_a: float, rack_b: Rack, u_b: float
) -> tuple[float, CableType, float]:
    """(standard length, type, catalog price) of a cable between two positions."""
    length = standard_length(model, raw_length(model, rack_a, u_a, rack_b, u_b))
    kind = cable_type(model, length)
    return length, kind, prices.price(kind, length)
