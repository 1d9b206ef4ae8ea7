"""Price and power the comparison designs, compare them with each other and with the paper.

Public surface: `resolve_catalog(...)`, `build_report(...)`, `EnergyOptions`, `plan_location` /
`inventory_location` (where errors point). Everything is read from the Plan; never from the inventory.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from collections.abc import Set
from typing import Callable, Iterable, Sequence

from ffplan.catalog import (
    CatalogOverride,
    Figure,
    NodeEntry,
    PriceCatalog,
    SwitchEntry,
    apply_override,
    fabric_reference,
    load_preset,
    paper_reference,
    read_override_file,
)
from ffplan.design.sizing import SizingError, size_three_layer, size_two_layer
from ffplan.diagnostics import COMMAND_LINE, Collector, InputError
from ffplan.inventory.source import read_text
from ffplan.plan.io import MAX_PLAN_BYTES
from ffplan.plan.model import Plan
from ffplan.report import designs as d
from ffplan.report.model import (
    LAYERS,
    CostReport,
    DesignReport,
    Energy,
    Network,
    Money,
    PaperCheck,
    Power,
    Ratio,
    SourceLine,
)

RULE_NO_PRICE = "FF803"
RULE_NO_NODE_MODEL = "FF804"
RULE_COMPARISON = "FF805"
HOURS_PER_YEAR = 24 * 365
DEFAULT_PRESET = "paper"
AOC_OPTICAL_ENDS = 2  # an active optical cable carries a transceiver at each end


@dataclass(frozen=True)
class EnergyOptions:
    years: float
    pue: float
    kwh_price: float


def resolve_catalog(plan: Plan, preset: str | None = None, override_file: Path | None = None,
                    plan_file: Path | None = None) -> PriceCatalog:
    """Preset, then the plan's model data, then the inventory's `catalog:` block (as the plan carries it),
    then `--catalog FILE`.

    The preset is the one named on the command line, else in the file, else in the plan's catalog block, else
    `paper`. `plan_file` is where the plan was read from: errors in its catalog block are located there.
    """
    loaded = read_override_file(override_file) if override_file else None
    chosen = preset or (loaded and loaded[0].preset) or (plan.catalog and plan.catalog.preset) or DEFAULT_PRESET
    catalog = _with_model_power(load_preset(chosen), plan)
    known = dict(known_nodes={m.name for m in plan.node_models}, known_switches={m.name for m in plan.switch_models})
    if plan.catalog:
        # The designer refuses a bad block (ffplan.design.cabling): this fails only for an edited plan.
        where, origin = plan_location(plan, plan_file), f"inventory {plan.inventory.file}"
        trial = Collector(where.file)
        updated = apply_override(catalog, plan.catalog, origin, trial, ("catalog",), **known)
        if trial.has_errors:  # locate them: the plan file is scanned for positions only now
            located = Collector(where.file, where.positions())
            apply_override(catalog, plan.catalog, origin, located, ("catalog",), **known)
            raise InputError(located.items)
        catalog = updated
    return _with_override_file(catalog, override_file, loaded, **known)


def resolve_preset(preset: str | None = None, override_file: Path | None = None) -> PriceCatalog:
    """No plan: the preset named on the command line, else in `--catalog FILE`, else `paper`; then the file."""
    loaded = read_override_file(override_file) if override_file else None
    catalog = load_preset(preset or (loaded and loaded[0].preset) or DEFAULT_PRESET)
    return _with_override_file(catalog, override_file, loaded)


def _with_override_file(catalog: PriceCatalog, override_file: Path | None,
                        loaded: tuple[CatalogOverride, Collector] | None,
                        known_nodes: Set[str] = frozenset(),
                        known_switches: Set[str] = frozenset()) -> PriceCatalog:
    """`--catalog FILE`, read into `loaded`, applied last; its errors are located in that file."""
    if loaded is None:
        return catalog
    override, collector = loaded
    catalog = apply_override(catalog, override, f"--catalog {override_file}", collector, (),
                             known_nodes=known_nodes, known_switches=known_switches)
    if collector.has_errors:
        raise InputError(collector.items)
    return catalog


def _with_model_power(catalog: PriceCatalog, plan: Plan) -> PriceCatalog:
    """The inventory describes its own hardware (the plan carries its models): its power figures beat the preset's."""
    nodes, switches = dict(catalog.nodes), dict(catalog.switches)
    for node in plan.node_models:
        update = {field: Figure(value=getattr(node, field), source=f"inventory models.nodes.{node.name}.{field}")
                  for field in ("power_w", "peak_power_w") if getattr(node, field) > 0}
        if update:
            nodes[node.name] = nodes.get(node.name, NodeEntry()).model_copy(update=update)
    for switch in plan.switch_models:
        if switch.power_w > 0:
            figure = Figure(value=switch.power_w, source=f"inventory models.switches.{switch.name}.power_w")
            switches[switch.name] = switches.get(switch.name, SwitchEntry()).model_copy(update={"power_w": figure})
    return catalog.model_copy(update={"nodes": nodes, "switches": switches})


