"""FF215, FF216: racks whose peak draw exceeds their power budget or what their cooling removes.

They sit in the FF2xx group with the other rules that hosts must fit their racks (FF205-FF207). A rack's draw is
its hosts' and, as the designer racks them, its switches' (ffplan.design.facility: one source for lint, the
plan's `racks` and `ffplan report facility`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ffplan.codes import lint as codes
from ffplan.design.facility import budget_w, cooling_limit_w, kw
from ffplan.diagnostics import Severity
from ffplan.inventory.models import Rack
from ffplan.lint.context import LintContext
from ffplan.lint.declare import Finding, rule


def _over(
    ctx: LintContext, limit_of: Callable[[Rack], float | None], field: str, what: Callable[[Rack], str], hint: str
) -> Iterator[Finding]:
    for name, (draw, nodes, switches) in sorted(ctx.rack_draws.items()):
        rack = ctx.resolved.racks.get(name)
        limit = limit_of(rack) if rack else None
        if rack is None or limit is None or draw.peak_w <= limit:
            continue
        written = field if getattr(rack, field) is not None else "cooling"
        yield Finding(
            ctx.resolved.rack_paths[name] + (written,),
            f"rack '{name}' draws {kw(draw.peak_w)} at peak ({kw(draw.typical_w)} typical; {nodes} nodes, "
            f"{switches} switches), over its {what(rack)} of {kw(limit)} by {kw(draw.peak_w - limit)}",
            hint,
        )


@rule(
    codes.RACK_OVER_POWER_BUDGET,
    Severity.ERROR,
    bad="""
    racks: [{name: r1, row: 1, slot: 2, power_kw: 20}]
    groups: [{name: gpu, role: compute, model: gpu-node, count: 8, racks: [r1], per_rack: 8}]  # 8 x 3.2 kW
    """,
    good="""
    racks: [{name: r1, row: 1, slot: 2, power_kw: 30}]        # 25.6 kW at peak fits
    """,
)
def rack_over_power_budget(ctx: LintContext) -> Iterator[Finding]:
    """
    `power_kw` on a rack or rack block is what its feeds (PDUs, breakers) deliver. The rack's peak draw is
    the sum over its hosts of the node model's `peak_power_w` (its `power_w` when no peak is given) plus
    its switches' `power_w`, as the designer places them. A rack over its budget trips a breaker at full
    load; the message gives the peak, the typical draw, what is in the rack and the excess.
    """
    yield from _over(
        ctx,
        budget_w,
        "power_kw",
        lambda _: "power budget",
        "put fewer hosts in the rack (per_rack), spread them over more racks, or raise power_kw",
    )


@rule(
    codes.RACK_OVER_COOLING_LIMIT,
    Severity.ERROR,
    bad="""
    racks: [{name: r1, row: 1, slot: 2, cooling: air}]       # 30 kW
    groups: [{name: gpu, role: compute, model: hgx, count: 4, racks: [r1], per_rack: 4}]   # 4 x 10.2 kW
    """,
    good="""
    racks: [{name: r1, row: 1, slot: 2, cooling: direct-liquid}]   # 60 kW
    """,
)
def rack_over_cooling_limit(ctx: LintContext) -> Iterator[Finding]:
    """
    Every watt a rack draws becomes heat its cooling must remove. `cooling` is air, rear-door (a
    heat exchanger in the rear door) or direct-liquid (cold plates); the limit is `cooling_kw` when given,
    else the type's default: air 30 kW, rear-door 50 kW, direct-liquid 60 kW. The GPU-server hardware
    guide puts dense 8-GPU racks at 60-100 kW and direct liquid cooling at up to about 60 kW;
    docs/facility.md gives the sources.
    """
    yield from _over(
        ctx,
        cooling_limit_w,
        "cooling_kw",
        lambda rack: f"{rack.cooling} cooling",
        "move hosts to other racks, or give the rack a cooling that removes more (rear-door, direct-liquid)",
    )
