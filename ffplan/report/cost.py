"""The cost report: the comparison designs counted, priced (ffplan.report.pricing) and held against each other and
the papers (ffplan.report.checks), with the catalog of ffplan.report.catalog.

Public surface: `build_report(...)`, `ComparisonError`. Everything is read from the Plan; never from the inventory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ffplan.catalog import PriceCatalog
from ffplan.codes.report import PLAN_WITHOUT_NODE_MODELS
from ffplan.design.sizing import SizingError
from ffplan.diagnostics import COMMAND_LINE, Collector, InputError
from ffplan.plan.model import Plan
from ffplan.report import designs as d
from ffplan.report.catalog import Location, plan_location
from ffplan.report.checks import fabric_checks, paper_checks, ratios
from ffplan.report.model import CostReport, DesignReport, PaperCheck, SourceLine
from ffplan.plan.optics import AOC_OPTICAL_ENDS, TWIN_PORT_SPEEDS, fabric_speed
from ffplan.report.pricing import Baseline, EnergyOptions, Pricer, design_report, price_design


class ComparisonError(ValueError):
    """A comparison the command line asked for cannot be built (no plan for it, or too big for the switch)."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.message, self.hint = message, hint


def build_report(
    plan: Plan | None,
    catalog: PriceCatalog,
    gpus: int | None = None,
    energy: EnergyOptions | None = None,
    input_name: str = "",
    where: Location | None = None,
    compare: Sequence[str] | None = None,
) -> CostReport:
    """The designs named in `compare` at the plan's GPU count, or at `gpus` (sizing only, with the plan's node
    models and layout). Default: the plan's design, its nodes on a three-layer tree and the reference node's
    three-layer design (the Fire-Flyer paper's Table III); for a plan whose nodes have a NIC per plane or
    rail, the plan's design and its nodes three-layer, rail-optimized and multi-plane; without a plan, the
    reference node three-layer, rail-optimized and multi-plane. Without a plan, `gpus` is required and the
    catalog's fabric switch sizes every design.

    A figure the catalog lacks leaves the totals that need it None and is listed in `unpriced` and, located by
    `where` (default: in the plan, named by `input_name`), in `warnings`. Raises ComparisonError for a
    design that needs a plan without one, or does not fit the switch's radix."""
    if plan is None and compare and (needs := [key for key in compare if key in d.FROM_PLAN]):
        raise ComparisonError(
            f"{', '.join(needs)} compare{'s' if len(needs) == 1 else ''} the inventory's own design, "
            "and no INPUT was given",
            f"give an inventory or plan as INPUT, or compare {', '.join(d.DESIGNS[2:])}",
        )
    if plan is not None:
        _require_node_models(plan, input_name)
    pricer = Pricer(catalog, plan)
    if plan is None:
        if gpus is None:
            raise ComparisonError(
                "without a plan, the GPU count sizes the designs, and none was given",
                "give an inventory or plan as INPUT, or --gpus N",
            )
        switch_model = catalog.fabric_switch
        radix = catalog.fabric_radix
        shape = d.shape_of_reference(catalog, gpus)
    else:
        switch_model = plan.fabric_switch_model
        radix = next(s.ports for s in plan.switch_models if s.name == switch_model)
        shape = d.shape_from_plan(plan) if gpus is None else d.shape_for_gpus(plan, gpus)
    if not compare:
        compare = (
            d.DEFAULT_WITHOUT_PLAN
            if plan is None
            else d.DEFAULT_WITH_ROCE_PLAN
            if plan.ethernet is not None
            else d.DEFAULT_WITH_MULTI_NIC_PLAN
            if shape.own_nodes
            else d.DEFAULT_WITH_PLAN
        )
    fire_flyer_plan = plan is not None and d.is_fire_flyer(plan)
    counts = [_counts(key, plan, shape, switch_model, radix, catalog, from_plan=gpus is None) for key in compare]
    ref = catalog.reference
    priced = {c.key: price_design(c, pricer) for c in counts}
    ref_price = pricer.node_price(catalog.reference_node)
    three_layer = priced.get(d.THREE_LAYER)
    base = Baseline(
        None if ref_price is None else ref_price / ref.gpus,
        three_layer.money.total / three_layer.counts.gpus if three_layer and three_layer.money.total else None,
    )
    speeds: dict[str, str] = {m.name: m.speed for m in plan.switch_models if m.speed} if plan else {}
    reports = [design_report(priced[c.key], base, catalog, energy, speeds) for c in counts]
    by_key = {r.key: r for r in reports}
    checks: list[PaperCheck] = []
    if d.FIRE_FLYER in by_key and fire_flyer_plan:
        ft3 = by_key.get(d.THREE_LAYER)
        checks += paper_checks(sum(ft3.fabrics[1].switches.values()) if ft3 and len(ft3.fabrics) > 1 else None)
    if plan is None or not fire_flyer_plan or {d.RAIL_OPTIMIZED, d.MULTI_PLANE} & by_key.keys():
        checks += fabric_checks(pricer)
    others = ", ".join(r.title for r in reports if r.key != d.FIRE_FLYER)
    fire_flyer = next((c for c in counts if c.key == d.FIRE_FLYER), None)
    return CostReport(
        title=f"Cost: {f'{plan.inventory.name} versus ' if plan and fire_flyer else ''}{others} at {shape.gpus:,} GPUs",
        input=input_name or (plan.inventory.file if plan else "command line"),
        inventory=plan.inventory.name if plan else "",
        basis=shape.basis,
        gpus=shape.gpus,
        catalog=catalog.name,
        currency=catalog.currency,
        relative_units=catalog.relative_units,
        designs=reports,
        ratios=ratios(by_key, plan),
        paper_checks=checks,
        notes=_unpriced_notes(pricer)
        + _notes(catalog, shape, fire_flyer, by_key, gpus is None, energy, fabric_speed(plan) if plan else None)
        + sorted(set(pricer.notes)),
        unpriced=[message for _, message, _ in pricer.missing],
        warnings=pricer.warnings(where or _default_location(plan, input_name)) if pricer.missing else [],
        sources=[
            SourceLine(key=key, value=f.value, source=f.source, assumption=f.assumption, note=f.note)
            for key, f in catalog.figures()
        ],
    )


