"""`ffplan analyze` on RoCE plans: ECMP's busiest link as a distribution (ffplan.analyze.ecmp, docs/ethernet.md).

The hand-computed case (roce-two-leaves.yaml): leaves A and B with two hosts each, one spine with two parallel links
to each leaf. All-to-all sends 4 connections A -> B and 4 B -> A (and 4 within a leaf). Each of the four hashing points (A's uplinks,
the spine's downlinks to B, B's uplinks, the spine's downlinks to A) splits 4 flows over 2 links on its own, so its
busiest link is max(K, 4 - K) with K ~ Binomial(4, 1/2): 2 with probability 6/16, 3 with 8/16, 4 with 2/16. The
busiest link of the fabric is the largest of four such independent values:
P(M <= 2) = (6/16)^4, P(M <= 3) = (14/16)^4; the bound (a perfect spread) is 2.
"""

from __future__ import annotations

import json
import pathlib

import pytest
from typer.testing import CliRunner

from ffplan.analyze import topology_for
from ffplan.analyze.ecmp import EcmpOptions, analyze_ecmp
from ffplan.analyze.flows import TopologyArrays
from ffplan.cli.main import app
from ffplan.design import design
from ffplan.inventory import load_inventory

HERE = pathlib.Path(__file__).resolve().parent
P2 = (6 / 16) ** 4
P3 = (14 / 16) ** 4 - P2
P4 = 1 - (14 / 16) ** 4
MEAN = 2 * P2 + 3 * P3 + 4 * P4  # 3.394...


@pytest.fixture(scope="module")
def two_leaves():
    return design(load_inventory(HERE / "roce-two-leaves.yaml"))


@pytest.fixture(scope="module")
def two_leaves_dir(tmp_path_factory, two_leaves):
    from tests.support.plans import write_plan

    folder = tmp_path_factory.mktemp("two-leaves")
    write_plan(two_leaves, folder / "plan.yaml")
    return folder


@pytest.fixture(scope="module")
def dual_plane_plan():
    return design(load_inventory(HERE.parents[1] / "inventories" / "roce-dual-plane.yaml"))


def all_to_all(plan, **options):
    (r,) = analyze_ecmp(plan, TopologyArrays(topology_for(plan)), ["all-to-all"], EcmpOptions(**options))
    return r


@pytest.mark.parametrize("sampler", ["exact", "tiers"])
def test_monte_carlo_converges_to_the_hand_computed_distribution(two_leaves, sampler):
    """4,000 trials, seed 0: the mean within 0.03 (3.6 standard errors of 0.0083) and P(M > 3) within 0.03 (3.8
    standard errors) of the exact values; here the tiers are independent too, so both samplers are exact."""
    r = all_to_all(two_leaves, trials=4000, sampler=sampler)
    assert r.sampler == sampler and r.bound == 2 and r.flows == 12  # 4 of them stay on their leaf
    assert r.mean == pytest.approx(MEAN, abs=0.03)
    assert r.over_50 == pytest.approx(P4, abs=0.03)  # above 1.5 x 2 = 3: M = 4
    assert r.over_10 == pytest.approx(1 - P2, abs=0.01)  # above 2.2: M >= 3
    assert (r.p50, r.p99, r.max) == (3, 4, 4)


def test_the_links_are_read_from_the_plans_next_hop_sets(two_leaves):
    """A plan whose ECMP groups leave one of the spine's parallel links out loads the other with every flow."""
    eth = two_leaves.ethernet
    spine = next(s for s in eth.switches if s.name.endswith("spine01"))
    narrowed = [g.model_copy(update={"next_hops": g.next_hops[:1]}) for g in spine.ecmp]
    switches = [s.model_copy(update={"ecmp": narrowed}) if s is spine else s for s in eth.switches]
    plan = two_leaves.model_copy(update={"ethernet": eth.model_copy(update={"switches": switches})})
    r = all_to_all(plan, trials=200)
    assert r.by_tier["spine → leaf"] == {"mean": 4.0, "p50": 4.0, "p99": 4.0, "max": 4.0}


def test_more_qps_per_connection_lower_the_p99(two_leaves):
    """8 QPs: 32 flows of 1/8 per hashing point; the busiest link's P99 falls from 4 to about 3."""
    one, eight = all_to_all(two_leaves, trials=2000, qps=1), all_to_all(two_leaves, trials=2000, qps=8)
    assert one.p99 == 4 and eight.p99 < 3.5 and eight.mean < one.mean
    assert eight.qps == 8


def test_pinned_paths_give_exactly_the_bound_on_all_to_all(two_leaves, dual_plane_plan):
    r = all_to_all(two_leaves, paths="pinned")
    assert (r.mean, r.p99, r.max, r.trials, r.over_10) == (2, 2, 2, 0, 0.0)
    from ffplan.plan.subnets import subnet_view

    view = subnet_view(dual_plane_plan, "plane-a")  # 32 leaves, 16 spines with 4 parallel links to every leaf
    big = all_to_all(view, paths="pinned")
    assert big.max == big.bound == 1981
    assert big.by_tier["spine → leaf"]["max"] == 1981


