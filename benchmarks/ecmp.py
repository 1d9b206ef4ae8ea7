"""ECMP analysis of RoCE plans (docs/ethernet.md, "ECMP analysis"): speed at 16k GPUs, the samplers side by side,
and the comparison table on 2,048 GPUs.

  python benchmarks/ecmp.py speed     1,000 trials of all-to-all on the 16,384-GPU dual-plane fabric (benchmarks/roce.py's
                                      inventory): the Monte Carlo alone in-process, and `ffplan analyze` as a process
  python benchmarks/ecmp.py samplers  exact against tiers on one plane of inventories/roce-dual-plane.yaml
  python benchmarks/ecmp.py table     2,048 GPUs (256 nodes of roce-dual-plane.yaml): InfiniBand static routes of
                                      the single-plane shape, RoCE ECMP with 1/2/4/8 QPs, single- and dual-plane,
                                      pinned paths
"""

from __future__ import annotations

import argparse
import functools
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import FFPLAN, ROOT, measure  # noqa: E402

NODES_2K = 256


def _design(inv: dict, work: Path, name: str) -> Path:
    path = work / f"{name}.yaml"
    path.write_text(yaml.safe_dump(inv, sort_keys=False))
    subprocess.run(FFPLAN + ["design", str(path), "-o", str(work / name), "-q", "--force"], check=True, cwd=ROOT)
    return work / name / "plan.yaml"


@functools.lru_cache(maxsize=None)
def _planes(plan_path: Path) -> list:
    """(view, its topology arrays) per plane of a plan, loaded once."""
    from ffplan.analyze import topology_for
    from ffplan.analyze.flows import TopologyArrays
    from ffplan.plan import load_plan
    from ffplan.plan.subnets import subnet_view

    plan = load_plan(plan_path)
    return [(view, TopologyArrays(topology_for(view))) for view in (subnet_view(plan, name) for name in plan.subnets)]


def _results(plan_path: Path, pattern: str, **options: object) -> list:
    """Per plane the busiest-link result of `pattern` (in-process)."""
    from ffplan.analyze.ecmp import EcmpOptions, analyze_ecmp

    return [
        r
        for i, (view, net) in enumerate(_planes(plan_path))
        for r in analyze_ecmp(view, net, [pattern], EcmpOptions(**options), plane=i)
    ]  # type: ignore[arg-type]


def speed(repeat: int, keep: Path | None) -> None:
    from roce import inventory

    with tempfile.TemporaryDirectory() as tmp:
        work = keep or Path(tmp)
        plan = work / "roce-16k" / "plan.yaml"
        if not plan.exists():
            plan = _design(inventory(), work, "roce-16k")
        from ffplan.analyze import topology_for
        from ffplan.analyze.ecmp import EcmpOptions, analyze_ecmp
        from ffplan.analyze.flows import TopologyArrays
        from ffplan.plan import load_plan
        from ffplan.plan.subnets import subnet_view

        t0 = time.process_time()
        loaded = load_plan(plan)
        load_cpu = time.process_time() - t0
        for qps in (1, 4):
            t0, w0 = time.process_time(), time.perf_counter()
            results = []
            for i, name in enumerate(loaded.subnets):
                view = subnet_view(loaded, name)
                results += analyze_ecmp(
                    view, TopologyArrays(topology_for(view)), ["all-to-all"], EcmpOptions(trials=1000, qps=qps), plane=i
                )
            cpu, wall = time.process_time() - t0, time.perf_counter() - w0
            print(
                f"Monte Carlo, 2 planes x 1,000 trials, {qps} QP(s): {cpu:.2f} s CPU, {wall:.2f} s wall, sampler "
                f"{results[0].sampler}; busiest link mean {results[0].mean:.1f}, P99 {results[0].p99:g}, bound "
                f"{results[0].bound}"
            )
        print(
            f"(plan load in-process: {load_cpu:.2f} s CPU; peak RSS of this process "
            f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB)"
        )
        cmd = FFPLAN + ["analyze", str(plan), "-p", "all-to-all", "--trials", "1000", "-f", "json"]
        cpu, wall, peak, code = measure(cmd, repeat)
        print(
            f"ffplan analyze -p all-to-all --trials 1000: {cpu:.2f} s CPU, {wall:.2f} s wall, {peak:.0f} MiB peak"
            + ("" if code == 0 else f", exit {code}")
        )