@dataclass(frozen=True)
class Location:
    """Where the report's errors point: a file, its positions (computed only when there is an error) and the
    YAML path of a node or switch model in it."""

    file: str
    positions: Callable[[], dict[tuple, tuple[int, int]]]
    model_path: Callable[[str, str], tuple]  # ("nodes" | "switches", model name) -> YAML path


def plan_location(plan: Plan, plan_file: Path | None) -> Location:
    """Errors located in the plan file (or, for a plan designed in-process, named after its inventory)."""
    sections = {"nodes": "node_models", "switches": "switch_models"}

    def model_path(kind: str, name: str) -> tuple:
        names = [m.name for m in plan.node_models] if kind == "nodes" else [m.name for m in plan.switch_models]
        index = names.index(name) if name in names else None
        return (sections[kind], index) if index is not None else ()

    def positions() -> dict:
        return plan_positions(plan_file, ("catalog", "node_models", "switch_models")) if plan_file else {}

    return Location(str(plan_file) if plan_file else f"plan of {plan.inventory.file}", positions, model_path)


def inventory_location(file: str, positions: dict) -> Location:
    """Errors located in the inventory a plan was just designed from (its model names are the plan's)."""
    return Location(file, lambda: positions, lambda kind, name: ("models", kind, name))


_FLOW_KEY = re.compile(r"[{,]\s*([^{},:\s][^{},:]*?):\s")


def plan_positions(path: Path, sections: tuple[str, ...]) -> dict[tuple, tuple[int, int]]:
    """Line and column of a few top-level sections of a canonical plan (see ffplan.plan.io), found by scanning
    its text: plans are read without the position-tracking loader, which is too slow for their size."""
    try:
        lines = read_text(Path(path), MAX_PLAN_BYTES).split("\n")
    except InputError:
        return {}
    out: dict[tuple, tuple[int, int]] = {}
    section, item = None, -1
    for number, line in enumerate(lines, 1):
        if line and not line[0].isspace() and not line.startswith(("-", "#")):
            section = line.split(":", 1)[0]
            section, item = (section, -1) if section in sections else (None, -1)
            if section:
                out[(section,)] = (number, 1)
            continue
        if section is None:
            continue
        if line.startswith("- "):  # a list item (canonical lists sit at the key's indent)
            item += 1
            out[(section, item)] = (number, 3)
        elif line.startswith("  ") and not line.startswith("   "):  # a key of a mapping section
            key, _, rest = line.strip().partition(":")
            out[(section, key)] = (number, 3)
            for m in _FLOW_KEY.finditer(rest):
                out[(section, key, m.group(1))] = (number, len(line) - len(rest) + m.start(1) + 1)
    return out


