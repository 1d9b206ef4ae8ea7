"""`ffplan analyze`: link loads per pattern, the lower bounds, skew detection, OpenSM dump reading."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ffplan.analyze import analyze, read_lfts, topology_for
from ffplan.fabric.discovery import lid_guids, parse_topology
from ffplan.analyze.bounds import bin_bound
from ffplan.analyze.patterns import dtree_edges
from ffplan.cli.main import app


def by_name(results):
    return {r.pattern: r for r in results}


def test_ff2_all_to_all_meets_the_bound(ff2_plan):
    r = by_name(analyze(ff2_plan, ["all-to-all", "shift"]))
    a2a = r["all-to-all"]
    assert a2a.bound == 780  # 20 ports x ceil(764 / 20) on a full leaf
    # both zones meet it: in the later zone the linked leaves keep each other's ports off the spines homed at the
    # receiving leaf (the price of shortest cross-zone routes with switch routes in the proof) and the unlinked leaves
    # make room for them on those spines (784 before, docs/routing.md section 3)
    assert a2a.max_load == 780
    assert a2a.unroutable == 0 and a2a.cross_zone_flows == 0
    shift = r["shift"]
    assert shift.phases == 39 and shift.max_load <= 2  # contention-free but between the later zone's linked leaves
    assert shift.top[0].link.startswith("z2-") and shift.top[0].flows == 2


def test_lab_patterns(lab_plan):
    r = by_name(analyze(lab_plan))
    assert set(r) == {"all-to-all", "shift", "ring", "double-binary-tree", "storage-incast", "storage-read"}
    assert r["all-to-all"].max_load <= 14 and r["shift"].max_load <= 2  # bound 12 and 1; more in zb (see the FF2 test)
    assert r["double-binary-tree"].scope == "fabric" and r["double-binary-tree"].cross_zone_flows > 0
    assert all(x.unroutable == 0 and x.bound >= 1 for x in r.values())
    assert r["storage-incast"].ca_max_eject == 9  # the 9 compute nodes of a zone write to each storage port there
    # ratio is never below 1: the bound is a lower bound
    assert all(x.max_load >= x.bound for x in r.values())


def test_skewed_routing_is_detected(ff2_plan):
    topo = topology_for(ff2_plan)
    tables = {lft.switch: list(lft.ports) for lft in ff2_plan.routing.lfts}
    leaf = "z1-leaf02"
    ups = [u.leaf_port for u in topo.uplinks[leaf]]
    # move every destination of uplink 2 onto uplink 1: that uplink now carries twice its share
    for lid, port in enumerate(tables[leaf]):
        if port == ups[1]:
            tables[leaf][lid] = ups[0]
    r = by_name(analyze(ff2_plan, ["all-to-all"], tables=tables, topo=topo))["all-to-all"]
    assert r.ratio > 1.5 and r.top[0].link.startswith(f"{leaf}[{ups[0]}]")


def test_bin_bound():
    assert bin_bound([20] * 764, 20) == 780
    assert bin_bound([1] * 20, 20) == 1 and bin_bound([1] * 21, 20) == 2
    assert bin_bound([5, 1, 1], 2) == 5 and bin_bound([], 3) == 0


def test_double_binary_tree_matches_nccl_shape():
    for n in (2, 5, 8, 13):
        edges = dtree_edges(n)
        assert len(edges) == 2 * (n - 1)  # two spanning trees
        for tree in (edges[: n - 1], edges[n - 1 :]):
            children = {c for c, _ in tree}
            assert len(children) == n - 1  # every rank but the root has one parent


def _dump(plan, fmt: str, lid_shift: int = 0) -> str:
    """Write the plan's LFTs the way dump_fts / OpenSM would (optionally with OpenSM assigning other LIDs)."""
    topo = topology_for(plan)
    guid_of_lid = {ca.lid: ca.port_guid for ca in topo.ca_by_lid.values()}
    guid_of_lid.update({topo.lid[s]: topo.guid[s] for s in topo.lid})
    lines = ["# test dump"]
    for lft in plan.routing.lfts:
        g = topo.guid[lft.switch]
        if fmt == "dump_fts":
            lines.append(
                f"Unicast lids [0x0-0x{len(lft.ports) - 1:x}] of switch DR path slid 0; dlid 0; 0 guid {g} ({lft.switch}):"
            )
            lines.append("  Lid  Out   Destination")
        else:
            lines.append(
                f"Unicast lids [0-{len(lft.ports) - 1}] of switch Lid {topo.lid[lft.switch]} guid {g} ('{lft.switch}'):"
            )
        for lid, port in enumerate(lft.ports):
            if lid == 0 or port == 255:
                continue
            if fmt == "dump_fts":
                lines.append(f"0x{lid + lid_shift:04x} {port:03d} : (Channel Adapter portguid {guid_of_lid[lid]}: 'x')")
            else:
                lines.append(f"0x{lid + lid_shift:04x} {port:03d} # Channel Adapter portguid {guid_of_lid[lid]}: 'x'")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("fmt", ["dump_fts", "opensm-lfts"])
