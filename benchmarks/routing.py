"""Time of the routing stage and of the failure sweep on a plan (default: Fire-Flyer 2, designed first).

Prints, median of --repeat runs in this process, wall and CPU seconds (CPU is what the shared machine cannot
inflate): the routing tables of the intact plan, the deadlock proof, the route check, one incremental re-route
around a failed cable, and the failure sweep (every single cable and spine; --cases N measures the first N cases
and extrapolates to the whole sweep). Usage: python benchmarks/routing.py [PLAN] [--repeat N] [--cases N] [--jobs N]

With --failed ITEM (a cable label or switch), only that failure case instead: `route()` (tables, deadlock proof,
route check) and all-to-all's maximum against analyze's bound, with --repair-only without the rebalance of a tree
(docs/routing.md section 7, steps 1-3 alone: its "repair" rows).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ffplan.analyze import analyze, sweep  # noqa: E402
from ffplan.analyze.sweep import run_sweep, sweep_cases  # noqa: E402
from ffplan.analyze.sweep_cluster import sweep_client  # noqa: E402
from ffplan.fabric.arrays import Channels  # noqa: E402
from ffplan.fabric.deadlock import prove_deadlock_free  # noqa: E402
from ffplan.fabric.reach import check_routes  # noqa: E402
from ffplan.design.routing import ZoneRouter, route  # noqa: E402
from ffplan.design.routing import dispatch  # noqa: E402
from ffplan.plan.topology import build_topology  # noqa: E402
from ffplan.plan import load_plan  # noqa: E402
from synth import plan_file  # noqa: E402


def timed(fn, repeat: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "plan", nargs="?", help="plan.yaml or its folder (default: design inventories/fire-flyer-2.yaml)"
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cases", type=int, default=100, help="sweep cases to measure (0: the whole sweep)")
    parser.add_argument("--jobs", type=int, default=1, help="with --cases 0: worker processes of a local Dask cluster")
    parser.add_argument("--failed", action="append", default=[], help="measure this failure case only (repeatable)")
    parser.add_argument(
        "--repair-only", action="store_true", help="with --failed: a tree's minimal repair, no rebalance"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ffplan-routing-") as tmp:
        plan = load_plan(plan_file(args.plan, Path(tmp) / "ff2"))
    if args.failed:
        failure_case(plan, args.failed, args.repair_only)
        return
    topo = build_topology(plan)
    intact = ZoneRouter(topo).tables()
    label = next(label for label, (kind, _, _) in topo.by_label.items() if kind == "leaf-spine")
    warm = ZoneRouter(topo)
    warm.tables([label])
    rows = [
        (
            "routing tables (intact, from scratch)",
            timed(lambda: ZoneRouter(build_topology(plan)).tables(), args.repeat),
        ),
        (
            "deadlock proof",
            timed(lambda: prove_deadlock_free(intact.topo, intact.tables, Channels(intact.topo)), args.repeat),
        ),
        ("route check (detours, reachability)", timed(lambda: check_routes(intact.topo, intact.tables), args.repeat)),
        (f"re-route around {label} (incremental)", timed(lambda: warm.tables([label]), args.repeat)),
    ]
    print(f"{'step':<48} {'wall s':>8} {'cpu s':>8}")
    for name, (wall, cpu) in rows:
        print(f"{name:<48} {wall:>8.3f} {cpu:>8.3f}")
    total = len(sweep_cases(topo))
    n = total if args.cases <= 0 else min(args.cases, total)
    if n == total:
        w, c = time.perf_counter(), time.process_time()
        with sweep_client(args.jobs) as client:
            run_sweep(plan, client=client)
        print(
            f"{f'sweep: all {total} cases (jobs {args.jobs})':<48} {time.perf_counter() - w:>8.1f} {time.process_time() - c:>8.1f}"
        )
        return
    w, c = time.perf_counter(), time.process_time()
    state = sweep.SweepState(plan)
    setup = (time.perf_counter() - w, time.process_time() - c)
    w, c = time.perf_counter(), time.process_time()
    state.measure(sweep_cases(topo)[:n])
    per = ((time.perf_counter() - w) / n, (time.process_time() - c) / n)
    print(f"{'sweep set-up (router, intact routes, patterns)':<48} {setup[0]:>8.2f} {setup[1]:>8.2f}")
    print(f"{f'sweep: per case (first {n} of {total})':<48} {per[0]:>8.3f} {per[1]:>8.3f}")
    print(
        f"{f'  whole sweep of {total} cases, extrapolated':<48} {setup[0] + per[0] * total:>8.0f} {setup[1] + per[1] * total:>8.0f}"
    )


def failure_case(plan, failed: list[str], repair_only: bool) -> None:
    """`route()` around `failed` (CPU and wall, once: a big tree's case takes a minute) and its all-to-all maximum."""
    if repair_only:
        dispatch._rebalance = dispatch._relieve = None  # steps 1-3 alone: no relief, no greedy moves
    w, c = time.perf_counter(), time.process_time()
    routing = route(plan, failed)
    wall, cpu = time.perf_counter() - w, time.process_time() - c
    a2a, shift = analyze(plan.model_copy(update={"routing": routing}), ["all-to-all", "shift"])
    check = routing.check
    print(
        f"{' '.join(failed)}{' (repair only)' if repair_only else ''}: route() {wall:.1f} s wall, {cpu:.1f} s CPU; "
        f"all-to-all {a2a.max_load} / {a2a.bound}, shift {shift.max_load} / {shift.bound}; "
        f"unreachable CA pairs {check.unreachable_ca_pairs}, deadlock-free {routing.deadlock.acyclic}"
    )


if __name__ == "__main__":
    main()
