"""`ffplan report cost [INVENTORY_OR_PLAN]`: the plan's design (Fire-Flyer zones, planes, a three-layer tree) against
a three-layer tree and 8-NIC-node fabrics (three-layer, rail-optimized, multi-plane), or those alone at `--gpus N`.
`ffplan report facility INVENTORY_OR_PLAN`: the racks' power and cooling, and the floor map."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ffplan.catalog import Preset
from ffplan.cli.common import err, fail, out, plan_file, stage_errors, stage_progress, write_output
from ffplan.codes.report import COMPARISON_NOT_BUILDABLE
from ffplan.diagnostics import did_you_mean, option_error
from ffplan.diagnostics.formats import format_text
from ffplan.report.designs import DEFAULT_WITH_MULTI_NIC_PLAN, DEFAULT_WITH_PLAN, DEFAULT_WITHOUT_PLAN, DESIGNS, RENAMED
from ffplan.report.facility import FacilityFormat
from ffplan.report.output import ReportFormat, render, table_renderables

if TYPE_CHECKING:
    from ffplan.inventory import LoadedInventory
    from ffplan.plan.model import Plan

PLAN_SNIFF_BYTES = 64 * 1024


def _is_plan(path: Path) -> bool:
    """A plan starts (after its header comment) with `plan_version:`; anything else is taken as an inventory."""
    if not path.is_file():  # a FIFO would block here; the loader refuses what is not a regular file, located
        return False
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            head = fh.read(PLAN_SNIFF_BYTES)
    except OSError:
        return False  # the inventory loader reports the unreadable file, located
    first = next((line for line in head.splitlines() if line.strip() and not line.lstrip().startswith("#")), "")
    return first.startswith("plan_version:")


def cost_command(
    input_file: Path = typer.Argument(
        None,
        metavar="INVENTORY_OR_PLAN",
        help="Inventory YAML, or a plan.yaml written by `ffplan design` (or its folder). Without it, --gpus sizes the catalog's reference node and fabric switch.",
    ),
    gpus: int = typer.Option(
        None,
        "--gpus",
        min=1,
        help="Size the designs for this many GPUs with the plan's node models and layout (sizing only, no placement); required without INVENTORY_OR_PLAN.",
    ),
    compare: str = typer.Option(
        None,
        "--compare",
        metavar="DESIGN,...",
        help=f"Designs to compare, comma-separated: {', '.join(DESIGNS)} (plan is the plan's own design, whatever its layout, plan-ft3 its nodes on a three-layer tree; default with INVENTORY_OR_PLAN: {','.join(DEFAULT_WITH_PLAN)}, or {','.join(DEFAULT_WITH_MULTI_NIC_PLAN)} when its nodes have several NICs; without: {','.join(DEFAULT_WITHOUT_PLAN)}).",
    ),
    preset: Preset = typer.Option(
        None,
        "--preset",
        help="Built-in catalog (default: the inventory's catalog.preset, carried by the plan, else paper).",
    ),
    catalog_file: Path = typer.Option(
        None,
        "--catalog",
        help="YAML with preset, currency, prices, power_w and cable keys; overrides the inventory's catalog block.",
    ),
    fmt: ReportFormat = typer.Option("table", "--format", "-f", help="Output format."),
    output: Path = typer.Option(None, "-o", "--output", help="Write to FILE instead of stdout."),
    years: float = typer.Option(None, "--years", min=0, help="Add energy use and cost over this many years."),
    pue: float = typer.Option(1.3, "--pue", min=1.0, help="Power usage effectiveness, with --years."),
    kwh_price: float = typer.Option(
        None,
        "--kwh-price",
        min=0,
        help="Price per kWh, with --years (in the catalog's currency to be added to the total).",
    ),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress messages."),
) -> None:
    """Compare the plan's design (Fire-Flyer zones, planes, a three-layer tree) with the same nodes on one
    three-layer fat-tree and with 8-NIC nodes (the catalog's DGX-A100 or HGX-H800, or the plan's own when
    they have a NIC per plane or rail) on a three-layer, rail-optimized or multi-plane fabric at equal GPU
    count: switches, cables per kind, cost, cost per endpoint, power, and the papers' figures beside them.

    Example: ffplan report cost inventories/fire-flyer-2.yaml --format html -o cost.html
    Example: ffplan report cost --gpus 16384 --compare mpft,ft3,rail-optimized --preset deepseek-v3
    Example: ffplan report cost inventories/dgx-superpod-4k.yaml -f markdown
    """
    if (years is None) != (kwh_price is None):
        fail("--years and --kwh-price go together", "give both, e.g. --years 5 --kwh-price 0.12")
    if input_file is None and gpus is None:
        fail(
            "without INVENTORY_OR_PLAN, --gpus is required", "e.g. ffplan report cost --gpus 16384 --preset deepseek-v3"
        )
    from ffplan.plan import load_plan
    from ffplan.report.catalog import inventory_location, plan_location, resolve_catalog, resolve_preset
    from ffplan.report.cost import ComparisonError, build_report
    from ffplan.report.pricing import EnergyOptions

    if input_file is not None:
        input_file = plan_file(input_file)
    with stage_errors():
        designs = _designs(compare) if compare is not None else None
        plan = plan_path = where = None  # no input: sized from the catalog alone
        if input_file is not None and _is_plan(input_file):  # the plan alone: the report never reads the inventory
            plan = load_plan(input_file)
            plan_path, where = input_file, plan_location(plan, input_file)
        elif input_file is not None:
            loaded, plan = _design(input_file, quiet)
            plan_path, where = None, inventory_location(loaded.source.file, loaded.source.positions)
        chosen = preset.value if preset else None
        catalog = (
            resolve_catalog(plan, chosen, catalog_file, plan_path) if plan else resolve_preset(chosen, catalog_file)
        )
        energy = EnergyOptions(years, pue, kwh_price) if years is not None else None
        try:
            report = build_report(
                plan, catalog, gpus=gpus, energy=energy, input_name=str(input_file or ""), where=where, compare=designs
            )
        except ComparisonError as exc:
            raise option_error(
                COMPARISON_NOT_BUILDABLE, "--compare" if compare else "--gpus", exc.message, exc.hint
            ) from None
    sys.stderr.write(format_text(report.warnings))  # unpriced models: the report shows n/a where they count
    if output is None and fmt.value == "table":
        out.print(table_renderables(report))
        return
    _write(render(report, fmt.value), output, quiet)


def _designs(compare: str) -> tuple[str, ...]:
    """`--compare a,b`: known design names, each once, in the order given."""

    names = tuple(dict.fromkeys(name.strip() for name in compare.split(",") if name.strip()))
    for name in names:
        if name in RENAMED:
            raise option_error(
                COMPARISON_NOT_BUILDABLE,
                "--compare",
                f"the design '{name}' is now named '{RENAMED[name]}'",
                f"use --compare {RENAMED[name]} (it is the plan's own layout, whatever it is)",
            )
        if name not in DESIGNS:
            raise option_error(
                COMPARISON_NOT_BUILDABLE,
                "--compare",
                f"no design named '{name}'",
                did_you_mean(name, DESIGNS) or "designs: " + ", ".join(DESIGNS),
            )
    if not names:
        raise option_error(COMPARISON_NOT_BUILDABLE, "--compare", "names no design", "designs: " + ", ".join(DESIGNS))
    return names


def _design(path: Path, quiet: bool) -> tuple[LoadedInventory, Plan]:
    """Run the designer in-process, behind the same lint barrier as `ffplan design`."""
    from ffplan.design import design, design_steps
    from ffplan.lint.gate import require_clean

    loaded = require_clean(path)
    with stage_progress(f"designing {loaded.inventory.name} for the report", design_steps(loaded), quiet) as on_stage:
        return loaded, design(loaded, on_stage=on_stage)


def facility_command(
    input_file: Path = typer.Argument(
        ...,
        metavar="INVENTORY_OR_PLAN",
        help="Inventory YAML, or a plan.yaml written by `ffplan design` (or its folder).",
    ),
    fmt: FacilityFormat = typer.Option("table", "--format", "-f", help="Output format."),
    output: Path = typer.Option(None, "-o", "--output", help="Write to FILE instead of stdout."),
    floor_map_file: Path = typer.Option(
        None,
        "--floor-map",
        metavar="FILE.png",
        help="Also draw the floor (rows x slots, racks coloured by peak kW) as a PNG.",
    ),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress messages."),
) -> None:
    """Per rack and per row: typical and peak kW, cooling, limit (the lower of power budget and cooling) and
    headroom, read from the plan's racks; --floor-map draws the floor.

    Example: ffplan report facility out/fire-flyer-2/plan --floor-map floor.png
    Example: ffplan report facility inventories/lab.yaml -f markdown -o facility.md
    """
    from ffplan.plan import load_plan
    from ffplan.report.facility import build_facility, floor_map, render_facility
    from ffplan.report.facility import table_renderables as facility_renderables

    if input_file.is_dir():
        input_file = input_file / "plan.yaml"
    with stage_errors():
        plan = load_plan(input_file) if _is_plan(input_file) else _design(input_file, quiet)[1]
    report = build_facility(plan)
    if not report.racks:
        fail(f"{input_file}: the plan has no racks (written by an older ffplan)", "re-run `ffplan design`")
    if output is None and fmt.value == "table":
        out.print(facility_renderables(report))
    else:
        _write(render_facility(report, fmt.value), output, quiet)
    if floor_map_file is not None:
        try:
            floor_map_file.parent.mkdir(parents=True, exist_ok=True)
            floor_map(report, floor_map_file)
        except OSError as exc:
            fail(f"cannot write {floor_map_file}: {exc.strerror}", "check the path and its permissions")
        if not quiet:
            err.print(f"wrote {floor_map_file}")


def _write(text: str, output: Path | None, quiet: bool) -> None:
    """Text to stdout, or to `output` (its folder created)."""
    if output is None:
        out.file.write(text)
        return
    write_output(output, text)
    if not quiet:
        err.print(f"wrote {output}")


def register(app: typer.Typer) -> None:
    report_app = typer.Typer(help="Reports computed from an inventory or a plan.", no_args_is_help=True)
    report_app.command("cost")(cost_command)
    report_app.command("facility")(facility_command)
    app.add_typer(report_app, name="report")
