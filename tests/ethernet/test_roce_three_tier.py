"""A three-tier RoCE Clos (tests/ethernet/inventories/roce-three-tier.yaml) against a hand count, and its SONiC and
FRR files against their consumers.

Hand count: 8-port switches at 400G (no breakout), 32 single-NIC nodes. A leaf has 4 ports down and 4 up; a pod holds
8 / 2 = 4 leaves and as many spines as a leaf has uplinks (4); 32 ports / 4 = 8 leaves, so 2 pods and 8 spines. A
spine has 4 ports down (one per leaf of its pod) and 4 up; the cores of group j take spine position j of every pod:
the fewest cores whose 8 ports take 2 pods x 4 uplinks is 1 a group, so 4 groups, 4 cores, each with 4 parallel
links to the position-j spine of each pod. Switches: 8 + 8 + 4 = 20. Cables: 32 node-leaf, 8 x 4 = 32 leaf-spine,
8 x 4 = 32 spine-core.
ASNs (RFC 7938, five-stage): the cores share 4200000000 (spine_asn), pod 1's spines 4200000010 and pod 2's
4200000011 (pod_asn_base), leaves 4200000100-4200000107: 11 ASNs.
Sessions: a leaf 4 (its pod's spines), a spine 4 down + 4 up = 8, a core 2 pods x 4 = 8; 32 + 64 + 32 = 128 = 2 x 64
cables between switches.
Addresses: 20 loopbacks 10.0.0.1-10.0.0.20; 64 /31s in 10.1.0.0/25 (the 32 spine-core cables first: they sort first);
a leaf's 4 hosts take 8 addresses, a /29: 10.2.0.0/29 to 10.2.0.56/29.
ECMP: a leaf reaches the other 7 leaves over its 4 uplinks; a spine its own pod's 4 leaves over 1 link each and the
other pod's 4 leaves over its 4 core links; a core each pod's 4 leaves over the 4 links to that pod's spine.
"""

import ipaddress
import json
from collections import Counter

import pytest

from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.render import render_plan

from tests.conftest import ROOT
from tests.ethernet.test_render import SONIC_FIELDS, _dryrun, vtysh

INVENTORY = ROOT / "tests" / "ethernet" / "inventories" / "roce-three-tier.yaml"


@pytest.fixture(scope="module")
def plan():
    return design(load_inventory(INVENTORY))


@pytest.fixture(scope="module")
def files(plan):
    return render_plan(plan)


def _by_tier(plan):
    tiers = {sw.name: sw.tier for sw in plan.switches}
    found: dict[str, list] = {}
    for sw in plan.ethernet.switches:
        found.setdefault(tiers[sw.name], []).append(sw)
    return found


def test_switches_and_cables(plan):
    assert Counter(sw.tier for sw in plan.switches) == {"leaf": 8, "spine": 8, "core": 4}
    assert Counter(sw.pod for sw in plan.switches if sw.tier == "spine") == {1: 4, 2: 4}
    assert Counter(c.kind for c in plan.cables) == {"node-leaf": 32, "leaf-spine": 32, "spine-core": 32}


def test_asns_per_rfc_7938(plan):
    tiers = _by_tier(plan)
    assert {sw.asn for sw in tiers["core"]} == {4_200_000_000}
    pods = {sw.pod: set() for sw in plan.switches if sw.tier == "spine"}
    pod_of = {sw.name: sw.pod for sw in plan.switches}
    for sw in tiers["spine"]:
        pods[pod_of[sw.name]].add(sw.asn)
    assert pods == {1: {4_200_000_010}, 2: {4_200_000_011}}
    assert sorted(sw.asn for sw in tiers["leaf"]) == list(range(4_200_000_100, 4_200_000_108))
    assert plan.ethernet.spine_asns == {"za": 4_200_000_000}
    asn = {sw.name: sw.asn for sw in plan.ethernet.switches}
    assert all(n.asn == asn[n.name] for sw in plan.ethernet.switches for n in sw.neighbors)


