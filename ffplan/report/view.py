"""The rows every output shows, and how a number is written. Tables, templates and CSV share these, so
the formats cannot drift apart."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal

from ffplan.report.model import CostReport, DesignReport, SourceLine

Kind = Literal["count", "money", "kw", "mwh", "percent", "ratio", "fraction", "text"]


@dataclass(frozen=True)
class Metric:
    group: str
    label: str
    kind: Kind
    value: Callable[[DesignReport], float | int | str | None]


METRICS: tuple[Metric, ...] = (
    Metric("Hardware", "GPUs", "count", lambda r: r.gpus),
    Metric("Hardware", "compute nodes", "count", lambda r: sum(r.nodes.values())),
    Metric("Hardware", "node model", "text", lambda r: ", ".join(r.nodes)),
    Metric(
        "Network", "fabrics", "text", lambda r: "; ".join(f"{f.name} ({f.access_points:,} ports)" for f in r.fabrics)
    ),
    Metric("Network", "endpoints (NIC ports)", "count", lambda r: r.endpoints),
    Metric("Network", "leaf switches", "count", lambda r: r.switches["leaf"]),
    Metric("Network", "spine switches", "count", lambda r: r.switches["spine"]),
    Metric("Network", "core switches", "count", lambda r: r.switches["core"]),
    Metric("Network", "switches", "count", lambda r: r.switch_total),
    Metric("Network", "switch-to-switch links", "count", lambda r: r.switch_links),
    Metric("Network", "node-leaf cables", "count", lambda r: r.cables_by_kind.get("node-leaf", 0)),
    Metric("Network", "leaf-spine cables", "count", lambda r: r.cables_by_kind.get("leaf-spine", 0)),
    Metric("Network", "spine-core cables", "count", lambda r: r.cables_by_kind.get("spine-core", 0)),
    Metric("Network", "inter-zone cables", "count", lambda r: r.cables_by_kind.get("inter-zone", 0)),
    Metric("Network", "DAC cables", "count", lambda r: r.cables["DAC"]),
    Metric("Network", "AOC cables", "count", lambda r: r.cables["AOC"]),
    Metric("Network", "optical transceivers", "count", lambda r: r.transceivers),
    Metric("Cost", "switches", "money", lambda r: r.cost.switches),
    Metric("Cost", "cables", "money", lambda r: r.cost.cables),
    Metric("Cost", "network", "money", lambda r: r.cost.network),
    Metric("Cost", "network per endpoint", "money", lambda r: r.cost.network_per_endpoint),
    Metric("Cost", "servers", "money", lambda r: r.cost.servers),
    Metric("Cost", "total", "money", lambda r: r.cost.total),
    Metric("Cost", "per GPU", "money", lambda r: r.cost.per_gpu),
    Metric("Power", "nodes, average (kW)", "kw", lambda r: r.power.nodes_average_w),
    Metric("Power", "switches (kW)", "kw", lambda r: r.power.switches_w),
    Metric("Power", "total, average (kW)", "kw", lambda r: r.power.average_w),
    Metric("Power", "total, peak (kW)", "kw", lambda r: r.power.peak_w),
    Metric("Performance", "relative performance", "percent", lambda r: r.relative_performance),
    Metric("Performance", "cost-performance", "ratio", lambda r: r.cost_performance),
    Metric("Performance", "cost-performance with network", "ratio", lambda r: r.cost_performance_total),
)

ENERGY_METRICS: tuple[Metric, ...] = (
    Metric("Energy", "energy (MWh)", "mwh", lambda r: r.energy.kwh if r.energy else None),
    Metric("Energy", "energy cost", "money", lambda r: r.energy.cost if r.energy else None),
    Metric("Energy", "total with energy", "money", lambda r: r.tco),
)


# A report with InfiniBand and RoCE builds: their NICs and transceivers, after the cables they go with.
BUILD_METRICS: dict[str, tuple[Metric, ...]] = {
    "optical transceivers": (
        Metric("Network", "NICs", "text", lambda r: f"{r.build.nics:,} x {r.build.nic}" if r.build else None),
        Metric(
            "Network",
            "switch transceivers",
            "text",
            lambda r: f"{r.build.switch_optics:,} x {r.build.switch_optic}" if r.build else None,
        ),
        Metric(
            "Network",
            "NIC transceivers",
            "text",
            lambda r: f"{r.build.nic_optics:,} x {r.build.nic_optic}" if r.build else None,
        ),
    ),
    "cables": (
        Metric("Cost", "optics", "money", lambda r: r.build.optics_price if r.build else None),
        Metric("Cost", "NICs", "money", lambda r: r.build.nics_price if r.build else None),
    ),
}


def metrics(report: CostReport) -> tuple[Metric, ...]:
    with_energy = any(d.energy for d in report.designs)
    with_tco = any(d.tco is not None for d in report.designs)
    energy = tuple(m for m in ENERGY_METRICS if with_energy and (m.label != "total with energy" or with_tco))
    if not any(d.build for d in report.designs):
        return METRICS + energy
    return tuple(m for metric in METRICS for m in (metric, *BUILD_METRICS.get(metric.label, ()))) + energy


def fmt(value: float | str | None, kind: Kind) -> str:
    """A value as people read it: thousands separators, kW for watts, percent for fractions."""
    if value is None:
        return "n/a"
    if kind == "text" or isinstance(value, str):
        return str(value)
    if kind == "count":
        return f"{value:,}"
    if kind == "money":  # relative units run from fractions to thousands
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:,.1f}" if abs(value) >= 10 else f"{value:.3f}"
    if kind == "kw":
        return f"{value / 1000:,.1f}"
    if kind == "mwh":
        return f"{value / 1000:,.0f}"
    if kind == "percent":
        return f"{value:.1%}"
    if kind == "fraction":  # ratios against the paper: four significant digits show a 1 % difference
        return f"{value:.4g}"
    return f"{value:.3f}"


def deviation(computed: float, paper: float) -> str:
    return f"{computed / paper - 1:+.1%}"


@dataclass(frozen=True)
class Row:
    group: str
    label: str
    cells: list[str]


def rows(report: CostReport) -> list[Row]:
    return [Row(m.group, m.label, [fmt(m.value(d), m.kind) for d in report.designs]) for m in metrics(report)]


def titles(report: CostReport) -> dict[str, str]:
    return {d.key: d.title for d in report.designs}


def source_text(line: SourceLine) -> str:
    """`assumption: note`, or `source (note)`."""
    if line.assumption:
        return "assumption" + (f": {line.note or line.source}" if line.note or line.source else "")
    return line.source + (f" ({line.note})" if line.note else "")
