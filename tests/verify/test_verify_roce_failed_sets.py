"""The real FRR converges, after a cable goes down, to the reduced next-hop sets `ffplan analyze --failed` reports:
roce-mini's plane pa booted in namespaces, pa-leaf01-p03 set down, every switch's kernel FIB compared with the plan's
groups changed as analyze's JSON says (read from the command's output, not from the function behind it)."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ffplan.cli.main import app
from ffplan.plan.io import load_plan
from ffplan.verify_ethernet.boot import Fabric
from ffplan.verify_ethernet.fabric import fib_differences, planned_fib
from ffplan.verify_ethernet.run import rendered_files, select_part

pytestmark = pytest.mark.slow

CABLE = "pa-leaf01-p03"


def test_frr_converges_to_the_sets_analyze_reports(frr_tools, mini_files):
    res = CliRunner().invoke(
        app, ["analyze", str(mini_files), "--failed", CABLE, "--plane", "pa", "--trials", "1", "-f", "json"]
    )
    assert res.exit_code == 0, res.output
    changes = json.loads(res.output)["failure"]["changes"]
    plan = load_plan(mini_files / "plan.yaml")
    part = select_part(plan, "pa", None)
    planned = planned_fib(part)
    expected = {s: {p: set(h) for p, h in routes.items()} for s, routes in planned.items()}
    for c in changes:
        for prefix in c["prefixes"]:
            expected[c["switch"]][prefix] = set(c["reduced"])  # empty: no route (or a blackhole) is right
    assert expected != planned
    names = sorted(expected)
    files, _ = rendered_files(mini_files, plan)
    work = Path(tempfile.mkdtemp(prefix="ffv-"))  # short: FRR's sockets live in it (108 bytes per socket path)
    try:
        with Fabric(part, files, work, frr_tools, remove_workdir=True) as fab:
            fab.build()
            assert fab.wait_until(lambda: not fib_differences(planned, fab.routes(names)), 30, every=0.2) is not None
            v = next(v for v in part.veths if v.cable == CABLE)
            fab.set_link(v.a, v.a_if, up=False)
            took = fab.wait_until(lambda: not fib_differences(expected, fab.routes(names)), 30, every=0.2)
            assert took is not None, fib_differences(expected, fab.routes(names))
            assert not fib_differences(expected, fab.routes(names))  # and it stays there
    finally:
        shutil.rmtree(work, ignore_errors=True)
