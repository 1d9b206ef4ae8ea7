"""ibsim at scale: big subnets booted in ibsim with the real OpenSM on ffplan's own tables, timed, with peak memory.

    python benchmarks/ibsim_scale.py --case three-16     # 16-port switches, 16 pods: 320 switches, 1,024 CA ports
    python benchmarks/ibsim_scale.py --case three-64     # 64-port switches: 1,280 switches, 16,384 CA ports
    python benchmarks/ibsim_scale.py --case mpft-plane   # one plane of inventories/deepseek-v3-mpft.yaml
    python benchmarks/ibsim_scale.py --case three-64 --engine ftree   # OpenSM's own ftree routing time on it

--engine ftree (three-64): OpenSM's fat-tree engine computes its own tables for the same fabric from the rendered GUID
files; it prints the time from MASTER to "ftree tables configured" (LID assignment, ftree's route computation and
the upload of the LFT blocks to ibsim's switches) and stops there, without the SUBNET UP the file engine's run
waits for. That is the time ffplan's re-route (`benchmarks/routing.py --failed`, `ffplan reroute`) is set against
(docs/performance.md).

three-16 and mpft-plane run `ffplan verify` (file engine, ffplan's LFT file, every check). three-64 renders the
full-size LFT file (22.6 M entries), boots OpenSM's file engine on it, reads the installed tables back with
dump_fts and ibnetdiscover and runs verify's checks of them (cabling, LIDs, installed == plan, every CA pair and
every switch LID reachable, on arrays: ffplan/verify/arrays.py); it prints the time and peak memory (VmHWM) of
each phase. ibsim's node/switch/port limits are raised with its -N/-S/-P options
(ffplan verify does the same); no rebuild is needed. Figures: docs/verify.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "benchmarks"))
from synth import three_layer_inventory  # noqa: E402

from ffplan.plan.model import Plan  # noqa: E402
from ffplan.opensm import Subnet, build_fabric  # noqa: E402
from ffplan.opensm.files import opensm_files, simulator_topology  # noqa: E402
from ffplan.opensm import layout as L  # noqa: E402
from ffplan.verify.boot import Boot, _route_time, _sizes, rewrite_paths  # noqa: E402
from ffplan.verify.checks import check_cabling, check_routes  # noqa: E402
from ffplan.fabric.discovery import parse_topology  # noqa: E402
from ffplan.verify.report import Report  # noqa: E402
from ffplan.verify.sim import Simulation, find_tools  # noqa: E402

SHIPPED = {"mpft-plane": ("deepseek-v3-mpft", "plane0")}  # a shipped inventory, the plane verified
CASES = {  # radix, compute nodes (4 NICs each, rail-optimized)
    "three-16": (16, 256),
    "three-64": (64, 4096),
}


def inventory(case: str) -> dict:
    """A single three-layer subnet of `radix`-port switches, every leaf port used by a 4-NIC node."""
    return three_layer_inventory(case, *CASES[case])


def _designed(path: Path) -> Plan:
    from ffplan.design import design
    from ffplan.inventory import load_inventory

    return design(load_inventory(path))


def _rss_mb() -> float:
    """Peak resident memory of this process (design, render)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def boot_read_back(
    fab: Subnet, tools: dict[str, str], work: Path, files: dict[str, str], timeout: float, read_back: Path
) -> dict[str, float]:
    """One boot of OpenSM's file engine until SUBNET UP, then ibnetdiscover's and `dump_fts -n`'s outputs are
    written to `read_back`; the time of each phase and the peak memory of OpenSM and ibsim."""
    work.mkdir(parents=True)
    for name, text in files.items():
        (work / name).write_text(text)
    (work / "run.conf").write_text(rewrite_paths(files[L.CONF], work))
    (work / "cache").mkdir()
    shutil.copyfile(work / L.GUID2LID, work / "cache" / "guid2lid")
    (work / "ibsim.net").write_text(simulator_topology(fab))
    out: dict[str, float] = {}
    with Simulation(workdir=work, tools=tools, sm_host=fab.sm_ca().id) as sim:
        out["ibsim ready s"] = sim.start_ibsim(work / "ibsim.net", _sizes(fab), timeout)
        sim.start_opensm(work / "run.conf", work / "cache", [])
        out["SUBNET UP s"] = sim.wait_subnet_up(timeout)
        out["routing s"] = _route_time((work / "osm.log").read_text(errors="replace"))
        assert sim.opensm is not None and sim.ibsim is not None
        out["OpenSM peak MB"] = _hwm_mb(sim.opensm.pid)
        out["ibsim peak MB"] = _hwm_mb(sim.ibsim.pid)
        read_back.mkdir(parents=True, exist_ok=True)
        for argv in (["ibnetdiscover"], ["dump_fts", "-n"]):
            t = time.monotonic()
            (read_back / f"{argv[0]}.out").write_text(sim.diag(argv, timeout))
            out[f"{argv[0]} s"] = round(time.monotonic() - t, 1)
    return out