class Pricer:
    """Looks up prices and power; a missing one becomes a located error, collected for the whole report."""

    def __init__(self, catalog: PriceCatalog, plan: Plan | None):
        self.catalog = catalog
        self.plan = plan
        self.missing: list[tuple[tuple[str, str], str, str]] = []  # ((kind, model), message, hint)
        self.notes: list[str] = []
        self._reported: set[tuple] = set()

    def _missing(self, kind: str, what: str, name: str) -> None:
        """An unpriced figure: the totals that need it become None, and the report says which one it is."""
        if (kind, name, what) not in self._reported:  # every design asks again; say it once
            self._reported.add((kind, name, what))
            self.missing.append(((kind, name), f"no {what} for '{name}' in catalog '{self.catalog.name}'",
                                 f"add `catalog: {{{'prices' if what == 'price' else 'power_w'}: {{{name}: ...}}}}` to "
                                 "the inventory (and design again) or pass --catalog FILE"))

    def warnings(self, where: Location) -> list:
        collector = Collector(where.file, where.positions())
        for (kind, name), message, hint in self.missing:
            collector.warning(RULE_NO_PRICE, where.model_path(kind, name), message, hint)
        return collector.items

    def gpus(self, model: str) -> int:
        entry = self.catalog.nodes.get(model)
        if entry and entry.gpus:
            return entry.gpus
        return d.gpus_of(self.plan, model) if self.plan else 0

    def gpu_model(self, model: str) -> str | None:
        entry = self.catalog.nodes.get(model)
        if entry and entry.gpu_model:
            return entry.gpu_model
        return d.gpu_model_of(self.plan, model) if self.plan else None

    def node_price(self, model: str) -> float | None:
        entry = self.catalog.nodes.get(model)
        if entry and entry.price:
            return entry.price.value
        gpu = self.catalog.gpus.get(self.gpu_model(model) or "")
        if gpu and gpu.node_price_per_gpu:
            return gpu.node_price_per_gpu.value * self.gpus(model)
        self._missing("nodes", "price", model)
        return None

    def node_power(self, model: str) -> tuple[float | None, float | None]:
        entry = self.catalog.nodes.get(model)
        if not entry or not entry.power_w:
            self._missing("nodes", "power", model)
            return None, None
        if entry.peak_power_w:
            return entry.power_w.value, entry.peak_power_w.value
        self.notes.append(f"{model}: no peak power given, its average power is used as peak")
        return entry.power_w.value, entry.power_w.value

    def switch_price(self, model: str) -> float | None:
        entry = self.catalog.switches.get(model)
        if entry and entry.price:
            return entry.price.value
        self._missing("switches", "price", model)
        return None

    def switch_power(self, model: str) -> float:
        entry = self.catalog.switches.get(model)
        if entry and entry.power_w:
            return entry.power_w.value
        self.notes.append(f"{model}: no switch power given, counted as 0 W")
        return 0.0

    def relative_performance(self, model: str) -> float | None:
        """Mean over the precisions both GPUs list of GEMM TFLOPS per GPU against the reference node's GPU."""
        mine = self.catalog.gpus.get(self.gpu_model(model) or "")
        ref = self.catalog.gpus.get(self.gpu_model(self.catalog.reference_node) or "")
        if not mine or not ref:
            return None
        common = sorted(set(mine.gemm_tflops) & set(ref.gemm_tflops))
        if not common:
            return None
        return mean(mine.gemm_tflops[p].value / ref.gemm_tflops[p].value for p in common)


@dataclass(frozen=True)
class _Priced:
    counts: d.DesignCounts
    money: Money
    power: Power
    relative_performance: float | None


def _sum(terms: Iterable[float | None]) -> float | None:
    """A total, or None when one of its terms is unpriced (a partial sum would pass for the whole)."""
    values = list(terms)
    known = [v for v in values if v is not None]
    return sum(known) if len(known) == len(values) else None


def _times(count: int, value: float | None) -> float | None:
    return None if value is None else count * value


def _network_price(fabrics: Iterable[Network], pricer: Pricer) -> tuple[float | None, float]:
    """Switches (None when a switch model is unpriced) and cables of some fabrics."""
    cables = pricer.catalog.cables
    switch_prices, cable_price = [], 0.0
    for fabric in fabrics:
        switch_prices.append(_times(sum(fabric.switches.values()), pricer.switch_price(fabric.switch_model)))
        cable_price += sum(lot.count * cables.price_of(lot.kind, lot.type, lot.length_m) for lot in fabric.cables)
    return _sum(switch_prices), cable_price


