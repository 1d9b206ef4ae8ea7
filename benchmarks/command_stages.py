"""Where `ffplan reroute --fabric` and `ffplan analyze --pattern all-to-all` spend their CPU: each command's stages
in its order, in a child process of its own, with the CPU seconds of each and the peak (ru_maxrss) after it.

Usage: python benchmarks/command_stages.py PLAN TOPOLOGY_NET [--lfts OUT]
(PLAN: a plan.yaml; TOPOLOGY_NET: its rendered opensm/topology.net, the discovery of the intact fabric; the LFT
file is written to OUT, default a temporary file removed afterwards). docs/performance.md has the figures of the
16,384-endpoint tree.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ffplan.analyze.bounds import lower_bound  # noqa: E402
from ffplan.analyze.flows import TopologyArrays, count_loads  # noqa: E402
from ffplan.analyze.loads import plan_tables, topology_for  # noqa: E402
from ffplan.analyze.patterns import build_pattern  # noqa: E402
from ffplan.cli.common import kept_until_exit  # noqa: E402
from ffplan.fabric.discovery import read_fabric  # noqa: E402
from ffplan.fabric.reach import RouteCounts  # noqa: E402
from ffplan.live_file import check_target, replacing  # noqa: E402
from ffplan.opensm.files import lfts_chunks  # noqa: E402
from ffplan.plan import load_plan  # noqa: E402
from ffplan.reroute import aggregation_nodes, failed_items, missing_from_discovery, reroute  # noqa: E402


class Clock:
    def __init__(self, command: str):
        self.command, self.last = command, time.process_time()

    def mark(self, stage: str) -> None:
        now = time.process_time()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{self.command:8s} {stage:30s} {now - self.last:7.2f} s CPU   peak {peak:6.0f} MB", flush=True)
        self.last = now


def reroute_stages(plan_path: Path, net: Path, lfts: Path) -> None:
    clock = Clock("reroute")
    with kept_until_exit():  # as the command: the collector paused until the file is written
        plan = load_plan(plan_path)
        clock.mark("load the plan")
        topo = read_fabric(net)
        clock.mark("parse the discovery")
        failed = missing_from_discovery(plan, topo).failed
        clock.mark("compare with the plan")
        items = failed_items(plan, failed)  # as the CLI does: resolved once, reroute() takes them
        clock.mark("resolve failed items")
        nodes = aggregation_nodes(plan, topo)
        clock.mark("aggregation nodes")
        result = reroute(plan, items, nodes)
        clock.mark(f"reroute (route {result.route_s:.1f} s wall)")
    with replacing(check_target(lfts), lfts_chunks(result.fab)):  # as the CLI writes it: fsync, rename
        checks = result.checks  # while a thread writes
    clock.mark(f"check ({checks.entries_changed:,} entries changed) while writing the LFT file")


def analyze_stages(plan_path: Path) -> None:
    clock = Clock("analyze")
    with kept_until_exit():  # as the command: the collector never walks the plan
        plan = load_plan(plan_path)
    clock.mark("load the plan")
    topo = topology_for(plan)
    net = TopologyArrays(topo)
    lft = net.lft(plan_tables(plan))
    clock.mark("topology and arrays")
    demand = build_pattern(net, "all-to-all", None, None).phases[0].demand
    clock.mark("all-to-all bundles")
    counts = RouteCounts(topo, net.channels, lft.shape[1])
    count_loads(net, lft, demand, counts)
    clock.mark("loads and route check")
    lower_bound(net, demand)
    clock.mark("lower bound (cuts)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plan", type=Path)
    parser.add_argument("topology", type=Path)
    parser.add_argument("--lfts", type=Path, help="where to write the LFT file (default: a temporary file)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        in_child(lambda: reroute_stages(args.plan, args.topology, args.lfts or Path(work) / "lfts.dump"))
    in_child(lambda: analyze_stages(args.plan))


def in_child(run: Callable[[], None]) -> None:
    """Run in a forked child: each command's peak is its own."""
    pid = os.fork()
    if pid == 0:
        try:
            run()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
