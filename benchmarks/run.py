"""Time and peak memory of each ffplan stage on the shipped inventories and on larger synthetic ones.

Each measurement is a separate process (so peak memory is that command's own), repeated; the median wall
time and the largest peak RSS are printed. Usage: python benchmarks/run.py [--repeat N] [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth import make_inventory  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FFPLAN = [sys.executable, "-m", "ffplan"]

SYNTHETIC = {
    # name: (zones, radix, compute, storage, mgmt)
    "synthetic-2x40-half": (2, 40, 600, 90, 4),
    "synthetic-4x64-8192": (4, 64, 7300, 200, 16),  # four planes of 2,048 ports

}


def measure(cmd: list[str], repeat: int) -> tuple[float, float, int]:
    """(median wall s, peak RSS MiB, exit code) of `cmd`, run `repeat` times."""
    walls, peak, code = [], 0.0, 0
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage: its peak RSS
        walls.append(time.perf_counter() - start)
        peak = max(peak, usage.ru_maxrss / 1024)
        code = os.waitstatus_to_exitcode(status)
    return statistics.median(walls), peak, code


def stages(inventory: Path, work: Path) -> list[tuple[str, list[str]]]:
    plan_dir = work / f"{inventory.stem}-plan"
    return [
        ("lint", FFPLAN + ["lint", str(inventory)]),
        ("design", FFPLAN + ["design", str(inventory), "-o", str(plan_dir), "-q", "--force"]),
        ("render", FFPLAN + ["render", str(plan_dir / "plan.yaml"), "-o", str(work / f"{inventory.stem}-out"), "--force"]),
        ("analyze", FFPLAN + ["analyze", str(plan_dir / "plan.yaml"), "--pattern", "all-to-all", "--format", "json"]),
        # the rendered topology.net is what ibnetdiscover prints for the fabric as planned: a full audit, exit 0
        ("audit", FFPLAN + ["audit", str(plan_dir / "plan.yaml"), str(work / f"{inventory.stem}-out" / "opensm" / "topology.net")]),
        # live re-route from a discovered fabric (the rendered topology: discovery match, routing, walks, write)
        ("reroute", FFPLAN + ["reroute", str(plan_dir / "plan.yaml"), "--fabric",
                              str(work / f"{inventory.stem}-out" / "opensm" / "topology.net"), "-o",
                              str(work / f"{inventory.stem}.lfts")]),
    ]


def available(command: str) -> bool:
    return subprocess.run(FFPLAN + [command, "--help"], cwd=ROOT, capture_output=True).returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="shipped inventories only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ffplan-bench-") as tmp:
        work = Path(tmp)
        inventories = [ROOT / "inventories" / "lab.yaml", ROOT / "inventories" / "fire-flyer-2.yaml"]
        if not args.quick:
            for name, (zones, radix, compute, storage, mgmt) in SYNTHETIC.items():
                path = work / f"{name}.yaml"
                path.write_text(make_inventory(name, zones, radix, compute, storage, mgmt))
                inventories.append(path)
        print(f"{'inventory':<24} {'stage':<8} {'wall s (median)':>16} {'peak MiB':>9}  exit")
        for inventory in inventories:
            for stage, cmd in stages(inventory, work):
                if not available(stage):
                    print(f"{inventory.stem:<24} {stage:<8} {'(not available)':>16}")
                    continue
                wall, peak, code = measure(cmd, args.repeat)
                print(f"{inventory.stem:<24} {stage:<8} {wall:>16.3f} {peak:>9.1f}  {code}", flush=True)


if __name__ == "__main__":
    main()
