"""Where `ffplan audit` spends its time on Fire-Flyer 2: loading the plan, reading the ibnetdiscover dump,
comparing. Wall and CPU seconds per phase (CPU time is what an idle machine would take as wall time).
Usage: python benchmarks/audit.py [--repeat N]
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

from ffplan.audit import audit  # noqa: E402
from ffplan.fabric.discovery import read_fabric  # noqa: E402
from ffplan.design import design  # noqa: E402
from ffplan.inventory import load_inventory  # noqa: E402
from ffplan.plan.io import load_plan, write_plan  # noqa: E402
from ffplan.render.opensm import render_opensm  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    plan = design(load_inventory(ROOT / "inventories" / "fire-flyer-2.yaml"))
    with tempfile.TemporaryDirectory(prefix="ffplan-bench-audit-") as tmp:
        plan_file, fabric = Path(tmp) / "plan.yaml", Path(tmp) / "topology.net"
        write_plan(plan, plan_file)
        fabric.write_text(render_opensm(plan)["opensm/topology.net"])  # what ibnetdiscover prints for it
        phases: dict[str, list[tuple[float, float]]] = {"load plan": [], "read fabric": [], "compare": [], "total": []}
        for _ in range(args.repeat):
            marks = [(time.perf_counter(), time.process_time())]
            loaded = load_plan(plan_file)
            marks.append((time.perf_counter(), time.process_time()))
            topo = read_fabric(fabric)
            marks.append((time.perf_counter(), time.process_time()))
            result = audit(loaded, topo)
            marks.append((time.perf_counter(), time.process_time()))
            assert result.matches
            for name, (a, b) in zip(("load plan", "read fabric", "compare"), zip(marks, marks[1:])):
                phases[name].append((b[0] - a[0], b[1] - a[1]))
            phases["total"].append((marks[-1][0] - marks[0][0], marks[-1][1] - marks[0][1]))
        print(
            f"Fire-Flyer 2: {len(topo.kind)} devices, {len(topo.links)} links, {fabric.stat().st_size:,} bytes of "
            f"ibnetdiscover text; median of {args.repeat}"
        )
        for name, values in phases.items():
            wall = statistics.median(v[0] for v in values)
            cpu = statistics.median(v[1] for v in values)
            print(f"  {name:<12} wall {wall:6.3f} s   cpu {cpu:6.3f} s")


if __name__ == "__main__":
    main()
