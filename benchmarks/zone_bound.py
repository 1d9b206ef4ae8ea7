"""How low can all-CA all-to-all (pattern B) go in the later zone of Fire-Flyer 2 on one VL? An integer program on the
sub-problem of issue 24 (docs/routing.md, section 3): the pairs of the zone's unlinked leaves stay as the zone router
routes them (d-mod-k), the pairs of its linked leaves are free, counted per (source leaf, destination leaf, role,
spine); the spine homes stay and the homes rule holds (a linked leaf never sends another linked leaf's ports through
a spine homed at the receiver: what keeps the two-zone channel graph acyclic). Every leaf uplink and spine downlink
carries at most CAP flows of B and 585 of compute all-to-all (A), and in a leaf shift phase at most SHIFT pairs of a
source leaf share a link (d-mod-k's 1, the router's 2). Prints feasible or infeasible (pulp's CBC).

--free into-linked also frees the unlinked leaves' pairs to the linked leaves (their other pairs stay on their slots,
on their uplinks too); --free all frees every pair of the zone (the homes and the homes rule stay). --relax solves the
LP relaxation (pair counts continuous): infeasible there is infeasible for the integer program too.

Usage: python benchmarks/zone_bound.py CAP [SHIFT] [--zone z2] [--free linked|into-linked|all] [--relax]
[--seconds N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pulp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ffplan.design.routing import ZoneRouter  # noqa: E402
from ffplan.plan import load_plan  # noqa: E402
from ffplan.plan.topology import build_topology  # noqa: E402
from synth import plan_file  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cap", type=int)
    parser.add_argument("shift", type=int, nargs="?", default=2)
    parser.add_argument("--zone", default="z2")
    parser.add_argument("--free", choices=("linked", "into-linked", "all"), default="linked")
    parser.add_argument("--relax", action="store_true")
    parser.add_argument("--seconds", type=float, help="CBC's time limit (default: none)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ffplan-zone-bound-") as tmp:
        topo = build_topology(load_plan(plan_file(None, Path(tmp))))
    router = ZoneRouter(topo)
    tables = router.tables().tables
    home = router._intact(True).home
    leaves, spines = topo.leaves[args.zone], topo.spines[args.zone]
    linked = {link.a_leaf for link in topo.inter_zone} | {link.b_leaf for link in topo.inter_zone}
    ports = {y: len(topo.cas[y]) for y in leaves}
    compute = {y: sum(1 for p in topo.cas[y] if p.role == "compute") for y in leaves}
    # source leaf -> the destination leaves whose pairs are free
    free = {
        y: [
            d
            for d in leaves
            if d != y and (y in linked or args.free == "all" or (args.free != "linked" and d in linked))
        ]
        for y in leaves
    }
    # the fixed pairs' B and A flows on every spine downlink and leaf uplink (the leaf -> spine -> leaf route of each)
    fixed_b: Counter[tuple[str, str]] = Counter()
    fixed_a: Counter[tuple[str, str]] = Counter()
    for y in leaves:
        for lid, ca in topo.ca_by_lid.items():
            if ca.zone == args.zone and ca.leaf != y and ca.leaf not in free[y]:
                spine = topo.peer[(y, tables[y][lid])][1][0]  # type: ignore[index]
                for link in ((spine, ca.leaf), (y, spine)):
                    fixed_b[link] += ports[y]
                    fixed_a[link] += compute[y] if ca.role == "compute" else 0
    prob = pulp.LpProblem("zone_bound", pulp.LpMinimize)
    x: dict[tuple[str, str, str, str], pulp.LpVariable] = {}
    for y in leaves:
        for d in free[y]:
            for role, count in (("c", compute[d]), ("o", ports[d] - compute[d])):
                for t in spines:
                    allowed = not (y in linked and d in linked and home[t] == d)
                    x[y, d, role, t] = pulp.LpVariable(
                        f"x_{y}_{d}_{role}_{t}",
                        0,
                        count if allowed else 0,
                        cat=pulp.LpContinuous if args.relax else pulp.LpInteger,
                    )
                prob += pulp.lpSum(x[y, d, role, t] for t in spines) == count
            for t in spines:
                prob += x[y, d, "c", t] + x[y, d, "o", t] <= args.shift
        if free[y]:
            for t in spines:
                flows = pulp.lpSum(ports[y] * (x[y, d, "c", t] + x[y, d, "o", t]) for d in free[y])
                prob += fixed_b[(y, t)] + flows <= args.cap
                prob += fixed_a[(y, t)] + pulp.lpSum(compute[y] * x[y, d, "c", t] for d in free[y]) <= 585
    for d in leaves:
        sources = [y for y in leaves if d in free[y]]
        for t in spines:
            flows = pulp.lpSum(ports[y] * (x[y, d, "c", t] + x[y, d, "o", t]) for y in sources)
            prob += fixed_b[(t, d)] + flows <= args.cap
            prob += fixed_a[(t, d)] + pulp.lpSum(compute[y] * x[y, d, "c", t] for y in sources) <= 585
    prob += 0
    start = time.process_time()
    status = prob.solve(pulp.PULP_CBC_CMD(msg=False, threads=1, timeLimit=args.seconds))
    print(
        f"{args.zone}: B <= {args.cap}, A <= 585, shift <= {args.shift}, free {args.free}"
        f"{' (LP relaxation)' if args.relax else ''}: {pulp.LpStatus[status]} ({len(x)} variables, "
        f"{time.process_time() - start:.0f} s CPU here, CBC in its own process)"
    )
    if status == pulp.LpStatusOptimal and not args.relax:
        # pairs off the spine of their slot, by source: what a router would have to move
        routed: Counter[tuple[str, str, str, str]] = Counter()
        for y in leaves:
            for lid, ca in topo.ca_by_lid.items():
                if ca.zone == args.zone and ca.leaf in free[y]:
                    role = "c" if ca.role == "compute" else "o"
                    routed[y, ca.leaf, role, topo.peer[(y, tables[y][lid])][1][0]] += 1  # type: ignore[index]
        moved = Counter(
            "linked" if key[0] in linked else "unlinked"
            for key, v in x.items()
            for _ in range(max(0, round(v.value() or 0) - routed[key]))
        )
        print(f"pairs off their slot's spine, by source leaf: {dict(sorted(moved.items()))}")


if __name__ == "__main__":
    main()