def _price(counts: d.DesignCounts, pricer: Pricer) -> _Priced:
    switch_price, cable_price = _network_price(counts.fabrics, pricer)
    switch_power = sum(sum(f.switches.values()) * pricer.switch_power(f.switch_model) for f in counts.fabrics)
    servers = _sum(_times(count, pricer.node_price(model)) for model, count in counts.nodes.items())
    average = _sum(_times(count, pricer.node_power(model)[0]) for model, count in counts.nodes.items())
    peak = _sum(_times(count, pricer.node_power(model)[1]) for model, count in counts.nodes.items())
    network = _sum([switch_price, cable_price])
    total = _sum([network, servers])
    endpoints = sum(f.access_points for f in counts.fabrics)
    money = Money(switches=switch_price, cables=cable_price, network=network, servers=servers, total=total,
                  per_gpu=None if total is None else total / counts.gpus if counts.gpus else 0.0,
                  network_per_endpoint=None if network is None else network / endpoints)
    power = Power(nodes_average_w=average, nodes_peak_w=peak, switches_w=switch_power,
                  average_w=_sum([average, switch_power]), peak_w=_sum([peak, switch_power]))
    perf = [(count * pricer.gpus(model), pricer.relative_performance(model)) for model, count in counts.nodes.items()]
    weighted = _sum(_times(g, p) for g, p in perf)
    relative = None if weighted is None else weighted / max(1, sum(g for g, _ in perf))
    return _Priced(counts, money, power, relative)


@dataclass(frozen=True)
class _Baseline:
    """What cost-performance divides by: the reference node's price per GPU, and the total price per GPU of
    the reference node's three-layer design when the report has it."""

    servers_per_gpu: float | None
    total_per_gpu: float | None


def _design_report(p: _Priced, base: _Baseline, catalog: PriceCatalog, energy: EnergyOptions | None) -> DesignReport:
    c = p.counts
    switches = {layer: sum(f.switches.get(layer, 0) for f in c.fabrics) for layer in LAYERS}
    by_type: Counter[str] = Counter()
    by_kind: Counter[str] = Counter()
    for fabric in c.fabrics:
        for lot in fabric.cables:
            by_type[lot.type] += lot.count
            by_kind[lot.kind] += lot.count

    perf = p.relative_performance
    cost_perf = cost_perf_total = None
    if perf is not None and p.money.servers and base.servers_per_gpu:
        cost_perf = perf / (p.money.servers / c.gpus / base.servers_per_gpu)
    if perf is not None and p.money.total and base.total_per_gpu:
        cost_perf_total = perf / (p.money.total / c.gpus / base.total_per_gpu)
    spent = None
    if energy and p.power.average_w is not None:
        kwh = p.power.average_w / 1000 * HOURS_PER_YEAR * energy.years * energy.pue
        spent = Energy(years=energy.years, pue=energy.pue, kwh_price=energy.kwh_price, kwh=kwh, cost=kwh * energy.kwh_price)
    return DesignReport(
        key=c.key, title=c.title, description=c.description, basis=c.basis, gpus=c.gpus, nodes=c.nodes,
        gpus_per_node=c.gpus_per_node, fabrics=c.fabrics, endpoints=sum(f.access_points for f in c.fabrics),
        switches=switches, switch_total=sum(switches.values()),
        switch_links=sum(n for kind, n in by_kind.items() if kind != "node-leaf"),
        cables={t: by_type[t] for t in ("DAC", "AOC")}, cables_by_kind=dict(by_kind), cable_total=sum(by_type.values()),
        transceivers=AOC_OPTICAL_ENDS * by_type["AOC"], cost=p.money, power=p.power, relative_performance=perf,
        cost_performance=cost_perf, cost_performance_total=cost_perf_total, energy=spent,
        tco=p.money.total + spent.cost if spent and p.money.total is not None and not catalog.relative_units else None,
    )


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    return None if numerator is None or not denominator else numerator / denominator