def _counts(
    key: str,
    plan: Plan | None,
    shape: d.ClusterShape,
    switch_model: str,
    radix: int,
    catalog: PriceCatalog,
    from_plan: bool,
) -> d.DesignCounts:
    """One design, counted; a SizingError (the GPUs do not fit the radix) becomes a ComparisonError."""
    try:
        if key == d.FIRE_FLYER:
            assert plan is not None, "build_report refuses the designs FROM_PLAN without a plan"
            return d.plan_design(plan, shape) if from_plan else d.plan_design_sized(plan, shape, catalog)
        if key == d.PCIE_THREE_LAYER:
            node_cables = None
            if from_plan:
                assert plan is not None, (
                    "build_report refuses the designs FROM_PLAN without a plan"
                )  # same nodes, same leaves: the plan's node cables
                node_cables = [lot for lot in d.plan_design(plan, shape).fabrics[0].cables if lot.kind == "node-leaf"]
            return d.pcie_three_layer(shape, switch_model, radix, catalog, node_cables)
        if key in d.TRANSPORT_OF:
            assert plan is not None, "build_report refuses the designs FROM_PLAN without a plan"
            return d.transport_build(key, plan, shape, catalog)
        return d.reference_design(key, shape, switch_model, radix, catalog)
    except SizingError as exc:
        raise ComparisonError(f"{key} at {shape.gpus:,} GPUs: {exc.message}", exc.hint) from None
    except d.BuildError as exc:
        raise ComparisonError(exc.message, exc.hint) from None


def _default_location(plan: Plan | None, input_name: str) -> Location:
    if plan is None:  # a catalog model without a price: the preset or --catalog names it
        return Location(COMMAND_LINE, dict, lambda kind, name: ("--preset",))
    return plan_location(plan, Path(input_name) if input_name else None)


def _require_node_models(plan: Plan, input_name: str) -> None:
    """A plan of an older ffplan has no node models: say so rather than count 0 GPUs."""
    missing = sorted({n.model for n in plan.nodes} - {m.name for m in plan.node_models})
    if missing:
        c = Collector(input_name or f"plan of {plan.inventory.file}")
        c.error(
            PLAN_WITHOUT_NODE_MODELS,
            ("node_models",),
            f"the plan does not describe node model{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            "(a plan written by an older ffplan?)",
            "re-run `ffplan design`: the report reads GPUs and power of the node models from the plan",
        )
        raise InputError(c.items)


def _unpriced_notes(pricer: Pricer) -> list[str]:
    if not pricer.missing:
        return []
    return [
        f"Unpriced: {'; '.join(message for _, message, _ in pricer.missing)}. Totals that need these figures show "
        f"n/a; {pricer.missing[0][2]}."
    ]


