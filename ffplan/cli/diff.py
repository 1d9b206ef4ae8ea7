"""`ffplan diff OLD NEW`: what changed between two plans; exit 0 identical, 1 different."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ffplan.cli.common import EXIT_FINDINGS, EXIT_OK, ReportFormat, plan_file, stage_errors


def diff_command(
    old: Path = typer.Argument(..., help="The base plan (plan.yaml or its design folder)."),
    new: Path = typer.Argument(..., help="The changed plan."),
    fmt: ReportFormat = typer.Option(ReportFormat.text, "--format", "-f", help="Output format."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="List every changed routing entry, not just counts."),
) -> None:
    """Show what changed between two plans: cables to remove, move and add, node and switch changes,
    routing entries per switch, QoS and host settings.

    Example: ffplan diff out/fire-flyer-2/plan out/fire-flyer-2/plan-new --format markdown
    """
    from ffplan.plan import load_plan
    from ffplan.plan.diff import as_json, diff_plans, format_markdown, format_text

    with stage_errors():
        d = diff_plans(load_plan(plan_file(old)), load_plan(plan_file(new)))
    if fmt is ReportFormat.json:
        typer.echo(json.dumps(as_json(d, verbose), indent=2, sort_keys=True))
    elif fmt is ReportFormat.markdown:
        typer.echo(format_markdown(d, verbose), nl=False)
    else:
        typer.echo(format_text(d, verbose), nl=False)
    raise typer.Exit(EXIT_OK if d.empty else EXIT_FINDINGS)


def register(app: typer.Typer) -> None:
    app.command("diff")(diff_command)
