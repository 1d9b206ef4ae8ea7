"""Charts for the HTML reports (cost, analyze, failure sweep), drawn by matplotlib as inline SVG.

The same data gives the same bytes: no date or tool in the file's metadata, element ids from a fixed salt (the
chart's own id, so two charts on one page never share one), text left as text (the page's font). Figures are made
with matplotlib's object API on the Agg canvas, never pyplot: no global figure state, no display needed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # matplotlib is imported when a chart is drawn: no other command pays for it
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure
    from matplotlib.text import Text

COLOURS = ("#3b6ea8", "#e08a2c", "#5aa469", "#b8504b", "#8a6fb5", "#7a7f87")
INK = "#1d2430"
GRID = "#e4e7ec"
WIDTH = 7.6  # inches at 100 dpi: 760 px, the report's chart width
FONT_SIZE = 9.5


def figure(height: float, columns: int = 1, rows: int = 1) -> tuple[Figure, list[Axes]]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH, height), dpi=100, layout="constrained")
    grid = fig.subplots(rows, columns, squeeze=False)
    axes = [ax for row in grid for ax in row]
    for ax in axes:
        ax.spines[["top", "right"]].set_visible(False)
        ax.tick_params(colors=INK, labelsize=FONT_SIZE)
        ax.set_axisbelow(True)
    return fig, axes


def svg(fig: Figure, chart_id: str) -> str:
    """The figure as an <svg> element to put inline in HTML (no XML prologue, no metadata)."""
    import io

    from matplotlib import rc_context

    buf = io.StringIO()
    with rc_context({"svg.hashsalt": f"ffplan-{chart_id}", "svg.fonttype": "none", "font.size": FONT_SIZE}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buf.getvalue()
    return text[text.index("<svg") :]


def png(fig: Figure, path: str) -> None:
    """The figure as a PNG file (to look at a chart without a browser)."""
    fig.savefig(path, format="png", metadata={"Software": None})


def tick(value: float, _: object = None) -> str:
    """An axis tick: thousands separated, no decimals a round number does not need."""
    return f"{int(value):,}" if value == int(value) else f"{value:,.6g}"


def stacked_bars(
    series: Sequence[str], rows: Sequence[tuple[str, Sequence[float]]], label: Callable[[float], str]
) -> Figure:
    """One horizontal bar per row, its values stacked in `series` order, the first row on top, each bar's total
    printed after it by `label`."""
    fig, (ax,) = figure(0.9 + 0.42 * len(rows))
    names = [name for name, _ in rows]
    left: list[float] = [0] * len(rows)  # sums of counts stay integers
    for s, name in enumerate(series):
        values = [stack[s] for _, stack in rows]
        ax.barh(names, values, left=left, height=0.62, color=COLOURS[s % len(COLOURS)], label=name)
        left = [a + b for a, b in zip(left, values)]
    longest = max(left, default=0) or 1
    totals = [
        ax.text(total + longest * 0.01, y, label(total), va="center", fontsize=FONT_SIZE, color=INK)
        for y, total in enumerate(left)
    ]
    ax.set_xlim(0, longest * 1.18)
    ax.invert_yaxis()
    ax.xaxis.grid(True, color=GRID)
    ax.xaxis.set_major_formatter(tick)
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncols=len(series), frameon=False, fontsize=FONT_SIZE)
    _fit_text(fig, ax, totals)
    return fig


def _fit_text(fig: Figure, ax: Axes, totals: Sequence[Text]) -> None:
    """Keep every text inside the figure and apart: widen the x range until each total printed after its bar ends
    inside the axes (a fixed 18 % margin cut a long total, 900,000,000, at the figure's edge); fewer x ticks while
    their labels overlap (nine-digit money ran together); a right margin for the last tick label, centred on the
    axes' right end (constrained layout lets it hang past the figure). The layout runs again after each change."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.layout_engine import ConstrainedLayoutEngine
    from matplotlib.ticker import MaxNLocator

    renderer = FigureCanvasAgg(fig).get_renderer()
    right, bins = 1.0, 9  # the layout's right edge (a fraction of the width); at most bins + 1 x ticks
    ax.xaxis.set_major_locator(MaxNLocator(nbins=bins))
    for _ in range(12):
        fig.draw_without_rendering()
        box = ax.get_window_extent(renderer)
        over = max((t.get_window_extent(renderer).x1 for t in totals), default=box.x1) - box.x1
        ticks = sorted(
            (t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_visible() and t.get_text()),
            key=lambda e: e.x0,
        )
        crowded = any(a.x1 + 4 > b.x0 for a, b in zip(ticks, ticks[1:]))
        hang = max((e.x1 for e in ticks), default=0.0) - fig.bbox.x1
        if over > 0:
            low, high = ax.get_xlim()
            ax.set_xlim(low, high + (over + 2) * (high - low) / box.width)
        elif crowded and bins > 1:
            bins -= 1
            ax.xaxis.set_major_locator(MaxNLocator(nbins=bins))
        elif hang > 0:
            right -= (hang + 2) / fig.bbox.width
            engine = fig.get_layout_engine()
            assert isinstance(engine, ConstrainedLayoutEngine)  # figure() makes every figure with it
            engine.set(rect=(0, 0, right, 1))
        else:
            return


def stacked_histogram(
    axes: Axes,
    groups: Sequence[tuple[str, Sequence[float]]],
    bins: Sequence[float],
    marks: Sequence[tuple[str, float]] = (),
    log: bool = False,
    legend: bool = True,
) -> None:
    """A histogram of several groups stacked (a colour each), with vertical lines at `marks`, all in the legend
    under the axes (`legend`: else the caller's figure legend). `log`: a logarithmic count axis, so that the few links or cases at the top show beside the many."""
    axes.hist(
        [list(values) for _, values in groups],
        bins=list(bins),
        stacked=True,
        label=[name for name, _ in groups],
        color=[COLOURS[i % len(COLOURS)] for i in range(len(groups))],
        edgecolor="white",
        linewidth=0.4,
        log=log,
    )
    for i, (name, x) in enumerate(marks):
        axes.axvline(
            x,
            color=INK,
            linestyle=(0, (4, 2)) if i == 0 else "-",
            linewidth=1.2,
            label=f"{name} {tick(x)}" if legend else name,
        )
    axes.set_xlim(bins[0], bins[-1])
    axes.yaxis.grid(True, color=GRID)
    if log:
        axes.set_ylim(bottom=0.7)  # a bin of one shows
    else:
        axes.yaxis.set_major_formatter(tick)
    if legend:
        axes.legend(
            frameon=False,
            fontsize=FONT_SIZE - 0.5,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.22),
            ncols=min(4, len(groups) + len(marks)),
        )


def integer_ticks(axis: Axis) -> None:
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))
    axis.set_major_formatter(tick)


def integer_bins(low: float, high: float, most: int = 40) -> list[float]:
    """Bin edges over [low, high] for integer counts: one bin per value when they fit, else `most` equal steps."""
    low, high = float(low), float(high)
    width = max(1.0, -(-(high - low + 1) // most))
    edges = [low - 0.5]
    while edges[-1] < high + 0.5:
        edges.append(edges[-1] + width)
    return edges