def _ratios(by_key: dict[str, DesignReport], plan: Plan | None) -> list[Ratio]:
    """The papers' ratios between two designs, for each pair the report has: the Fire-Flyer paper's for a
    Fire-Flyer plan, DeepSeek-V3 Table 3's MPFT / FT3 for the mpft design and for a plan of two-layer planes."""
    paper, table_3 = paper_reference(), fabric_reference()["deepseek_v3_table_3"]
    t2, t3 = paper["table_ii"], paper["table_iii"]
    ff, pcie, ft3, mpft = d.FIRE_FLYER, d.PCIE_THREE_LAYER, d.THREE_LAYER, d.MULTI_PLANE

    def cost(field: str) -> Callable[[DesignReport], float | None]:
        return lambda r: getattr(r.cost, field)

    def power(field: str) -> Callable[[DesignReport], float | None]:
        return lambda r: getattr(r.power, field)

    table_3_ratio = (cost("network_per_endpoint"),
                     table_3["mpft"]["cost_per_endpoint_usd"] / table_3["ft3"]["cost_per_endpoint_usd"],
                     "DeepSeek-V3 Table 3 cost per endpoint $4.39k / $7.5k")
    rows = [] if plan is not None and not d.is_fire_flyer(plan) else [
        ("total price", ff, ft3, cost("total"),
         t3["total_price"]["fire_flyer"] / t3["total_price"]["dgx"], "Table III total price 11,600 / 23,000"),
        ("server price", ff, ft3, cost("servers"),
         t3["server_price"]["fire_flyer"] / t3["server_price"]["dgx"], "Table III server price 11,250 / 19,000"),
        ("network price", ff, ft3, cost("network"),
         t3["network_price"]["fire_flyer"] / t3["network_price"]["dgx"], "Table III network price 350 / 4,000"),
        ("network price", ff, pcie, cost("network"),
         t3["network_price"]["fire_flyer"] / t3["network_price"]["pcie_three_layer"], "Table III network price 350 / 600"),
        ("switches", ff, ft3, lambda r: r.switch_total,
         paper["fire_flyer"]["switches"] / paper["dgx_three_layer"]["switches"], "Table III switches 122 / 1,320"),
        ("node power", ff, ft3, power("nodes_average_w"),
         t2["power_w"]["fire_flyer"] / t2["power_w"]["dgx"], "Table II power 2,500 W / 4,200 W per node"),
        ("power with switches", ff, ft3, power("average_w"),
         t2["power_w"]["fire_flyer"] / t2["power_w"]["dgx"], "Table II power per node (switches not counted)"),
    ]
    rows.append(("network per endpoint", mpft, ft3, *table_3_ratio))
    if plan is not None and d.is_multi_plane(plan):
        rows.append(("network per endpoint", ff, ft3, *table_3_ratio))
    out = []
    for name, a, b, value, ref, basis in rows:
        if a in by_key and b in by_key and (computed := _ratio(value(by_key[a]), value(by_key[b]))) is not None:
            out.append(Ratio(name=name, numerator=a, denominator=b, computed=computed, paper=ref, paper_basis=basis))
    if ff in by_key and ft3 in by_key and (plan is None or d.is_fire_flyer(plan)):
        if (relative := by_key[ff].relative_performance) is not None:
            out.append(Ratio(name="relative performance", numerator=ff, denominator=ft3,
                             computed=relative, paper=t2["relative_performance"],
                             paper_basis="Table II relative performance 83 %"))
        if (cost_performance := by_key[ff].cost_performance) is not None:
            out.append(Ratio(name="cost-performance", numerator=ff, denominator=ft3,
                             computed=cost_performance, paper=t2["cost_performance"],
                             paper_basis="Table II cost-performance 1.38 (performance / node price)"))
    return out


def paper_checks(dgx_storage_switches: int | None) -> list[PaperCheck]:
    """The Fire-Flyer paper's own configurations recomputed with ffplan's sizing code, and why they differ."""
    paper = paper_reference()
    k = paper["radix"]
    zone = size_two_layer(k)
    ff = paper["fire_flyer"]
    pcie_ref, dgx_ref = paper["pcie_three_layer"], paper["dgx_three_layer"]
    pcie = size_three_layer(k, pcie_ref["access_points"])
    dgx = size_three_layer(k, dgx_ref["access_points"])

    def layers(core: int, spine: int, leaf: int, total: int) -> str:
        return f"{core} core + {spine} spine + {leaf} leaf = {total:,}"

    checks = [
        PaperCheck(item=f"Fire-Flyer 2: {ff['zones']} two-layer zones of {k}-port switches",
                   paper=f"{ff['switches']} switches",
                   computed=f"{ff['zones']} x ({zone.spines} spine + {zone.leaves} leaf) = {ff['zones'] * zone.switches}",
                   reason=f"the paper does not say what the other {ff['switches'] - ff['zones'] * zone.switches} "
                          "switches are (inter-zone or management switches are a guess)"),
        PaperCheck(item=f"PCIe three-layer tree, {pcie_ref['access_points']:,} access points",
                   paper=layers(pcie_ref["core"], pcie_ref["spine"], pcie_ref["leaf"], pcie_ref["switches"]),
                   computed=layers(pcie.cores, pcie.spines, pcie.leaves, pcie.switches),
                   reason="same" if pcie.switches == pcie_ref["switches"] else "differs from the non-blocking formula"),
        PaperCheck(item=f"DGX three-layer tree, {dgx_ref['access_points']:,} access points",
                   paper=layers(dgx_ref["core"], dgx_ref["spine"], dgx_ref["leaf"], dgx_ref["switches"]),
                   computed=layers(dgx.cores, dgx.spines, dgx.leaves, dgx.switches),
                   reason=f"non-blocking core = spines x (k/2) / k = {dgx.spines} x {k // 2} / {k} = {dgx.cores}; "
                          f"the paper gives no reason for {dgx_ref['core']}"),
    ]
    if dgx_storage_switches is not None:
        checks.append(PaperCheck(
            item="DGX storage fabric (9th NIC, storage servers, management nodes)",
            paper="not counted", computed=f"{dgx_storage_switches:,} switches in this report",
            reason="the Fire-Flyer fabric carries storage in-band; the DGX cluster needs its own storage network"))
    return checks


