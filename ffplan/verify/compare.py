"""ffplan's routes next to OpenSM's ftree on the same (sub-)fabric: flows per inter-switch link for each traffic
pattern, reachability, and the time each takes to compute its routes.

The patterns and their link loads come from the routing stage's analysis (`ffplan.analyze`), run on ffplan's
tables and on the tables read back from OpenSM, over the same sub-fabric (a zone view is analysed as a plan
of that zone alone). `ftree_comparison` runs the intact case and a failed-link case for `verify --engine ftree`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

import numpy as np

from ffplan.analyze import PATTERNS, PatternResult, analyze, topology_for
from ffplan.design.routing import route
from ffplan.plan.model import Plan
from ffplan.opensm import layout as L
from ffplan.opensm import Subnet, build_fabric
from ffplan.opensm.files import opensm_files
from ffplan.verify.boot import Boot, boot
from ffplan.verify.expect import fabric_topo, planned_tables
from ffplan.verify.inputs import Inputs
from ffplan.verify.report import Report
from ffplan.verify.sim import SimError
from ffplan.verify.walk import WalkResult, walk_ca_pairs


def _row(case: str, who: str, r: PatternResult, reach: str, route_s: float | None) -> dict:
    return {
        "case": case,
        "routing": who,
        "pattern": r.pattern,
        "max flows/link": r.max_load,
        "mean flows/link": round(r.mean_load, 1),
        "lower bound": r.bound,
        "max/bound": round(r.ratio, 2) if r.ratio != float("inf") else "inf",
        "reachable": reach,
        "route s": round(route_s, 3) if isinstance(route_s, float) else route_s,
    }


def _ffplan_routes(plan: Plan, fab: Subnet, failed: str | None) -> tuple[Plan, dict[str, dict[int, int]], float]:
    """(plan, tables by switch GUID, seconds) of ffplan's routing for this view: the plan's own routes when intact
    (timed by re-running the routing stage without its deadlock proof, like OpenSM), re-routed around `failed`
    otherwise."""
    t = time.perf_counter()
    extra = [failed] if failed else []
    routing = route(plan, failed=list(plan.routing.failed if plan.routing else []) + extra, check=False)
    elapsed = time.perf_counter() - t
    if failed is None:
        return plan, planned_tables(fab), elapsed
    rerouted = plan.model_copy(update={"routing": routing})
    return rerouted, planned_tables(build_fabric(rerouted, fab.view)), elapsed


def sub_plan(plan: Plan, view: L.View, tables_by_name: dict[str, np.ndarray] | None = None) -> Plan:
    """The plan restricted to a view (one zone, cables taken out), for the analysis of that sub-fabric."""
    zone = view.zone
    routing = plan.routing
    assert routing is not None
    failed = sorted(set(routing.failed) | set(view.drop_cables))
    if zone is None:
        switches, nodes, cables, zones = plan.switches, plan.nodes, plan.cables, plan.zones
    else:
        switches = [s for s in plan.switches if s.zone == zone]
        names = {s.name for s in switches}
        nodes = []
        for n in plan.nodes:
            ports = [p for p in n.ports if p.zone == zone]
            if ports:
                nodes.append(n.model_copy(update={"ports": ports}))
        hosts = {n.hostname for n in nodes}
        cables = [
            c
            for c in plan.cables
            if c.kind != "inter-zone" and (c.a.device in names or c.a.device in hosts) and c.b.device in names
        ]
        labels = {p.cable for n in nodes for p in n.ports} | {c.label for c in cables if c.kind != "node-leaf"}
        cables = [c for c in cables if c.label in labels]
        zones = [z for z in plan.zones if z.name == zone]
        failed = [f for f in failed if f in {c.label for c in cables} or f in names]
    lfts = [lft for lft in routing.lfts if lft.switch in {s.name for s in switches}]
    if tables_by_name is not None:
        lfts = [lft.model_copy(update={"ports": tables_by_name[lft.switch]}) for lft in lfts]
    new_routing = routing.model_copy(update={"failed": failed, "lfts": lfts})
    return plan.model_copy(
        update={"switches": switches, "nodes": nodes, "cables": cables, "zones": zones, "routing": new_routing}
    )


def _by_name(plan: Plan, fab: Subnet, tables: dict[str, dict[int, int]]) -> dict[str, np.ndarray]:
    assert plan.routing is not None
    size = plan.routing.max_lid + 1
    out: dict[str, np.ndarray] = {}
    for s in fab.switches:
        row = np.full(size, plan.routing.unrouted_port, dtype=np.uint8)
        for lid, port in tables.get(s.node_guid, {}).items():
            if lid < size:
                row[lid] = port
        out[s.name] = row
    return out


def _analyze(plan: Plan, fab: Subnet, tables: dict[str, dict[int, int]]) -> list[PatternResult]:
    """ffplan.analyze results for these tables on this view."""
    by_name = _by_name(plan, fab, tables)
    sub = sub_plan(plan, fab.view, by_name)
    return analyze(sub, PATTERNS, tables=by_name, topo=topology_for(sub), top=0)


def _reach(res: WalkResult) -> str:
    return f"{res.reachable}/{res.pairs}"


def compare_case(
    case: str, plan: Plan, fab: Subnet, booted: Boot, ftree_res: WalkResult, failed: str | None = None
) -> list[dict]:
    topo = fabric_topo(fab)
    ours_plan, tables, route_s = _ffplan_routes(plan, fab, failed)
    sides = [
        ("ffplan", ours_plan, tables, walk_ca_pairs(topo, tables), route_s),
        ("OpenSM ftree", plan, booted.tables, ftree_res, booted.timings.get("route compute s")),
    ]
    rows: list[dict] = []
    for who, p, tabs, res, secs in sides:
        for r in _analyze(p, fab, tabs):
            rows.append(_row(case, who, r, _reach(res), secs))
    # side by side: pattern by pattern, ffplan first
    order = {who: i for i, who in enumerate(("ffplan", "OpenSM ftree"))}
    patterns = list(dict.fromkeys(r["pattern"] for r in rows))
    rows.sort(key=lambda r: (patterns.index(r["pattern"]), order[r["routing"]]))
    return rows


def failed_link_case(fab: Subnet) -> str | None:
    """The cable the failed-link case takes out: the first leaf's first uplink."""
    leaves = {s.name for s in fab.switches if s.tier == "leaf"}
    spines = {s.name for s in fab.switches if s.tier == "spine"}
    for c in fab.plan.cables:
        if (
            c.kind == "leaf-spine"
            and c.a.device in leaves | spines
            and c.b.device in leaves | spines
            and c.label not in fab.view.drop_cables
        ):
            return c.label
    return None


