"""`ffplan verify OUT`: boot the planned fabric in ibsim with the real OpenSM and compare what it installs."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Callable, Iterator, NoReturn

import typer
from rich.table import Table

from ffplan.cli import complete
from ffplan.cli.common import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, err, fail, out, stage_errors
from ffplan.verify.report import Report


class Engine(str, Enum):
    file = "file"
    ftree = "ftree"


class Format(str, Enum):
    table = "table"
    json = "json"


_STYLE = {"pass": "[green]pass[/]", "fail": "[bold red]FAIL[/]", "skip": "[yellow]skip[/]", "info": "[cyan]info[/]"}


def verify_command(
    target: Path = typer.Argument(..., metavar="OUT", help="A rendered output folder (with opensm/) or a plan.yaml."),
    plan: Path = typer.Option(
        None,
        "--plan",
        help="The plan (plan.yaml or its folder) to compare with; default: plan.yaml in or next to the folder.",
    ),
    zone: str = typer.Option(
        None,
        "--zone",
        autocompletion=complete.zones,
        help="Verify one zone's sub-fabric (its switches and CA ports, no inter-zone links).",
    ),
    plane: str = typer.Option(
        None,
        "--plane",
        autocompletion=complete.planes,
        help="A plan with planes: verify this plane (subnet) only; default: every plane, one after another.",
    ),
    engine: Engine = typer.Option(
        Engine.file, "--engine", help="file: ffplan's tables; ftree: OpenSM's fat-tree engine, compared side by side."
    ),
    timeout: float = typer.Option(
        60.0, "--timeout", min=1.0, help="Seconds to wait for the simulator and for SUBNET UP."
    ),
    fmt: Format = typer.Option(Format.table, "--format", help="table (rich) or json (for CI)."),
    keep: Path = typer.Option(
        None, "--keep", help="Keep the work folder (logs, effective config, read-backs) under this folder."
    ),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress on stderr."),
    failures: bool = typer.Option(
        False,
        "--failures",
        help="RoCE plans: then take a cable and a switch down in the running fabric, time the reconvergence, restore.",
    ),
) -> None:
    """Boot the planned fabric in ibsim, run the real OpenSM on the rendered files, read back and compare.

    Checks: config accepted by OpenSM and equal to the plan; LFT file and guid2lid well-formed; SUBNET UP;
    cabling; LIDs; installed LFTs == plan; every CA pair reachable; SL2VL/VLArb per port class; path SLs per
    traffic class; OpenSM's log clean and naming the intended engine. A plan with planes: each plane (its own
    subnet, files in opensm/PLANE/) is booted on its own, one after another, with a report each. Exit 0 only
    when all pass. A RoCE plan boots in network namespaces with FRR on the rendered frr.conf files instead
    (BGP sessions, kernel FIB == planned ECMP sets, pings at the MTU; docs/verify.md).

    Example: ffplan verify out/fire-flyer-2/files --zone z1
    """
    from ffplan.verify.inputs import plan_file_of
    from ffplan.verify.run import VerifyInputError, verify_subnets
    from ffplan.verify.lifetime import ToolsMissing
    from ffplan.verify_ethernet.run import is_roce_plan

    def progress(msg: str) -> None:
        if not quiet and fmt is Format.table:
            err.print(f"[dim]{msg}[/]")

    try:
        roce = is_roce_plan(plan_file_of(target, plan))
    except VerifyInputError as exc:
        fail(str(exc), "ffplan verify OUT [--plan PLAN]", EXIT_USAGE)
    if roce:
        _verify_roce(target, plan, plane, zone, timeout, keep, failures, fmt, progress)
    with stage_errors(), _exit_on_interrupt("every process started was stopped"):
        try:
            reports = verify_subnets(
                target,
                plan_path=plan,
                plane=plane,
                zone=zone,
                engine=engine.value,
                timeout=timeout,
                keep=keep,
                progress=progress,
            )
        except ToolsMissing as exc:
            fail(str(exc), "the integration needs the Debian packages opensm ibsim-utils infiniband-diags", EXIT_USAGE)
        except VerifyInputError as exc:
            fail(str(exc), "ffplan verify OUT [--plan PLAN]", EXIT_USAGE)
    ok = all(r.ok for r in reports)
    if fmt is Format.json:
        # one subnet: its report; several: every subnet's report and the verdict over all of them
        doc = (
            reports[0].as_dict()
            if len(reports) == 1 and not reports[0].subnet
            else {"ok": ok, "subnets": [r.as_dict() for r in reports]}
        )
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
    else:
        for report in reports:
            print_report(report)
        if len(reports) > 1:
            failed = [r.subnet for r in reports if not r.ok]
            out.print(
                f"[bold green]verify: all {len(reports)} subnets pass[/]"
                if ok
                else f"[bold red]verify: subnet(s) {', '.join(failed)} failed[/]"
            )
    raise typer.Exit(EXIT_OK if ok else EXIT_FINDINGS)


@contextmanager
def _exit_on_interrupt(cleaned_up: str) -> Iterator[None]:
    """Ctrl-C, SIGTERM or SIGHUP during a run: say what was cleaned up, exit 130 or 128 + the signal."""
    from ffplan.verify.sim import Interrupted

    try:
        yield
    except KeyboardInterrupt:
        err.print(f"interrupted: {cleaned_up}")
        raise typer.Exit(130) from None
    except Interrupted as exc:
        err.print(f"interrupted ({exc}): {cleaned_up}")
        raise typer.Exit(128 + exc.signum) from None


def _verify_roce(
    target: Path,
    plan: Path | None,
    plane: str | None,
    zone: str | None,
    timeout: float,
    keep: Path | None,
    failures: bool,
    fmt: Format,
    progress: Callable[[str], None],
) -> NoReturn:
    from ffplan.verify.lifetime import ToolsMissing
    from ffplan.verify.report import VerifyInputError
    from ffplan.verify_ethernet.boot import BootError
    from ffplan.verify_ethernet.netns import NamespaceError
    from ffplan.verify_ethernet.run import verify_ethernet

    with stage_errors(), _exit_on_interrupt("every process started was stopped, every namespace released"):
        try:
            report = verify_ethernet(
                target,
                plan_path=plan,
                plane=plane,
                zone=zone,
                timeout=timeout,
                keep=keep,
                failures=failures,
                progress=progress,
            )
        except (ToolsMissing, NamespaceError) as exc:
            fail(str(exc), "verify of a RoCE plan needs root and the Debian package frr", EXIT_USAGE)
        except VerifyInputError as exc:
            fail(str(exc), "ffplan verify OUT [--plan PLAN]", EXIT_USAGE)
        except BootError as exc:
            fail(str(exc), "the fabric could not be built; --keep DIR keeps the logs", EXIT_FINDINGS)
    if fmt is Format.json:
        sys.stdout.write(json.dumps(report.as_dict(), indent=1) + "\n")
    else:
        print_report(report)
    raise typer.Exit(EXIT_OK if report.ok else EXIT_FINDINGS)


def print_report(report: Report) -> None:
    out.print(f"verify {report.target} ({report.source})")
    out.print(f"fabric: {report.view}; engine: {report.engine}")
    for line in report.excluded:
        out.print(f"  excluded: {line}")
    table = Table(title_justify="left", show_lines=False)
    table.add_column("check")
    table.add_column("result")
    table.add_column("detail", overflow="fold")
    for c in report.checks:
        detail = c.detail + "".join(f"\n  {item}" for item in c.items)
        table.add_row(c.name, _STYLE[c.status], detail)
    out.print(table)
    if report.comparison:
        cmp = Table(
            title="ffplan vs OpenSM ftree: flows per inter-switch link (directed), route computation time",
            title_justify="left",
        )
        cols = list(report.comparison[0])
        for col in cols:
            cmp.add_column(col, justify="left" if col in ("case", "routing", "pattern") else "right")
        for row in report.comparison:
            cmp.add_row(*(str(row[c]) for c in cols))
        out.print(cmp)
    t = report.timings
    if t:
        out.print("timings: " + ", ".join(f"{k} {v:.2f}" for k, v in t.items() if isinstance(v, float) and v == v))
    if report.workdir:
        out.print(f"work folder kept: {report.workdir}")
    n_fail = sum(1 for c in report.checks if c.status == "fail")
    out.print(
        "[bold green]verify: all checks pass[/]" if report.ok else f"[bold red]verify: {n_fail} check(s) failed[/]"
    )


def register(app: typer.Typer) -> None:
    app.command("verify")(verify_command)
