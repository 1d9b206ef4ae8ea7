"""`ffplan verify`: boot the planned fabric in ibsim, run the real OpenSM on the rendered files, read back what it
installed and compare it with the plan. Public entry: `verify(target, ...) -> Report`.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Callable

from ffplan.render import opensm_layout as L
from ffplan.verify.boot import boot
from ffplan.verify.checks import check_cabling, check_log, check_reachability, check_routes
from ffplan.verify.compare import ftree_comparison
from ffplan.verify.inputs import load_inputs
from ffplan.verify.lifetime import work_folder
from ffplan.verify.report import Report, VerifyInputError
from ffplan.verify.sim import SimError, find_tools, signals_raise
from ffplan.verify.static import static_checks

__all__ = ["verify", "Report", "VerifyInputError"]


def verify(target: Path, *, plan_path: Path | None = None, zone: str | None = None, engine: str = "file",
           timeout: float = 60.0, keep: Path | None = None, compare: bool = True,
           progress: Callable[[str], None] = lambda s: None) -> Report:
    """Run every check; never leaves a process behind (stops by PID on errors, Ctrl-C and SIGTERM)."""
    tools = find_tools()
    view = L.View(zone=zone)
    inp = load_inputs(Path(target), plan_path, view)
    fab = inp.fab
    report = Report(target=str(target), source=inp.source, view=fab.view.describe(), engine=engine, excluded=fab.excluded)
    started = time.monotonic()
    base = work_folder(keep)
    report.workdir = str(base) if keep else ""
    try:
        with signals_raise():
            static_checks(report, inp, fab, tools, base, engine)
            # boot even when a config key was refused: OpenSM ignores it, and the run shows what that means
            conf_name = L.CONF if engine == "file" else L.FTREE_CONF
            if conf_name in inp.files and all(n in inp.files for n in (L.TOPOLOGY, L.GUID2LID)):
                try:
                    b = boot(fab, tools, base / engine, conf_name, timeout, inp.files, qos_of=inp.plan, progress=progress)
                except SimError as exc:
                    report.add("SUBNET UP", False, str(exc).splitlines()[0], str(exc).splitlines()[1:])
                else:
                    report.add("SUBNET UP", True, f"after {b.timings['SUBNET UP s']:.2f} s "
                               f"(routes {b.timings['route compute s']:.3f} s)")
                    report.timings.update(b.timings)
                    check_cabling(report, fab, b.topo)
                    if engine == "file":
                        res = check_routes(report, fab, b)
                    else:
                        report.skip("LFTs installed == plan", "ftree computes its own tables (see the comparison)")
                        res = check_reachability(report, fab, b.topo, b.tables, "installed ftree tables",
                                                 switch_lids_required=False)
                    report.checks += b.qos_checks
                    check_log(report, b.log, engine)
                    if engine == "ftree" and compare:
                        ftree_comparison(report, inp, fab, tools, base, timeout, b, res, progress)
    finally:
        report.timings["total s"] = round(time.monotonic() - started, 3)
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    return report


