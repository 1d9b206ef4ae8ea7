"""Invariants every plan must hold, checked on the lab and the Fire-Flyer 2 plans."""

from collections import Counter, defaultdict

import pytest

from ffplan.design import design
from ffplan.inventory import load_inventory


@pytest.fixture(params=["lab_plan", "ff2_plan"])
def plan(request):
    return request.getfixturevalue(request.param)


def test_every_nic_port_on_exactly_one_leaf_port(plan):
    ends = Counter((p.leaf, p.leaf_port) for n in plan.nodes for p in n.ports)
    assert all(v == 1 for v in ends.values())
    zones = {z.name: z for z in plan.zones}
    for n in plan.nodes:
        for p in n.ports:
            assert 1 <= p.leaf_port <= zones[p.zone].down_ports


def test_no_switch_port_used_twice(plan):
    used = Counter()
    for c in plan.cables:
        for end in (c.a, c.b):
            if isinstance(end.port, int):
                used[(end.device, end.port)] += 1
    assert max(used.values()) == 1
    ports = {s.name: s.ports for s in plan.switches}
    assert all(1 <= port <= ports[dev] for dev, port in used)


def test_cables_consistent_with_node_ports(plan):
    by_label = {c.label: c for c in plan.cables}
    assert len(by_label) == len(plan.cables)
    for n in plan.nodes:
        for p in n.ports:
            c = by_label[p.cable]
            assert (c.a.device, c.a.port) == (n.hostname, p.nic)
            assert (c.b.device, c.b.port) == (p.leaf, p.leaf_port)


def test_leaf_spine_wiring_complete(plan):
    for z in plan.zones:
        links = Counter((c.a.device, c.b.device) for c in plan.cables if c.kind == "leaf-spine" and c.zone == z.name)
        leaves = [s.name for s in plan.switches if s.zone == z.name and s.tier == "leaf"]
        spines = [s.name for s in plan.switches if s.zone == z.name and s.tier == "spine"]
        assert len(leaves) == z.leaves and len(spines) == z.spines
        assert set(links) == {(leaf, s) for leaf in leaves for s in spines}
        assert set(links.values()) == {z.links_per_leaf_spine}


def test_role_balance_within_one_per_leaf(plan):
    per_leaf = defaultdict(Counter)
    for n in plan.nodes:
        for p in n.ports:
            per_leaf[p.leaf][n.role] += 1
    leaves = [s.name for s in plan.switches if s.tier == "leaf"]
    for role in ("compute", "storage", "management"):
        counts = [per_leaf[leaf][role] for leaf in leaves]
        assert max(counts) - min(counts) <= 1, role
    for b in plan.design.balance:
        assert b.lower_bound <= b.min_per_leaf <= b.max_per_leaf <= b.upper_bound


def test_storage_servers_in_every_zone(plan):
    zones = {z.name for z in plan.zones}
    for n in plan.nodes:
        if n.role == "storage":
            assert {p.zone for p in n.ports} == zones


def test_compute_split_evenly_over_zones(plan):
    per_zone = Counter(p.zone for n in plan.nodes if n.role == "compute" for p in n.ports)
    assert max(per_zone.values()) - min(per_zone.values()) <= 1


def test_lids_and_guids_unique(plan):
    lids = [s.lid for s in plan.switches] + [p.lid for n in plan.nodes for p in n.ports]
    assert len(lids) == len(set(lids)) and min(lids) >= 1 and max(lids) < 0xC000
    guids = [s.node_guid for s in plan.switches] + [p.port_guid for n in plan.nodes for p in n.ports]
    assert len(guids) == len(set(guids))


def test_guids_follow_real_hardware(plan):
    """Quantum: node = port 0 = system image GUID. mlx5: each port a device, node GUID = port GUID, and the
    card's base GUID (its port 1) as system image GUID. ibsim's rule (port = node + port number) is not here."""
    for s in plan.switches:
        assert s.port_guid == s.node_guid == s.sysimg_guid
    for n in plan.nodes:
        for p in n.ports:
            assert p.node_guid == p.port_guid
            assert int(p.port_guid, 16) == int(p.sysimg_guid, 16) + p.port - 1


