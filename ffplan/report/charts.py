"""Geometry of the HTML report's inline SVG charts: stacked horizontal bars, one per design.

The template draws exactly these rectangles and labels; every coordinate is computed here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ffplan.report.model import CostReport
from ffplan.report.view import Kind, fmt

WIDTH = 760
LABEL_WIDTH = 170
VALUE_WIDTH = 110  # room for the total to the right of the longest bar
BAR_HEIGHT = 26
BAR_GAP = 14
TOP = 34  # room for the legend
LEGEND_STEP = 150
LEGEND_TEXT_GAP = 16  # swatch plus a little air


@dataclass(frozen=True)
class Segment:
    series: int  # colour index
    x: float
    width: float
    title: str  # tooltip


@dataclass(frozen=True)
class Bar:
    label: str
    y: float
    text_y: float
    segments: list[Segment]
    total: str
    total_x: float


@dataclass(frozen=True)
class LegendItem:
    series: int
    label: str
    x: float
    text_x: float


@dataclass(frozen=True)
class Chart:
    id: str
    title: str
    width: int
    height: int
    bar_height: int
    label_x: float
    legend: list[LegendItem]
    bars: list[Bar]


def stacked(chart_id: str, title: str, series: list[str], data: list[tuple[str, list[float | None]]], kind: Kind) -> Chart | None:
    """One bar per (label, values); values stack in `series` order, scaled to the largest total. None when a
    value is unknown (unpriced)."""
    rows: list[tuple[str, list[float]]] = []
    for label, values in data:
        known = [value for value in values if value is not None]
        if len(known) < len(values):
            return None
        rows.append((label, known))
    longest = max((sum(values) for _, values in rows), default=0) or 1
    scale = (WIDTH - LABEL_WIDTH - VALUE_WIDTH) / longest
    bars = []
    for i, (label, stack) in enumerate(rows):
        y = TOP + i * (BAR_HEIGHT + BAR_GAP)
        x = float(LABEL_WIDTH)
        segments = []
        for s, value in enumerate(stack):
            width = value * scale
            segments.append(Segment(s, round(x, 2), round(width, 2), f"{series[s]}: {fmt(value, kind)}"))
            x += width
        bars.append(Bar(label, y, y + BAR_HEIGHT * 0.68, segments, fmt(sum(stack), kind), round(x + 6, 2)))
    legend = [LegendItem(s, name, x := LABEL_WIDTH + s * LEGEND_STEP, x + LEGEND_TEXT_GAP) for s, name in enumerate(series)]
    height = TOP + len(rows) * (BAR_HEIGHT + BAR_GAP)
    return Chart(chart_id, title, WIDTH, height, BAR_HEIGHT, LABEL_WIDTH - 8, legend, bars)


def _per(value: float | None, count: int) -> float | None:
    return None if value is None else value / count


def charts(report: CostReport) -> list[Chart]:
    """The charts whose every value is known: one with an unpriced figure (None) is left out, not drawn short."""
    designs = report.designs
    drawn = [
        stacked("cost", f"Cost per design ({report.currency})", ["servers", "switches", "cables"],
                [(d.title, [d.cost.servers, d.cost.switches, d.cost.cables]) for d in designs], "money"),
        stacked("network", f"Network cost per design ({report.currency})", ["switches", "cables"],
                [(d.title, [d.cost.switches, d.cost.cables]) for d in designs], "money"),
        stacked("per-endpoint", f"Network cost per endpoint ({report.currency})", ["switches", "cables"],
                [(d.title, [_per(d.cost.switches, d.endpoints), _per(d.cost.cables, d.endpoints)]) for d in designs],
                "money"),
        stacked("power", "Average power per design (kW)", ["nodes", "switches"],
                [(d.title, [d.power.nodes_average_w, d.power.switches_w]) for d in designs], "kw"),
        stacked("switches", "Switches per layer", ["leaf", "spine", "core"],
                [(d.title, [d.switches["leaf"], d.switches["spine"], d.switches["core"]]) for d in designs], "count"),
    ]
    return [chart for chart in drawn if chart is not None]
