"""The HTML report's charts: a stacked horizontal bar per design, drawn by matplotlib (ffplan.plots) as inline SVG."""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup

from ffplan.plots import stacked_bars, svg
from ffplan.report.model import CostReport
from ffplan.report.view import Kind, fmt


@dataclass(frozen=True)
class Chart:
    id: str
    title: str
    svg: Markup  # matplotlib's own SVG, put in the page as it is


def stacked(
    chart_id: str, title: str, series: list[str], data: list[tuple[str, list[float | None]]], kind: Kind
) -> Chart | None:
    """One bar per (label, values); values stack in `series` order. None when a value is unknown (unpriced)."""
    rows: list[tuple[str, list[float]]] = []
    for label, values in data:
        known = [value for value in values if value is not None]
        if len(known) < len(values):
            return None
        rows.append((label, known))
    fig = stacked_bars(series, rows, lambda value: fmt(value, kind))
    return Chart(chart_id, title, Markup(svg(fig, chart_id)))  # matplotlib escapes the text it writes


def _per(value: float | None, count: int) -> float | None:
    return None if value is None else value / count


def charts(report: CostReport) -> list[Chart]:
    """The charts whose every value is known: one with an unpriced figure (None) is left out, not drawn short."""
    designs = report.designs
    drawn = [
        stacked(
            "cost",
            f"Cost per design ({report.currency})",
            ["servers", "switches", "cables"],
            [(d.title, [d.cost.servers, d.cost.switches, d.cost.cables]) for d in designs],
            "money",
        ),
        stacked(
            "network",
            f"Network cost per design ({report.currency})",
            ["switches", "cables"],
            [(d.title, [d.cost.switches, d.cost.cables]) for d in designs],
            "money",
        ),
        stacked(
            "per-endpoint",
            f"Network cost per endpoint ({report.currency})",
            ["switches", "cables"],
            [(d.title, [_per(d.cost.switches, d.endpoints), _per(d.cost.cables, d.endpoints)]) for d in designs],
            "money",
        ),
        stacked(
            "power",
            "Average power per design (kW)",
            ["nodes", "switches"],
            [(d.title, [d.power.nodes_average_w, d.power.switches_w]) for d in designs],
            "kw",
        ),
        stacked(
            "switches",
            "Switches per layer",
            ["leaf", "spine", "core"],
            [(d.title, [d.switches["leaf"], d.switches["spine"], d.switches["core"]]) for d in designs],
            "count",
        ),
    ]
    return [chart for chart in drawn if chart is not None]
