"""ffplan's routes next to OpenSM's ftree on the same (sub-)fabric: flows per inter-switch link for each traffic
pattern, reachability, and the time each takes to compute its routes.

The patterns and their link loads come from the routing stage's analysis (`ffplan.analyze`), run on ffplan's
tables and on the tables read back from OpenSM, over the same sub-fabric (a zone view is analysed as a plan
of that zone alone). Without `ffplan.analyze`, this module's own all-to-all count (`ffplan.verify.walk`) is
used.
"""

from __future__ import annotations

import time

from ffplan.plan.model import Plan
from ffplan.render import opensm as R
from ffplan.verify.walk import WalkResult, walk

UNROUTED = 255


def _row(case: str, who: str, pattern: str, mx, mean, reach: str, route_s, bound="", ratio="") -> dict:
    return {"case": case, "routing": who, "pattern": pattern, "max flows/link": mx, "mean flows/link": mean,
            "lower bound": bound, "max/bound": ratio, "reachable": reach,
            "route s": round(route_s, 3) if isinstance(route_s, float) else route_s}


def _ffplan_routes(plan: Plan, fab: R.Fabric, failed: str | None):
    """(plan, tables by switch GUID, seconds) of ffplan's routing for this view: the plan's own routes when intact
    (timed by re-running the routing stage without its deadlock proof, like OpenSM), re-routed around `failed`
    otherwise; (plan, None, None) when the routing stage is missing."""
    from ffplan.verify.run import planned_tables

    try:
        from ffplan.design.routing import route
    except ImportError:
        return plan, (planned_tables(fab) if failed is None else None), None
    t = time.perf_counter()
    extra = [failed] if failed else []
    routing = route(plan, failed=list(plan.routing.failed if plan.routing else []) + extra, check=False)
    elapsed = time.perf_counter() - t
    if failed is None:
        return plan, planned_tables(fab), elapsed
    rerouted = plan.model_copy(update={"routing": routing})
    return rerouted, planned_tables(R.build_fabric(rerouted, fab.view)), elapsed


def sub_plan(plan: Plan, view: R.View, tables_by_name: dict[str, list[int]] | None = None) -> Plan:
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
        cables = [c for c in plan.cables if c.kind != "inter-zone"
                  and (c.a.device in names or c.a.device in hosts) and c.b.device in names]
        labels = {p.cable for n in nodes for p in n.ports} | {c.label for c in cables if c.kind != "node-leaf"}
        cables = [c for c in cables if c.label in labels]
        zones = [z for z in plan.zones if z.name == zone]
        failed = [f for f in failed if f in {c.label for c in cables} or f in names]
    lfts = [lft for lft in routing.lfts if lft.switch in {s.name for s in switches}]
    if tables_by_name is not None:
        lfts = [lft.model_copy(update={"ports": tables_by_name[lft.switch]}) for lft in lfts]
    new_routing = routing.model_copy(update={"failed": failed, "lfts": lfts})
    return plan.model_copy(update={"switches": switches, "nodes": nodes, "cables": cables, "zones": zones,
                                   "routing": new_routing})


def _by_name(plan: Plan, fab: R.Fabric, tables: dict[str, dict[int, int]]) -> dict[str, list[int]]:
    assert plan.routing is not None
    size = plan.routing.max_lid + 1
    out = {}
    for s in fab.switches:
        row = [UNROUTED] * size
        for lid, port in tables.get(s.node_guid, {}).items():
            if lid < size:
                row[lid] = port
        out[s.name] = row
    return out


def _analyze(plan: Plan, fab: R.Fabric, tables: dict[str, dict[int, int]]):
    """ffplan.analyze results for these tables on this view, or None without the analysis stage."""
    try:
        from ffplan.analyze import PATTERNS, analyze, topology_for
    except ImportError:
        return None
    by_name = _by_name(plan, fab, tables)
    sub = sub_plan(plan, fab.view, by_name)
    return analyze(sub, PATTERNS, tables=by_name, topo=topology_for(sub), top=0)


def _reach(res: WalkResult) -> str:
    return f"{res.reachable}/{res.pairs}"


def compare_case(case: str, plan: Plan, fab: R.Fabric, boot, ftree_res: WalkResult, failed: str | None = None) -> list[dict]:
    from ffplan.verify.run import fabric_topo

    topo = fabric_topo(fab)
    ours_plan, tables, route_s = _ffplan_routes(plan, fab, failed)
    sides = []
    if tables is not None:
        sides.append(("ffplan", ours_plan, tables, walk(topo, tables), route_s if route_s is not None else "n/a"))
    sides.append(("OpenSM ftree", plan, boot.tables, ftree_res, boot.timings.get("route compute s")))
    rows: list[dict] = []
    for who, p, tabs, res, secs in sides:
        results = _analyze(p, fab, tabs)
        if results is None:
            mx, mean, _ = res.load_stats()
            rows.append(_row(case, who, "all-to-all", mx, round(mean, 1), _reach(res), secs))
            continue
        for r in results:
            rows.append(_row(case, who, r.pattern, r.max_load, round(r.mean_load, 1), _reach(res), secs, r.bound,
                             round(r.ratio, 2) if r.ratio != float("inf") else "inf"))
    if tables is None:
        rows.insert(0, _row(case, "ffplan", "-", "n/a", "n/a", "n/a (no routing stage to re-route)", "n/a"))
    # side by side: pattern by pattern, ffplan first
    order = {who: i for i, who in enumerate(("ffplan", "OpenSM ftree"))}
    patterns = list(dict.fromkeys(r["pattern"] for r in rows))
    rows.sort(key=lambda r: (patterns.index(r["pattern"]), order[r["routing"]]))
    return rows
