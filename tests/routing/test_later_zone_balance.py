"""Zone z2 of Fire-Flyer 2, the later zone of the linked pair (issue 24, item 5): failures next to its linked leaves
keep compute all-to-all (A) at 585, what OpenSM's ftree, updn and minhop reach, and all-CA all-to-all (B) near the
bound, with every CA pair and switch LID reachable and the routes deadlock-free.

The old router homed every spine carrying a linked leaf's hole or storage port at that leaf, which shut the other
linked leaves out of the only downlinks into it that carry no compute flows, and placed displaced pairs by their
role's load alone, piling them onto downlinks already at the all-CA maximum: A 600 and B 1,079 with z2-spine01 down,
A 600 and B 942 with z2-leaf31-p27 down (docs/routing.md, section 6).
"""

from __future__ import annotations

import pytest

from ffplan.analyze import analyze
from ffplan.analyze.sweep import SweepState
from ffplan.design.routing import route


@pytest.fixture(scope="module")
def ff2_sweep(ff2_routed):
    return SweepState(ff2_routed)


@pytest.mark.parametrize(
    "failed, most_b",
    [
        (["z2-spine01"], 922),  # old: A 600, B 1,079 (bound 820)
        (["z2-spine05"], 922),  # the hole spine of z2-leaf11: old B 1,000
        (["z2-leaf01-p21"], 783),  # old: A 600, B 879, then 841, 803 (bound 780)
        (["z2-leaf31-p27"], 783),  # old: A 600, B 942, then 822, 784 (bound 780); OpenSM's best engine 783
        (["z2-leaf01-p36"], 783),  # old 784; 798 when making room filled the linked leaf's first uplinks
    ],
)
def test_failures_at_linked_leaves_keep_compute_all_to_all_at_585(ff2_sweep, failed, most_b):
    case = ff2_sweep.measure([(" ".join(failed), failed)])[0]
    assert case.patterns["A"].max_load == 585 and case.patterns["C"].max_load == 585
    assert case.patterns["B"].max_load <= most_b
    assert case.deadlock_free and case.unreachable_ca_pairs == 0 and case.unreachable_switch_lids == 0
    assert all(p.unroutable == 0 for p in case.patterns.values())


def test_a_lost_inter_zone_link_moves_only_the_routes_that_used_it(ff2_sweep):
    """The later zone's leaves keep the spine they climbed to for every destination whose exit and spine home stay:
    only the destinations that left by the lost link, and the spines homed at its leaf, change. The old router dealt
    every destination over the exit leaf's homed spines again (37,427 entries changed; OpenSM's minhop 24,542)."""
    case = ff2_sweep.measure([("inter-zone z1-leaf01-p20", ["z1-leaf01-p20"])])[0]
    # 16,403 while the linked leaves kept their pairs to each other on their slots (fewer of them on re-homed spines),
    # 16,559 before the unlinked leaves made room for them (the re-homed spines' moves differ from the intact case's)
    assert case.routes_changed <= 16_609
    assert case.patterns["A"].max_load == 585 and case.patterns["B"].max_load <= 780
    assert case.deadlock_free and case.unreachable_ca_pairs == 0 and case.unreachable_switch_lids == 0


@pytest.mark.parametrize("failed, most_b", [([], 780), (["z2-leaf31-p27"], 783)], ids=["intact", "z2-leaf31-p27 down"])
def test_unlinked_leaves_make_room_for_the_linked_leaves(ff2_routed, failed, most_b):
    """The homes rule keeps z2's linked leaves off the spines homed at each other, so their pairs into a linked leaf
    crowd its other downlinks; the unlinked leaves move some of their pairs into it off those (onto its hole's
    downlink, 9 per linked leaf) to make room:
    all-CA all-to-all at its bound 780 intact and 783 with z2-leaf31-p27 down (OpenSM's best engine 783). The old
    router moved only the linked leaves' own pairs: 784 in both cases (benchmarks/zone_bound.py: the least with the
    unlinked leaves on their slots). The leaf shift stays at 2, compute all-to-all at 585, the routes deadlock-free,
    shortest and all reachable."""
    routing = route(ff2_routed, failed)
    assert routing.deadlock.acyclic
    check = routing.check
    assert check.unreachable_ca_pairs == check.unreachable_switch_lids == check.ca_pair_detours == 0
    plan = ff2_routed.model_copy(update={"routing": routing})
    every, shift = analyze(plan, ["all-to-all", "shift"])
    (compute,) = analyze(plan, ["all-to-all"], roles=("compute",))
    assert every.bound == 780 and every.max_load == most_b, every.max_load
    assert shift.max_load == 2 and compute.max_load == 585
    assert every.unroutable == shift.unroutable == compute.unroutable == 0
