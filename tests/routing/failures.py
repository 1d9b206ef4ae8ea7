"""Checks of failure cases shared by the routing tests: a failure moves only the (switch, LID) entries whose route
it broke."""

from __future__ import annotations

import numpy as np

from ffplan.analyze import analyze
from ffplan.plan.model import UNROUTED
from ffplan.plan.topology import build_topology


def lfts(routing) -> np.ndarray:
    return np.array([t.ports for t in routing.lfts])


def affected_entries(topo, before, failed_cables, failed_switches):
    """(switch, LID) entries whose intact route used a failed cable or switch, or that belong to a dead switch or to
    a LID of one."""
    names = list(topo.lid)
    dead_lids = {topo.lid[s] for s in failed_switches} | {
        lid for lid, ca in topo.ca_by_lid.items() if ca.leaf in failed_switches
    }
    out = set()
    for i, sw in enumerate(names):
        for lid in range(before.shape[1]):
            if sw in failed_switches or lid in dead_lids:
                out.add((i, lid))
                continue
            at, seen = sw, 0
            while seen < 16:
                port = int(before[names.index(at), lid])
                if port in (0, UNROUTED):
                    break
                label = topo.port_label.get((at, port))
                what = topo.peer.get((at, port))
                if label in failed_cables or what is None or what[0] != "switch":
                    if label in failed_cables:
                        out.add((i, lid))
                    break
                at = what[1][0]
                if at in failed_switches:
                    out.add((i, lid))
                    break
                seen += 1
    return out


def assert_only_affected_moved(plan, routing, failed, repaired_max: int | None = None) -> None:
    """`routing` (of `plan` around `failed`) differs from the plan's own routes, and only in affected entries. With
    `repaired_max` (a spine-core cable or core of a three-layer tree failed: the minimal repair's all-to-all maximum),
    the rebalance may also move healthy entries, of CA LIDs at leaves and spines only, and then all-to-all's maximum
    is below `repaired_max` (issue 11's rule: healthy routes move only when the maximum falls)."""
    before, after = lfts(plan.routing), lfts(routing)
    topo = build_topology(plan)
    changed = {tuple(x) for x in np.argwhere(before != after).tolist()}
    cables = {f for f in failed if f in topo.by_label}
    switches = {f for f in failed if f in topo.lid}
    healthy = changed - affected_entries(topo, before, cables, switches)
    assert changed
    if repaired_max is None:
        assert not healthy
        return
    names = list(topo.lid)
    assert healthy and all(topo.tier[names[i]] in ("leaf", "spine") and lid in topo.ca_by_lid for i, lid in healthy)
    a2a = analyze(plan.model_copy(update={"routing": routing}), ["all-to-all"])[0]
    assert a2a.unroutable == 0 and a2a.max_load < repaired_max
