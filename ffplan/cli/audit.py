"""`ffplan audit PLAN FABRIC`: the as-built fabric (ibnetdiscover output) against the plan; exit 0 when it
matches, 1 when it differs, 2 for unreadable input."""

from __future__ import annotations

from pathlib import Path

import typer

from ffplan.cli import complete
from ffplan.cli.common import EXIT_FINDINGS, EXIT_OK, ReportFormat, err, plan_file, stage_errors


def audit_command(
    plan: Path = typer.Argument(..., help="The plan (plan.yaml or its design folder)."),
    fabric: Path = typer.Argument(..., help="The as-built fabric: the saved output of `ibnetdiscover`."),
    fmt: ReportFormat = typer.Option(
        ReportFormat.text, "--format", "-f", help="text, json, or markdown (a work order for the cabling crew)."
    ),
    plane: str = typer.Option(
        None,
        "--plane",
        autocompletion=complete.planes,
        help="A plan with planes: the plane (subnet) the discovery is of; required there.",
    ),
    write_guids: Path = typer.Option(
        None,
        "--write-guids",
        metavar="FILE",
        help="Write the discovered GUIDs as an inventory fragment "
        "(fabric.switch_guids, groups[].hosts[].guids) to FILE.",
    ),
) -> None:
    """Compare the as-built fabric with the plan, cable by cable: missing, extra, wrong-port, wrong-switch and
    swapped cables, links at the wrong speed or width, unknown devices and devices whose GUID differs.

    A plan with planes: ibnetdiscover sees one plane (the subnet of the port it runs on); name it with --plane.

    Example: ibnetdiscover > fabric.txt; ffplan audit out/fire-flyer-2/plan fabric.txt --format markdown > work-order.md
    """
    from ffplan.audit import audit
    from ffplan.fabric.discovery import read_fabric
    from ffplan.audit.output import as_json, format_markdown, format_text, guid_fragment
    from ffplan.plan import load_plan
    from ffplan.plan.subnets import plane_view

    with stage_errors():
        the_plan = plane_view(load_plan(plan_file(plan)), plane, "audit")
        result = audit(the_plan, read_fabric(fabric))
    if fmt is ReportFormat.json:
        typer.echo(as_json(result, str(fabric)), nl=False)
    elif fmt is ReportFormat.markdown:
        typer.echo(format_markdown(result, str(fabric)), nl=False)
    else:
        typer.echo(format_text(result, str(fabric)), nl=False)
    if write_guids is not None:
        from ffplan.outdir import write_file

        with stage_errors():
            write_file(write_guids, guid_fragment(result, the_plan, str(fabric)))
        err.print(
            f"wrote {write_guids}: {len(result.switch_guids)} switch and {len(result.card_guids)} NIC GUIDs",
            markup=False,
        )
    raise typer.Exit(EXIT_OK if result.matches else EXIT_FINDINGS)


def register(app: typer.Typer) -> None:
    app.command("audit")(audit_command)
