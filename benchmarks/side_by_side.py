"""ffplan's routes next to OpenSM's ftree, updn, minhop and dfsssp on the same degraded fabric, each installed by
the real OpenSM in ibsim and read back (benchmarks/sidebyside.py). Prints a markdown table: max flows on one
directed switch-to-switch link and the ratio to analyze's lower bound (leaf cuts, and a three-layer tree's pod cuts)
for patterns A (all-to-all among compute ports), B (all-to-all among all CA ports), C (every compute port to every
storage port); no flow between two ports of one host.

Usage: python benchmarks/side_by_side.py [--plan PLAN] [--zone z1] [--case NAME=ITEM,ITEM ...] [--engines ...]
Default: Fire-Flyer 2 designed in-process, zone z1, the cases of issue 11. Needs opensm, ibsim, infiniband-diags.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.sidebyside import ENGINES, markdown, measure_case  # noqa: E402

CASES = {
    "intact": [],
    "cable z1-leaf05-p21 down": ["z1-leaf05-p21"],
    "spine z1-spine05 down": ["z1-spine05"],
    "5 cables down": ["z1-leaf33-p27", "z1-leaf26-p28", "z1-leaf25-p28", "z1-leaf17-p38", "z1-leaf02-p30"],
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plan", type=Path, help="plan.yaml or its folder (default: design inventories/fire-flyer-2.yaml)")
    ap.add_argument("--zone", default="z1", help="the zone to boot ('' for the whole fabric)")
    ap.add_argument(
        "--case",
        action="append",
        default=[],
        metavar="NAME=ITEM,ITEM",
        help="a failure case (repeatable); default: the cases of issue 11",
    )
    ap.add_argument("--engines", default=",".join(ENGINES), help=f"comma-separated, default {','.join(ENGINES)}")
    args = ap.parse_args()
    from ffplan.plan.io import load_plan
    from ffplan.verify.sim import find_tools

    if args.plan:
        plan = load_plan(args.plan / "plan.yaml" if args.plan.is_dir() else args.plan)
    else:
        from ffplan.design import design
        from ffplan.inventory import load_inventory

        plan = design(load_inventory(ROOT / "inventories" / "fire-flyer-2.yaml"))
    cases = dict(CASES)
    if args.case:
        cases = {name: [i for i in items.split(",") if i] for name, _, items in (c.partition("=") for c in args.case)}
    tools = find_tools()
    rows = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ffplan-side-by-side-") as work:
        for name, failed in cases.items():
            try:
                rows += measure_case(
                    plan,
                    name,
                    failed,
                    args.zone or None,
                    tools,
                    Path(work),
                    engines=tuple(args.engines.split(",")),
                    progress=lambda s: print(f"  {s}", file=sys.stderr, flush=True),
                )
            except ValueError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
    sys.stdout.write(markdown(rows))
    print(f"{len(rows)} boots in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
