"""`ffplan analyze PLAN [--pattern ...]`: flows per link over the plan's routes (or OpenSM's dumped LFTs)."""

from __future__ import annotations

import json
from contextlib import ExitStack
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ffplan.cli import complete
from ffplan.cli.common import EXIT_FINDINGS, err, fail, kept_until_exit, out, stage_errors, write_output
from ffplan.inventory.models import Role

if TYPE_CHECKING:  # imported where used: `ffplan --help` does not load the analyzer
    from ffplan.analyze import PatternResult
    from ffplan.analyze.ecmp import EcmpResult, FailureEffect
    from ffplan.ethernet.forwarding import Failed
    from ffplan.analyze.sweep import CaseResult, SweepResult
    from ffplan.plan.model import Plan, RouteCheck, StorageTargetPlan


SHOWN_CHANGES = 12  # changed next-hop sets the table output lists after a failure


class Format(str, Enum):
    table = "table"
    json = "json"


class EcmpPaths(str, Enum):
    ecmp = "ecmp"
    pinned = "pinned"


class EcmpSampler(str, Enum):
    auto = "auto"
    exact = "exact"
    tiers = "tiers"


class Scope(str, Enum):
    zone = "zone"
    fabric = "fabric"


def analyze_command(
    plan_path: Path = typer.Argument(..., metavar="PLAN", help="plan.yaml or the folder `ffplan design` wrote."),
    pattern: list[str] = typer.Option(
        [],
        "--pattern",
        "-p",
        autocompletion=complete.patterns,
        help="all-to-all, shift, ring, double-binary-tree, storage-incast, storage-read (repeatable; default: all).",
    ),
    scope: Scope = typer.Option(
        None,
        "--scope",
        help="zone: the pattern inside every zone at once; fabric: once over all zones (default per pattern, see docs/routing.md).",
    ),
    role: list[Role] = typer.Option([], "--role", help="Only endpoints of this role (repeatable)."),
    lfts: Path = typer.Option(
        None, "--lfts", help="Analyze these LFTs instead of the plan's: dump_fts/ibroute output or opensm-lfts.dump."
    ),
    topology: Path = typer.Option(
        None, "--topology", help="ibnetdiscover output: maps the dump's LIDs to port GUIDs when its entries carry none."
    ),
    top: int = typer.Option(5, "--top", min=0, help="How many of the most loaded links to list."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="table or json."),
    sweep: bool = typer.Option(
        False,
        "--sweep",
        help="Failure sweep: re-route around every single leaf-spine cable and every single spine (plus --random cases) and measure patterns A, B, C, X in each.",
    ),
    random_cases: int = typer.Option(0, "--random", min=0, help="With --sweep: this many random multi-cable failures."),
    cables: int = typer.Option(3, "--cables", min=1, help="With --random: failed leaf-spine cables per random case."),
    seed: int = typer.Option(
        0,
        "--seed",
        help="With --random, or the ECMP trials of a RoCE plan: the random generator's seed (same seed, same cases).",
    ),
    only_random: bool = typer.Option(
        False, "--only-random", help="With --sweep: skip the single-cable and single-spine cases."
    ),
    jobs: int = typer.Option(
        None,
        "--jobs",
        "-j",
        min=1,
        show_default="the cores",
        help="With --sweep: worker processes of a local Dask cluster (1: in this process).",
    ),
    scheduler: str = typer.Option(
        None,
        "--scheduler",
        metavar="ADDRESS",
        help="With --sweep: run the cases on this Dask cluster (tcp://host:8786; its workers need ffplan) instead of a local one.",
    ),
    results_file: Path = typer.Option(
        None,
        "--results",
        help="With --sweep: append each finished case to this JSON-lines file; a re-run with it skips the cases it holds.",
    ),
    html: Path = typer.Option(
        None,
        "--html",
        help="Also write an HTML report with charts to this file (flows per link by tier; with --sweep the cases' distribution and the worst cases).",
    ),
    plane: str = typer.Option(
        None,
        "--plane",
        autocompletion=complete.planes,
        help="A plan with planes: analyze this plane (subnet) only; default: every plane on its own, then the worst.",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress on stderr."),
    failed: list[str] = typer.Option(
        [],
        "--failed",
        help="RoCE plans: a failed cable label, switch name or switch[port] (repeatable): the next-hop sets eBGP "
        "reduces to, and the trials over them.",
    ),
    trials: int = typer.Option(
        1000, "--trials", min=1, help="RoCE plans: Monte Carlo trials of ECMP's per-flow hash (docs/ethernet.md)."
    ),
    qps: int = typer.Option(
        None,
        "--qps",
        min=1,
        max=128,
        show_default="the plan's NCCL_IB_QPS_PER_CONNECTION",
        help="RoCE plans: QPs per connection, each hashed on its own with 1/N of the traffic.",
    ),
    paths: EcmpPaths = typer.Option(
        None,
        "--paths",
        show_default="the plan's fabric.roce.path_selection",
        help="RoCE plans: ecmp (per-flow hash, a distribution) or pinned (one path per destination port).",
    ),
    sampler: EcmpSampler = typer.Option(
        EcmpSampler.auto,
        "--sampler",
        help="RoCE plans: exact (joint loads of all links), tiers (two-tier Clos: each tier exact, tiers independent) or auto.",
    ),
) -> None:
    """Count flows on every switch-to-switch link for traffic patterns; compare the worst link with the lower bound.

    Example: ffplan analyze out/fire-flyer-2/plan --pattern all-to-all --pattern shift
    Example: ffplan analyze out/fire-flyer-2/plan --sweep --random 20 --cables 5 --seed 1 --format json > sweep.json
    Example: ffplan analyze roce-plan --pattern all-to-all --trials 1000 --qps 1 (a RoCE plan: ECMP as a distribution)
    Example: ffplan analyze roce-plan --failed pa-leaf01-p03 --format json (the ECMP sets after a failure)
    """
    from ffplan.analyze import PATTERNS
    from ffplan.plan import load_plan
    from ffplan.plan.subnets import subnet_view

    names = pattern or list(PATTERNS)
    bad = [p for p in names if p not in PATTERNS]
    if bad:
        fail(f"unknown pattern {', '.join(bad)}", f"use one of {', '.join(PATTERNS)}")
    with stage_errors(), kept_until_exit():
        path = plan_path / "plan.yaml" if plan_path.is_dir() else plan_path
        plan = load_plan(path)
    if plan.ethernet is not None:
        refused = [
            flag
            for flag, given in (
                ("--lfts", lfts),
                ("--topology", topology),
                ("--sweep", sweep or None),
                ("--html", html),
                ("--random", random_cases or None),
            )
            if given is not None
        ]
        if refused:
            fail(
                f"{', '.join(refused)}: InfiniBand only; a RoCE plan's routes are its ECMP next-hop sets",
                "drop them; see docs/ethernet.md for the ECMP analysis",
            )
        _roce(plan, path, names, scope, role, plane, fmt, trials, seed, qps, paths, sampler, failed)
        return
    ecmp_only = [flag for flag, given in (("--qps", qps), ("--paths", paths), ("--failed", failed or None)) if given]
    if trials != 1000 or sampler is not EcmpSampler.auto:
        ecmp_only.append("--trials" if trials != 1000 else "--sampler")
    if ecmp_only:
        fail(
            f"{', '.join(ecmp_only)}: RoCE plans only (ECMP); an InfiniBand plan's routes are its LFTs",
            "drop them, or analyze a plan designed with fabric.transport: roce (InfiniBand failures: "
            "`ffplan reroute --failed`, `ffplan analyze --sweep`)",
        )
    if plan.routing is None and lfts is None:
        fail("the plan has no routing tables", "re-run `ffplan design`, or pass OpenSM's tables with --lfts")
    subnets = plan.subnets
    if plane is not None:
        if plane not in subnets:
            fail(f"no plane '{plane}' in the plan", f"use one of {', '.join(subnets)}")
        subnets = [plane]
    if lfts is not None and len(subnets) > 1:
        fail(
            "--lfts reads one subnet's tables (one OpenSM's dump) and the plan has several planes",
            f"add --plane with the plane the dump is from ({', '.join(subnets)})",
        )
    views = [(name, subnet_view(plan, name)) for name in subnets]
    if sweep:
        if lfts is not None or pattern:
            fail(
                "--sweep re-routes the plan with ffplan's router and measures its own patterns A, B, C, X",
                "drop --lfts and --pattern, or run without --sweep",
            )
        options = SweepOptions(random_cases, cables, seed, only_random, jobs, scheduler, results_file)
        _sweep(views, len(plan.subnets) > 1, path, fmt, options, html, quiet)
        return
    reports = [(name, _analyze(view, names, scope, role, lfts, topology, top)) for name, view in views]
    if html is not None:
        from ffplan.analyze.html import analyze_page

        _write_html(html, analyze_page(str(path), [(name, *report) for name, report in reports], len(plan.subnets) > 1))
    if len(plan.subnets) == 1:
        _, (results, check, source) = reports[0]
        if fmt is Format.json:
            out.print_json(
                json.dumps(
                    {
                        "plan": str(path),
                        "routes": source,
                        "route_check": check.model_dump(),
                        "patterns": [r.as_dict() for r in results],
                        **({"storage_target": plan.storage_target.model_dump()} if plan.storage_target else {}),
                    }
                )
            )
        else:
            _print_report(results, check, source, plan.storage_target)
    elif fmt is Format.json:
        out.print_json(
            json.dumps(
                {
                    "plan": str(path),
                    "planes": [
                        {
                            "plane": name,
                            "routes": source,
                            "route_check": check.model_dump(),
                            "patterns": [r.as_dict() for r in results],
                        }
                        for name, (results, check, source) in reports
                    ],
                    "worst": _worst(reports),
                }
            )
        )
    else:
        for name, (results, check, source) in reports:
            out.print(f"[bold]plane {name}[/]")
            _print_report(results, check, source, plan.storage_target)
        worst = _worst(reports)
        out.print(
            "[bold]worst plane per pattern[/]: "
            + "; ".join(
                f"{p['pattern']} {p['max_load']}/{p['bound']} ({p['ratio']:.2f}) in {p['plane']}"
                for p in worst["patterns"]
            )
        )
    if any(r.unroutable for _, (results, _, _) in reports for r in results):
        raise typer.Exit(EXIT_FINDINGS)


def _roce(
    plan: Plan,
    path: Path,
    names: list[str],
    scope: Scope | None,
    role: list[Role],
    plane: str | None,
    fmt: Format,
    trials: int,
    seed: int,
    qps: int | None,
    paths: EcmpPaths | None,
    sampler: EcmpSampler,
    failed: list[str],
) -> None:
    """ECMP's busiest-link distribution per pattern and plane of a RoCE plan (ffplan.analyze.ecmp), on the reduced
    next-hop sets when something failed."""
    from ffplan.analyze import topology_for
    from ffplan.analyze.ecmp import EcmpOptions, after_failure, analyze_ecmp, plan_qps
    from ffplan.analyze.flows import TopologyArrays
    from ffplan.plan.subnets import subnet_view

    assert plan.ethernet is not None
    subnets = plan.subnets if plane is None else [plane]
    if plane is not None and plane not in plan.subnets:
        fail(f"no plane '{plane}' in the plan", f"use one of {', '.join(plan.subnets)}")
    options = EcmpOptions(
        trials=trials,
        seed=seed,
        qps=qps or plan_qps(plan),
        paths=paths.value if paths else plan.ethernet.path_selection,
        sampler=sampler.value,
    )
    effect = None
    if failed:
        plan, effect = after_failure(plan, failed, _failed_items(plan, path, failed))
    roles = tuple(r.value for r in role) or None
    reports = []
    for name in subnets:
        view = subnet_view(plan, name)
        try:
            results = analyze_ecmp(
                view,
                TopologyArrays(topology_for(view)),
                names,
                options,
                plane=plan.subnets.index(name),
                scope=scope.value if scope else None,
                roles=roles,
            )
        except ValueError as exc:
            fail(f"{path}: {exc}", "re-run `ffplan design` on the inventory, or pick another --sampler")
        reports.append((name, results))
    if fmt is Format.json:
        out.print_json(
            json.dumps(
                {
                    "plan": str(path),
                    "routes": "ecmp",
                    "options": options.__dict__,
                    **({"failure": effect.as_dict()} if effect else {}),
                    "planes": [
                        {"plane": name, "patterns": [r.as_dict() for r in results]} for name, results in reports
                    ],
                }
            )
        )
    else:
        if effect is not None:
            _print_failure(effect)
        for name, results in reports:
            _print_ecmp(name, results)
    if any(r.unroutable for _, results in reports for r in results):
        raise typer.Exit(EXIT_FINDINGS)


def _failed_items(plan: Plan, path: Path, items: list[str]) -> Failed:
    """--failed items -> what is down; an item naming nothing of the plan, or a host's cable, is a usage error."""
    from ffplan.codes.plan import OPTION_VALUE_NOT_IN_PLAN
    from ffplan.diagnostics import did_you_mean, option_error
    from ffplan.ethernet.forwarding import resolve_failed

    assert plan.ethernet is not None
    resolved = resolve_failed(plan.ethernet, items)
    with stage_errors():
        if resolved.unknown:
            item = resolved.unknown[0]
            raise option_error(
                OPTION_VALUE_NOT_IN_PLAN,
                "--failed",
                f"{item!r} is neither a cable label, a switch nor switch[port] of {path}",
                did_you_mean(item, [s.name for s in plan.switches] + [c.label for c in plan.cables])
                or "name a cable label from cables.csv (pa-leaf01-p03), a switch (pa-spine01) or switch[port]",
            )
        if resolved.host_cables:
            raise option_error(
                OPTION_VALUE_NOT_IN_PLAN,
                "--failed",
                f"{resolved.host_cables[0]!r} is a host's cable: it cuts one NIC off and changes no next-hop set",
                "name a switch-to-switch cable or a switch",
            )
    return resolved.failed


def _print_failure(effect: FailureEffect) -> None:
    out.print(
        f"[bold]failed[/]: {', '.join(effect.items)}: {effect.switches} switches' next-hop sets change "
        f"({effect.narrowed} prefixes over fewer next hops, {effect.unreachable} (switch, prefix) routes "
        "unreachable); the trials below run on the reduced sets",
        highlight=False,
    )
    for c in effect.changes[:SHOWN_CHANGES]:
        gone = ", ".join(h for h in c.planned if h not in c.reduced)
        now = f"{len(c.planned)} => {len(c.reduced)} next hops, without {gone}" if c.reduced else "unreachable"
        out.print(f"    {c.switch} -> {c.destination} ({', '.join(c.prefixes)}): {now}", highlight=False)
    if len(effect.changes) > SHOWN_CHANGES:
        out.print(f"    ... {len(effect.changes) - SHOWN_CHANGES} more (--format json lists every one)")


def _print_ecmp(plane: str, results: list[EcmpResult]) -> None:
    from rich.table import Table

    t = Table(title=f"busiest switch-to-switch link, in connections ({plane})", title_justify="left")
    for col in (
        "pattern",
        "scope",
        "paths",
        "QPs",
        "trials",
        "bound",
        "mean",
        "P50",
        "P99",
        "max",
        "P(>1.1 bound)",
        "P(>1.5 bound)",
        "worst phase",
        "unroutable",
    ):
        t.add_column(col, justify="left" if col in ("pattern", "scope", "paths", "worst phase") else "right")
    for r in results:
        t.add_row(
            r.pattern,
            r.scope,
            r.paths,
            str(r.qps),
            str(r.trials),
            str(r.bound),
            f"{r.mean:.2f}",
            f"{r.p50:g}",
            f"{r.p99:g}",
            f"{r.max:g}",
            f"{r.over_10:.3f}",
            f"{r.over_50:.3f}",
            r.worst_phase,
            f"{r.unroutable:g}" if not r.unroutable else f"[red]{r.unroutable:g}[/]",
        )
    out.print(t)
    for r in results:
        tiers = "; ".join(
            f"{tier} mean {s['mean']:.2f}, P99 {s['p99']:g}, max {s['max']:g}" for tier, s in r.by_tier.items()
        )
        how = "one path per destination port" if r.paths == "pinned" else f"{r.sampler} sampler, seed {r.seed}"
        out.print(
            f"[bold]{r.pattern}[/] ({r.scope}): {r.description}; bound from the {r.bound_cut}; {how}; busiest "
            f"link per tier: {tiers}",
            highlight=False,
        )


def _analyze(
    plan: Plan,
    names: list[str],
    scope: Scope | None,
    role: list[Role],
    lfts: Path | None,
    topology: Path | None,
    top: int,
) -> tuple[list[PatternResult], RouteCheck, str]:
    """One subnet's patterns and route check, over its plan's tables or a dump of OpenSM's."""
    from ffplan.analyze import read_lfts, topology_for
    from ffplan.analyze.loads import analyze_and_check
    from ffplan.fabric.discovery import lid_guids, read_fabric
    from ffplan.inventory.source import read_text
    from ffplan.plan.io import MAX_PLAN_BYTES

    topo = topology_for(plan)
    tables = None
    source = "plan"
    if lfts is not None:
        with stage_errors():  # read bounded, and no FIFO or device: a located FF003, exit 2
            text = read_text(lfts, MAX_PLAN_BYTES)
            lid_map = lid_guids(read_fabric(topology)) if topology else None  # ibnetdiscover output, or FF930
        read = read_lfts(text, topo, lid_map)
        if read.switches_read == 0:
            fail(f"{lfts}: no switch block matches a switch GUID of the plan", "is this the dump of this fabric?")
        tables = read.tables
        source = str(lfts)
        if read.missing_switches or read.unknown_switches or read.unmapped_lids:
            err.print(
                f"[yellow]note:[/] {len(read.missing_switches)} plan switches not in the dump (empty tables), "
                f"{len(read.unknown_switches)} dump switches not in the plan, {read.unmapped_lids} entries not mapped"
            )
    roles = tuple(r.value for r in role) or None
    results, check = analyze_and_check(
        plan, names, scope=scope.value if scope else None, roles=roles, tables=tables, top=top, topo=topo
    )
    return results, check, source


def _worst(reports: list[tuple[str, tuple[list[PatternResult], RouteCheck, str]]]) -> dict:
    """Per pattern the plane with the highest max / bound, and the route checks summed over the planes."""
    by_pattern: dict[str, dict] = {}
    for name, (results, _, _) in reports:
        for r in results:
            best = by_pattern.get(r.pattern)
            if best is None or (r.ratio, r.max_load) > (best["ratio"], best["max_load"]):
                by_pattern[r.pattern] = {
                    "pattern": r.pattern,
                    "plane": name,
                    "max_load": r.max_load,
                    "bound": r.bound,
                    "ratio": round(r.ratio, 4),
                }
    checks = [check for _, (_, check, _) in reports]
    total = {field: sum(getattr(c, field) for c in checks) for field in type(checks[0]).model_fields} if checks else {}
    return {"patterns": list(by_pattern.values()), "route_check": total}


def _print_report(
    results: list[PatternResult], check: RouteCheck, source: str, target: StorageTargetPlan | None
) -> None:
    _print_table(results, source, target)
    out.print(
        f"routes: {check.ca_pair_detours} CA pairs and {check.switch_to_ca_detours} switch-to-CA routes longer "
        f"than the shortest path; unreachable: {check.unreachable_ca_pairs} CA pairs, "
        f"{check.unreachable_switch_to_ca} switch-to-CA routes, {check.unreachable_switch_lids} routes to switch "
        "LIDs (docs/routing.md)",
        markup=False,
    )


def _storage_line(per_gpu: float, target: StorageTargetPlan | None) -> str:
    if target is None:
        return f"    storage read: {per_gpu:.2f} GiB/s per GPU (the plan names no target: re-run design)"
    verdict = "meets" if per_gpu + 1e-9 >= target.gib_s_per_gpu else "UNDER"
    return (
        f"    storage read: {per_gpu:.2f} GiB/s per GPU, {verdict} the target {target.gib_s_per_gpu:g} GiB/s per GPU "
        f"({target.source})"
    )


def _print_table(results: list[PatternResult], source: str, target: StorageTargetPlan | None) -> None:
    from rich.table import Table  # imported for a table only: not for --format json or --help

    t = Table(title=f"flows per switch-to-switch link (routes: {source})", title_justify="left")
    for col in ("pattern", "scope", "flows", "max", "mean", "min", "lower bound", "ratio", "worst phase", "unroutable"):
        t.add_column(col, justify="left" if col in ("pattern", "scope", "worst phase") else "right")
    for r in results:
        ratio = f"{r.ratio:.2f}"
        t.add_row(
            r.pattern,
            r.scope,
            str(r.flows),
            str(r.max_load),
            f"{r.mean_load:.1f}",
            str(r.min_load),
            str(r.bound),
            ratio if r.ratio <= 1.0 + 1e-9 else f"[yellow]{ratio}[/]",
            r.worst_phase,
            str(r.unroutable) if not r.unroutable else f"[red]{r.unroutable}[/]",
        )
    out.print(t)
    for r in results:
        out.print(
            f"[bold]{r.pattern}[/] ({r.scope}): {r.description}; bound from the {r.bound_cut}; "
            f"busiest CA port sends {r.ca_max_inject} and receives {r.ca_max_eject} flows; "
            f"{r.cross_zone_flows} flows cross zones"
        )
        if r.storage_gib_s_per_gpu is not None:
            out.print(_storage_line(r.storage_gib_s_per_gpu, target), markup=False)
        for s in r.top:
            out.print(f"    {s.flows:>8}  {s.link}", markup=False)


@dataclass(frozen=True)
class SweepOptions:
    random_cases: int
    cables: int
    seed: int
    only_random: bool
    jobs: int | None  # None: the cores
    scheduler: str | None
    results: Path | None


def _write_html(target: Path, text: str) -> None:
    write_output(target, text)
    err.print(f"wrote {target}", markup=False, highlight=False)


def _sweep(
    views: list[tuple[str, Plan]],
    planes: bool,
    path: Path,
    fmt: Format,
    opt: SweepOptions,
    html: Path | None,
    quiet: bool,
) -> None:
    """The failure sweep of every subnet on its own (each plane's failures stay in that plane), on one Dask cluster."""
    import hashlib

    from rich.progress import Progress, TaskID

    from ffplan.analyze.sweep import SWEEP_PATTERNS, run_sweep
    from ffplan.analyze.sweep_cluster import ResultsFile, cores, sweep_client

    results: list[tuple[str, SweepResult]] = []
    with stage_errors(), ExitStack() as stack:
        store = None
        if opt.results is not None:
            store = stack.enter_context(ResultsFile(opt.results, hashlib.sha256(path.read_bytes()).hexdigest()))
        client = stack.enter_context(sweep_client(opt.jobs or cores(), opt.scheduler))
        bar = stack.enter_context(Progress(console=err, transient=True, disable=quiet))
        for name, view in views:
            task = bar.add_task(f"failure cases{f' ({name})' if planes else ''}", total=None)

            def progress(done: int, total: int, task: TaskID = task) -> None:
                bar.update(task, completed=done, total=total)

            def keep(case: CaseResult, plane: str = name) -> None:
                if store is not None:
                    store.add(plane, case)

            results.append(
                (
                    name,
                    run_sweep(
                        view,
                        random_cases=opt.random_cases,
                        cables_per_case=opt.cables,
                        seed=opt.seed,
                        singles=not opt.only_random,
                        client=client,
                        done=store.done.get(name) if store else None,
                        on_result=keep,
                        progress=progress,
                    ),
                )
            )
    if html is not None:
        from ffplan.analyze.html import sweep_page

        _write_html(html, sweep_page(str(path), results, planes))
    if fmt is Format.json:

        def as_json(result: SweepResult) -> dict:
            return {
                "intact": result.intact.as_dict(),
                "summary": result.summary(),
                "cases": [c.as_dict() for c in result.cases],
            }

        patterns = {k: v[0] for k, v in SWEEP_PATTERNS.items()}
        if planes:
            out.print_json(
                json.dumps(
                    {
                        "plan": str(path),
                        "patterns": patterns,
                        "planes": [{"plane": name, **as_json(r)} for name, r in results],
                    }
                )
            )
        else:
            out.print_json(json.dumps({"plan": str(path), "patterns": patterns, **as_json(results[0][1])}))
    else:
        for name, result in results:
            _print_sweep(result, f" of plane {name}" if planes else "")
        for name, (text, *_) in SWEEP_PATTERNS.items():
            out.print(f"{name}: {text}", markup=False)
    if any(
        c.unreachable_ca_pairs or c.unreachable_switch_lids or not c.deadlock_free for _, r in results for c in r.cases
    ):
        raise typer.Exit(EXIT_FINDINGS)


def _print_sweep(result: SweepResult, where: str) -> None:
    from rich.table import Table

    from ffplan.analyze.sweep import SWEEP_PATTERNS

    summary = result.summary()
    t = Table(
        title=f"failure sweep{where}: worst case per pattern (max flows on one link / lower bound)",
        title_justify="left",
    )
    for col in (
        "cases",
        "count",
        *SWEEP_PATTERNS,
        "unreachable CA pairs",
        "unreachable switch LIDs",
        "not deadlock-free",
        "most routes changed",
    ):
        t.add_column(col, justify="left" if col == "cases" else "right")
    intact = result.intact
    t.add_row(
        "intact",
        "1",
        *(f"{p.max_load}/{p.bound} ({p.ratio:.2f})" for p in intact.patterns.values()),
        str(intact.unreachable_ca_pairs),
        str(intact.unreachable_switch_lids),
        "0" if intact.deadlock_free else "1",
        "0",
    )
    for kind, s in summary.items():
        t.add_row(
            kind,
            str(s["cases"]),
            *(f"{w['max']}/{w['bound']} ({w['ratio']:.2f})" for w in s["worst"].values()),
            str(s["unreachable_ca_pairs"]),
            str(s["unreachable_switch_lids"]),
            str(s["cases_not_deadlock_free"]),
            str(s["max_routes_changed"]),
        )
    out.print(t)
    for kind, s in summary.items():
        out.print(f"worst {kind} cases: " + "; ".join(f"{k} {w['case']}" for k, w in s["worst"].items()), markup=False)


def register(app: typer.Typer) -> None:
    app.command("analyze")(analyze_command)