def samplers(trials: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        inv = yaml.safe_load((ROOT / "inventories" / "roce-dual-plane.yaml").read_text())
        plan = _design(inv, Path(tmp), "roce-dual-plane")
        print(
            "| pattern | QPs | sampler | CPU s | mean | P50 | P99 | max | P(>1.1 bound) | bound |\n|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"
        )
        for pattern, qps in (("all-to-all", 1), ("all-to-all", 4), ("shift", 1)):
            for sampler in ("exact", "tiers"):
                t0 = time.process_time()
                r = _results(plan, pattern, trials=trials, qps=qps, sampler=sampler)[0]
                print(
                    f"| {pattern} | {qps} | {sampler} | {time.process_time() - t0:.1f} | {r.mean:.2f} | {r.p50:g} | "
                    f"{r.p99:g} | {r.max:g} | {r.over_10:.3f} | {r.bound} |"
                )


def _inventory_2k(planes: int, transport: str) -> dict:
    inv: dict = yaml.safe_load((ROOT / "inventories" / "roce-dual-plane.yaml").read_text())
    inv["name"] = f"{transport}-{planes}-plane-2k"
    group = inv["groups"][0]
    group["count"] = NODES_2K
    group["racks"] = group["racks"][: NODES_2K // group["per_rack"]]
    fabric = inv["fabric"]
    fabric["ports_per_zone"] = NODES_2K * 8 // planes
    if planes == 1:
        fabric["zones"] = [
            {
                "name": "fabric",
                "leaf_racks": ["neta-1", "neta-2", "neta-3", "neta-4"],
                "spine_racks": ["netb-1", "netb-2"],
            }
        ]
        del fabric["planes"]
    if transport == "infiniband":  # the same shape: 128-port 400G switches, one NDR NIC per GPU
        del fabric["roce"]
        fabric["transport"] = "infiniband"
        inv["models"]["switches"]["IB128"] = {
            "ports": 128,
            "speed": "NDR",
            "data_vls": 8,
            "power_w": 1500,
            "rack_units": 2,
        }
        fabric["switch_model"] = "IB128"
        del inv["models"]["switches"]["SN5600"]
        inv["models"]["nics"] = {
            "CX7-NDR": {"ports": 1, "speed": "NDR", "data_vls": 8, "pcie": {"gen": 5, "lanes": 16}}
        }
        for device in inv["models"]["nodes"]["hgx-h100"]["devices"]:
            if device["kind"] == "nic":
                device["model"] = "CX7-NDR"
    return inv


def table(trials: int) -> None:
    """Rows are printed as they are measured; shift has a phase per leaf offset, so it gets a fifth of the trials."""
    import json

    from ffplan.analyze.ecmp import EcmpResult

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        dual = _design(_inventory_2k(2, "roce"), work, "roce-dual")
        single = _design(_inventory_2k(1, "roce"), work, "roce-single")
        balanced_inventory = _inventory_2k(2, "roce")
        balanced_inventory["fabric"]["placement"] = "balanced"
        balanced = _design(balanced_inventory, work, "roce-dual-balanced")
        ib = _design(_inventory_2k(1, "infiniband"), work, "ib-single")  # InfiniBand planes need a NIC port per plane
        ib_json = subprocess.run(
            FFPLAN + ["analyze", str(ib), "-p", "all-to-all", "-p", "shift", "-p", "ring", "-f", "json"],
            check=True,
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout
        print(
            "| pattern | routing | QPs | trials | busiest link mean | P99 | max | bound | P99 / bound | P(>1.1 bound) | "
            "leaf → spine P99 | spine → leaf P99 |"
        )
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|", flush=True)

        def row(pattern: str, what: str, qps: object, r: EcmpResult) -> None:
            ecmp = r.paths == "ecmp"
            tiers = (
                (f"{r.by_tier['leaf → spine']['p99']:g}", f"{r.by_tier['spine → leaf']['p99']:g}") if ecmp else ("", "")
            )
            print(
                f"| {pattern} | {what} | {qps} | {r.trials if ecmp else ''} | {r.mean:.2f} | {r.p99:g} | {r.max:g} | "
                f"{r.bound} | {r.p99 / max(r.bound, 1):.3f} | {f'{r.over_10:.3f}' if ecmp else ''} | {tiers[0]} | "
                f"{tiers[1]} |",
                flush=True,
            )

        def infiniband(p: dict) -> EcmpResult:
            """An InfiniBand result as a one-point distribution (static routes: the busiest link is one number)."""
            load = float(p["max_load"])
            return EcmpResult(
                pattern=p["pattern"],
                scope=p["scope"],
                description="",
                paths="lft",
                qps=1,
                trials=0,
                seed=0,
                sampler="",
                phases=p["phases"],
                worst_phase=p["worst_phase"],
                flows=p["flows"],
                links=p["links"],
                bound=p["bound"],
                bound_cut=p["bound_cut"],
                mean=load,
                p50=load,
                p99=load,
                max=load,
                over_10=0.0,
                over_50=0.0,
                unroutable=float(p["unroutable"]),
            )

        def worst(results: list[EcmpResult]) -> EcmpResult:
            return max(results, key=lambda x: x.mean / max(x.bound, 1))

        for pattern in ("all-to-all", "ring", "shift"):
            n = trials if pattern != "shift" else max(trials // 5, 1)
            row(
                pattern,
                "InfiniBand static routes (ffplan's LFTs), single-plane",
                "",
                infiniband(next(p for p in json.loads(ib_json)["patterns"] if p["pattern"] == pattern)),
            )
            for plan, what in ((single, "single-plane"), (dual, "dual-plane")):
                for qps in (1, 2, 4, 8):
                    row(pattern, f"RoCE ECMP, {what}", qps, worst(_results(plan, pattern, trials=n, qps=qps)))
            for qps in (1, 4):
                row(
                    pattern,
                    "RoCE ECMP, dual-plane, balanced placement",
                    qps,
                    worst(_results(balanced, pattern, trials=n, qps=qps)),
                )
            for plan, what in ((single, "single-plane"), (dual, "dual-plane")):
                row(pattern, f"RoCE pinned paths, {what}", "", worst(_results(plan, pattern, paths="pinned")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=("speed", "samplers", "table"))
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="speed: design into this folder and reuse the plan found there")
    args = parser.parse_args()
    if args.part == "speed":
        speed(args.repeat, args.keep)
    elif args.part == "samplers":
        samplers(args.trials)
    else:
        table(args.trials)


if __name__ == "__main__":
    main()