def test_opensm_dump_round_trip(lab_plan, fmt):
    topo = topology_for(lab_plan)
    read = read_lfts(_dump(lab_plan, fmt, lid_shift=100), topo)  # other LIDs, mapped back by portguid
    assert not read.missing_switches and not read.unknown_switches and read.unmapped_lids == 0
    assert {name: table.tolist() for name, table in read.tables.items()} == {
        lft.switch: lft.ports.tolist() for lft in lab_plan.routing.lfts
    }
    r = by_name(analyze(lab_plan, ["all-to-all"], tables=read.tables, topo=topo))["all-to-all"]
    assert r.max_load == by_name(analyze(lab_plan, ["all-to-all"]))["all-to-all"].max_load


def test_minimal_dump_with_topology(lab_plan):
    topo = topology_for(lab_plan)
    lft = lab_plan.routing.lfts[0]
    g = topo.guid[lft.switch]
    text = f"Unicast lids [0x0-0x5] of switch Lid 1 guid {g} ({lft.switch}):\n0x0201 {lft.ports[13]:03d}\n"
    ca = topo.ca_by_lid[13]
    node_guid = f"{int(ca.port_guid, 16) - 1:016x}"
    ibnet = (
        f'Switch\t8 "S-{g[2:]}"\t\t# "{lft.switch}" enhanced port 0 lid 1 lmc 0\n'
        f'[5]\t"H-{node_guid}"[1]({ca.port_guid[2:]}) \t\t# "{ca.host} HCA-1" lid 513 4xHDR\n'
        f'Ca\t1 "H-{node_guid}"\t\t# "{ca.host} HCA-1"\n'
        f'[1]({ca.port_guid[2:]}) \t"S-{g[2:]}"[5]\t\t# lid 513 lmc 0 "{lft.switch}" lid 1 4xHDR\n'
    )
    lids = lid_guids(parse_topology(ibnet))
    assert lids[513] == ca.port_guid and lids[1] == g
    read = read_lfts(text, topo, lids)
    assert read.tables[lft.switch][13] == lft.ports[13]
    assert len(read.missing_switches) == len(topo.lid) - 1  # missing switches get empty tables, as in OpenSM


