"""No chart of the cost HTML cuts its text: every label, total and tick sits inside the figure (matplotlib's own
text extents, the fonts it lays out with; no headless browser here). Before, the last x tick label hung past the
right edge (Fire-Flyer 2 at list prices: 350,000,000 to 807 px of 760), and a long total after the longest bar ran
past it (a fixed 18 % margin); nine-digit tick labels ran together."""

from __future__ import annotations

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text

from ffplan.plots import stacked_bars
from ffplan.report import charts
from ffplan.report.catalog import resolve_catalog
from ffplan.report.cost import build_report


def _cut(fig) -> list[tuple[str, float, float, float, float]]:
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw_without_rendering()
    box = fig.bbox
    out = []
    for text in fig.findobj(Text):
        if text.get_visible() and text.get_text():
            e = text.get_window_extent(renderer)
            if e.x0 < box.x0 - 0.5 or e.x1 > box.x1 + 0.5 or e.y0 < box.y0 - 0.5 or e.y1 > box.y1 + 0.5:
                out.append((text.get_text(), e.x0, e.x1, e.y0, e.y1))
    for ax in fig.axes:  # tick labels side by side must not run together
        ticks = sorted(
            ((t.get_window_extent(renderer), t.get_text()) for t in ax.get_xticklabels() if t.get_text()),
            key=lambda tick: tick[0].x0,
        )
        out += [
            (f"{a} overlaps {b}", ea.x1, eb.x0, 0, 0) for (ea, a), (eb, b) in zip(ticks, ticks[1:]) if ea.x1 > eb.x0
        ]
    return out


@pytest.mark.parametrize("preset", ["list-price", "paper"])
def test_no_chart_cuts_its_text(ff2_plan, monkeypatch, preset):
    drawn = []
    monkeypatch.setattr(charts, "svg", lambda fig, chart_id: drawn.append((chart_id, fig)) or "<svg></svg>")
    report = build_report(ff2_plan, resolve_catalog(ff2_plan, preset))
    assert len(charts.charts(report)) == len(drawn) == 5
    titles = {d.title for d in report.designs}
    for chart_id, fig in drawn:
        labels = {t.get_text() for t in fig.axes[0].get_yticklabels()}
        assert titles <= labels, chart_id  # the plan's own label among them
        assert _cut(fig) == [], chart_id


def test_a_long_total_stays_inside_the_figure():
    fig = stacked_bars(
        ["switches", "cables"],
        [("this plan: 8 two-layer planes of 2,048 ports", [5e8, 4e8]), ("HGX-H800 three-layer", [1e8, 2e8])],
        lambda v: f"{v:,.0f}",
    )
    assert _cut(fig) == []
