"""`ffplan report cost INVENTORY_OR_PLAN`: the Fire-Flyer design against a single three-layer tree and a DGX-A100 cluster."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from ffplan.catalog import PRESETS
from ffplan.cli.common import err, fail, out, stage_errors, stage_progress
from ffplan.inventory import LoadedInventory
from ffplan.plan import load_plan
from ffplan.plan.model import Plan
from ffplan.progress import DESIGN_STAGES
from ffplan.report.cost import EnergyOptions, build_report, inventory_location, plan_location, resolve_catalog
from ffplan.report.output import FORMATS, render, table_renderables

PLAN_SNIFF_BYTES = 64 * 1024

Format = Enum("Format", {name: name for name in FORMATS}, type=str)
Preset = Enum("Preset", {name: name for name in PRESETS}, type=str)

report_app = typer.Typer(help="Reports computed from an inventory or a plan.", no_args_is_help=True)


def _is_plan(path: Path) -> bool:
    """A plan starts (after its header comment) with `plan_version:`; anything else is taken as an inventory."""
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            head = fh.read(PLAN_SNIFF_BYTES)
    except OSError:
        return False  # the inventory loader reports the unreadable file, located
    first = next((line for line in head.splitlines() if line.strip() and not line.lstrip().startswith("#")), "")
    return first.startswith("plan_version:")


def cost_command(
    input_file: Path = typer.Argument(..., metavar="INVENTORY_OR_PLAN", help="Inventory YAML, or a plan.yaml written by `ffplan design`."),
    gpus: int = typer.Option(None, "--gpus", min=1, help="Size the designs for this many GPUs with the plan's node models and zone shape (sizing only, no placement)."),
    preset: Preset = typer.Option(None, "--preset", help="Built-in catalog (default: the inventory's catalog.preset, carried by the plan, else paper)."),
    catalog_file: Path = typer.Option(None, "--catalog", help="YAML with preset, currency, prices, power_w and cable keys; overrides the inventory's catalog block."),
    fmt: Format = typer.Option("table", "--format", "-f", help="Output format."),
    output: Path = typer.Option(None, "-o", "--output", help="Write to FILE instead of stdout."),
    years: float = typer.Option(None, "--years", min=0, help="Add energy use and cost over this many years."),
    pue: float = typer.Option(1.3, "--pue", min=1.0, help="Power usage effectiveness, with --years."),
    kwh_price: float = typer.Option(None, "--kwh-price", min=0, help="Price per kWh, with --years (in the catalog's currency to be added to the total)."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress messages."),
) -> None:
    """Compare the Fire-Flyer design with the same nodes on one three-layer fat-tree and with DGX-A100 nodes
    at equal GPU count: switches, cables, cost, power, cost-performance, and the paper's figures beside them.

    Example: ffplan report cost inventories/fire-flyer-2.yaml --format html -o cost.html
    """
    if (years is None) != (kwh_price is None):
        fail("--years and --kwh-price go together", "give both, e.g. --years 5 --kwh-price 0.12")
    with stage_errors():
        if _is_plan(input_file):  # the plan alone: the report never reads the inventory
            plan = load_plan(input_file)
            plan_file, where = input_file, plan_location(plan, input_file)
        else:
            loaded, plan = _design(input_file, quiet)
            plan_file, where = None, inventory_location(loaded.source.file, loaded.source.positions)
        catalog = resolve_catalog(plan, preset.value if preset else None, catalog_file, plan_file)
        energy = EnergyOptions(years, pue, kwh_price) if years is not None else None
        report = build_report(plan, catalog, gpus=gpus, energy=energy, input_name=str(input_file), where=where)
    if output is None and fmt.value == "table":
        out.print(table_renderables(report))
        return
    text = render(report, fmt.value)
    if output is None:
        out.file.write(text)
        return
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror}", "check the path and its permissions")
    if not quiet:
        err.print(f"wrote {output}")


def _design(path: Path, quiet: bool) -> tuple[LoadedInventory, Plan]:
    """Run the designer in-process, behind the same lint barrier as `ffplan design`."""
    from ffplan.design import design
    from ffplan.lint.gate import require_clean

    loaded = require_clean(path)
    with stage_progress(f"designing {loaded.inventory.name} for the report", DESIGN_STAGES, quiet) as on_stage:
        return loaded, design(loaded, on_stage=on_stage)


def register(app: typer.Typer) -> None:
    report_app.command("cost")(cost_command)
    app.add_typer(report_app, name="report")