def test_sessions_and_addresses(plan):
    tiers = _by_tier(plan)
    assert {len(sw.neighbors) for sw in tiers["leaf"]} == {4}
    assert {len(sw.neighbors) for sw in tiers["spine"]} == {8}
    assert {len(sw.neighbors) for sw in tiers["core"]} == {8}
    eth = plan.ethernet
    assert sorted(ipaddress.ip_interface(sw.loopback).ip for sw in eth.switches) == [
        ipaddress.ip_address("10.0.0.1") + i for i in range(20)
    ]
    links = {
        ipaddress.ip_interface(p.address).ip
        for sw in eth.switches
        for p in sw.ports
        if p.cable.startswith("za-") and not p.peer.startswith("gpu")
    }
    assert len(links) == 128 and all(a in ipaddress.ip_network("10.1.0.0/25") for a in links)
    core_links = {ipaddress.ip_interface(p.address).network for sw in tiers["core"] for p in sw.ports}
    assert core_links == {ipaddress.ip_network(f"10.1.0.{2 * i}/31") for i in range(32)}
    blocks = sorted(ipaddress.ip_network(sw.host_block) for sw in tiers["leaf"])
    assert blocks == [ipaddress.ip_network(f"10.2.0.{8 * i}/29") for i in range(8)]
    assert all(sw.host_block is None for sw in tiers["spine"] + tiers["core"])


def test_ecmp_groups_of_every_tier(plan):
    tiers = _by_tier(plan)
    pod_of = {sw.name: sw.pod for sw in plan.switches}
    leaves = [sw.name for sw in tiers["leaf"]]
    for sw in tiers["leaf"]:
        (group,) = sw.ecmp
        assert group.destinations == [leaf for leaf in leaves if leaf != sw.name] and len(group.next_hops) == 4
        assert sw.maximum_paths == 4
    for sw in tiers["spine"]:
        own = [leaf for leaf in leaves if pod_of[leaf] == pod_of[sw.name]]
        assert [g.destinations for g in sw.ecmp] == [[leaf] for leaf in own] + [
            [leaf for leaf in leaves if leaf not in own]
        ]
        assert [len(g.next_hops) for g in sw.ecmp] == [1, 1, 1, 1, 4] and sw.maximum_paths == 4
        uplinks = {n.address for n in sw.neighbors if n.name.startswith("za-core")}
        assert set(sw.ecmp[-1].next_hops) == uplinks
    for sw in tiers["core"]:
        assert [g.destinations for g in sw.ecmp] == [leaves[:4], leaves[4:]]
        assert [len(g.next_hops) for g in sw.ecmp] == [4, 4] and sw.maximum_paths == 4


def test_super_spines_render_as_sonic_spine_routers(files, plan):
    for sw in _by_tier(plan)["core"]:
        db = json.loads(files[f"sonic/{sw.name}/config_db.json"])
        assert set(db) == set(SONIC_FIELDS)
        assert db["DEVICE_METADATA"]["localhost"] == {
            "hostname": sw.name,
            "bgp_asn": "4200000000",
            "type": "SpineRouter",
            "docker_routing_config_mode": "unified",
            "buffer_model": "traditional",
        }
        assert {n["asn"] for n in db["BGP_NEIGHBOR"].values()} == {"4200000010", "4200000011"}
        frr = files[f"sonic/{sw.name}/frr.conf"]
        assert "router bgp 4200000000\n" in frr and " maximum-paths 4\n" in frr and "aggregate-address" not in frr


@vtysh
def test_frr_parses_every_three_tier_frr_conf(files, tmp_path):
    for path, text in files.items():
        if path.endswith("frr.conf"):
            target = tmp_path / path.replace("/", "_")
            target.write_text(text)
            result = _dryrun(target)
            assert result.returncode == 0 and not result.stdout.strip() and not result.stderr.strip(), (path, result)


def test_pod_asns_colliding_with_the_leaves_are_a_located_lint_error(tmp_path):
    """FF701 checks the pods' range too: pods 4200000100-101 would share the first two leaves' ASNs."""
    from ffplan.lint import lint_file

    text = INVENTORY.read_text().replace("pod_asn_base: 4200000010", "pod_asn_base: 4200000100")
    path = tmp_path / "pods.yaml"
    path.write_text(text)
    (finding,) = lint_file(path).diagnostics
    line = next(i for i, row in enumerate(text.splitlines(), start=1) if "pod_asn_base" in row)
    assert (finding.rule, finding.line, finding.yaml_path) == ("FF701", line, "fabric.roce.bgp.pod_asn_base")
    assert "pod spine ASNs 4200000100-4200000101 collide with the leaf ASNs 4200000100-4200000107" in finding.message
