"""What the Ethernet verify expects, from the plan alone (no root needed): the eBGP path-vector run over the plan's
sessions reproduces the plan's ECMP groups, and predicts the reduced next-hop sets after a cable or switch fails."""

from __future__ import annotations

import pytest

from ffplan.design import design
from ffplan.ethernet.forwarding import Failed
from ffplan.inventory import load_inventory
from ffplan.verify_ethernet.fabric import part_of, ping_pairs, planned_fib, predicted_fib
from tests.support.frr import MINI


@pytest.fixture(scope="module")
def part():
    return part_of(design(load_inventory(MINI)), None, "the whole plan")


def test_intact_prediction_is_the_plans_ecmp_groups(part):
    assert predicted_fib(part) == planned_fib(part)
    assert planned_fib(part)["pa-leaf01"]["10.128.0.4/30"] == {"10.1.0.1", "10.1.0.3"}


def test_a_cable_down_removes_its_next_hop_and_the_spine_it_cut(part):
    fib = predicted_fib(part, Failed(cables=frozenset({"pa-leaf01-p03"})))  # pa-leaf01 to pa-spine01
    assert fib["pa-leaf01"]["10.128.0.4/30"] == {"10.1.0.3"}
    assert fib["pa-leaf02"]["10.128.0.0/30"] == {"10.1.0.7"}  # pa-spine01 no longer reaches pa-leaf01
    assert fib["pa-leaf02"]["10.128.0.8/30"] == {"10.1.0.5", "10.1.0.7"}
    assert "10.128.0.0/30" not in fib["pa-spine01"]  # not over another leaf: the spines share an ASN


def test_a_spine_down_halves_every_leafs_set(part):
    fib = predicted_fib(part, Failed(switches=frozenset({"pb-spine02"})))
    assert "pb-spine02" not in fib
    assert all(len(hops) == 1 for leaf in ("pb-leaf01", "pb-leaf02", "pb-leaf03") for hops in fib[leaf].values())
    assert fib["pa-leaf01"] == planned_fib(part)["pa-leaf01"]  # the other plane does not notice


def test_veths_interfaces_and_pings(part):
    assert len(part.veths) == 24 and all(len(v.a_if) <= 15 and len(v.b_if) <= 15 for v in part.veths)
    assert part.ifname[("gpu1", "mlx5_0")] == "eth0" and part.ifname[("gpu1", "mlx5_1")] == "eth1"
    pairs = ping_pairs(part)
    assert len(pairs) == 48 and all(part.zone[a.leaf] == part.zone[b.leaf] and a.leaf != b.leaf for a, b in pairs)


def test_a_plane_keeps_the_hosts_other_nics_as_stand_ins(part):
    plan = design(load_inventory(MINI))
    pb = part_of(plan, ["pb"], "plane pb")
    assert {sw.name for sw in pb.switches} == {"pb-leaf01", "pb-leaf02", "pb-leaf03", "pb-spine01", "pb-spine02"}
    assert all(h.nic == "mlx5_1" for nics in pb.hosts.values() for h in nics)
    assert pb.ifname[("gpu1", "mlx5_0")] == "eth0"  # named, not connected
    assert any("6 NICs of the booted hosts in other planes" in line for line in pb.excluded)
