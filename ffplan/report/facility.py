"""The facility view of a plan: per rack and per row, typical and peak kW, cooling, limit and headroom, and a floor
map (rows x slots, each rack coloured by its peak kW).

Everything is read from the plan's `racks`, which the designer computed with ffplan.design.facility (the same
model figures the cost report prices: `FacilityReport.agrees_with_cost` is checked by the tests).
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict
from rich.console import Console, Group
from rich.table import Table

if TYPE_CHECKING:  # the CLI imports FacilityFormat for its options; the plan model loads with a plan
    from ffplan.plan.model import Plan, RackPower


class FacilityFormat(str, Enum):
    TABLE = "table"
    MARKDOWN = "markdown"
    JSON = "json"
    CSV = "csv"


class _Row(BaseModel):
    model_config = ConfigDict(frozen=True)

    typical_kw: float
    peak_kw: float
    limit_kw: float | None  # the lower of power budget and cooling limit; None when the rack gives neither
    headroom_kw: float | None  # limit - peak; negative when over


class RackLine(_Row):
    name: str
    row: int
    slot: int
    cooling: str  # "air", ..., or "-"
    nodes: int
    switches: int


class RowLine(_Row):
    row: int
    racks: int
    cooling: str  # the cooling types of its racks, comma-separated
    racks_without_limit: int


class FacilityReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    plan: str
    racks: list[RackLine]
    rows: list[RowLine]
    total_typical_kw: float
    total_peak_kw: float
    over: list[str]  # racks whose peak is over their limit


def _limit_w(rack: RackPower) -> float | None:
    limits = [w for w in (rack.power_budget_w, rack.cooling_limit_w) if w is not None]
    return min(limits) if limits else None


def _kw(watts: float) -> float:
    return round(watts / 1000, 3)


def build_facility(plan: Plan) -> FacilityReport:
    racks = []
    by_row: dict[int, list[RackPower]] = defaultdict(list)
    for r in plan.racks:
        limit = _limit_w(r)
        racks.append(
            RackLine(
                name=r.name,
                row=r.row,
                slot=r.slot,
                cooling=r.cooling or "-",
                nodes=r.nodes,
                switches=r.switches,
                typical_kw=_kw(r.typical_w),
                peak_kw=_kw(r.peak_w),
                limit_kw=None if limit is None else _kw(limit),
                headroom_kw=None if limit is None else _kw(limit - r.peak_w),
            )
        )
        by_row[r.row].append(r)
    rows = []
    for row, members in sorted(by_row.items()):
        limits = [_limit_w(r) for r in members]
        known = [w for w in limits if w is not None]
        limited_peak = sum(r.peak_w for r, w in zip(members, limits) if w is not None)
        rows.append(
            RowLine(
                row=row,
                racks=len(members),
                cooling=", ".join(sorted({r.cooling for r in members if r.cooling})) or "-",
                typical_kw=_kw(sum(r.typical_w for r in members)),
                peak_kw=_kw(sum(r.peak_w for r in members)),
                limit_kw=_kw(sum(known)) if known else None,
                headroom_kw=_kw(sum(known) - limited_peak) if known else None,
                racks_without_limit=len(limits) - len(known),
            )
        )
    return FacilityReport(
        plan=plan.inventory.name,
        racks=racks,
        rows=rows,
        total_typical_kw=_kw(sum(r.typical_w for r in plan.racks)),
        total_peak_kw=_kw(sum(r.peak_w for r in plan.racks)),
        over=[line.name for line in racks if line.headroom_kw is not None and line.headroom_kw < 0],
    )


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


_RACK_COLUMNS = (
    "rack",
    "row",
    "slot",
    "cooling",
    "nodes",
    "switches",
    "typical kW",
    "peak kW",
    "limit kW",
    "headroom kW",
)
_ROW_COLUMNS = ("row", "racks", "cooling", "typical kW", "peak kW", "limit kW", "headroom kW")


def _rack_cells(r: RackLine) -> list[str]:
    return [
        r.name,
        str(r.row),
        str(r.slot),
        r.cooling,
        str(r.nodes),
        str(r.switches),
        _num(r.typical_kw),
        _num(r.peak_kw),
        _num(r.limit_kw),
        _num(r.headroom_kw),
    ]


def _row_cells(r: RowLine) -> list[str]:
    limit = _num(r.limit_kw) + (f" ({r.racks_without_limit} without)" if r.racks_without_limit else "")
    return [str(r.row), str(r.racks), r.cooling, _num(r.typical_kw), _num(r.peak_kw), limit, _num(r.headroom_kw)]


def _summary(report: FacilityReport) -> str:
    over = f"; over their limit: {', '.join(report.over)}" if report.over else "; every rack within its limits"
    return (
        f"{report.plan}: {len(report.racks)} racks in {len(report.rows)} rows, {_num(report.total_typical_kw)} kW "
        f"typical, {_num(report.total_peak_kw)} kW peak{over}"
    )


def _markdown(report: FacilityReport) -> str:
    def table(columns: tuple[str, ...], lines: list[list[str]]) -> list[str]:
        return ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"] + [
            "| " + " | ".join(cells) + " |" for cells in lines
        ]

    out = [f"# Facility: {report.plan}", "", _summary(report), "", "## Rows", ""]
    out += table(_ROW_COLUMNS, [_row_cells(r) for r in report.rows])
    out += ["", "## Racks", ""]
    out += table(_RACK_COLUMNS, [_rack_cells(r) for r in report.racks])
    return "\n".join(out) + "\n"


def _csv(report: FacilityReport) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(
        ["rack", "row", "slot", "cooling", "nodes", "switches", "typical_kw", "peak_kw", "limit_kw", "headroom_kw"]
    )
    for r in report.racks:
        writer.writerow(
            [
                r.name,
                r.row,
                r.slot,
                r.cooling,
                r.nodes,
                r.switches,
                r.typical_kw,
                r.peak_kw,
                "" if r.limit_kw is None else r.limit_kw,
                "" if r.headroom_kw is None else r.headroom_kw,
            ]
        )
    return buf.getvalue()


def table_renderables(report: FacilityReport) -> Group:
    tables = []
    for title, columns, lines in (
        ("Rows", _ROW_COLUMNS, [_row_cells(r) for r in report.rows]),
        ("Racks", _RACK_COLUMNS, [_rack_cells(r) for r in report.racks]),
    ):
        table = Table(title=title, title_justify="left")
        for i, col in enumerate(columns):
            table.add_column(col, justify="left" if i == 0 or col in ("rack", "cooling") else "right")
        for cells in lines:
            table.add_row(*cells)
        tables.append(table)
    return Group(_summary(report), *tables)


def render_facility(report: FacilityReport, fmt_name: str, width: int = 160) -> str:
    if fmt_name == "table":
        text = io.StringIO()
        Console(file=text, width=width, highlight=False, color_system=None).print(table_renderables(report))
        return text.getvalue()
    if fmt_name == "json":
        return report.model_dump_json(indent=2) + "\n"
    return {"markdown": _markdown, "csv": _csv}[fmt_name](report)


# Floor map: one cell per (row, slot), 110 x 80 pixels: a rack's name and kW legible at 100 % in 8-point type.
CELL_IN = (1.1, 0.8)
DPI = 100


def floor_map(report: FacilityReport, path: Path) -> None:
    """A PNG of the floor: racks at (slot, row), coloured by peak kW, outlined red when over their limit."""
    import matplotlib
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    from ffplan.plots import INK, png

    rows = sorted({r.row for r in report.racks})
    slots = sorted({r.slot for r in report.racks})
    lo_slot, hi_slot = slots[0], slots[-1]
    width = (hi_slot - lo_slot + 1) * CELL_IN[0] + 2.5
    height = len(rows) * CELL_IN[1] + 1.6
    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")  # object API on Agg, as ffplan.plots
    ax = fig.subplots()
    top = max([r.peak_kw for r in report.racks] + [1.0])
    norm = Normalize(vmin=0, vmax=top)
    cmap = matplotlib.colormaps["YlOrRd"]
    row_y = {row: i for i, row in enumerate(rows)}
    for r in report.racks:
        x, y = r.slot - lo_slot, row_y[r.row]
        over = r.headroom_kw is not None and r.headroom_kw < 0
        ax.add_patch(
            Rectangle(
                (x + 0.04, y + 0.06),
                0.92,
                0.88,
                facecolor=cmap(norm(r.peak_kw)),
                edgecolor="red" if over else "0.35",
                linewidth=3 if over else 0.8,
            )
        )
        dark = norm(r.peak_kw) > 0.6
        ink = "white" if dark else INK
        ax.text(x + 0.5, y + 0.27, r.name, ha="center", va="center", fontsize=8, color=ink)
        ax.text(
            x + 0.5, y + 0.5, f"{r.peak_kw:.1f} kW", ha="center", va="center", fontsize=9, fontweight="bold", color=ink
        )
        left = "" if r.headroom_kw is None else f", {r.headroom_kw:+.1f}"
        ax.text(x + 0.5, y + 0.73, f"{r.cooling}{left}", ha="center", va="center", fontsize=7, color=ink)
    ax.set_xlim(0, hi_slot - lo_slot + 1)
    ax.set_ylim(len(rows), 0)  # row 0 at the top, as a floor plan reads from the head of the hall
    ax.set_xticks(
        [s - lo_slot + 0.5 for s in range(lo_slot, hi_slot + 1)], [str(s) for s in range(lo_slot, hi_slot + 1)]
    )
    ax.set_yticks([i + 0.5 for i in range(len(rows))], [f"row {row}" for row in rows])
    ax.set_xlabel("slot")
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_title(
        f"{report.plan}: rack name, peak draw (kW), cooling and headroom (kW) to the lower of power budget "
        "and cooling limit; red outline: over it",
        loc="left",
        fontsize=11,
    )
    fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, fraction=0.02, pad=0.01, label="peak kW")
    png(fig, str(path))  # no version stamp: the same plan, the same bytes