def ftree_comparison(
    report: Report,
    inp: Inputs,
    fab: Subnet,
    tools: dict[str, str],
    base: Path,
    timeout: float,
    b: Boot,
    ftree_res: WalkResult,
    progress: Callable[[str], None],
) -> None:
    """ffplan's routes next to the ftree run `b`, intact and without one leaf-spine cable (report.comparison)."""
    rows = compare_case("intact", inp.plan, fab, b, ftree_res)
    cable = failed_link_case(fab)
    if cable:
        view = L.View(zone=fab.view.zone, drop_cables=fab.view.drop_cables | {cable})
        sub = build_fabric(inp.plan, view)
        files = dict(inp.files)
        files.update(
            {
                k: v
                for k, v in opensm_files(inp.plan, L.DEFAULT_PREFIX, view, engines=()).items()
                if k in (L.TOPOLOGY, L.GUID2LID, L.ROOT_GUIDS, L.CN_GUIDS, L.IO_GUIDS)
            }
        )
        progress(f"failed-link case: without {cable}")
        try:
            b2 = boot(sub, tools, base / "ftree-failed", L.FTREE_CONF, timeout, files, progress=progress)
        except SimError as exc:
            report.add(f"ftree without {cable}", False, str(exc).splitlines()[0])
        else:
            res2 = walk_ca_pairs(b2.topo, b2.tables)
            rows += compare_case(f"without {cable}", inp.plan, sub, b2, res2, failed=cable)
    report.comparison = rows
