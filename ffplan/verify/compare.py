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
    return {"case": case, "routing": who, "pattern": pattern, "max flows/link": mx, "mean flows/link": mean,
            "reachable": reach, "route s": round(route_s, 3) if isinstance(route_s, float) else route_s}


def _ffplan_routes(plan, fab: R.Fabric, failed: str | None):
    """(tables, seconds) of ffplan's routing for this view, timed by re-running the routing stage (without its
    deadlock proof, like OpenSM), re-routed around `failed`; (None, None) when the routing stage is missing."""
    try:
        from ffplan.design.routing import route
    except ImportError:
        if failed is None:
            from ffplan.verify.run import planned_tables

            return planned_tables(fab), None
        return None, None
    t = time.perf_counter()
    routing = route(plan, failed=list(plan.routing.failed) + ([failed] if failed else []), check=False)
    elapsed = time.perf_counter() - t
    from ffplan.verify.run import planned_tables

    if failed is None:  # the plan's own routes (what is deployed); the time is the routing stage's
        return planned_tables(fab), elapsed
    rerouted = plan.model_copy(update={"routing": routing})
    return planned_tables(R.build_fabric(rerouted, fab.view)), elapsed


def compare_case(case: str, plan, fab: R.Fabric, boot, ftree_res: WalkResult, failed: str | None = None) -> list[dict]:
    from ffplan.verify.run import fabric_topo

    topo = fabric_topo(fab)
    rows = []
    tables, route_s = _ffplan_routes(plan, fab, failed)
    if tables is not None:
        res = walk(topo, tables)
        mx, mean, _ = res.load_stats()
        rows.append(_row(case, "ffplan", "all-to-all", mx, round(mean, 1), f"{res.reachable}/{res.pairs}",
                         route_s if route_s is not None else "n/a"))
    else:
        rows.append(_row(case, "ffplan", "all-to-all", "n/a", "n/a", "n/a (no re-routing available)", "n/a"))
    mx, mean, _ = ftree_res.load_stats()
    rows.append(_row(case, "OpenSM ftree", "all-to-all", mx, round(mean, 1), f"{ftree_res.reachable}/{ftree_res.pairs}",
                     boot.timings.get("route compute s")))
    return rows