def test_solver_proves_optimal(plan):
    assert plan.design.solver.status == "optimal" and plan.design.solver.gap == 0.0


def test_fire_flyer_shape(ff2_plan):
    assert [(z.spines, z.leaves, z.endpoint_ports) for z in ff2_plan.zones] == [(20, 40, 800)] * 2
    assert len(ff2_plan.switches) == 120
    assert sum(1 for c in ff2_plan.cables if c.kind == "inter-zone") == 4


def test_inventory_guid_is_kept(lab_plan):
    mgmt1 = next(n for n in lab_plan.nodes if n.hostname == "mgmt1")
    port = mgmt1.ports[0]
    assert port.port_guid == port.node_guid == port.sysimg_guid == "0x0002c90300aa0001"
    assert not port.guid_placeholder


def test_dual_port_card_shares_its_system_image_guid(tmp_path):
    """Port 2 of a dual-port card given by its port 1 GUID: the next GUID, its own node, the card's sysimg."""
    from tests.conftest import ROOT

    text = (ROOT / "inventories" / "lab.yaml").read_text()
    mgmt_nic = '{name: mlx5_0, kind: nic, model: CX6-HDR, root_port: rp0, bus_id: "0000:41:00.0"}'
    head, _, tail = text.rpartition(mgmt_nic)  # the management model's NIC becomes a dual-port card
    dual = head + mgmt_nic.replace("CX6-HDR", "CX6-DUAL") + tail
    dual = dual.replace(
        "    CX6-HDR: {ports: 1, speed: HDR, data_vls: 8}",
        "    CX6-HDR: {ports: 1, speed: HDR, data_vls: 8}\n    CX6-DUAL: {ports: 2, speed: HDR, data_vls: 8}",
    )
    dual = dual.replace("count: 18", "count: 16")  # room for the management nodes' second ports
    (tmp_path / "dual.yaml").write_text(dual)
    plan = design(load_inventory(tmp_path / "dual.yaml"))
    mgmt1 = next(n for n in plan.nodes if n.hostname == "mgmt1")
    p1, p2 = sorted(mgmt1.ports, key=lambda p: p.port)
    assert (p1.port, p1.node_guid, p1.port_guid, p1.sysimg_guid) == (
        1,
        "0x0002c90300aa0001",
        "0x0002c90300aa0001",
        "0x0002c90300aa0001",
    )
    assert (p2.port, p2.node_guid, p2.port_guid, p2.sysimg_guid) == (
        2,
        "0x0002c90300aa0002",
        "0x0002c90300aa0002",
        "0x0002c90300aa0001",
    )
    assert not p2.guid_placeholder
    mgmt2 = next(n for n in plan.nodes if n.hostname == "mgmt2")
    q1, q2 = sorted(mgmt2.ports, key=lambda p: p.port)
    assert q1.guid_placeholder and q2.node_guid == q2.port_guid == f"0x{int(q1.port_guid, 16) + 1:016x}"
    assert q2.sysimg_guid == q1.sysimg_guid == q1.port_guid


def test_subnet_manager_ports_share_the_block_of_the_highest_lid(plan):
    """OpenSM sizes its LFTs from the highest LID present, in 64-LID blocks; the SM's own port is always present,
    so with every SM port in the top block a cold start with any other device down still fits the file."""
    lids = [s.lid for s in plan.switches] + [p.lid for n in plan.nodes for p in n.ports]
    sm_lids = [p.lid for n in plan.nodes if n.hostname in plan.sm_hosts for p in n.ports]
    roles = {n.hostname: n.role for n in plan.nodes}
    assert [roles[h] for h in plan.sm_hosts] == ["management", "management"]
    assert sm_lids and {lid // 64 for lid in sm_lids} == {max(lids) // 64}
