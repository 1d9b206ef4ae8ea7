"""Static routing: reachability, path lengths, balance, failed links, deadlock proof."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from ffplan.fabric.deadlock import prove_deadlock_free
from ffplan.design.routing import UNROUTED, route
from ffplan.plan.topology import build_topology, resolve_failed
from ffplan.diagnostics import StageError
from tests.support.walker import RouteError, Walker


def tables_of(plan):
    return {lft.switch: lft.ports for lft in plan.routing.lfts}


@pytest.fixture(params=["lab", "ff2"])
def plan(request, lab_routed, ff2_routed):
    return {"lab": lab_routed, "ff2": ff2_routed}[request.param]


def test_every_switch_has_a_full_table(plan):
    r = plan.routing
    assert r.unrouted_port == UNROUTED and r.max_lid == max(p.lid for n in plan.nodes for p in n.ports)
    assert {lft.switch for lft in r.lfts} == {s.name for s in plan.switches}
    for lft in r.lfts:
        assert len(lft.ports) == r.max_lid + 1
        own = next(s.lid for s in plan.switches if s.name == lft.switch)
        assert lft.ports[own] == 0
        # every switch routes every CA LID and every switch LID (spines reach other spines through a leaf)
        assert all(lft.ports[lid] != UNROUTED for lid in range(1, r.max_lid + 1)), lft.switch


def test_every_ca_pair_reachable_with_expected_path_lengths(plan):
    topo = build_topology(plan)
    walker = Walker(topo, tables_of(plan))
    hist = Counter()
    for dst, dca in topo.ca_by_lid.items():
        for leaf, cas in topo.cas.items():
            if not cas:
                continue
            switches = len(walker.path(leaf, dst)) + 1  # raises RouteError when unreachable
            zone = topo.zone_of[leaf]
            if leaf == dca.leaf:
                assert switches == 1
            elif zone == dca.zone:
                assert switches == 3
            else:
                assert switches <= 6
            hist[switches] += len(cas)
    assert hist[1] and hist[3]


def later_zone_linked(topo) -> set[str]:
    """Leaves of the later zone holding inter-zone links: they move each other's ports off the spines homed at the
    receiving leaf (docs/routing.md), so their routes to each other are not pure d-mod-k."""
    return {
        link.b_leaf
        if topo.zones.index(topo.zone_of[link.b_leaf]) > topo.zones.index(topo.zone_of[link.a_leaf])
        else link.a_leaf
        for link in topo.inter_zone
    }


def test_per_uplink_destination_counts_are_equal(plan):
    """Every leaf sends the zone's CA ports up its uplinks evenly (OpenSM ftree's 39 per uplink on a full
    800-port zone), and every spine downlink carries at most one CA port of its leaf; into a linked leaf of the later
    zone, where the other leaves make room for the linked leaves' pairs on its hole's downlink, at most one of each
    source leaf (a leaf shift stays contention-free)."""
    topo = build_topology(plan)
    tables = tables_of(plan)
    linked = later_zone_linked(topo)
    for zone in topo.zones:
        for leaf in topo.leaves[zone]:
            if leaf in linked:
                continue
            ups = [u.leaf_port for u in topo.uplinks[leaf]]
            count = Counter(
                tables[leaf][lid] for lid, ca in topo.ca_by_lid.items() if ca.zone == zone and ca.leaf != leaf
            )
            sent = sum(count[p] for p in ups)
            assert sent == sum(1 for ca in topo.ca_by_lid.values() if ca.zone == zone and ca.leaf != leaf)
            assert max(count[p] for p in ups) - min(count[p] for p in ups) <= 1, leaf
            assert max(count[p] for p in ups) == math.ceil(sent / len(ups))
    # downlinks: the CA ports of one leaf arrive over distinct spine downlinks, whoever sends
    walker = Walker(topo, tables)
    arrive: dict[tuple, set] = {}
    for dst, ca in topo.ca_by_lid.items():
        for leaf, cas in topo.cas.items():
            if cas and topo.zone_of[leaf] == ca.zone and leaf != ca.leaf and leaf not in linked:
                key = walker.path(leaf, dst)[-1]
                arrive.setdefault((key, leaf) if ca.leaf in linked else key, set()).add(dst)
    assert max(len(v) for v in arrive.values()) == 1


def test_full_zone_carries_39_per_uplink(ff2_routed):
    topo = build_topology(ff2_routed)
    tables = tables_of(ff2_routed)
    full = [leaf for leaf in topo.leaves["z1"] if len(topo.cas[leaf]) == 20]
    assert full
    for leaf in full:
        count = Counter(tables[leaf][lid] for lid, ca in topo.ca_by_lid.items() if ca.zone == "z1" and ca.leaf != leaf)
        assert max(count[u.leaf_port] for u in topo.uplinks[leaf]) == 39  # 764 destinations over 20 uplinks


def test_deadlock_proof_is_recorded(plan):
    d = plan.routing.deadlock
    assert d.acyclic and d.channels > 0 and d.dependencies > 0 and d.method == "channel dependency graph"


def test_a_credit_loop_is_refused(lab_routed):
    topo = build_topology(lab_routed)
    tables = {k: list(v) for k, v in tables_of(lab_routed).items()}
    # za-leaf01's CAs reach za-leaf02 via za-spine01 and back up to za-spine02, which returns to za-leaf01: a
    # forwarding loop for za-leaf02's first CA (and so a channel dependency cycle)
    dst = topo.cas["za-leaf02"][0].lid
    up1 = next(u for u in topo.uplinks["za-leaf01"] if u.spine == "za-spine01")
    down = topo.downlinks["za-spine01"]["za-leaf02"][0]
    back = next(u for u in topo.uplinks["za-leaf02"] if u.spine == "za-spine02")
    ret = topo.downlinks["za-spine02"]["za-leaf01"][0]
    tables["za-leaf01"][dst] = up1.leaf_port
    tables["za-spine01"][dst] = down[0]
    tables["za-leaf02"][dst] = back.leaf_port
    tables["za-spine02"][dst] = ret[0]
    with pytest.raises(StageError) as exc:
        prove_deadlock_free(topo, tables)
    assert exc.value.diagnostics[0].rule == "FF602"
    assert "credit loop" in exc.value.diagnostics[0].message


def test_routing_is_deterministic(lab_routed):
    again = route(lab_routed)
    assert again == lab_routed.routing


@pytest.mark.parametrize("label", ["z1-leaf05-p21", "z2-leaf11-p30"])
def test_one_dead_uplink_stays_within_ceil_d_over_19(ff2_routed, label):
    routing = route(ff2_routed, [label])
    plan = ff2_routed.model_copy(update={"routing": routing})
    topo = build_topology(plan)
    leaf = label.rsplit("-p", 1)[0]
    dead = int(label.rsplit("-p", 1)[1])
    table = tables_of(plan)[leaf]
    ups = [u.leaf_port for u in topo.uplinks[leaf]]
    zone = topo.zone_of[leaf]
    for local in (True, False):  # the zone's own destinations and the other zone's, each spread evenly
        count = Counter(
            table[lid] for lid, ca in topo.ca_by_lid.items() if table[lid] in ups and (ca.zone == zone) == local
        )
        assert count[dead] == 0
        D = sum(count.values())
        assert not count or max(count.values()) <= math.ceil(D / (len(ups) - 1))
    # no route anywhere uses the dead cable, and every CA pair still connects
    cables, switches, _ = resolve_failed(topo, [label])
    topo.failed_cables = cables
    walker = Walker(topo, tables_of(plan))
    dead_ends = {(leaf, dead)}
    spine_end = topo.peer[(leaf, dead)][1]
    dead_ends.add(spine_end)
    for dst in topo.ca_by_lid:
        for src_leaf, cas in topo.cas.items():
            if cas:
                assert not dead_ends & set(walker.path(src_leaf, dst))


def test_failed_switch_is_avoided(lab_routed):
    routing = route(lab_routed, ["za-spine01"])
    plan = lab_routed.model_copy(update={"routing": routing})
    topo = build_topology(plan)
    walker = Walker(topo, tables_of(plan))
    for dst in topo.ca_by_lid:
        for leaf, cas in topo.cas.items():
            if cas:
                assert all(sw != "za-spine01" for sw, _ in walker.path(leaf, dst))
    assert routing.deadlock.acyclic and routing.failed == ["za-spine01"]


def test_unknown_failed_link_is_a_located_error(ff2_loaded, ff2_routed):
    with pytest.raises(StageError) as exc:
        route(ff2_routed, ["z1-leaf05-p99"], loaded=ff2_loaded)
    d = exc.value.diagnostics[0]
    assert d.rule == "FF601" and "z1-leaf05-p99" in d.message and d.yaml_path == "--exclude-link"
    assert "did you mean" in d.hint


def test_switch_port_reference(lab_routed):
    topo = build_topology(lab_routed)
    cables, switches, unknown = resolve_failed(topo, ["za-leaf01[5]", "za-spine02", "nope"])
    assert cables == {topo.port_label[("za-leaf01", 5)]} and switches == {"za-spine02"} and unknown == [2]


def test_walker_reports_black_holes(lab_routed):
    topo = build_topology(lab_routed)
    tables = {k: list(v) for k, v in tables_of(lab_routed).items()}
    dst = topo.cas["za-leaf02"][0].lid
    tables["za-leaf01"][dst] = UNROUTED
    with pytest.raises(RouteError):
        Walker(topo, tables).path("za-leaf01", dst)


def test_ca_routes_are_shortest(ff2_routed):
    """Every CA-to-CA route takes the fewest switch hops (the old router sent 40,356 pairs from the first zone's
    linked leaves over another leaf's inter-zone link: 5 links where 3 exist)."""
    check = ff2_routed.routing.check
    assert check.ca_pair_detours == 0 and check.unreachable_ca_pairs == 0 and check.unreachable_switch_lids == 0
    # the only longer routes: a later-zone spine's own routes to the earlier zone's linked leaves go down its home
    # leaf (20 spines x 3 other linked leaves x 19 ports), see docs/routing.md
    assert check.switch_to_ca_detours == 20 * 3 * 19


@pytest.mark.parametrize("failed", [["z1-leaf01-p21"], ["z2-leaf31-p36"], ["z1-spine05"], ["z1-leaf01-p20"]])
def test_switch_routes_are_in_the_proof_and_reach_every_lid(ff2_routed, failed):
    """With z1-leaf01-p21 down the old router left z1-spine01's LID unreachable from 38 leaves, and its proof left
    out the routes of switches' port 0 (adding them closed z2-leaf31 -> z1-leaf31 -> ... -> z2-leaf31)."""
    from ffplan.fabric.arrays import Channels
    from ffplan.fabric.deadlock import channel_dependencies

    routing = route(ff2_routed, failed)
    assert routing.deadlock.acyclic and "port 0" in routing.deadlock.scope
    assert routing.check.unreachable_switch_lids == 0 and routing.check.unreachable_switch_to_ca == 0
    assert routing.check.ca_pair_detours == 0
    # the graph has the dependencies of a spine's own route to a CA port of the other zone
    plan = ff2_routed.model_copy(update={"routing": routing})
    topo = build_topology(plan)
    topo.failed_cables, topo.failed_switches = resolve_failed(topo, failed)[:2]
    tables = tables_of(plan)
    ch, edges = channel_dependencies(topo, tables, Channels(topo))
    spine = "z2-spine07"
    dst = topo.cas["z1-leaf05"][0].lid
    first = ch.chan[ch.switches.index(spine), tables[spine][dst]]
    assert first in set(edges[:, 0].tolist())
