"""What validating a plan at load costs: parsing (the canonical reader ffplan's own plans take, and libyaml's
events, which every other plan takes), the schema (patterns, ranges) and the cross-reference check, each timed
in-process (median of N, CPU time, the cyclic collector paused as load_plan pauses it), on a designed plan.

Usage: python benchmarks/plan_load.py [PLAN_OR_INVENTORY ...] [--repeat N]
(default: the Fire-Flyer 2 inventory, designed first; a plan.yaml is loaded as it is)
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

from ffplan.design import design  # noqa: E402
from ffplan.inventory import load_inventory  # noqa: E402
from ffplan.plan import dump_plan, load_plan  # noqa: E402
from ffplan.plan.check import plan_problems  # noqa: E402
from ffplan.plan.io import _build_from_events, _no_cyclic_gc, _read_yaml  # noqa: E402
from ffplan.plan.model import Plan  # noqa: E402


def cpu_median(fn, repeat: int) -> float:
    """With the cyclic collector paused, as load_plan pauses it (with it the stages took 1.5-2 times as long)."""
    times = []
    for _ in range(repeat):
        with _no_cyclic_gc():
            start = time.process_time()
            fn()
            times.append(time.process_time() - start)
    return statistics.median(times)


def plan_file(path: Path, work: Path) -> Path:
    if path.name == "plan.yaml" or path.is_dir():
        return path / "plan.yaml" if path.is_dir() else path
    out = work / f"{path.stem}.plan.yaml"
    out.write_text(dump_plan(design(load_inventory(path))), encoding="utf-8", newline="\n")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("inputs", nargs="*", type=Path, default=[ROOT / "inventories" / "fire-flyer-2.yaml"])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(
        f"{'plan':<28} {'MiB':>5} {'parse s':>8} {'events s':>9} {'schema s':>9} {'check s':>8} {'load_plan s':>12} "
        f"{'schema+check':>13}"
    )
    with tempfile.TemporaryDirectory(prefix="ffplan-bench-") as tmp:
        for path in args.inputs:
            file = plan_file(path, Path(tmp))
            text = file.read_text()
            data = _read_yaml(text)
            plan = Plan.model_validate(data)
            parse = cpu_median(lambda: _read_yaml(text), args.repeat)
            events = cpu_median(lambda: _build_from_events(text), args.repeat)
            schema = cpu_median(lambda: Plan.model_validate(data), args.repeat)
            check = cpu_median(lambda: plan_problems(plan), args.repeat)
            total = cpu_median(lambda: load_plan(file), args.repeat)
            print(
                f"{path.stem:<28} {len(text) / 2**20:>5.1f} {parse:>8.3f} {events:>9.3f} {schema:>9.3f} {check:>8.3f} "
                f"{total:>12.3f} "
                f"{(schema + check) / total:>12.0%}",
                flush=True,
            )


if __name__ == "__main__":
    main()
