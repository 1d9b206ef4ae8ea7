"""Write a CostReport as a rich table, markdown, self-contained HTML, JSON or CSV."""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from enum import Enum
from functools import cache
from typing import TYPE_CHECKING

from rich.console import Console, Group, JustifyMethod
from rich.table import Table

from ffplan.report.charts import charts
from ffplan.report.model import CostReport
from ffplan.report.view import deviation, fmt, metrics, rows, source_text, titles
from ffplan.resources import templates_dir

if TYPE_CHECKING:
    from jinja2 import Environment


class ReportFormat(str, Enum):
    TABLE = "table"
    MARKDOWN = "markdown"
    HTML = "html"
    JSON = "json"
    CSV = "csv"


FORMATS = tuple(f.value for f in ReportFormat)


@cache
def _environment() -> Environment:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape  # not for `ffplan lint`

    env = Environment(
        loader=FileSystemLoader(templates_dir() / "reports"),
        undefined=StrictUndefined,
        autoescape=select_autoescape(["html.j2"], default_for_string=False),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["ratio"] = lambda value: fmt(value, "fraction")
    env.filters["deviation"] = lambda r: deviation(r.computed, r.paper)
    env.filters["number"] = lambda value: f"{value:,g}"
    env.filters["source"] = source_text
    return env


def _template(name: str, report: CostReport, **extra: object) -> str:
    return _environment().get_template(name).render(report=report, rows=rows(report), titles=titles(report), **extra)


def to_markdown(report: CostReport) -> str:
    return _template("cost.md.j2", report)


def to_html(report: CostReport) -> str:
    return _template("cost.html.j2", report, charts=charts(report))


def to_json(report: CostReport) -> str:
    return report.model_dump_json(indent=2) + "\n"


# CSV columns whose unit differs from the table's: the header names the unit, the value is exact in it.
# kind -> (table label suffix, CSV label suffix, power of ten from the model's value to the CSV unit)
_CSV_UNITS = {"kw": (" (kW)", " (W)", 0), "mwh": (" (MWh)", " (MWh)", -3)}


def to_csv(report: CostReport) -> str:
    """One row per metric, one column per design; exact numbers in the unit the header names (W, MWh, the
    catalog's currency), no thousands separators or exponents."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["group", "metric"] + [d.key for d in report.designs])
    for m in metrics(report):
        label, exponent = m.label, 0
        if m.kind in _CSV_UNITS:
            table_suffix, csv_suffix, exponent = _CSV_UNITS[m.kind]
            label = label.replace(table_suffix, csv_suffix)
        writer.writerow([m.group, label] + [_exact(m.value(d), exponent) for d in report.designs])
    return buf.getvalue()


def _exact(value: float | str | None, exponent: int) -> str:
    """A number in plain decimal notation to 15 significant digits (all a float holds reliably, so sums show
    363.5812, not 363.58119999999997), shifted by 10**exponent in decimal (kWh -> MWh adds no rounding)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return f"{Decimal(f'{value:.15g}').scaleb(exponent).normalize():f}"


def table_renderables(report: CostReport) -> Group:
    meta = (
        f"[bold]{report.title}[/]\ninput {report.input}, counted from "
        f"{'the plan' if report.basis == 'plan' else 'sizing only (no placement)'}; catalog {report.catalog}, "
        f"prices in {report.currency}{' (relative units)' if report.relative_units else ''}"
    )
    designs = Table(title="Designs", title_justify="left", show_lines=False)
    designs.add_column("")
    for d in report.designs:
        designs.add_column(d.title, justify="right")
    group = None
    for row in rows(report):
        if row.group != group:
            designs.add_section()
            designs.add_row(f"[bold]{row.group}[/]", *[""] * len(report.designs))
            group = row.group
        designs.add_row(row.label, *row.cells)
    names = titles(report)
    ratios = Table(title="Against the paper", title_justify="left")
    ratio_columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("ratio", "left"),
        ("designs", "left"),
        ("ffplan", "right"),
        ("paper", "right"),
        ("diff", "right"),
        ("paper's numbers", "left"),
    )
    for col, justify in ratio_columns:
        ratios.add_column(col, justify=justify)
    for r in report.ratios:
        ratios.add_row(
            r.name,
            f"{names[r.numerator]} / {names[r.denominator]}",
            fmt(r.computed, "fraction"),
            fmt(r.paper, "fraction"),
            deviation(r.computed, r.paper),
            r.paper_basis,
        )
    checks = Table(title="Published counts, recomputed by ffplan", title_justify="left")
    for col in ("configuration", "paper", "ffplan", "why"):
        checks.add_column(col)
    for c in report.paper_checks:
        checks.add_row(c.item, c.paper, c.computed, c.reason)
    notes = "\n".join(f"- {n}" for n in report.notes)
    return Group(meta, designs, *([ratios] if report.ratios else []), checks, notes)


def render(report: CostReport, fmt_name: str, width: int = 160) -> str:
    """The report as text in one of FORMATS (`table` as plain text, for files)."""
    if fmt_name == "table":
        text = io.StringIO()
        Console(file=text, width=width, highlight=False, color_system=None).print(table_renderables(report))
        return text.getvalue()
    return {"markdown": to_markdown, "html": to_html, "json": to_json, "csv": to_csv}[fmt_name](report)
