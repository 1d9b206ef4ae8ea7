"""The relief (docs/routing.md section 7, step 4) on random failures: sets of one to three cores and spine-core
cables on six three-layer trees (the 8-port golden tree and 16-port trees of 200, 256, 512, 600 and 1,024 ports from
`three_layer_inventory`), each routed three ways: relieved and rebalanced (what `route()` does), the rebalance alone
(no relief) and the minimal repair alone. Prints every case that breaks a rule (something unreachable, a cycle, a
CA pair off its shortest path, all-to-all above the repair's maximum, a shift above both the repair's and the
rebalance alone's), the cases whose shift is above the rebalance alone's, and how the relief compares with the
rebalance alone.

Usage: python benchmarks/relief_random.py [--seed N] [--cases N] (cases per tree, default 25)
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ffplan.analyze import analyze  # noqa: E402
from ffplan.design import design  # noqa: E402
from ffplan.design.routing import dispatch, route  # noqa: E402
from ffplan.inventory import load_inventory  # noqa: E402
from ffplan.plan.topology import build_topology  # noqa: E402
from tests.routing.three_layer import SMALL, three_layer_inventory  # noqa: E402

REBALANCE, RELIEVE = dispatch._rebalance, dispatch._relieve


def routed(plan, failed: list[str], how: str):
    """route() relieved and rebalanced ("relief"), rebalanced alone ("rebalance") or repaired alone ("repair")."""
    dispatch._rebalance = None if how == "repair" else REBALANCE
    dispatch._relieve = RELIEVE if how == "relief" else None
    try:
        routing = route(plan, failed)
    finally:
        dispatch._rebalance, dispatch._relieve = REBALANCE, RELIEVE
    a2a, shift = analyze(plan.model_copy(update={"routing": routing}), ["all-to-all", "shift"])
    return routing, a2a.max_load, shift.max_load


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=25, help="random failure sets per tree")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    folder = Path(tempfile.mkdtemp())
    plans = {"8-port": design(load_inventory(SMALL))}
    for ports in (200, 256, 512, 600, 1024):
        path = folder / f"three-16-{ports}.yaml"
        path.write_text(three_layer_inventory(16, ports))
        plans[f"16-port, {ports} ports"] = design(load_inventory(path))
    broken = lower = equal = higher = 0
    for name, plan in plans.items():
        topo = build_topology(plan)
        cables = sorted(label for label, ends in topo.by_label.items() if ends[0] == "spine-core")
        cores = [c for z in topo.zones for c in topo.cores.get(z, [])]
        for _ in range(args.cases):
            failed = sorted(
                {rng.choice([rng.choice(cables), rng.choice(cores)]) for _ in range(rng.choice([1, 1, 2, 3]))}
            )
            routing, top, shift = routed(plan, failed, "relief")
            _, alone, alone_shift = routed(plan, failed, "rebalance")
            _, repaired, repaired_shift = routed(plan, failed, "repair")
            check = routing.check
            rules = {
                "unreachable": check.unreachable_ca_pairs
                + check.unreachable_switch_to_ca
                + check.unreachable_switch_lids,
                "cycle": not routing.deadlock.acyclic,
                "detours": check.ca_pair_detours,
                f"all-to-all {top} above the repair's {repaired}": top > repaired,
                f"shift {shift} above the repair's {repaired_shift} and the rebalance alone's {alone_shift}": shift
                > max(alone_shift, repaired_shift, 2),
            }
            if any(rules.values()):
                broken += 1
                print(f"{name} {failed}: {', '.join(rule for rule, bad in rules.items() if bad)}", flush=True)
            lower += top < alone
            equal += top == alone
            higher += top > alone
            if top > alone:
                print(f"{name} {failed}: {top} against the rebalance alone's {alone}", flush=True)
            if shift > max(alone_shift, 2):
                print(
                    f"{name} {failed}: shift {shift} (the repair's {repaired_shift}), the rebalance alone's {alone_shift}"
                )
    print(f"{broken} cases break a rule; against the rebalance alone: {lower} lower, {equal} equal, {higher} higher")
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
