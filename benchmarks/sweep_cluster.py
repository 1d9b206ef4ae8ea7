"""The failure sweep on Dask: its speed-up curve, and the wall time a larger cluster would need for a larger fabric.

`python benchmarks/sweep_cluster.py [PLAN] [--workers 1,2]`: the whole sweep of PLAN (default: Fire-Flyer 2, designed
first) in this process, then on a local Dask cluster of each number of worker processes; per run the wall time
(cluster start included, and apart) and the speed-up against the in-process run. The results must be equal.

`python benchmarks/sweep_cluster.py PLAN --sample N --cores 64`: no sweep; the set-up and the CPU time of N cases
of each kind (cable, spine, core) measured in this process, and from them the sweep's CPU time and the wall time on
a cluster of that many cores: set-up (once per worker, in parallel) + cases x mean cost / cores.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ffplan.analyze.sweep import SweepState, run_sweep, sweep_cases  # noqa: E402
from ffplan.analyze.sweep_cluster import local_cluster  # noqa: E402
from ffplan.plan import load_plan  # noqa: E402
from ffplan.plan.model import Plan  # noqa: E402
from ffplan.plan.topology import build_topology  # noqa: E402
from synth import plan_file  # noqa: E402


def curve(plan: Plan, workers: list[int]) -> None:
    w = time.perf_counter()
    reference = run_sweep(plan)
    alone = time.perf_counter() - w
    cases = len(reference.cases)
    print(f"{'run':<28} {'wall s':>8} {'start s':>8} {'speed-up':>9}   ({cases} cases)")
    print(f"{'in this process':<28} {alone:>8.1f} {'':>8} {1.0:>8.2f}x")
    for n in workers:
        w = time.perf_counter()
        with local_cluster(n) as client:  # one worker too: the curve's first point is a real cluster
            started = time.perf_counter() - w
            result = run_sweep(plan, client=client)
        wall = time.perf_counter() - w
        same = [c.as_dict() for c in result.cases] == [c.as_dict() for c in reference.cases]
        print(
            f"{f'Dask, {n} worker process(es)':<28} {wall:>8.1f} {started:>8.1f} {alone / wall:>8.2f}x"
            f"   {'same results' if same else 'RESULTS DIFFER'}"
        )


def extrapolate(plan: Plan, sample: int, cores: int) -> None:
    topo = build_topology(plan)
    cases = sweep_cases(topo)
    c = time.process_time()
    state = SweepState(plan)
    setup = time.process_time() - c
    kinds = {kind: [case for case in cases if case[0].startswith(kind)] for kind in ("cable", "spine", "core")}
    total_cpu = 0.0
    print(f"set-up (router, intact routes, patterns): {setup:.1f} s CPU")
    for kind, group in kinds.items():
        if not group:
            continue
        picked = group[:: max(1, len(group) // sample)][:sample]  # spread over the fabric, not the first few
        c = time.process_time()
        state.measure(picked)
        per = (time.process_time() - c) / len(picked)
        total_cpu += per * len(group)
        print(
            f"{kind}: {len(group):,} cases, {per:.2f} s CPU each (mean of {len(picked)}: "
            f"{', '.join(name for name, _ in picked)})"
        )
    print(
        f"whole sweep: {len(cases):,} cases, {total_cpu / 3600:.1f} h of CPU; on {cores} cores "
        f"{(setup + total_cpu / cores) / 60:.1f} min of wall"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "plan", nargs="?", help="plan.yaml or its folder (default: design inventories/fire-flyer-2.yaml)"
    )
    parser.add_argument("--workers", default="1,2", help="local cluster sizes for the speed-up curve")
    parser.add_argument("--sample", type=int, default=0, help="extrapolate from this many cases of each kind instead")
    parser.add_argument("--cores", type=int, default=64, help="with --sample: the cluster's cores")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ffplan-sweep-") as tmp:
        plan = load_plan(plan_file(args.plan, Path(tmp) / "ff2"))
    if args.sample:
        extrapolate(plan, args.sample, args.cores)
    else:
        curve(plan, [int(n) for n in args.workers.split(",")])


if __name__ == "__main__":
    main()
