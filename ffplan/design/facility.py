"""The room around the fabric: what each rack draws (typical and peak) and what its feeds and cooling allow.

One source for every power figure of a rack: lint (FF215, FF216) and the designer (switches kept within the
budgets, the plan's `racks`) sum the same model figures, and the cost report reads them through `model_draw`
too, so the facility view and the cost report agree. A model's typical draw is its `power_w`; its peak is
`peak_power_w`, or `power_w` when none is given (a switch has one rated figure for both).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ffplan.inventory import LoadedInventory
from ffplan.inventory.models import Cooling, Rack

if TYPE_CHECKING:  # lint reads the draws without loading the plan package
    from ffplan.plan.model import RackPower, Switch

# Heat each cooling type removes from one rack, in kW, when the rack gives no `cooling_kw`.
COOLING_LIMIT_KW: dict[Cooling, float] = {
    "air": 30.0,  # hot/cold aisles with precision air handlers: about 20-30 kW per rack (docs/facility.md)
    "rear-door": 50.0,  # rear-door heat exchanger on chilled water: a common vendor rating (docs/facility.md)
    "direct-liquid": 60.0,  # cold plates: "removes up to about 60 kW" (the GPU-server hardware guide)
}


class PoweredModel(Protocol):
    @property
    def power_w(self) -> float: ...


@dataclass(frozen=True)
class Draw:
    typical_w: float = 0.0
    peak_w: float = 0.0

    def __add__(self, other: Draw) -> Draw:
        return Draw(self.typical_w + other.typical_w, self.peak_w + other.peak_w)


def model_draw(model: PoweredModel) -> Draw:
    """A node or switch model's draw: typical `power_w`, peak `peak_power_w` or else `power_w`."""
    peak = getattr(model, "peak_power_w", 0.0)
    return Draw(model.power_w, peak or model.power_w)


@dataclass(frozen=True)
class Limit:
    """The lower of a rack's two limits, in watts, and what it is ("power budget" or "air cooling")."""

    watts: float
    what: str


def budget_w(rack: Rack) -> float | None:
    return None if rack.power_kw is None else rack.power_kw * 1000


def cooling_limit_w(rack: Rack) -> float | None:
    """The heat the rack's cooling removes: its cooling_kw, else the cooling type's default; None without cooling."""
    if rack.cooling is None:
        return None
    return (rack.cooling_kw if rack.cooling_kw is not None else COOLING_LIMIT_KW[rack.cooling]) * 1000


def rack_limits(rack: Rack) -> list[Limit]:
    """The rack's power budget and cooling limit, where given (watts)."""
    budget, cooling = budget_w(rack), cooling_limit_w(rack)
    return ([Limit(budget, "power budget")] if budget is not None else []) + (
        [Limit(cooling, f"{rack.cooling} cooling")] if cooling is not None else []
    )


def tightest(rack: Rack) -> Limit | None:
    return min(rack_limits(rack), key=lambda limit: limit.watts, default=None)


def host_draws(loaded: LoadedInventory) -> dict[str, Draw]:
    """What the hosts of each rack draw (racks without hosts are absent)."""
    models = loaded.inventory.models.nodes
    draws: dict[str, Draw] = defaultdict(Draw)
    for host in loaded.resolved.hosts:
        if host.model in models:
            draws[host.rack] = draws[host.rack] + model_draw(models[host.model])
    return dict(draws)


def kw(watts: float) -> str:
    """Watts as kW for a message, to 10 W: 25.6 kW, 0.06 kW, 30 kW."""
    text = f"{watts / 1000:,.2f}".rstrip("0").rstrip(".")
    return f"{text} kW"


def rack_powers(loaded: LoadedInventory, switches: Sequence[Switch]) -> list[RackPower]:
    """Every rack of the inventory, by row and slot, with its draw and limits: the plan's `racks`."""
    from ffplan.plan.model import RackPower

    inv = loaded.inventory
    draws = host_draws(loaded)
    nodes = Counter(h.rack for h in loaded.resolved.hosts)
    on_rack = Counter(sw.rack for sw in switches)
    for sw in switches:
        draws[sw.rack] = draws.get(sw.rack, Draw()) + model_draw(inv.models.switches[sw.model])
    out = []
    for rack in sorted(loaded.resolved.racks.values(), key=lambda r: (r.row, r.slot, r.name)):
        draw = draws.get(rack.name, Draw())
        out.append(
            RackPower(
                name=rack.name,
                row=rack.row,
                slot=rack.slot,
                units=rack.units,
                nodes=nodes[rack.name],
                switches=on_rack[rack.name],
                typical_w=draw.typical_w,
                peak_w=draw.peak_w,
                power_budget_w=budget_w(rack),
                cooling=rack.cooling,
                cooling_limit_w=cooling_limit_w(rack),
            )
        )
    return out
