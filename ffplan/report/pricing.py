"""Prices and power of one design from the catalog (`Pricer`, `price_design`), and the design's report row with its
cost-performance against the baseline and its energy (`design_report`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from statistics import mean
from typing import Iterable

from ffplan.catalog import PriceCatalog
from ffplan.codes.report import UNPRICED_MODEL
from ffplan.diagnostics import Collector
from ffplan.plan.model import Plan
from ffplan.plan.optics import estimated_transceivers
from ffplan.report import designs as d
from ffplan.report.catalog import Location
from ffplan.report.model import LAYERS, BuildCost, DesignReport, Energy, Money, Network, Power

HOURS_PER_YEAR = 24 * 365


@dataclass(frozen=True)
class EnergyOptions:
    years: float
    pue: float
    kwh_price: float


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
            self.missing.append(
                (
                    (kind, name),
                    f"no {what} for '{name}' in catalog '{self.catalog.name}'",
                    f"add `catalog: {{{'prices' if what == 'price' else 'power_w'}: {{{name}: ...}}}}` to "
                    "the inventory (and design again) or pass --catalog FILE",
                )
            )

    def warnings(self, where: Location) -> list:
        collector = Collector(where.file, where.positions())
        for (kind, name), message, hint in self.missing:
            collector.warning(UNPRICED_MODEL, where.model_path(kind, name), message, hint)
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

    def part_price(self, kind: str, name: str) -> float | None:
        """A NIC's or transceiver's price (`kind`: nics or optics); the catalog's builds name only parts it lists."""
        part = getattr(self.catalog, kind)[name]
        if part.price is None:
            self._missing(kind, "price", name)
            return None
        return float(part.price.value)

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
class Priced:
    counts: d.DesignCounts
    money: Money
    power: Power
    relative_performance: float | None
    build: BuildCost | None = None


def _sum(terms: Iterable[float | None]) -> float | None:
    """A total, or None when one of its terms is unpriced (a partial sum would pass for the whole)."""
    values = list(terms)
    known = [v for v in values if v is not None]
    return sum(known) if len(known) == len(values) else None


def _times(count: int, value: float | None) -> float | None:
    return None if value is None else count * value


def network_price(fabrics: Iterable[Network], pricer: Pricer, fibre: bool = False) -> tuple[float | None, float]:
    """Switches (None when a switch model is unpriced) and cables of some fabrics; with `fibre`, an optical run is
    its fibre only (aoc_per_m x length: its transceivers are priced apart)."""
    cables = pricer.catalog.cables
    switch_prices, cable_price = [], 0.0
    for fabric in fabrics:
        switch_prices.append(_times(sum(fabric.switches.values()), pricer.switch_price(fabric.switch_model)))
        cable_price += sum(
            lot.count
            * (
                cables.aoc_per_m.value * lot.length_m
                if fibre and lot.type == "AOC"
                else cables.price_of(lot.kind, lot.type, lot.length_m)
            )
            for lot in fabric.cables
        )
    return _sum(switch_prices), cable_price


def _build_cost(parts: d.BuildParts, pricer: Pricer) -> BuildCost:
    nic = _times(parts.nics, pricer.part_price("nics", parts.nic))
    optics = _sum(
        [
            _times(parts.switch_optics, pricer.part_price("optics", parts.switch_optic)),
            _times(parts.nic_optics, pricer.part_price("optics", parts.nic_optic)),
        ]
    )
    return BuildCost(**asdict(parts), nics_price=nic, optics_price=optics)


def price_design(counts: d.DesignCounts, pricer: Pricer) -> Priced:
    switch_price, cable_price = network_price(counts.fabrics, pricer, fibre=counts.parts is not None)
    build = _build_cost(counts.parts, pricer) if counts.parts else None
    switch_power = sum(sum(f.switches.values()) * pricer.switch_power(f.switch_model) for f in counts.fabrics)
    servers = _sum(_times(count, pricer.node_price(model)) for model, count in counts.nodes.items())
    average = _sum(_times(count, pricer.node_power(model)[0]) for model, count in counts.nodes.items())
    peak = _sum(_times(count, pricer.node_power(model)[1]) for model, count in counts.nodes.items())
    network = _sum([switch_price, cable_price] + ([build.nics_price, build.optics_price] if build else []))
    total = _sum([network, servers])
    endpoints = sum(f.access_points for f in counts.fabrics)
    money = Money(
        switches=switch_price,
        cables=cable_price,
        network=network,
        servers=servers,
        total=total,
        per_gpu=None if total is None else total / counts.gpus if counts.gpus else 0.0,
        network_per_endpoint=None if network is None else network / endpoints,
    )
    power = Power(
        nodes_average_w=average,
        nodes_peak_w=peak,
        switches_w=switch_power,
        average_w=_sum([average, switch_power]),
        peak_w=_sum([peak, switch_power]),
    )
    perf = [(count * pricer.gpus(model), pricer.relative_performance(model)) for model, count in counts.nodes.items()]
    weighted = _sum(_times(g, p) for g, p in perf)
    relative = None if weighted is None else weighted / max(1, sum(g for g, _ in perf))
    return Priced(counts, money, power, relative, build)


@dataclass(frozen=True)
class Baseline:
    """What cost-performance divides by: the reference node's price per GPU, and the total price per GPU of
    the reference node's three-layer design when the report has it."""

    servers_per_gpu: float | None
    total_per_gpu: float | None


def design_report(
    p: Priced, base: Baseline, catalog: PriceCatalog, energy: EnergyOptions | None, speeds: dict[str, str]
) -> DesignReport:
    """`speeds`: link speed of the plan's switch models (their optics: ffplan.plan.optics); a catalog model's
    optical runs count as AOCs."""
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
        spent = Energy(
            years=energy.years, pue=energy.pue, kwh_price=energy.kwh_price, kwh=kwh, cost=kwh * energy.kwh_price
        )
    return DesignReport(
        key=c.key,
        title=c.title,
        description=c.description,
        basis=c.basis,
        gpus=c.gpus,
        nodes=c.nodes,
        gpus_per_node=c.gpus_per_node,
        fabrics=c.fabrics,
        endpoints=sum(f.access_points for f in c.fabrics),
        switches=switches,
        switch_total=sum(switches.values()),
        switch_links=sum(n for kind, n in by_kind.items() if kind != "node-leaf"),
        cables={t: by_type[t] for t in ("DAC", "AOC")},
        cables_by_kind=dict(by_kind),
        cable_total=sum(by_type.values()),
        transceivers=c.transceivers
        if c.transceivers is not None
        else sum(
            estimated_transceivers(
                speeds.get(f.switch_model), ((lot.kind, lot.type, lot.length_m, lot.count) for lot in f.cables)
            )
            for f in c.fabrics
        ),
        cost=p.money,
        power=p.power,
        relative_performance=perf,
        cost_performance=cost_perf,
        cost_performance_total=cost_perf_total,
        energy=spent,
        tco=p.money.total + spent.cost if spent and p.money.total is not None and not catalog.relative_units else None,
        build=p.build,
    )
