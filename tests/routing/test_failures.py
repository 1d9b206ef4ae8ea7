"""Balance under failures: the issue-11 cases measured with ffplan's own analysis of the re-routed plan.

Patterns (docs/routing.md): A = all-to-all among compute ports, B = all-to-all among all CA ports, C = every
compute port to every storage port (storage-incast), each inside every zone. The limits are the best of OpenSM's
ftree, updn, minhop and dfsssp on the same degraded fabric (issue 11); the old router reached 1,140 / 1,490 /
1,110 with z1-leaf05-p21 down and 1,140 / 1,492 / 945 with z1-spine05 down.
"""

from __future__ import annotations

import pytest

from ffplan.analyze import analyze
from ffplan.design.routing import route

FIVE_CABLES = ["z1-leaf33-p27", "z1-leaf26-p28", "z1-leaf25-p28", "z1-leaf17-p38", "z1-leaf02-p30"]


def loads(plan):
    a = analyze(plan, ["all-to-all"], roles=("compute",))[0]
    b = analyze(plan, ["all-to-all"])[0]
    c = analyze(plan, ["storage-incast"])[0]
    assert a.unroutable == b.unroutable == c.unroutable == 0
    return a.max_load, b.max_load, c.max_load


@pytest.mark.parametrize(
    "failed, limits",
    [
        (["z1-leaf05-p21"], (600, 1490, 600)),  # updn/minhop: 600 / 1,528 / 600
        (["z1-spine05"], (585, 1492, 585)),  # ftree: 585 / 1,528 / 585
        (FIVE_CABLES, (780, 1429, 615)),  # dfsssp: 780 / 1,448 / 735
    ],
)
def test_at_least_as_balanced_as_opensm(ff2_routed, failed, limits):
    plan = ff2_routed.model_copy(update={"routing": route(ff2_routed, failed)})
    got = loads(plan)
    assert all(g <= limit for g, limit in zip(got, limits)), (got, limits)
    assert got[0] == got[2] == 585  # no worse than intact for A and C


def test_healthy_pairs_keep_their_routes(ff2_routed):
    """Only the CA routes a failure makes unusable change: the dead cable's leaf, and the one CA port it carried."""
    before = {lft.switch: lft.ports for lft in ff2_routed.routing.lfts}
    after = {lft.switch: lft.ports for lft in route(ff2_routed, ["z1-leaf05-p21"]).lfts}
    changed = {(sw, lid) for sw in before for lid, (x, y) in enumerate(zip(before[sw], after[sw])) if x != y}
    leaf_of = {p.lid: p.leaf for n in ff2_routed.nodes for p in n.ports}
    assert {lid for sw, lid in changed if sw == "z1-leaf05"}  # the leaf re-routes what went up its dead uplink
    # away from the cable's two ends only the CA port that came down the dead cable moves
    moved = {lid for sw, lid in changed if sw not in ("z1-leaf05", "z1-spine01") and lid in leaf_of}
    assert len(moved) == 1 and leaf_of[moved.pop()] == "z1-leaf05"