def test_analyze_cli_json(tmp_path, lab_plan):
    from tests.support.plans import write_plan

    write_plan(lab_plan, tmp_path / "plan.yaml")
    res = CliRunner().invoke(app, ["analyze", str(tmp_path), "-p", "all-to-all", "-p", "shift", "-f", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert [p["pattern"] for p in data["patterns"]] == ["all-to-all", "shift"]
    assert data["patterns"][0]["bound"] == 12 and data["patterns"][1]["bound"] == 1
    assert data["route_check"] == lab_plan.routing.check.model_dump()  # detours and reachability of the tables
    res = CliRunner().invoke(app, ["analyze", str(tmp_path), "-p", "bogus"])
    assert res.exit_code == 2


def test_analyze_html_has_a_histogram_of_link_loads_by_tier_per_pattern(tmp_path, lab_plan):
    """`--html`: per pattern a histogram of the flows on every link, split by tier, whose counts add up to the links
    the pattern loads, with the bound and the maximum; the same bytes on every run."""
    from ffplan.analyze import analyze
    from tests.support.plans import write_plan

    write_plan(lab_plan, tmp_path / "plan.yaml")
    args = ["analyze", str(tmp_path), "-p", "all-to-all", "-p", "shift", "--html", str(tmp_path / "a.html")]
    assert CliRunner().invoke(app, args).exit_code == 0
    html = (tmp_path / "a.html").read_text()
    assert html.count("<svg") == 2 and 'id="chart-all-to-all-zone"' in html and 'id="chart-shift-zone"' in html
    a2a = analyze(lab_plan, ["all-to-all"])[0]
    tiers = a2a.loads_by_tier
    assert list(tiers) == ["leaf → spine", "spine → leaf", "between zones"]
    assert sum(len(loads) for loads in tiers.values()) == a2a.links
    assert max(int(loads.max()) for loads in tiers.values()) == a2a.max_load
    for text in ("leaf → spine", f"lower bound {a2a.bound}", f"max {a2a.max_load}", "flows on one link (worst phase)"):
        assert f">{text}<" in html
    assert "loads_by_tier" not in json.dumps(a2a.as_dict())
    assert CliRunner().invoke(app, [*args[:-1], str(tmp_path / "b.html")]).exit_code == 0
    assert (tmp_path / "b.html").read_text() == html


@pytest.mark.parametrize("roles", [None, ("compute",)])
def test_all_to_all_bundles_count_every_flow(lab_plan, roles):
    """All-to-all is aggregated per (leaf, destination) without listing its flows: the bundles must be exactly those
    of the flows themselves (every port to every port of its zone on another host)."""
    from ffplan.analyze.flows import TopologyArrays, all_to_all_demand, pair_demand
    from ffplan.analyze.patterns import _ports

    topo = topology_for(lab_plan)
    net = TopologyArrays(topo)
    groups = [_ports(topo, z, roles) for z in topo.zones]
    flows = [
        (a, b) for ports in groups for a in ports for b in ports if topo.ca_by_lid[a].host != topo.ca_by_lid[b].host
    ]
    assert any(len({topo.ca_by_lid[p].leaf for p in ports}) < len(ports) for ports in groups)  # leaves share bundles
    agg, listed = all_to_all_demand(net, groups), pair_demand(net, flows)
    assert (
        (agg.flows, agg.max_inject, agg.max_eject, agg.cross_zone)
        == (listed.flows, listed.max_inject, listed.max_eject, listed.cross_zone)
        == (len(flows), *(agg.max_inject,) * 2, 0)
    )
    assert list(zip(agg.leaf.tolist(), agg.dst.tolist(), agg.weight.tolist())) == list(
        zip(listed.leaf.tolist(), listed.dst.tolist(), listed.weight.tolist())
    )


def test_a_flow_that_does_not_arrive_loads_no_link(lab_plan):
    """A bundle that ends in a dead end counts as unroutable and adds nothing to the links it passed."""
    topo = topology_for(lab_plan)
    tables = {lft.switch: lft.ports.copy() for lft in lab_plan.routing.lfts}
    dst = next(iter(topo.cas["zb-leaf01"])).lid
    for spine in topo.spines["zb"]:
        tables[spine][dst] = 255  # the spines drop it: every flow from another leaf dies one hop up
    r = by_name(analyze(lab_plan, ["all-to-all"], tables=tables, topo=topo))["all-to-all"]
    intact = by_name(analyze(lab_plan, ["all-to-all"]))["all-to-all"]
    senders = sum(1 for leaf in topo.leaves["zb"] if leaf != "zb-leaf01" for _ in topo.cas[leaf])
    assert r.unroutable == senders
    assert r.mean_load * r.links == intact.mean_load * intact.links - 2 * senders  # two links per lost flow: up, down


@pytest.mark.parametrize("damaged", [0.0, 0.02, 0.3])
def test_loads_over_the_in_trees_equal_the_walk(lab_plan, damaged):
    """A dense demand's loads are summed over the in-trees (flows.count_loads), a sparse one's bundles are walked:
    both give the same loads and unroutable flows, also over tables with random ports (dead ends, wrong CAs, loops),
    and the route check counted on the way equals check_routes."""
    import numpy as np

    from ffplan.analyze import plan_tables
    from ffplan.analyze.flows import TopologyArrays, _tree_loads, _walked_loads, all_to_all_demand, count_loads
    from ffplan.analyze.patterns import _ports
    from ffplan.fabric.reach import RouteCounts, check_routes

    topo = topology_for(lab_plan)
    net = TopologyArrays(topo)
    lft = net.lft(plan_tables(lab_plan))
    rng = np.random.default_rng(5)
    hit = rng.random(lft.shape) < damaged
    lft[hit] = rng.integers(0, 256, int(hit.sum()))
    demand = all_to_all_demand(net, [_ports(topo, z, None) for z in topo.zones])
    counts = RouteCounts(topo, net.channels, lft.shape[1])
    walked, summed = _walked_loads(net, lft, demand), _tree_loads(net, lft, demand, counts)
    assert (walked[0] == summed[0]).all() and walked[1] == summed[1]
    assert (walked[1] > 0) == bool(damaged) and walked[0].sum() > 0
    assert counts.complete
    assert counts.result() == check_routes(topo, {s: lft[i] for i, s in enumerate(net.switches)}, net.channels)
    assert count_loads(net, lft, demand)[1] == walked[1]  # all-to-all goes over the in-trees


@pytest.fixture(scope="module")
def three_layer_plan():
    from ffplan.design import design
    from ffplan.inventory import load_inventory
    from tests.routing.three_layer import SMALL

    return design(load_inventory(SMALL))


@pytest.mark.parametrize("cells", [None, 1])
@pytest.mark.parametrize("plan", ["lab_plan", "three_layer_plan"])
def test_every_cut_bound_at_once_equals_cut_by_cut(request, monkeypatch, plan, cells):
    """lower_bound counts the bundles per (source leaf, destination leaf, weight) and takes every cut's bin_bound at
    once (or cut by cut where the counts would be too many: `cells` 1): the same bound and the same first cut as
    bin_bound of each cut in `cuts` order, for random bundles in random order (many ties, destinations that are
    switch LIDs), links down, and sources that are no leaf (cut by cut)."""
    import numpy as np

    from ffplan.analyze import bounds
    from ffplan.analyze.bounds import cuts, lower_bound
    from ffplan.analyze.flows import Demand, TopologyArrays

    if cells is not None:
        monkeypatch.setattr(bounds, "PAIR_CELLS", cells)
    topo = topology_for(request.getfixturevalue(plan))
    net = TopologyArrays(topo)
    rng = np.random.default_rng(3)
    lids = np.array([*sorted(topo.ca_by_lid), *topo.lid.values()])
    leaves = np.unique(net.leaf_of[net.leaf_of >= 0])
    for trial in range(24):
        sources = leaves if trial % 4 else np.arange(len(net.switches))
        keys = rng.permutation(np.unique(rng.choice(sources, 300) * len(net.leaf_of) + rng.choice(lids, 300)))
        weight = rng.integers(1, 4 if trial % 2 else 40, len(keys))
        demand = Demand(keys // len(net.leaf_of), keys % len(net.leaf_of), weight, int(weight.sum()), 0, 0, 0)
        net.channels.alive = rng.random(len(net.channels.ends)) > 0.1 * (trial % 3)
        best, where = 0, "no flow crosses a switch-to-switch link"
        for cut in cuts(net, demand):
            b = bin_bound(cut.weights, int(net.channels.alive[cut.links].sum()))
            if b > best:
                best, where = b, cut.name
        assert lower_bound(net, demand) == (best, where)


@pytest.mark.parametrize("plan", ["lab_plan", "three_layer_plan"])
def test_top_links_and_tiers_by_their_definition(request, plan):
    """The report's most loaded links (ties by switch name, then port) and its loads by tier, taken on arrays: the
    same as sorting every link's (-flows, (switch, port)) and naming every channel's tiers one by one."""
    import numpy as np

    from ffplan.analyze.flows import TopologyArrays
    from ffplan.analyze.loads import TIER_ORDER, _result
    from ffplan.analyze.patterns import build_pattern

    topo = topology_for(request.getfixturevalue(plan))
    net = TopologyArrays(topo)
    pat = build_pattern(net, "ring")
    load = np.random.default_rng(2).integers(0, 3, len(net.channels.ends))  # many ties
    r = _result(net, pat, pat.phases[0], load, 0, 2, 1, "", 2.0, 40)
    links = [(net.switches[i], port) for i, port in net.channels.ends]
    ranked = sorted(range(len(links)), key=lambda c: (-int(load[c]), links[c]))[:40]
    assert [(t.link.split(" -> ")[0], t.flows) for t in r.top] == [
        (f"{links[c][0]}[{links[c][1]}]", int(load[c])) for c in ranked
    ]
    zones, tier = net.zone_of_switch, topo.tier
    names = [
        f"{tier[net.switches[a]]} → {tier[net.switches[b]]}" if zones[a] == zones[b] else "between zones"
        for a, b in zip(net.channels.src_of.tolist(), net.channels.peer_of.tolist())
    ]
    order = sorted(set(names), key=lambda t: (TIER_ORDER.get(t, len(TIER_ORDER)), t))
    assert list(r.loads_by_tier) == order and len(order) > 1
    for name in order:
        assert r.loads_by_tier[name].tolist() == [int(x) for x, n in zip(load, names) if n == name]
