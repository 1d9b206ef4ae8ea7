"""A few lines about an inventory that linted clean: what the designer will build from it."""

from __future__ import annotations

from collections import Counter

from ffplan.design.sizing import ThreeLayerTree, TwoLayerSize
from ffplan.diagnostics import plural
from ffplan.ethernet.speeds import link_speed, used_nics
from ffplan.inventory import LoadedInventory
from ffplan.inventory.models import Role
from ffplan.lint.context import LintContext


def summarize(loaded: LoadedInventory) -> list[str]:
    ctx = LintContext(loaded)
    inv, shape, demand = ctx.inventory, ctx.zone_shape, ctx.demand
    zones = ctx.zone_names
    lines = [f"{loaded.source.file}: inventory '{inv.name}'"]
    if isinstance(shape, (TwoLayerSize, ThreeLayerTree)) and ctx.switch_model is not None:
        model = ctx.switch_model
        speed = link_speed(inv, used_nics(inv)) if inv.fabric.transport == "roce" else None
        rate = f"{speed.gbps}G Ethernet" if speed else model.speed.value
        cores = (
            f" + {plural(shape.cores, 'core')} in {plural(shape.pods, 'pod')}"
            if isinstance(shape, ThreeLayerTree)
            else ""
        )
        lines.append(
            f"  {inv.fabric.tree_key:<7} {len(zones)} ({', '.join(zones)}), each {plural(shape.leaves, 'leaf', 'leaves')} + "
            f"{plural(shape.spines, 'spine')}{cores} of "
            f"'{inv.fabric.switch_model}' ({shape.radix}-port {rate}): {shape.switches * len(zones):,} switches"
        )
        capacity = shape.endpoint_ports * len(zones)
        lines.append(
            f"  ports   {demand.total:,} of {capacity:,} leaf ports used ({demand.floating + sum(demand.pinned.values()):,} "
            f"single-attached, {demand.every_zone * len(zones):,} every-zone, {sum(demand.inter_zone.values()):,} "
            f"inter-zone ends): {capacity - demand.total:,} free"
        )
    roles = Counter(h.role for h in ctx.resolved.hosts)
    counts = ", ".join(f"{roles[role]:,} {role.value}" for role in Role if roles[role])
    lines.append(f"  hosts   {counts or 'none'}: {len(ctx.resolved.hosts):,} in {len(ctx.resolved.racks):,} racks")
    return lines
