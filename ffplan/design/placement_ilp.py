"""Balanced placement of NIC ports on leaves, as an integer program (pulp).

To stay small enough to solve the whole of Fire-Flyer 2 optimally in well under a second, the model
aggregates: identical ports (same rack, role and zone rule) form one demand group, and leaves in the same
rack form one leaf group, since all of them cost the same cable. Variables count ports of a demand group on
a leaf group. The per-leaf role balance ("counts of a role on any two leaves differ by at most one") is
expressed on leaf groups as n*floor <= count <= n*ceil, which an even split inside the group turns into the
per-leaf bounds. Slack on those bounds, priced far above any cable, keeps the model feasible where the
numbers do not allow perfect balance, and reports how far it had to go.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ffplan.codes.design import PLACEMENT_INFEASIBLE, SOLVER_NOT_INSTALLED
from ffplan.diagnostics import Collector, Diagnostic, InfeasibleError

if TYPE_CHECKING:
    import pulp

BALANCE_PENALTY = 1_000_000.0
# Re-planning: moving an existing cable costs more than any cable-length saving can win back, and less
# than a unit of imbalance, so the solver moves cables only when balance forces it, and then as few as can be.
MOVE_PRICE = 10_000.0


@dataclass(frozen=True)
class LeafGroup:
    """Leaves that cost the same: all of a zone's leaves in one rack, or (re-planning) a single leaf."""

    zone: str
    key: str  # rack name, or leaf name when re-planning
    rack: str
    leaves: tuple[int, ...]  # leaf indices (0-based within the zone)
    capacity: int  # free down-ports over those leaves


@dataclass
class DemandGroup:
    key: tuple  # (rack, role, zone rule) — identical ports
    role: str
    zones: tuple[str, ...]  # zones the ports may go to (one for a dual-homed server's NIC of that zone)
    count: int
    members: list = field(default_factory=list)  # opaque port records, in stable order


@dataclass
class PlacementSolution:
    # (demand key, zone, leaf-group key) -> ports placed there, and how many of those were there before
    counts: dict[tuple, int]
    kept: dict[tuple, int]
    moves: int
    solver: str
    status: str
    objective: float
    gap: float
    seconds: float  # wall time of the solve; shown, never written to the plan (plans are byte-identical)
    variables: int
    constraints: int
    slack: dict[str, int]


