"""`ffplan verify`: boot the planned fabric in ibsim, run the real OpenSM on the rendered files, read back what it
installed and compare it with the plan. Public entries: `verify(target, ...) -> Report` (one subnet) and
`verify_subnets(target, ...) -> [Report]` (every subnet of the plan, or one, one after another).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Callable

from ffplan.plan.io import load_plan
from ffplan.plan.model import Plan
from ffplan.plan.subnets import check_plane
from ffplan.opensm import layout as L
from ffplan.opensm.files import ipoib_rate
from ffplan.verify.boot import SIMULATED_MAX_RATE, boot, rate_beyond_simulator
from ffplan.verify.checks import check_cabling, check_log, check_reachability, check_routes
from ffplan.verify.compare import ftree_comparison
from ffplan.verify.inputs import load_inputs, plan_file_of
from ffplan.verify.lifetime import work_folder
from ffplan.verify.report import Report, VerifyInputError
from ffplan.verify.sim import SimError, find_tools, signals_raise
from ffplan.verify.static import static_checks

__all__ = ["verify", "verify_subnets", "Report", "VerifyInputError"]


def verify_subnets(
    target: Path,
    *,
    plan_path: Path | None = None,
    plane: str | None = None,
    zone: str | None = None,
    engine: str = "file",
    timeout: float = 60.0,
    keep: Path | None = None,
    progress: Callable[[str], None] = lambda s: None,
) -> list[Report]:
    """One report per subnet, booted one after another (each plane is a fabric of its own, with its own OpenSM);
    `plane` picks one. A single-subnet plan gives one report, as `verify` does."""
    find_tools()  # missing tools first: nothing else can be checked without them
    plan = load_plan(plan_file_of(Path(target), plan_path))
    subnets = plan.subnets
    if plane is not None:
        check_plane(plan, plane)
    elif zone is not None and len(subnets) > 1:  # a zone lives in one plane: verify that one
        plane = next((z.subnet for z in plan.zones if z.name == zone), None)
    picked: list[str | None] = [None] if len(subnets) == 1 else [plane] if plane else list(subnets)
    reports = []
    for subnet in picked:
        if subnet:
            progress(f"subnet {subnet}")
        reports.append(
            verify(
                target,
                plan_path=plan_path,
                zone=zone,
                engine=engine,
                timeout=timeout,
                keep=keep,
                subnet=subnet,
                whole_plan=plan,
                progress=progress,
            )
        )
    return reports


def verify(
    target: Path,
    *,
    plan_path: Path | None = None,
    zone: str | None = None,
    engine: str = "file",
    timeout: float = 60.0,
    keep: Path | None = None,
    compare: bool = True,
    subnet: str | None = None,
    whole_plan: Plan | None = None,
    progress: Callable[[str], None] = lambda s: None,
) -> Report:
    """Run every check on one subnet (`subnet` of a plan with several, with `whole_plan` loaded once); never leaves
    a process behind (stops by PID on errors, Ctrl-C and SIGTERM)."""
    tools = find_tools()
    view = L.View(zone=zone)
    inp = load_inputs(Path(target), plan_path, view, subnet, whole_plan)
    fab = inp.fab
    described = f"subnet {subnet}: {fab.view.describe()}" if subnet else fab.view.describe()
    report = Report(
        target=str(target), source=inp.source, view=described, engine=engine, excluded=fab.excluded, subnet=subnet or ""
    )
    started = time.monotonic()
    try:
        base = work_folder(keep)
    except OSError as exc:  # --keep names a file, or a folder we may not create
        raise VerifyInputError(f"--keep {keep}: {exc.strerror or exc}") from None
    report.workdir = str(base) if keep else ""
    try:
        with signals_raise():
            static_checks(report, inp, fab, tools, base, engine)
            if (code := rate_beyond_simulator(inp.plan)) is not None:
                report.skip(
                    "IPoIB group rate (partitions.conf)",
                    f"cannot be verified here: rate={code} ({ipoib_rate(inp.plan)[0]} Gb/s) is beyond what ibsim "
                    f"simulates (NDR) and OpenSM 3.3.23 knows (600 Gb/s); booted with rate={SIMULATED_MAX_RATE} "
                    "(needs OpenSM >= 3.3.24 on the fabric)",
                )
            # boot even when a config key was refused: OpenSM ignores it, and the run shows what that means
            conf_name = L.CONF if engine == "file" else L.FTREE_CONF
            if conf_name in inp.files and all(n in inp.files for n in (L.TOPOLOGY, L.GUID2LID)):
                try:
                    b = boot(
                        fab, tools, base / engine, conf_name, timeout, inp.files, qos_of=inp.plan, progress=progress
                    )
                except SimError as exc:
                    report.add("SUBNET UP", False, str(exc).splitlines()[0], str(exc).splitlines()[1:])
                else:
                    report.add(
                        "SUBNET UP",
                        True,
                        f"after {b.timings['SUBNET UP s']:.2f} s (routes {b.timings['route compute s']:.3f} s)",
                    )
                    report.timings.update(b.timings)
                    check_cabling(report, fab, b.topo)
                    if engine == "file":
                        check_routes(report, fab, b)
                    else:
                        report.skip("LFTs installed == plan", "ftree computes its own tables (see the comparison)")
                        res = check_reachability(
                            report, fab, b.topo, b.tables, "installed ftree tables", switch_lids_required=False
                        )
                    report.checks += b.qos_checks
                    check_log(report, b.log, engine)
                    if engine == "ftree" and compare:
                        ftree_comparison(report, inp, fab, tools, base, timeout, b, res, progress)
    finally:
        report.timings["total s"] = round(time.monotonic() - started, 3)
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    return report
