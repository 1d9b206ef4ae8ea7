"""`ffplan analyze --failed` on a RoCE plan: the next-hop sets eBGP reduces to (ffplan.ethernet.forwarding, the one
prediction verify expects too) and the ECMP Monte Carlo over them.

Hand-checked on roce-mini's plane pa (tests/verify/inventories/roce-mini.yaml): three leaves of two hosts, two spines,
one cable from each leaf to each spine. All-to-all with one QP per connection: each host sends one connection to
each of the 4 hosts on the other leaves, so a leaf sends 8 connections up and receives 8. Intact, each leaf hashes
its 8 over 2 uplinks (the bound is 4). With pa-leaf01-p03 (pa-leaf01 to pa-spine01) down, pa-leaf01's set for the
other leaves narrows to pa-spine02 alone, and pa-spine01 no longer reaches pa-leaf01 (the spines share an ASN, so not
through another leaf): the other leaves' set for pa-leaf01 narrows to pa-spine02 too. pa-leaf01's 8 connections
out, and the 8 in, each cross one link: the busiest link carries exactly 8 in every trial.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ffplan.cli.main import app
from ffplan.design import design
from ffplan.ethernet.forwarding import planned_next_hops, reduced_next_hops
from ffplan.inventory import load_inventory
from tests.support.frr import MINI, ROOT


@pytest.fixture(scope="module")
def mini_plan(tmp_path_factory):
    from tests.support.plans import write_plan

    folder = tmp_path_factory.mktemp("mini")
    write_plan(design(load_inventory(MINI)), folder / "plan.yaml")
    return folder


def analyze(folder, *args):
    res = CliRunner().invoke(
        app, ["analyze", str(folder), "-p", "all-to-all", "--qps", "1", "--trials", "200", "-f", "json", *args]
    )
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def busiest(data, plane):
    (pattern,) = next(p for p in data["planes"] if p["plane"] == plane)["patterns"]
    return pattern


def test_a_cable_down_narrows_a_group_from_two_to_one_and_the_busiest_link_rises(mini_plan):
    intact = analyze(mini_plan)
    failed = analyze(mini_plan, "--failed", "pa-leaf01-p03")
    f = failed["failure"]
    assert (f["cables"], f["switches"]) == (["pa-leaf01-p03"], [])
    changes = {(c["switch"], c["destination"]): (c["planned"], c["reduced"]) for c in f["changes"]}
    assert changes == {
        ("pa-spine01", "pa-leaf01"): (["10.1.0.0"], []),
        ("pa-leaf01", "pa-leaf02"): (["10.1.0.1", "10.1.0.3"], ["10.1.0.3"]),
        ("pa-leaf01", "pa-leaf03"): (["10.1.0.1", "10.1.0.3"], ["10.1.0.3"]),
        ("pa-leaf02", "pa-leaf01"): (["10.1.0.5", "10.1.0.7"], ["10.1.0.7"]),
        ("pa-leaf03", "pa-leaf01"): (["10.1.0.9", "10.1.0.11"], ["10.1.0.11"]),
    }
    # counted by prefix, as verify counts FIB routes: a leaf originates its host block and its loopback
    assert (f["switches_changed"], f["prefixes_narrowed"], f["prefixes_unreachable"]) == (4, 8, 2)
    before, after = busiest(intact, "pa"), busiest(failed, "pa")
    assert after["bound"] == before["bound"] == 4
    assert before["p50"] < 8 and before["mean"] < 7  # 8 on one link needs a hash to pick one uplink 8 times
    assert (after["mean"], after["p50"], after["p99"], after["max"], after["over_50"]) == (8, 8, 8, 8, 1)
    assert after["unroutable"] == 0
    assert busiest(failed, "pb") == busiest(intact, "pb")  # the other plane does not notice


def test_switch_port_names_the_same_cable(mini_plan):
    assert analyze(mini_plan, "--failed", "pa-leaf01[3]")["failure"]["cables"] == ["pa-leaf01-p03"]


def test_a_spine_down_halves_every_leafs_set(mini_plan):
    data = analyze(mini_plan, "--failed", "pa-spine01", "--plane", "pa")
    f = data["failure"]
    assert f["switches"] == ["pa-spine01"] and f["prefixes_unreachable"] == 0
    assert len(f["changes"]) == 6 and all(len(c["planned"]) == 2 and len(c["reduced"]) == 1 for c in f["changes"])
    assert {c["switch"] for c in f["changes"]} == {"pa-leaf01", "pa-leaf02", "pa-leaf03"}
    p = busiest(data, "pa")
    assert (p["p50"], p["max"], p["unroutable"]) == (8, 8, 0)  # every leaf's 8 over its one uplink left


def test_a_leaf_down_leaves_its_hosts_unroutable(mini_plan):
    res = CliRunner().invoke(
        app, ["analyze", str(mini_plan), "-p", "all-to-all", "--trials", "20", "--failed", "pa-leaf01", "-f", "json"]
    )
    assert res.exit_code == 1, res.output  # flows that cannot arrive are findings
    data = json.loads(res.output)
    assert data["failure"]["prefixes_unreachable"] == 8  # its 2 prefixes, on 2 spines and 2 leaves
    assert busiest(data, "pa")["unroutable"] > 0


def test_the_table_lists_what_changed(mini_plan):
    res = CliRunner().invoke(app, ["analyze", str(mini_plan), "-p", "ring", "--trials", "20", "--failed", "pa-spine02"])
    assert res.exit_code == 0, res.output
    assert "failed: pa-spine02: 3 switches' next-hop sets change (12 prefixes over fewer next hops" in res.output
    assert "pa-leaf01 -> pa-leaf02 (10.128.0.4/30, 10.0.0.4/32): 2 => 1 next hops, without 10.1.0.3" in res.output


@pytest.mark.parametrize(
    ("item", "message", "hint"),
    [
        ("pa-leaf01-p3", "'pa-leaf01-p3' is neither a cable label, a switch nor switch[port]", "'pa-leaf01-p03'"),
        ("pa-leaf01[9]", "'pa-leaf01[9]' is neither", "switch[port]"),
        ("pa-leaf01-p01", "'pa-leaf01-p01' is a host's cable", "switch-to-switch cable"),
    ],
)
def test_an_unknown_item_is_a_located_usage_error(mini_plan, item, message, hint):
    res = CliRunner().invoke(app, ["analyze", str(mini_plan), "--failed", item])
    assert res.exit_code == 2
    assert f"command line: error FF910 {message}" in res.output and "[--failed]" in res.output
    assert f"{mini_plan}/plan.yaml" in res.output or "host's cable" in message
    assert hint in res.output
    assert "Traceback" not in res.output


@pytest.mark.parametrize(
    "inventory",
    [
        MINI,
        ROOT / "tests" / "ethernet" / "inventories" / "roce-three-tier.yaml",
        ROOT / "inventories" / "roce-hpn-dual-tor.yaml",
    ],
)
def test_intact_the_prediction_is_the_plans_ecmp_groups(inventory):
    switches = design(load_inventory(inventory)).ethernet.switches
    assert reduced_next_hops(switches) == planned_next_hops(switches)


def test_only_the_touched_plane_is_computed_again_and_the_result_is_the_whole_plans():
    from ffplan.ethernet.forwarding import Failed, reduced_plan

    plan = design(load_inventory(MINI))
    failed = Failed(cables=frozenset({"pa-leaf01-p03"}), switches=frozenset({"pa-spine02"}))
    reduced, _ = reduced_plan(plan, failed)
    whole = reduced_next_hops(plan.ethernet.switches, failed)
    got = {
        sw.name: {d: frozenset(g.next_hops) for g in sw.ecmp for d in g.destinations}
        for sw in reduced.ethernet.switches
    }
    assert got == {sw.name: whole.get(sw.name, {}) for sw in plan.ethernet.switches}
    untouched = [(a, b) for a, b in zip(plan.ethernet.switches, reduced.ethernet.switches) if a.name.startswith("pb-")]
    assert len(untouched) == 5 and all(a is b for a, b in untouched)