def _notes(
    catalog: PriceCatalog,
    shape: d.ClusterShape,
    fire_flyer: d.DesignCounts | None,
    by_key: dict[str, DesignReport],
    from_plan: bool,
    energy: EnergyOptions | None,
    speed: str | None,
) -> list[str]:
    lengths = catalog.sized_lengths
    _, node = d.comparison_node(shape, catalog)
    pcie_keeps_cables = from_plan and d.PCIE_THREE_LAYER in by_key
    notes = [
        "Servers are the GPU compute nodes; storage and management servers are the same in every design and are "
        "left out of cost and power, as in the paper's Table III.",
        f"Cables: DAC up to {catalog.cables.dac_max_m.value:g} m, AOC beyond. An AOC has its transceivers built in, so "
        f"none are priced separately; 'transceivers' counts those built-in optical ends ({AOC_OPTICAL_ENDS} per AOC)."
        if speed not in TWIN_PORT_SPEEDS
        else f"Cables: DAC up to {catalog.cables.dac_max_m.value:g} m, optical beyond, priced as the catalog's AOC. At {speed} an "
        "optical run is fibre between twin-port transceivers: 'transceivers' counts one per switch cage of 2 ports and "
        "one per NIC cage (a multi-planar NIC's planes share one), for the plan's design from its cables as bom.csv "
        "does, for the sized designs two optical switch ends to a cage.",
        "Switch power is the switch model's rated figure, counted for average and peak alike.",
        f"Sized designs assume cable lengths of {lengths.node_leaf_m.value:g} m node-leaf, "
        f"{lengths.leaf_spine_m.value:g} m leaf-spine and {lengths.spine_core_m.value:g} m spine-core"
        + (
            " (the PCIe three-layer tree keeps the plan's node cables: same nodes, same leaves)."
            if pcie_keeps_cables
            else "."
        ),
        "Endpoints are the NIC ports a design connects; 'network per endpoint' is its network price over them "
        "(DeepSeek-V3 Table 3's cost per endpoint). 'Switch-to-switch links' are the cables between switches, "
        "the links Table 3 counts.",
        "Cost-performance is relative GEMM performance over relative server price per GPU (the paper's Table II); "
        f"'with network' uses the total price per GPU instead, against the {node.title} three-layer design.",
    ]
    if {d.THREE_LAYER, d.RAIL_OPTIMIZED, d.MULTI_PLANE} & by_key.keys():
        storage = any(len(r.fabrics) > 1 for key, r in by_key.items() if key in d.LAYOUTS)
        whose = (
            f"{node.title}: the plan's own compute nodes, their {node.compute_nics} NICs on the compute fabric "
            "(one per rail or plane); "
            if shape.own_nodes
            else f"{node.title}: {node.compute_nics} compute NICs per node on the compute fabric (three-layer: the "
            "Fire-Flyer paper's access points); "
        )
        notes.append(
            whose
            + (
                "a storage fabric connects its storage NICs and the plan's storage and management ports, "
                "which the Fire-Flyer paper does not count."
                if storage
                else "no storage fabric is counted (as Table 3)."
            )
        )
    if by_kind := catalog.cables.kind_prices():
        notes.append(
            "Cables priced by kind, whatever their type and length: "
            + ", ".join(f"{kind} {price:,g}" for kind, price in by_kind.items())
            + f" {catalog.currency} each."
        )
    if d.RAIL_OPTIMIZED in by_key:
        notes.append(
            "Rail-optimized: scalable units of k/2 nodes (32 with 64-port switches, as the DGX SuperPOD); a "
            "partial unit still gets its rail leaves."
        )
    if d.MULTI_PLANE in by_key:
        notes.append(
            "Multi-plane: one independent fat-tree per compute NIC of a node (its own subnet, no links between "
            "planes), two layers while a plane's nodes fit k*k/2."
        )
    if d.TRANSPORT_OF.keys() & by_key.keys():
        notes.append(
            "InfiniBand and RoCE builds: the plan's layout for the same NIC ports, each sized for its own "
            "switch's radix with the assumed cable lengths; a NIC per NIC port; optical runs (the 'AOC "
            "cables') are fibre, priced per metre, between separately priced transceivers, one per switch "
            "cage with an optical port and one per optical NIC port. Their network is switches, cables, "
            "optics and NICs."
        )
    if fire_flyer:
        notes += fire_flyer.notes
    if energy and catalog.relative_units:
        notes.append(
            f"Energy cost is in the currency of the price per kWh; the catalog is in relative "
            f"{catalog.currency}, so it is not added to the total."
        )
    return notes
