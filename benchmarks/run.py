"""Time and peak memory of each ffplan stage on the shipped inventories and on larger synthetic ones, and the
growth curve (time and memory against NIC ports) of the synthetic family.

Each measurement is a separate process (so peak memory is that command's own), repeated; the machine is shared,
so the least CPU time (user + sys, the figure the targets are set in) and the fastest wall time of the repeats are
printed, and the largest peak RSS. Usage:
python benchmarks/run.py [--repeat N] [--quick | --largest TREESxRADIX] [--big]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth import make_inventory, three_layer_inventory  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FFPLAN = [sys.executable, "-m", "ffplan"]

SYNTHETIC = {
    # name: (trees, radix, compute, storage, mgmt, planes); two zones joined by inter-zone links (Fire-Flyer 2's
    # shape), and four planes (a subnet each, every node one NIC per plane), full but for a few ports
    "synthetic-2x40-half": (2, 40, 600, 90, 4, False),
    "synthetic-4x32-2048": (4, 32, 1800, 50, 8, True),
    "synthetic-4x48-4608": (4, 48, 4100, 100, 16, True),
    "synthetic-4x64-8192": (4, 64, 7300, 200, 16, True),
    "synthetic-4x96-18432": (4, 96, 16400, 400, 32, True),
}
# --big: the shipped 16,384-GPU inventory and a three-layer tree of 64-port switches with 16,384 endpoints
BIG = ("deepseek-v3-mpft", "three-layer-64-16384")
CURVE_STAGES = ("design", "render", "analyze")


def measure(cmd: list[str], repeat: int) -> tuple[float, float, float, int]:
    """(least CPU s, fastest wall s, peak RSS MiB, exit code) of `cmd`, run `repeat` times."""
    cpus, walls, peak, code = [], [], 0.0, 0
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage: its CPU time and peak RSS
        walls.append(time.perf_counter() - start)
        cpus.append(usage.ru_utime + usage.ru_stime)
        peak = max(peak, usage.ru_maxrss / 1024)
        code = os.waitstatus_to_exitcode(status)
    return min(cpus), min(walls), peak, code


def stages(inventory: Path, work: Path) -> list[tuple[str, list[str] | Callable[[], list[str]]]]:
    plan_dir = work / f"{inventory.stem}-plan"
    out = work / f"{inventory.stem}-out"
    return [
        ("lint", FFPLAN + ["lint", str(inventory)]),
        ("design", FFPLAN + ["design", str(inventory), "-o", str(plan_dir), "-q", "--force"]),
        ("render", FFPLAN + ["render", str(plan_dir / "plan.yaml"), "-o", str(out), "--force"]),
        ("analyze", FFPLAN + ["analyze", str(plan_dir / "plan.yaml"), "--pattern", "all-to-all", "--format", "json"]),
        # the rendered topology.net is what ibnetdiscover prints for the fabric (of the first plane) as planned: a
        # full audit, exit 0
        ("audit", lambda: FFPLAN + ["audit", str(plan_dir / "plan.yaml"), *discovered(out)]),
        # live re-route from a discovered fabric (the rendered topology: discovery match, routing, walks, write)
        (
            "reroute",
            lambda: (
                FFPLAN
                + [
                    "reroute",
                    str(plan_dir / "plan.yaml"),
                    "--fabric",
                    *discovered(out),
                    "-o",
                    str(work / f"{inventory.stem}.lfts"),
                ]
            ),
        ),
    ]


def discovered(out: Path) -> list[str]:
    """The rendered topology.net, with `--plane` when the plan has several subnets (opensm/<plane>/ each)."""
    if (out / "opensm" / "topology.net").exists():
        return [str(out / "opensm" / "topology.net")]
    plane = sorted(p.name for p in (out / "opensm").iterdir() if p.is_dir())[0] if (out / "opensm").is_dir() else "?"
    return [str(out / "opensm" / plane / "topology.net"), "--plane", plane]


def available(command: str) -> bool:
    return subprocess.run(FFPLAN + [command, "--help"], cwd=ROOT, capture_output=True).returncode == 0


def nic_ports(plan_dir: Path) -> int:
    """NIC ports of the designed plan (0 if the design failed), counted in a child process: a plan loaded here would
    stay in this process, and a child started with vfork (as subprocess starts them) reports the memory of this
    process as its own peak (ru_maxrss is kept across exec), so every later measurement's peak would be this one's."""
    count = (
        "import sys; from ffplan.plan import load_plan; print(sum(len(n.ports) for n in load_plan(sys.argv[1]).nodes))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", count, str(plan_dir / "plan.yaml")], cwd=ROOT, capture_output=True, text=True
    )
    return int(proc.stdout) if proc.returncode == 0 else 0  # a failed design is reported by its exit code


def print_curve(rows: dict[str, dict[str, tuple[float, float]]], ports: dict[str, int]) -> None:
    """CPU time and memory against ports for the four-plane synthetic family, with the growth from one size to the next."""
    family = sorted(
        (name for name in rows if name.startswith("synthetic-4x") and ports.get(name)), key=ports.__getitem__
    )
    if len(family) < 2:
        return
    print("\ngrowth curve (four planes; CPU s; x: growth against the previous size)")
    print(f"{'':>16}" + "".join(f" {stage:^33}" for stage in CURVE_STAGES))
    print(f"{'NIC ports':>9} {'x':>6}" + f" {'s':>9} {'x':>6} {'MiB':>9} {'x':>6}" * len(CURVE_STAGES))
    previous = None
    for name in family:
        line = f"{ports[name]:>9,}" + (f" {ports[name] / ports[previous]:>5.2f}x" if previous else " " * 7)
        for stage in CURVE_STAGES:
            cpu, peak = rows[name].get(stage, (0.0, 0.0))
            before = rows[previous].get(stage) if previous else None
            grow_s = f"{cpu / before[0]:>5.2f}x" if before and before[0] else ""
            grow_m = f"{peak / before[1]:>5.2f}x" if before and before[1] else ""
            line += f" {cpu:>9.2f} {grow_s:>6} {peak:>9.0f} {grow_m:>6}"
        print(line)
        previous = name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="shipped inventories only")
    parser.add_argument(
        "--largest", default="4x96", help="the largest synthetic inventory to run (TREESxRADIX, default 4x96)"
    )
    parser.add_argument(
        "--big", action="store_true", help="also the 16,384-GPU fabrics: DeepSeek-V3 MPFT and a three-layer tree"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ffplan-bench-") as tmp:
        work = Path(tmp)
        inventories = [ROOT / "inventories" / "lab.yaml", ROOT / "inventories" / "fire-flyer-2.yaml"]
        if not args.quick:
            for name, (trees, radix, compute, storage, mgmt, planes) in SYNTHETIC.items():
                path = work / f"{name}.yaml"
                path.write_text(make_inventory(name, trees, radix, compute, storage, mgmt, planes=planes))
                inventories.append(path)
                if name.startswith(f"synthetic-{args.largest}-"):
                    break
        if args.big:
            three_layer = work / f"{BIG[1]}.yaml"
            three_layer.write_text(yaml.safe_dump(three_layer_inventory(BIG[1], 64, 4096), sort_keys=False))
            inventories += [ROOT / "inventories" / f"{BIG[0]}.yaml", three_layer]
        rows: dict[str, dict[str, tuple[float, float]]] = {}
        ports: dict[str, int] = {}
        print(f"{'inventory':<24} {'stage':<8} {'CPU s':>8} {'wall s':>8} {'peak MiB':>9}  exit")
        for inventory in inventories:
            for stage, cmd in stages(inventory, work):
                if not available(stage):
                    print(f"{inventory.stem:<24} {stage:<8} {'(not available)':>17}")
                    continue
                cpu, wall, peak, code = measure(cmd() if callable(cmd) else cmd, args.repeat)
                rows.setdefault(inventory.stem, {})[stage] = (cpu, peak)
                print(f"{inventory.stem:<24} {stage:<8} {cpu:>8.2f} {wall:>8.2f} {peak:>9.1f}  {code}", flush=True)
                if stage == "design":
                    ports[inventory.stem] = nic_ports(work / f"{inventory.stem}-plan")
        print_curve(rows, ports)


if __name__ == "__main__":
    main()