def test_same_seed_same_report_other_seed_other_samples(two_leaves_dir):
    args = ["analyze", str(two_leaves_dir), "-p", "all-to-all", "-p", "ring", "--trials", "300", "-f", "json"]
    first, again = CliRunner().invoke(app, args), CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    assert first.output == again.output
    data = json.loads(first.output)
    assert data["options"] == {"trials": 300, "seed": 0, "qps": 4, "paths": "ecmp", "sampler": "auto"}  # the plan's QPs
    other = json.loads(CliRunner().invoke(app, [*args, "--seed", "7"]).output)
    assert other["planes"][0]["patterns"][0]["mean"] != data["planes"][0]["patterns"][0]["mean"]


def test_table_names_the_sampler_and_the_bound(two_leaves_dir):
    res = CliRunner().invoke(app, ["analyze", str(two_leaves_dir), "-p", "all-to-all", "--trials", "50", "--qps", "1"])
    assert res.exit_code == 0, res.output
    assert "exact sampler, seed 0" in res.output and "P(>1.5 bound)" in res.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--qps", "0"], "--qps"),
        (["--trials", "0"], "--trials"),
        (["--paths", "sprayed"], "--paths"),
        (["--sampler", "fast"], "--sampler"),
        (["--sweep"], "--sweep: InfiniBand only"),
        (["--lfts", "dump.txt"], "--lfts: InfiniBand only"),
        (["--plane", "nope"], "no plane 'nope'"),
    ],
)
def test_bad_options_on_a_roce_plan_are_usage_errors(two_leaves_dir, args, message):
    res = CliRunner().invoke(app, ["analyze", str(two_leaves_dir), *args])
    assert res.exit_code == 2
    assert message in res.output


def test_ecmp_options_on_an_infiniband_plan_are_usage_errors(tmp_path):
    from tests.support.plans import write_plan

    write_plan(design(load_inventory(HERE.parents[1] / "inventories" / "lab.yaml")), tmp_path / "plan.yaml")
    for args in (["--qps", "2"], ["--paths", "pinned"], ["--trials", "5"], ["--failed", "z1-spine01"]):
        res = CliRunner().invoke(app, ["analyze", str(tmp_path), *args])
        assert res.exit_code == 2 and "RoCE plans only" in res.output, res.output


def test_pinned_is_a_design_option_the_plan_carries(tmp_path):
    """`fabric.roce.path_selection: pinned` reaches the plan (and is the analysis's default there); ecmp, the
    default, leaves the plan's file as it was; a bad value is a located input error."""
    import yaml

    from ffplan.plan.io import dump_plan

    data = yaml.safe_load((HERE / "roce-two-leaves.yaml").read_text())
    data["fabric"]["roce"] = {"path_selection": "pinned"}
    (tmp_path / "pinned.yaml").write_text(yaml.safe_dump(data))
    plan = design(load_inventory(tmp_path / "pinned.yaml"))
    assert plan.ethernet.path_selection == "pinned" and "path_selection: pinned" in dump_plan(plan)
    assert all_to_all(plan, paths=plan.ethernet.path_selection).max == 2
    assert "path_selection" not in dump_plan(design(load_inventory(HERE / "roce-two-leaves.yaml")))
    data["fabric"]["roce"] = {"path_selection": "sometimes"}
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(data))
    res = CliRunner().invoke(app, ["lint", str(tmp_path / "bad.yaml")])
    assert res.exit_code == 2 or res.exit_code == 1, res.output
    assert "path_selection" in res.output and "bad.yaml:" in res.output


def test_a_three_tier_plan_is_sampled_exactly_and_refuses_the_tier_sampler(tmp_path):
    """Flows cross leaf, spine, core, spine, leaf: the exact sampler follows the plan's next-hop sets through every
    tier; the per-tier sampler is for two-tier Clos only, and asking for it is a usage error (exit 2)."""
    from tests.support.plans import write_plan

    plan = design(load_inventory(HERE.parents[1] / "tests" / "ethernet" / "inventories" / "roce-three-tier.yaml"))
    r = all_to_all(plan, trials=100, qps=1)
    assert r.sampler == "exact" and r.unroutable == 0
    assert list(r.by_tier) == ["leaf → spine", "spine → leaf", "spine → core", "core → spine"]
    assert r.by_tier["spine → core"]["max"] > 0
    write_plan(plan, tmp_path / "plan.yaml")
    res = CliRunner().invoke(app, ["analyze", str(tmp_path), "-p", "all-to-all", "--sampler", "tiers"])
    assert res.exit_code == 2 and "leaf -> spine -> leaf" in res.output, res.output


def test_switches_with_256_ports_are_analyzed(tmp_path):
    """HPN's 51.2T switches split into 256 x 200G ports: port 256 is past InfiniBand's one-byte port numbers, and
    the fabric's arrays are as wide as the plan's largest port (it was an IndexError)."""
    from ffplan.plan.subnets import subnet_view

    plan = design(load_inventory(HERE.parents[1] / "inventories" / "roce-hpn-dual-tor.yaml"))
    view = subnet_view(plan, plan.subnets[0])
    r = all_to_all(view, paths="pinned")
    assert r.max == r.bound > 0 and r.unroutable == 0
