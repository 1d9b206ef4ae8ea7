"""`ffplan analyze PLAN [--pattern ...]`: flows per link over the plan's routes (or OpenSM's dumped LFTs)."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path

import typer
from rich.table import Table

from ffplan.cli.common import EXIT_FINDINGS, err, fail, out, stage_errors
from ffplan.inventory.models import Role


class Format(str, Enum):
    table = "table"
    json = "json"


class Scope(str, Enum):
    zone = "zone"
    fabric = "fabric"


def analyze_command(
    plan_path: Path = typer.Argument(..., metavar="PLAN", help="plan.yaml or the folder `ffplan design` wrote."),
    pattern: list[str] = typer.Option([], "--pattern", "-p", help="all-to-all, shift, ring, double-binary-tree, storage-incast, storage-read (repeatable; default: all)."),
    scope: Scope = typer.Option(None, "--scope", help="zone: the pattern inside every zone at once; fabric: once over all zones (default per pattern, see docs/routing.md)."),
    role: list[Role] = typer.Option([], "--role", help="Only endpoints of this role (repeatable)."),
    lfts: Path = typer.Option(None, "--lfts", help="Analyze these LFTs instead of the plan's: dump_fts/ibroute output or opensm-lfts.dump."),
    topology: Path = typer.Option(None, "--topology", help="ibnetdiscover output: maps the dump's LIDs to port GUIDs when its entries carry none."),
    top: int = typer.Option(5, "--top", min=0, help="How many of the most loaded links to list."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="table or json."),
) -> None:
    """Count flows on every switch-to-switch link for traffic patterns; compare the worst link with the lower bound.

    Example: ffplan analyze out/fire-flyer-2/plan --pattern all-to-all --pattern shift
    """
    from ffplan.analyze import PATTERNS, analyze, read_lfts, read_topology_lids, topology_for
    from ffplan.inventory.source import read_text
    from ffplan.plan import load_plan
    from ffplan.plan.io import MAX_PLAN_BYTES

    names = pattern or list(PATTERNS)
    bad = [p for p in names if p not in PATTERNS]
    if bad:
        fail(f"unknown pattern {', '.join(bad)}", f"use one of {', '.join(PATTERNS)}")
    with stage_errors():
        path = plan_path / "plan.yaml" if plan_path.is_dir() else plan_path
        plan = load_plan(path)
    if plan.routing is None and lfts is None:
        fail("the plan has no routing tables", "re-run `ffplan design`, or pass OpenSM's tables with --lfts")
    topo = topology_for(plan)
    tables = None
    source = "plan"
    if lfts is not None:
        with stage_errors():  # read bounded, and no FIFO or device: a located FF003, exit 2
            text = read_text(lfts, MAX_PLAN_BYTES)
            lid_map = read_topology_lids(read_text(topology, MAX_PLAN_BYTES)) if topology else None
        read = read_lfts(text, topo, lid_map)
        if read.switches_read == 0:
            fail(f"{lfts}: no switch block matches a switch GUID of the plan", "is this the dump of this fabric?")
        tables = read.tables
        source = str(lfts)
        if read.missing_switches or read.unknown_switches or read.unmapped_lids:
            err.print(f"[yellow]note:[/] {len(read.missing_switches)} plan switches not in the dump (empty tables), "
                      f"{len(read.unknown_switches)} dump switches not in the plan, {read.unmapped_lids} entries not mapped")
    roles = tuple(r.value for r in role) or None
    results = analyze(plan, names, scope=scope.value if scope else None, roles=roles, tables=tables, top=top, topo=topo)
    if fmt is Format.json:
        out.print_json(json.dumps({"plan": str(path), "routes": source, "patterns": [r.as_dict() for r in results]}))
    else:
        _print_table(results, source)
    if any(r.unroutable for r in results):
        raise typer.Exit(EXIT_FINDINGS)


def _print_table(results, source: str) -> None:
    t = Table(title=f"flows per switch-to-switch link (routes: {source})", title_justify="left")
    for col in ("pattern", "scope", "flows", "max", "mean", "min", "lower bound", "ratio", "worst phase", "unroutable"):
        t.add_column(col, justify="left" if col in ("pattern", "scope", "worst phase") else "right")
    for r in results:
        ratio = f"{r.ratio:.2f}"
        t.add_row(r.pattern, r.scope, str(r.flows), str(r.max_load), f"{r.mean_load:.1f}", str(r.min_load), str(r.bound),
                  ratio if r.ratio <= 1.0 + 1e-9 else f"[yellow]{ratio}[/]", r.worst_phase,
                  str(r.unroutable) if not r.unroutable else f"[red]{r.unroutable}[/]")
    out.print(t)
    for r in results:
        out.print(f"[bold]{r.pattern}[/] ({r.scope}): {r.description}; bound from the {r.bound_cut}; "
                  f"busiest CA port sends {r.ca_max_inject} and receives {r.ca_max_eject} flows; "
                  f"{r.cross_zone_flows} flows cross zones")
        for s in r.top:
            out.print(f"    {s.flows:>8}  {s.link}", markup=False)


def register(app: typer.Typer) -> None:
    app.command("analyze")(analyze_command)
