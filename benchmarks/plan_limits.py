"""What the plan loader's limits are set from (ffplan/plan/io.py: MAX_PLAN_BYTES, MAX_PLAN_NODES, MAX_PLAN_DEPTH):
the size, YAML node count and nesting depth of designed plans, and what refusing a hostile plan costs.

Usage: python benchmarks/plan_limits.py PLAN_OR_INVENTORY ... [--hostile MB]
(an inventory is designed first; --hostile writes a plan of MB megabytes of small scalars and times its refusal)

The largest designed plans (`benchmarks/run.py --big` makes their inventories): the three-layer tree of 64-port
switches with 16,384 endpoints, DeepSeek-V3 MPFT, the synthetic 4 x 96-port planes.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ffplan.design import design  # noqa: E402
from ffplan.inventory import load_inventory  # noqa: E402
from ffplan.plan import dump_plan  # noqa: E402

try:
    from yaml import CSafeLoader as Loader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as Loader  # type: ignore[assignment]


def shape(text: str) -> tuple[int, int]:
    """(YAML nodes, deepest nesting of collections) of a plan's text."""
    nodes = depth = deepest = 0
    parser = Loader(text)
    try:
        while True:
            event = parser.get_event()
            if isinstance(event, yaml.StreamEndEvent):
                break
            if isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)):
                nodes += 1
            elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                nodes += 1
                depth += 1
                deepest = max(deepest, depth)
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    finally:
        parser.dispose()
    return nodes, deepest


def plan_file(path: Path, work: Path) -> Path:
    if path.is_dir():
        return path / "plan.yaml"
    if path.name.endswith("plan.yaml"):
        return path
    out = work / f"{path.stem}.plan.yaml"
    out.write_text(dump_plan(design(load_inventory(path))), encoding="utf-8", newline="\n")
    return out


def hostile(megabytes: int, work: Path) -> None:
    """A plan of `megabytes` MB whose nodes list holds small scalars: refused by the node budget, timed in a child."""
    plan = work / "hostile" / "plan.yaml"
    plan.parent.mkdir()
    line = "  - {hostname: n, group: g, role: compute, model: m, rack: r, u: 1, ports: []}\n"
    with plan.open("w") as fh:
        fh.write("plan_version: 3\nnodes:\n")
        for _ in range(megabytes * 1_000_000 // len(line)):
            fh.write(line)
    start = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "ffplan", "analyze", str(plan.parent)], capture_output=True, text=True
    )
    wall = time.monotonic() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    first = (result.stdout + result.stderr).strip().splitlines()[:1]
    print(
        f"hostile {megabytes} MB plan: exit {result.returncode}, {usage.ru_utime + usage.ru_stime:.1f} s CPU ({wall:.1f} s wall), "
        f"peak {usage.ru_maxrss / 1024:.0f} MiB: {first[0] if first else ''}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("inputs", nargs="*", type=Path)
    parser.add_argument("--hostile", type=int, default=0, metavar="MB")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ffplan-limits-") as tmp:
        print(f"{'plan':<40} {'MiB':>7} {'YAML nodes':>12} {'depth':>6}")
        for path in args.inputs:
            file = plan_file(path, Path(tmp))
            text = file.read_text()
            nodes, depth = shape(text)
            print(f"{str(path)[-40:]:<40} {len(text.encode()) / 2**20:>7.1f} {nodes:>12,} {depth:>6}", flush=True)
        if args.hostile:
            hostile(args.hostile, Path(tmp))


if __name__ == "__main__":
    main()
