"""The HTML reports of `ffplan analyze --html` and `ffplan analyze --sweep --html`: every figure, table row and
chart is made here (charts by ffplan.plots, inline SVG); the templates (templates/reports/) only lay them out."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from markupsafe import Markup

from ffplan import plots
from ffplan.analyze.sweep import SWEEP_PATTERNS, SweepResult

if TYPE_CHECKING:
    from ffplan.analyze import PatternResult
    from ffplan.plan.model import RouteCheck

WORST_CASES = 10  # per pattern in the sweep's table
KINDS = ("cable", "spine", "core", "random")
RATIO_BINS = 30


@dataclass(frozen=True)
class Chart:
    id: str
    title: str
    svg: Markup


@dataclass(frozen=True)
class Table:
    title: str
    columns: list[str]
    numeric: list[bool]  # right-aligned columns
    rows: list[list[str]]


@dataclass
class Section:
    title: str  # the plane, or "" for a plan of one subnet
    tables: list[Table] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def analyze_page(plan: str, planes: list[tuple[str, list[PatternResult], RouteCheck, str]], several: bool) -> str:
    """`ffplan analyze --html`: per plane the patterns' table, and per pattern a histogram of the flows on every link
    by tier, with the lower bound and the maximum marked."""
    sections = []
    for plane, results, check, source in planes:
        prefix = f"{plane}-" if several else ""
        rows = [
            [
                r.pattern,
                r.scope,
                f"{r.flows:,}",
                f"{r.max_load:,}",
                f"{r.mean_load:,.1f}",
                f"{r.min_load:,}",
                f"{r.bound:,}",
                f"{r.ratio:.2f}",
                r.worst_phase,
                f"{r.unroutable:,}",
            ]
            for r in results
        ]
        table = Table(
            f"Flows per switch-to-switch link (routes: {source})",
            ["pattern", "scope", "flows", "max", "mean", "min", "lower bound", "ratio", "worst phase", "unroutable"],
            [False, False, True, True, True, True, True, True, False, True],
            rows,
        )
        notes = [f"{r.pattern} ({r.scope}): {r.description}; bound from the {r.bound_cut}." for r in results]
        notes.append(
            f"Routes: {check.ca_pair_detours:,} CA pairs and {check.switch_to_ca_detours:,} switch-to-CA routes "
            f"longer than the shortest path; unreachable: {check.unreachable_ca_pairs:,} CA pairs, "
            f"{check.unreachable_switch_to_ca:,} switch-to-CA routes, {check.unreachable_switch_lids:,} switch LIDs."
        )
        sections.append(
            Section(
                plane if several else "",
                [table],
                [_link_histogram(f"{prefix}{r.pattern}-{r.scope}", r) for r in results],
                notes,
            )
        )
    return _page(f"Link load per traffic pattern: {plan}", plan, sections)


def sweep_page(plan: str, planes: list[tuple[str, SweepResult]], several: bool) -> str:
    """`ffplan analyze --sweep --html`: per plane the worst case per kind, each pattern's worst link over the
    cases as a distribution (max / bound, stacked by kind of case), and the worst cases."""
    sections = []
    for plane, result in planes:
        summary = result.summary()
        intact = result.intact
        rows = [
            [
                "intact",
                "1",
                *(_load(p.max_load, p.bound, p.ratio) for p in intact.patterns.values()),
                str(intact.unreachable_ca_pairs),
                "0",
            ]
        ]
        rows += [
            [
                kind,
                f"{s['cases']:,}",
                *(_load(w["max"], w["bound"], w["ratio"]) for w in s["worst"].values()),
                f"{s['unreachable_ca_pairs']:,}",
                f"{s['max_routes_changed']:,}",
            ]
            for kind, s in summary.items()
        ]
        worst = Table(
            "Worst case per kind (max flows on one link / lower bound)",
            ["cases", "count", *SWEEP_PATTERNS, "unreachable CA pairs", "most routes changed"],
            [False, True, *(True for _ in SWEEP_PATTERNS), True, True],
            rows,
        )
        sections.append(
            Section(
                plane if several else "",
                [worst, _worst_cases(result)],
                [_ratio_distribution(f"{plane}-sweep" if several else "sweep", result)],
                [f"{name}: {text}." for name, (text, *_) in SWEEP_PATTERNS.items()],
            )
        )
    return _page(f"Failure sweep: {plan}", plan, sections)


def _page(title: str, plan: str, sections: list[Section]) -> str:
    from ffplan.templating import render_template

    return render_template("reports/analyze.html", title=title, plan=plan, sections=sections)


def _load(mx: int, bound: int, ratio: float) -> str:
    return f"{mx:,} / {bound:,} ({ratio:.2f})"


def _link_histogram(chart_id: str, r: PatternResult) -> Chart:
    fig, (ax,) = plots.figure(2.9)
    groups = [(tier, loads.tolist()) for tier, loads in r.loads_by_tier.items()]
    plots.stacked_histogram(
        ax,
        groups,
        plots.integer_bins(0, max(r.max_load, r.bound)),
        [("lower bound", r.bound), ("max", r.max_load)],
        log=True,
    )
    plots.integer_ticks(ax.xaxis)
    ax.set_xlabel("flows on one link (worst phase)")
    ax.set_ylabel("links (log scale)")
    title = (
        f"{r.pattern} ({r.scope}): {r.max_load:,} / {r.bound:,} flows on the busiest link ({r.ratio:.2f} x the bound)"
    )
    return Chart(chart_id, title, Markup(plots.svg(fig, chart_id)))  # matplotlib escapes the text it writes


def _ratio_distribution(chart_id: str, result: SweepResult) -> Chart:
    fig, axes = plots.figure(5.4, columns=2, rows=2)
    for ax, name in zip(axes, SWEEP_PATTERNS):
        groups = [
            (
                kind,
                [
                    c.patterns[name].ratio
                    for c in result.cases
                    if c.case.startswith(kind) and math.isfinite(c.patterns[name].ratio)
                ],
            )
            for kind in KINDS
        ]
        groups = [(kind, ratios) for kind, ratios in groups if ratios]
        intact = result.intact.patterns[name].ratio
        every = [x for _, ratios in groups for x in ratios] + [intact]
        pad = max(0.02, (max(every) - min(every)) * 0.04)  # the intact line inside the frame
        low, step = min(every) - pad, (max(every) - min(every) + 2 * pad) / RATIO_BINS
        plots.stacked_histogram(
            ax, groups, [low + i * step for i in range(RATIO_BINS + 1)], [("intact routes", intact)], legend=False
        )
        plots.integer_ticks(ax.yaxis)
        ax.set_title(
            f"{name}: busiest link / lower bound (intact {intact:.2f})",
            fontsize=plots.FONT_SIZE,
            color=plots.INK,
            loc="left",
        )
        ax.set_ylabel("cases")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), frameon=False, fontsize=plots.FONT_SIZE)
    return Chart(
        chart_id, "Each case's busiest link against the lower bound, per pattern", Markup(plots.svg(fig, chart_id))
    )  # matplotlib escapes the text it writes


def _worst_cases(result: SweepResult) -> Table:
    rows = []
    for name in SWEEP_PATTERNS:
        ranked = sorted(result.cases, key=lambda c: (-c.patterns[name].ratio, -c.patterns[name].max_load))
        for c in ranked[:WORST_CASES]:
            p = c.patterns[name]
            rows.append(
                [
                    name,
                    c.case,
                    f"{p.max_load:,}",
                    f"{p.bound:,}",
                    f"{p.ratio:.2f}",
                    f"{p.unroutable:,}",
                    f"{c.unreachable_ca_pairs:,}",
                    f"{c.routes_changed:,}",
                    "yes" if c.deadlock_free else "no",
                ]
            )
    return Table(
        f"The {WORST_CASES} worst cases per pattern",
        [
            "pattern",
            "case",
            "max",
            "bound",
            "ratio",
            "unroutable",
            "unreachable CA pairs",
            "routes changed",
            "deadlock-free",
        ],
        [False, False, True, True, True, True, True, True, False],
        rows,
    )
