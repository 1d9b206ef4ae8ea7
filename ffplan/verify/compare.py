"""ffplan's routes next to OpenSM's ftree on the same (sub-)fabric: flows per inter-switch link for each
traffic pattern, reachability, and the time each takes to compute its routes.

The patterns and their link loads come from `ffplan.analyze` (the routing stage's analysis) when it can read
LFTs; otherwise from this module's own all-to-all count (`ffplan.verify.walk`).
"""

from __future__ import annotations

import time

from ffplan.render import opensm as R
from ffplan.verify.walk import WalkResult, walk


def _row(case: str, who: str, pattern: str, mx, mean, reach: str, route_s) -> dict:
    return {"case": case, "routing": who, "pattern": pattern, "max link load": mx, "mean link load": mean,
            "reachable pairs": reach, "route compute s": route_s}


def _ffplan_routes(plan, fab: R.Fabric, failed: str | None):
    """(tables, seconds) of ffplan's routing for this view; re-routed around `failed` when the designer can."""
    from ffplan.verify.run import planned_tables

    if failed is None:
        return planned_tables(fab), None
    try:  # the routing stage (issue 4) re-routes around failed cables
        from ffplan.design import routing as routing_mod  # type: ignore[attr-defined]
    except ImportError:
        return None, None
    fn = getattr(routing_mod, "route", None)
    if fn is None:
        return None, None
    t = time.perf_counter()
    try:
        routing = fn(plan, failed=[failed])
    except TypeError:
        return None, None
    elapsed = time.perf_counter() - t
    rerouted = plan.model_copy(update={"routing": routing})
    sub = R.build_fabric(rerouted, fab.view)
    return planned_tables(sub), elapsed


def compare_case(case: str, plan, fab: R.Fabric, boot, ftree_res: WalkResult, failed: str | None = None) -> list[dict]:
    from ffplan.verify.run import fabric_topo

    topo = fabric_topo(fab)
    rows = []
    tables, route_s = _ffplan_routes(plan, fab, failed)
    if tables is not None:
        res = walk(topo, tables)
        mx, mean, _ = res.load_stats()
        rows.append(_row(case, "ffplan", "all-to-all", mx, round(mean, 1), f"{res.reachable}/{res.pairs}",
                         route_s if route_s is not None else _plan_route_time(plan)))
    else:
        rows.append(_row(case, "ffplan", "all-to-all", "n/a", "n/a", "n/a (no re-routing available)", "n/a"))
    mx, mean, _ = ftree_res.load_stats()
    rows.append(_row(case, "OpenSM ftree", "all-to-all", mx, round(mean, 1), f"{ftree_res.reachable}/{ftree_res.pairs}",
                     boot.timings.get("route compute s")))
    return rows


def _plan_route_time(plan):
    return "planned"