def balance_bounds(total_ports: dict[str, int], total_leaves: int) -> dict[str, tuple[int, int]]:
    return {role: (n // total_leaves, math.ceil(n / total_leaves)) for role, n in total_ports.items()}


def _solver(name: str, time_limit: float | None) -> pulp.LpSolver:
    import pulp  # imported on use: pulp (and numpy through highspy) cost ~0.2 s that lint never needs

    if name == "cbc":
        # PULP_CBC_CMD is pulp's bundled CBC binary (deprecated for PuLP 4, hence pulp<4 in pyproject).
        return pulp.PULP_CBC_CMD(
            msg=False,
            timeLimit=time_limit,
            threads=1,
            options=["randomSeed 1", "randomCbcSeed 1"],
            _skip_v4_deprecation=True,
        )
    if name == "highs":
        solver = pulp.HiGHS(msg=False, timeLimit=time_limit, threads=1)
        if not solver.available():
            raise InfeasibleError(_solver_missing())
        return solver
    raise ValueError(name)


def _solver_missing() -> list[Diagnostic]:
    c = Collector("<command line>")
    c.error(
        SOLVER_NOT_INSTALLED,
        ("--solver",),
        "HiGHS is not installed",
        "pip install highspy, or use --solver cbc (the default)",
    )
    return c.items


def solve_placement(
    demands: list[DemandGroup],
    leaf_groups: list[LeafGroup],
    cost: dict[tuple[tuple, str], float],  # (demand key, leaf-group key) -> cost of one port's cable
    bounds: dict[str, tuple[int, int]],
    solver_name: str = "cbc",
    time_limit: float | None = None,
    previous: dict[tuple, int] | None = None,  # (demand key, zone, leaf-group key) -> ports there in the old plan
) -> PlacementSolution:
    import pulp

    prob = pulp.LpProblem("ffplan_placement", pulp.LpMinimize)
    by_zone: dict[str, list[LeafGroup]] = defaultdict(list)
    for lg in leaf_groups:
        by_zone[lg.zone].append(lg)

    x: dict[tuple, pulp.LpVariable] = {}
    for di, d in enumerate(demands):
        for zone in d.zones:
            for lg in by_zone[zone]:
                x[(di, zone, lg.key)] = prob.add_variable(
                    f"x_{di}_{zone}_{lg.key}".replace("-", "_"), lowBound=0, cat="Integer"
                )
    previous = previous or {}
    # kept[...] <= ports that were on that leaf group before; the rest of x there is new or moved cable.
    kept = {
        (di, zone, key): prob.add_variable(
            f"k_{di}_{zone}_{key}".replace("-", "_"), lowBound=0, upBound=n, cat="Integer"
        )
        for di, d in enumerate(demands)
        for (dkey, zone, key), n in previous.items()
        if dkey == d.key and (di, zone, key) in x
    }
    roles = sorted(bounds)
    slack = {r: prob.add_variable(f"slack_{r}", lowBound=0, cat="Integer") for r in roles}
    zone_slack = {r: prob.add_variable(f"zone_slack_{r}", lowBound=0, cat="Integer") for r in roles}

    prob += (
        pulp.lpSum(cost[(demands[k[0]].key, k[2])] * v for k, v in x.items())
        - pulp.lpSum(cost[(demands[k[0]].key, k[2])] * v for k, v in kept.items())  # a kept cable is already paid for
        + MOVE_PRICE * pulp.lpSum(previous[(demands[k[0]].key, k[1], k[2])] - v for k, v in kept.items())
        + BALANCE_PENALTY * (pulp.lpSum(slack.values()) + pulp.lpSum(zone_slack.values()))
    )
    for k, v in kept.items():
        prob += v <= x[k]
    # Each role split over the zones as evenly as the budgets allow.
    for role in roles:
        total = sum(d.count for d in demands if d.role == role)
        lo, hi = total // len(by_zone), math.ceil(total / len(by_zone))
        for zone in sorted(by_zone):
            in_zone = pulp.lpSum(v for (di, z, _), v in x.items() if z == zone and demands[di].role == role)
            prob += in_zone >= lo - zone_slack[role]
            prob += in_zone <= hi + zone_slack[role]
    for di, d in enumerate(demands):
        prob += pulp.lpSum(x[(di, zone, lg.key)] for zone in d.zones for lg in by_zone[zone]) == d.count
    on_group: dict[tuple[str, str], list[tuple[int, pulp.LpVariable]]] = defaultdict(list)
    for (di, zone, key), var in x.items():
        on_group[(zone, key)].append((di, var))
    for lg in leaf_groups:
        placed = on_group[(lg.zone, lg.key)]
        prob += pulp.lpSum(v for _, v in placed) <= lg.capacity
        n = len(lg.leaves)
        for role in roles:
            lo, hi = bounds[role]
            role_sum = pulp.lpSum(v for di, v in placed if demands[di].role == role)
            prob += role_sum >= n * lo - slack[role]
            prob += role_sum <= n * hi + slack[role]

    started = time.perf_counter()
    status = prob.solve(_solver(solver_name, time_limit))
    seconds = time.perf_counter() - started
    if pulp.LpStatus[status] != "Optimal" and prob.sol_status not in (pulp.LpSolutionIntegerFeasible,):
        raise _infeasible(
            pulp.LpStatus[status], sum(d.count for d in demands), sum(lg.capacity for lg in leaf_groups), time_limit
        )
    counts, kept_counts = {}, {}
    for (di, zone, key), var in x.items():
        value = int(round(var.value() or 0))
        if value:
            counts[(demands[di].key, zone, key)] = value
    for (di, zone, key), var in kept.items():
        value = int(round(var.value() or 0))
        if value:
            kept_counts[(demands[di].key, zone, key)] = value
    objective = float(pulp.value(prob.objective) or 0.0)
    gap = (
        0.0
        if pulp.LpStatus[status] == "Optimal" and prob.sol_status == pulp.LpSolutionOptimal
        else _relaxation_gap(prob, objective)
    )
    return PlacementSolution(
        counts=counts,
        kept=kept_counts,
        moves=sum(previous.values()) - sum(kept_counts.values()),
        solver=solver_name,
        status="optimal" if gap == 0.0 else "feasible",
        objective=round(objective, 6),
        gap=round(gap, 6),
        seconds=seconds,
        variables=len(prob.variables()),
        constraints=len(prob.constraints()),
        slack={r: int(round((slack[r].value() or 0) + (zone_slack[r].value() or 0))) for r in roles},
    )


def _relaxation_gap(prob: pulp.LpProblem, objective: float) -> float:
    import pulp

    relaxed = prob.copy()
    for var in relaxed.variables():
        var.cat = pulp.LpContinuous
    relaxed.solve(pulp.PULP_CBC_CMD(msg=False, _skip_v4_deprecation=True))
    bound = float(pulp.value(relaxed.objective) or 0.0)
    for var in prob.variables():
        var.cat = pulp.LpInteger
    return 0.0 if objective <= 0 else max(0.0, (objective - bound) / objective)


def _infeasible(status: str, demand: int, capacity: int, time_limit: float | None) -> InfeasibleError:
    c = Collector("<design>")
    if status == "Infeasible" or time_limit is None:
        c.error(
            PLACEMENT_INFEASIBLE,
            (),
            f"placement is {status.lower()}: {demand:,} NIC and inter-zone ports for {capacity:,} free leaf ports",
            "run `ffplan lint` for the budget that binds; remove nodes, add a zone, or use switches with more ports",
        )
    else:  # stopped by --time-limit before any placement was found
        c.error(
            PLACEMENT_INFEASIBLE,
            ("--time-limit",),
            f"the solver found no placement within --time-limit {time_limit:g} s",
            "raise --time-limit, or drop it to solve to optimality",
        )
    return InfeasibleError(c.items)