def boot_ftree(
    fab: Subnet, tools: dict[str, str], work: Path, files: dict[str, str], timeout: float
) -> dict[str, float]:
    """One boot of OpenSM's ftree engine until its tables are configured: the routing time and OpenSM's peak memory,
    and the log lines between MASTER and then (what the time is made of)."""
    work.mkdir(parents=True)
    for name, text in files.items():
        (work / name).write_text(text)
    (work / "run.conf").write_text(rewrite_paths(files[L.FTREE_CONF], work))
    (work / "cache").mkdir()
    (work / "ibsim.net").write_text(simulator_topology(fab))
    out: dict[str, float] = {}
    with Simulation(workdir=work, tools=tools, sm_host=fab.sm_ca().id) as sim:
        out["ibsim ready s"] = sim.start_ibsim(work / "ibsim.net", _sizes(fab), timeout)
        sim.start_opensm(work / "run.conf", work / "cache", [])
        out["MASTER to tables configured (wall) s"] = sim.wait_log_count("tables configured", 1, timeout)
        log = (work / "osm.log").read_text(errors="replace")
        out["routing s"] = _route_time(log)
        assert sim.opensm is not None
        out["OpenSM peak MB"] = _hwm_mb(sim.opensm.pid)
        out["OpenSM CPU s"] = _cpu_s(sim.opensm.pid)
    lines = log.splitlines()
    start = next((i for i, line in enumerate(lines) if "Entering MASTER state" in line), 0)
    end = next((i for i, line in enumerate(lines) if "tables configured" in line), len(lines) - 1)
    for line in lines[start : end + 1]:
        if any(k in line.lower() for k in ("master", "ftree", "fat-tree", "lid", "tables configured", "routing")):
            print("  osm.log:", line[:160], flush=True)
    return out


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a running process (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 2)


def _verify(plan: Plan, work: Path, timeout: float, plane: str | None) -> None:
    """`ffplan verify` of the plan (one plane of it), every check, with its timings."""
    from ffplan.plan.io import dump_plan
    from ffplan.verify.run import verify_subnets

    out = work / "out"
    (out / "opensm").mkdir(parents=True)
    (out / "plan.yaml").write_text(dump_plan(plan))
    t = time.monotonic()
    for name, text in opensm_files(plan).items():
        (out / "opensm" / name).parent.mkdir(parents=True, exist_ok=True)
        (out / "opensm" / name).write_text(text)
    print(f"render (OpenSM files): {time.monotonic() - t:.1f} s", flush=True)
    for report in verify_subnets(out, plane=plane, timeout=timeout, progress=lambda s: print(f"  {s}", flush=True)):
        print("verify:", "all checks pass" if report.ok else "FAILED", report.timings, flush=True)
        for c in report.checks:
            print(f"  {c.status} {c.name}: {c.detail}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", choices=sorted(CASES) + sorted(SHIPPED), default="three-16")
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument("--keep", type=Path, help="keep the work folder here")
    ap.add_argument(
        "--engine",
        choices=("file", "ftree"),
        default="file",
        help="three-64: boot the file engine on ffplan's tables (default) or time OpenSM's own ftree",
    )
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ffplan-ibsim-scale-", dir=args.keep))
    if args.case in SHIPPED:
        inv, plane = ROOT / "inventories" / f"{SHIPPED[args.case][0]}.yaml", SHIPPED[args.case][1]
    else:
        inv, plane = work / f"{args.case}.yaml", None
        inv.write_text(yaml.safe_dump(inventory(args.case), sort_keys=False))
    t = time.monotonic()
    plan = _designed(inv)
    print(
        f"{args.case}: {len(plan.switches)} switches, {sum(len(n.ports) for n in plan.nodes)} CA ports, "
        f"{len(plan.cables)} cables; design {time.monotonic() - t:.1f} s, peak {_rss_mb():.0f} MB",
        flush=True,
    )
    tools = find_tools()
    try:
        if args.case != "three-64":
            _verify(plan, work, args.timeout, plane)
            return
        fab = build_fabric(plan)
        routing = plan.routing
        assert routing is not None
        t = time.monotonic()
        files = opensm_files(plan)
        entries = sum(int((lft.ports != routing.unrouted_port).sum()) for lft in routing.lfts)
        print(
            f"render (OpenSM files): {time.monotonic() - t:.1f} s; LFT file {len(files[L.LFTS]) / 1e9:.2f} GB, "
            f"{entries} entries; "
            f"peak {_rss_mb():.0f} MB",
            flush=True,
        )
        if args.engine == "ftree":
            print(
                "OpenSM's ftree on ffplan's GUID files:",
                boot_ftree(fab, tools, work / "ftree", files, args.timeout),
                flush=True,
            )
            return
        read_back = work / "read-back"
        engine = boot_read_back(fab, tools, work / "file", files, args.timeout, read_back)
        print("OpenSM file engine on ffplan's LFT file:", engine, flush=True)
        del files
        t = time.monotonic()
        report = Report(target=str(work), source="rendered", view=fab.view.describe(), engine="file", excluded=[])
        topo = parse_topology((read_back / "ibnetdiscover.out").read_text())
        check_cabling(report, fab, topo)
        check_routes(report, fab, Boot(topo, (read_back / "dump_fts.out").read_text(), "", {}, []))
        print(f"verify's checks of the read-back: {time.monotonic() - t:.1f} s; peak {_rss_mb():.0f} MB", flush=True)
        for c in report.checks:
            print(f"  {c.status} {c.name}: {c.detail} {c.items[:3]}", flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
