"""ibsim at scale: three-layer trees booted in ibsim with the real OpenSM, timed, with peak memory.

    python benchmarks/ibsim_scale.py --case three-16     # 16-port switches, 16 pods: 320 switches, 1,024 CA ports
    python benchmarks/ibsim_scale.py --case three-64     # 64-port switches: 1,280 switches, 16,384 CA ports

three-16 runs `ffplan verify` (file engine, ffplan's LFT file, every check). three-64 measures what OpenSM does
with a full-size LFT file: OpenSM's ftree computes the tables from ffplan's GUID files (OpenSM dumps them as
opensm-lfts.dump, the file engine's format), then a fresh simulation boots the file engine on that dump: time to
SUBNET UP and peak memory (VmHWM) of OpenSM and ibsim for each. ibsim's node/switch/port limits are raised with
its -N/-S/-P options (ffplan verify does the same); no rebuild is needed.

Until ffplan routes three-layer trees (FF605), the plan's tables come from the stand-in shortest-path router of
the tests (tests/opensm/planfix.py) for three-16; three-64 needs no ffplan tables. Figures: docs/verify.md.
"""

from __future__ import annotations

import argparse
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

from ffplan.plan.model import Plan, Routing  # noqa: E402
from ffplan.render import opensm as R  # noqa: E402
from ffplan.render import opensm_layout as L  # noqa: E402
from ffplan.render.env import render_template  # noqa: E402
from ffplan.verify.boot import _sizes, rewrite_paths  # noqa: E402
from ffplan.verify.sim import Simulation, find_tools  # noqa: E402

CASES = {  # radix, compute nodes (4 NICs each, rail-optimized)
    "three-16": (16, 256),
    "three-64": (64, 4096),
}


def inventory(case: str) -> dict:
    """A single three-layer subnet of `radix`-port switches, every leaf port used by a 4-NIC node."""
    return three_layer_inventory(case, *CASES[case])


def _designed(path: Path, routed: bool) -> Plan:
    """The plan; `routed=False` leaves the tables empty (only OpenSM's own engine runs on it)."""
    sys.path.insert(0, str(ROOT / "tests" / "opensm"))
    from unittest import mock

    from planfix import design_routed  # type: ignore[import-not-found]

    from ffplan.design import pipeline

    if routed:
        return design_routed(path)

    def no_tables(plan: Plan, *args: object, **kwargs: object) -> Routing:
        return Routing(engine="none (OpenSM computes the tables)", max_lid=1, unrouted_port=255, failed=[], lfts=[])

    with mock.patch.object(pipeline, "route", no_tables):
        from ffplan.design import design
        from ffplan.inventory import load_inventory
        return design(load_inventory(path))


def _hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def boot_once(fab: R.Subnet, tools: dict[str, str], work: Path, files: dict[str, str], conf_name: str,
              timeout: float, dump_routes: bool, lfts: Path | None = None) -> dict[str, float]:
    work.mkdir(parents=True)
    for name, text in files.items():
        (work / name).write_text(text)
    if lfts is not None:
        shutil.copyfile(lfts, work / L.LFTS)
    (work / "run.conf").write_text(rewrite_paths(files[conf_name], work))
    (work / "cache").mkdir()
    shutil.copyfile(work / L.GUID2LID, work / "cache" / "guid2lid")
    (work / "ibsim.net").write_text(R.simulator_topology(fab))
    out: dict[str, float] = {}
    with Simulation(workdir=work, tools=tools, sm_host=fab.sm_ca().id) as sim:
        out["ibsim ready s"] = sim.start_ibsim(work / "ibsim.net", _sizes(fab), timeout)
        # -D 0x43: error, info and routing log levels; the routing level makes OpenSM dump its LFTs
        sim.start_opensm(work / "run.conf", work / "cache", ["-D", "0x43"] if dump_routes else [])
        out["SUBNET UP s"] = sim.wait_subnet_up(timeout)
        assert sim.opensm is not None and sim.ibsim is not None
        out["OpenSM peak MB"] = _hwm_mb(sim.opensm.pid)
        out["ibsim peak MB"] = _hwm_mb(sim.ibsim.pid)
        if dump_routes:
            dump = work / "dump" / "opensm-lfts.dump"
            deadline = time.monotonic() + timeout
            while not dump.exists() and time.monotonic() < deadline:
                time.sleep(1)
            time.sleep(5)  # let the dump finish (it is written after SUBNET UP's heavy sweep)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", choices=sorted(CASES), default="three-16")
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument("--keep", type=Path, help="keep the work folder here")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ffplan-ibsim-scale-", dir=args.keep))
    inv = work / f"{args.case}.yaml"
    inv.write_text(yaml.safe_dump(inventory(args.case), sort_keys=False))
    t = time.monotonic()
    plan = _designed(inv, routed=args.case == "three-16")
    fab = R.build_fabric(plan)
    print(f"{args.case}: {len(fab.switches)} switches, {sum(len(c.ports) for c in fab.cas)} CA ports, "
          f"{len(fab.links)} links; design {time.monotonic() - t:.1f} s", flush=True)
    tools = find_tools()
    try:
        if args.case == "three-16":
            from ffplan.plan.io import dump_plan
            from ffplan.verify.run import verify
            out = work / "out"
            (out / "opensm").mkdir(parents=True)
            (out / "plan.yaml").write_text(dump_plan(plan))
            for name, text in R.opensm_files(plan).items():
                (out / "opensm" / name).write_text(text)
            print(f"LFT file: {(out / 'opensm' / L.LFTS).stat().st_size / 1e6:.1f} MB", flush=True)
            report = verify(out, timeout=args.timeout, progress=lambda s: print(f"  {s}", flush=True))
            print("verify:", "all checks pass" if report.ok else "FAILED", report.timings)
            return
        files = R.opensm_files(plan, engines=("ftree",))
        ftree = boot_once(fab, tools, work / "ftree", files, L.FTREE_CONF, args.timeout, dump_routes=True)
        print("OpenSM ftree (ffplan's GUID files):", ftree, flush=True)
        dump = work / "ftree" / "dump" / "opensm-lfts.dump"
        size, entries = dump.stat().st_size, sum(1 for line in open(dump) if line.startswith("0x"))
        print(f"its LFT dump: {size / 1e9:.2f} GB, {entries} entries", flush=True)
        files[L.CONF] = render_template("opensm/opensm.conf.j2", **R.conf_model(plan, L.DEFAULT_PREFIX, "file"))
        engine = boot_once(fab, tools, work / "file", files, L.CONF, args.timeout, dump_routes=False, lfts=dump)
        print("OpenSM file engine on that dump:", engine, flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