def fabric_checks(pricer: Pricer) -> list[PaperCheck]:
    """DeepSeek-V3's Table 3 and the DGX SuperPOD sizes recomputed with the sizing of the mpft, ft3 and
    rail-optimized designs; priced with the catalog when its fabric switch has the same radix."""
    catalog = pricer.catalog
    table_3, pod = fabric_reference()["deepseek_v3_table_3"], fabric_reference()["dgx_superpod"]
    switch = catalog.fabric_switch
    priced = catalog.switches[switch].ports == table_3["radix"]

    def counted(fabric: Network) -> str:
        links = sum(lot.count for lot in fabric.cables if lot.kind != "node-leaf")
        text = f"{sum(fabric.switches.values()):,} switches, {links:,} links"
        switches, cables = _network_price([fabric], pricer)
        if priced and switches is not None:
            network = switches + cables
            text += (f"; {network:,.0f} {catalog.currency}, {network / fabric.access_points:,.0f} per endpoint "
                     f"(catalog {catalog.name})")
        return text

    def published(row: dict) -> str:
        return (f"{row['switches']:,} switches, {row['links']:,} links; {row['cost_usd']:,.0f} USD, "
                f"{row['cost_per_endpoint_usd']:,} per endpoint")

    k = table_3["radix"]
    ft2, mpft, ft3 = table_3["ft2"], table_3["mpft"], table_3["ft3"]
    checks = [
        PaperCheck(item=f"DeepSeek-V3 Table 3 FT2: two-layer fat-tree, k = {k}, {ft2['endpoints']:,} endpoints",
                   paper=published(ft2), computed=counted(d.tree("FT2", switch, k, ft2["endpoints"], catalog)),
                   reason="k leaves + k/2 spines; links = leaves x k/2 = k^2/2 (switch-to-switch only, as Table 3)"),
        PaperCheck(item=f"DeepSeek-V3 Table 3 MPFT: {mpft['planes']} planes of FT2, {mpft['endpoints']:,} endpoints",
                   paper=published(mpft),
                   computed=counted(d.multi_plane(switch, k, mpft["planes"], mpft["endpoints"] // mpft["planes"], catalog)),
                   reason="planes x (3k/2 switches, k^2/2 links)"),
        PaperCheck(item=f"DeepSeek-V3 Table 3 FT3: three-layer fat-tree, k = {k}, {ft3['endpoints']:,} endpoints",
                   paper=published(ft3),
                   computed=counted(d.tree("FT3", switch, k, ft3["endpoints"], catalog, three_layers=True)),
                   reason="5k^2/4 switches; links = leaf-spine + spine-core = 2 x k^3/4"),
    ]
    rails = pod["gpus_per_node"]
    for size in pod["sizes"]:
        fabric = d.rail_optimized(switch, pod["radix"], rails, size["nodes"], catalog)
        layers = f"{fabric.switches['leaf']} leaf + {fabric.switches['spine']} spine + {fabric.switches['core']} core"
        checks.append(PaperCheck(
            item=f"DGX SuperPOD, rail-optimized: {size['sus']} scalable units, {size['nodes']:,} nodes, {size['gpus']:,} GPUs",
            paper=f"{size['leaf']} leaf + {size['spine']} spine + {size['core']} core",
            computed=layers,
            reason=f"{rails} rail leaves per unit of {pod['su_nodes']} nodes; spines and core as a fat-tree of those leaves"))
    return checks


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
        raise ComparisonError(f"{', '.join(needs)} compare{'s' if len(needs) == 1 else ''} the inventory's own design, "
                              "and no INPUT was given",
                              f"give an inventory or plan as INPUT, or compare {', '.join(d.DESIGNS[2:])}")
    if plan is not None:
        _require_node_models(plan, input_name)
    pricer = Pricer(catalog, plan)
    if plan is None:
        if gpus is None:
            raise ComparisonError("without a plan, the GPU count sizes the designs, and none was given",
                                  "give an inventory or plan as INPUT, or --gpus N")
        switch_model = catalog.fabric_switch
        radix = catalog.fabric_radix
        shape = d.shape_of_reference(catalog, gpus)
    else:
        switch_model = plan.fabric_switch_model
        radix = next(s.ports for s in plan.switch_models if s.name == switch_model)
        shape = d.shape_from_plan(plan) if gpus is None else d.shape_for_gpus(plan, gpus)
    if not compare:
        compare = (d.DEFAULT_WITHOUT_PLAN if plan is None else
                   d.DEFAULT_WITH_MULTI_NIC_PLAN if shape.own_nodes else d.DEFAULT_WITH_PLAN)
    fire_flyer_plan = plan is not None and d.is_fire_flyer(plan)
    counts = [_counts(key, plan, shape, switch_model, radix, catalog, from_plan=gpus is None) for key in compare]
    ref = catalog.reference
    priced = {c.key: _price(c, pricer) for c in counts}
    ref_price = pricer.node_price(catalog.reference_node)
    three_layer = priced.get(d.THREE_LAYER)
    base = _Baseline(None if ref_price is None else ref_price / ref.gpus,
                     three_layer.money.total / three_layer.counts.gpus if three_layer and three_layer.money.total else None)
    reports = [_design_report(priced[c.key], base, catalog, energy) for c in counts]
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
        input=input_name or (plan.inventory.file if plan else "command line"), inventory=plan.inventory.name if plan else "",
        basis=shape.basis, gpus=shape.gpus,
        catalog=catalog.name, currency=catalog.currency, relative_units=catalog.relative_units,
        designs=reports, ratios=_ratios(by_key, plan), paper_checks=checks,
        notes=_unpriced_notes(pricer) + _notes(catalog, shape, fire_flyer, by_key, gpus is None, energy) + sorted(set(pricer.notes)),
        unpriced=[message for _, message, _ in pricer.missing],
        warnings=pricer.warnings(where or _default_location(plan, input_name)) if pricer.missing else [],
        sources=[SourceLine(key=key, value=f.value, source=f.source, assumption=f.assumption, note=f.note)
                 for key, f in catalog.figures()],
    )


def _counts(key: str, plan: Plan | None, shape: d.ClusterShape, switch_model: str, radix: int,
            catalog: PriceCatalog, from_plan: bool) -> d.DesignCounts:
    """One design, counted; a SizingError (the GPUs do not fit the radix) becomes a ComparisonError."""
    try:
        if key == d.FIRE_FLYER:
            assert plan is not None, "build_report refuses the designs FROM_PLAN without a plan"
            return d.plan_design(plan, shape) if from_plan else d.plan_design_sized(plan, shape, catalog)
        if key == d.PCIE_THREE_LAYER:
            node_cables = None
            if from_plan:
                assert plan is not None, "build_report refuses the designs FROM_PLAN without a plan"  # same nodes, same leaves: the plan's node cables
                node_cables = [lot for lot in d.plan_design(plan, shape).fabrics[0].cables if lot.kind == "node-leaf"]
            return d.pcie_three_layer(shape, switch_model, radix, catalog, node_cables)
        return d.reference_design(key, shape, switch_model, radix, catalog)
    except SizingError as exc:
        raise ComparisonError(f"{key} at {shape.gpus:,} GPUs: {exc.message}", exc.hint) from None


def _default_location(plan: Plan | None, input_name: str) -> Location:
    if plan is None:  # a catalog model without a price: the preset or --catalog names it
        return Location(COMMAND_LINE, dict, lambda kind, name: ("--preset",))
    return plan_location(plan, Path(input_name) if input_name else None)


def _require_node_models(plan: Plan, input_name: str) -> None:
    """A plan of an older ffplan has no node models: say so rather than count 0 GPUs."""
    missing = sorted({n.model for n in plan.nodes} - {m.name for m in plan.node_models})
    if missing:
        c = Collector(input_name or f"plan of {plan.inventory.file}")
        c.error(RULE_NO_NODE_MODEL, ("node_models",),
                f"the plan does not describe node model{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                "(a plan written by an older ffplan?)",
                "re-run `ffplan design`: the report reads GPUs and power of the node models from the plan")
        raise InputError(c.items)


def _unpriced_notes(pricer: Pricer) -> list[str]:
    if not pricer.missing:
        return []
    return [f"Unpriced: {'; '.join(message for _, message, _ in pricer.missing)}. Totals that need these figures show "
            f"n/a; {pricer.missing[0][2]}."]


def _notes(catalog: PriceCatalog, shape: d.ClusterShape, fire_flyer: d.DesignCounts | None,
           by_key: dict[str, DesignReport], from_plan: bool, energy: EnergyOptions | None) -> list[str]:
    lengths = catalog.sized_lengths
    _, node = d.comparison_node(shape, catalog)
    pcie_keeps_cables = from_plan and d.PCIE_THREE_LAYER in by_key
    notes = [
        "Servers are the GPU compute nodes; storage and management servers are the same in every design and are "
        "left out of cost and power, as in the paper's Table III.",
        f"Cables: DAC up to {catalog.cables.dac_max_m.value:g} m, AOC beyond. An AOC has its transceivers built in, so "
        f"none are priced separately; 'transceivers' counts those built-in optical ends ({AOC_OPTICAL_ENDS} per AOC).",
        "Switch power is the switch model's rated figure, counted for average and peak alike.",
        f"Sized designs assume cable lengths of {lengths.node_leaf_m.value:g} m node-leaf, "
        f"{lengths.leaf_spine_m.value:g} m leaf-spine and {lengths.spine_core_m.value:g} m spine-core"
        + (" (the PCIe three-layer tree keeps the plan's node cables: same nodes, same leaves)." if pcie_keeps_cables else "."),
        "Endpoints are the NIC ports a design connects; 'network per endpoint' is its network price over them "
        "(DeepSeek-V3 Table 3's cost per endpoint). 'Switch-to-switch links' are the cables between switches, "
        "the links Table 3 counts.",
        "Cost-performance is relative GEMM performance over relative server price per GPU (the paper's Table II); "
        f"'with network' uses the total price per GPU instead, against the {node.title} three-layer design.",
    ]
    if {d.THREE_LAYER, d.RAIL_OPTIMIZED, d.MULTI_PLANE} & by_key.keys():
        storage = any(len(r.fabrics) > 1 for key, r in by_key.items() if key in d.LAYOUTS)
        whose = (f"{node.title}: the plan's own compute nodes, their {node.compute_nics} NICs on the compute fabric "
                 "(one per rail or plane); " if shape.own_nodes else
                 f"{node.title}: {node.compute_nics} compute NICs per node on the compute fabric (three-layer: the "
                 "Fire-Flyer paper's access points); ")
        notes.append(whose + ("a storage fabric connects its storage NICs and the plan's storage and management ports, "
                              "which the Fire-Flyer paper does not count." if storage
                              else "no storage fabric is counted (as Table 3)."))
    if by_kind := catalog.cables.kind_prices():
        notes.append("Cables priced by kind, whatever their type and length: " + ", ".join(
            f"{kind} {price:,g}" for kind, price in by_kind.items()) + f" {catalog.currency} each.")
    if d.RAIL_OPTIMIZED in by_key:
        notes.append("Rail-optimized: scalable units of k/2 nodes (32 with 64-port switches, as the DGX SuperPOD); a "
                     "partial unit still gets its rail leaves.")
    if d.MULTI_PLANE in by_key:
        notes.append("Multi-plane: one independent fat-tree per compute NIC of a node (its own subnet, no links between "
                     "planes), two layers while a plane's nodes fit k*k/2.")
    if fire_flyer:
        notes += fire_flyer.notes
    if energy and catalog.relative_units:
        notes.append(f"Energy cost is in the currency of the price per kWh; the catalog is in relative "
                     f"{catalog.currency}, so it is not added to the total.")
    return notes
