"""`ffplan reroute` without a simulator: matching a discovered fabric to the plan, the degraded LFT file, the atomic
replacement and the CLI's answers. The real OpenSM picking the file up is in tests/reroute/test_live_reroute.py."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import stat
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from ffplan.cli.main import app
from ffplan.plan.io import dump_plan
from ffplan.opensm import View
from ffplan.opensm.files import lfts_text, opensm_files
from ffplan.opensm.layout import LFTS, TOPOLOGY
from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.reroute import AggregationNode, missing_from_discovery, reroute, resolve_items
from ffplan.fabric.discovery import guid as canonical_guid, parse_topology
from ffplan.fabric.lft import parse_lfts
from tests.audit.asbuilt import with_aggregation_nodes
from tests.routing.three_layer import SMALL
from tests.support.plans import designed


@pytest.fixture(scope="module")
def lab():
    return designed("lab")


def _uplink(plan, leaf="za-leaf02"):
    return next(c for c in plan.cables if c.kind == "leaf-spine" and leaf in (c.a.device, c.b.device))


def test_discovery_of_the_planned_fabric_finds_nothing_missing(lab):
    topo = parse_topology(opensm_files(lab)[TOPOLOGY])
    m = missing_from_discovery(lab, topo)
    assert (m.switches, m.cables, m.ca_ports, m.unexpected) == ([], [], [], [])


def test_discovery_names_a_dead_switch_a_dead_cable_and_a_dead_ca_port(lab):
    cable = _uplink(lab)
    ca = next(p for n in lab.nodes for p in n.ports if p.leaf == "za-leaf03")
    view = View(drop_cables=frozenset({cable.label, ca.cable}), drop_switches=frozenset({"zb-spine02"}))
    topo = parse_topology(opensm_files(lab, view=view)[TOPOLOGY])
    m = missing_from_discovery(lab, topo)
    # the dead spine's own cables are not listed again: the switch covers them
    assert (m.switches, m.cables, m.ca_ports) == (["zb-spine02"], [cable.label], [ca.cable])
    assert m.failed == sorted(["zb-spine02", cable.label, ca.cable])


def test_discovery_matches_ca_ports_by_port_guid_and_reports_unplanned_links(lab):
    # ibnetdiscover prints the port GUID on a CA port line; a CA port cabled to another leaf port is unplanned
    p = lab.nodes[0].ports[0]
    sw = next(s.node_guid for s in lab.switches if s.name == p.leaf)[2:]
    text = (
        f'Switch 8 "S-{sw}" # "{p.leaf}"\n'
        f'[{p.leaf_port}] "H-{p.node_guid[2:]}"[{p.port}]({p.port_guid[2:]})\n'
        f'[8] "H-{p.node_guid[2:]}"[2]\n\n'
        f'Ca 2 "H-{p.node_guid[2:]}" # "x"\n'
        f'[{p.port}]({p.port_guid[2:]}) "S-{sw}"[{p.leaf_port}]\n'
        f'[2](1234) "S-{sw}"[8]\n'
    )
    m = missing_from_discovery(lab, parse_topology(text))
    assert p.cable not in m.ca_ports
    assert m.unexpected == [f"x[2] <-> {p.leaf}[8]"]


def test_resolve_items_sorts_failed_items(lab):
    cable = _uplink(lab)
    leaf_end = cable.a if cable.a.device.startswith("za-leaf") else cable.b
    items = resolve_items(
        lab, ["za-spine01", f"{leaf_end.device}[{leaf_end.port}]", lab.nodes[0].ports[0].cable, "nope"]
    )
    assert items.switches == {"za-spine01"} and items.cables == {cable.label}
    assert items.ca_cables == {lab.nodes[0].ports[0].cable} and items.unknown == ["nope"]


def test_resolve_items_is_the_topologys_resolution_on_random_items(lab):
    """Names and labels are resolved without the plan's topology: as resolve_failed resolves them on it."""
    import random

    from ffplan.plan.topology import build_topology, resolve_failed

    topo = build_topology(lab)
    pool = [s.name for s in lab.switches] + [c.label for c in lab.cables] + ["nope", "za-leaf01[1]", "a b"]
    pool += [f"{s.name}[{p}]" for s in lab.switches[:3] for p in (1, 2, 99)]
    rng = random.Random(7)
    for _ in range(200):
        items = rng.sample(pool, rng.randint(1, 6))
        if rng.random() < 0.5:  # the usual case: names and labels only
            items = [item for item in items if "[" not in item and item not in ("nope", "a b")] or items
        cables, switches, unknown = resolve_failed(topo, items)
        ca_cables = {label for label in cables if topo.by_label[label][0] == "node-leaf"}
        got = resolve_items(lab, items)
        assert (got.switches, got.cables, got.ca_cables, got.unknown) == (
            switches,
            cables - ca_cables,
            ca_cables,
            [items[i] for i in unknown],
        ), items


def test_reroute_lists_only_the_lids_of_ports_that_are_up(lab):
    """OpenSM 3.3.23 writes file entries into a table sized by the highest LID it found, unchecked: an entry for
    the LID of a switch or CA that is down overflows it (heap corruption, SIGABRT/SIGSEGV on a cold start)."""
    leaf = "zb-leaf04"  # with its CA ports, the highest LIDs of the lab
    result = reroute(lab, [leaf])
    present = set(result.fab.lid_owner)
    gone = {s.lid for s in lab.switches if s.name == leaf} | {
        p.lid for n in lab.nodes for p in n.ports if p.leaf == leaf
    }
    assert gone and not gone & present
    listed = {lid for table in parse_lfts(lfts_text(result.fab)).tables.values() for lid in table}
    assert listed <= present and max(listed) < (max(present) // 64 + 1) * 64
    # the intact file names those LIDs: the one that crashes OpenSM when the leaf is down at a cold start
    intact = {lid for table in parse_lfts(opensm_files(lab)[LFTS]).tables.values() for lid in table}
    assert gone <= intact
    assert leaf not in {s.name for s in result.fab.switches}
    assert result.checks.ca_pairs.broken == 0 and result.checks.ca_pairs.pairs > 0


def test_reroute_around_a_cable_changes_routes_and_reaches_every_pair(lab):
    cable = _uplink(lab)
    result = reroute(lab, [cable.label])
    assert result.failed == [cable.label] and result.plan.routing.failed == [cable.label]
    assert result.checks.entries_changed > 0 and result.checks.switches_changed > 0
    assert result.checks.ca_pairs.broken == 0
    # an intact fabric gives back the rendered file, byte for byte
    assert lfts_text(reroute(lab, []).fab) == opensm_files(lab)[LFTS]


def test_routes_changed_are_the_entries_of_live_lids_that_differ_from_the_plans(lab):
    """entries_changed and switches_changed against the definition, entry by entry, on random failures."""
    rng = random.Random(3)
    cables = [c.label for c in lab.cables if c.kind != "node-leaf"]
    for _ in range(6):
        failed = rng.sample(cables, rng.randint(1, 4)) + rng.sample([s.name for s in lab.switches], rng.randint(0, 1))
        result = reroute(lab, failed)
        before = {t.switch: t.ports.tolist() for t in lab.routing.lfts}
        after = {t.switch: t.ports.tolist() for t in result.plan.routing.lfts}

        def port(table: list[int], lid: int) -> int:
            return table[lid] if lid < len(table) else lab.routing.unrouted_port

        per_switch = [
            sum(port(before[s.name], lid) != port(after[s.name], lid) for lid in result.fab.lid_owner)
            for s in result.fab.switches
        ]
        assert result.checks.entries_changed == sum(per_switch) > 0
        assert result.checks.switches_changed == sum(n > 0 for n in per_switch)


def test_nothing_down_beyond_the_plans_routing_keeps_it_as_routing_again_gives_it(lab):
    """A fabric that lacks nothing the plan's routing does not already avoid, but CA ports (which need no route):
    reroute takes the plan's own tables and proof, which are what routing again gives, entry for entry."""
    from ffplan.design.routing import route

    routed_around = lab.model_copy(update={"routing": route(lab, [_uplink(lab).label])})  # as design writes it
    ca = lab.nodes[0].ports[0].cable
    for plan, failed in ((lab, []), (lab, [ca]), (routed_around, []), (routed_around, [ca])):
        assert plan.routing is not None
        kept = reroute(plan, failed)
        assert (
            kept.plan.routing is plan.routing and kept.checks.entries_changed == 0 and kept.checks.ca_pairs.broken == 0
        )
        again = route(plan, plan.routing.failed)
        assert again.model_dump(exclude={"lfts"}) == plan.routing.model_dump(exclude={"lfts"})
        assert [(t.switch, t.ports.tobytes()) for t in again.lfts] == [
            (t.switch, t.ports.tobytes()) for t in plan.routing.lfts
        ]
    assert reroute(routed_around, ["zb-spine02"]).plan.routing.failed == sorted([_uplink(lab).label, "zb-spine02"])


def _other_fabric(tmp_path):
    """A discovered fabric of other hardware: no GUID of the plan in it."""
    text = 'Switch 8 "S-00000000000000aa" # "other"\n[1] "H-00000000000000bb"[1](bc)\n\nCa 1 "H-00000000000000bb"\n[1](bc) "S-00000000000000aa"[1]\n'
    path = tmp_path / "other.txt"
    path.write_text(text)
    return path


def _bad_port_line(tmp_path):
    """ibnetdiscover output whose port line names a node with no record: refused at its line, as audit does."""
    path = tmp_path / "bad-port.txt"
    path.write_text(
        'vendid=0x2c9\nSwitch\t8 "S-0000000000000001"\t\t# "x" enhanced port 0 lid 1 lmc 0\n[1]\t"leaf9"[1]\n'
    )
    return path


def _blocked(tmp_path):
    """A folder whose lfts.dump is a folder: the rename cannot replace it."""
    (tmp_path / "blocked" / "lfts.dump").mkdir(parents=True)
    return tmp_path / "blocked"


def test_cli_reroute(lab, tmp_path):
    plan = tmp_path / "plan.yaml"
    plan.write_text(dump_plan(lab))
    runner = CliRunner()
    cable = _uplink(lab).label
    res = runner.invoke(app, ["reroute", str(plan), "--failed", cable, "-o", str(tmp_path), "--format", "json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["failed"] == [cable] and summary["unreachable"]["ca_pairs"] == 0
    assert summary["routes_changed"]["entries"] > 0
    assert (tmp_path / "lfts.dump").read_text() == lfts_text(reroute(lab, [cable]).fab)
    # from a discovered fabric (here the rendered topology without the cable)
    net = tmp_path / "now.txt"
    net.write_text(opensm_files(lab, view=View(drop_cables=frozenset({cable})))[TOPOLOGY])
    res = runner.invoke(app, ["reroute", str(plan), "--fabric", str(net), "-o", str(tmp_path / "x.lfts")])
    assert res.exit_code == 0 and f"failed: {cable}" in res.stdout
    # bad input: exit 2 with the reason, never a traceback
    for args, words in (
        (["--failed", "za-spine1"], "did you mean 'za-spine01'"),
        ([], "either --fabric"),
        (["--fabric", str(plan)], "no Switch or Ca records"),
        (["--fabric", str(_bad_port_line(tmp_path))], "bad-port.txt:3:1"),
        (["--fabric", str(_other_fabric(tmp_path))], "none of the plan's 12 switch GUIDs"),
        (["--failed", cable, "-o", str(tmp_path / "no" / "x.lfts")], "is not a folder"),
        (["--failed", cable, "-o", str(_blocked(tmp_path))], "is a folder, not a regular file"),
    ):
        res = runner.invoke(app, ["reroute", str(plan), "-o", str(tmp_path / "y.lfts"), *args])
        assert res.exit_code in (1, 2) and words in res.output, (args, res.output)
        assert "Traceback" not in res.output


def test_cli_reroute_resolves_the_failed_items_once(lab, tmp_path, monkeypatch):
    """The CLI resolves the items (to name an unknown one) and reroute() routes with them: at most one plan topology
    built for that, not one each (a second took 1 s of a 16,384-endpoint re-route), and none for names and labels
    (what --fabric finds) nor for an intact fabric."""
    import ffplan.reroute

    built = []
    build = ffplan.reroute.build_topology
    monkeypatch.setattr(ffplan.reroute, "build_topology", lambda plan: built.append(1) or build(plan))
    plan = tmp_path / "plan.yaml"
    plan.write_text(dump_plan(lab))
    cable = _uplink(lab)
    leaf_end = cable.a if cable.a.device.startswith("za-leaf") else cable.b
    for item, builds in ((cable.label, 0), (f"{leaf_end.device}[{leaf_end.port}]", 1)):
        built.clear()
        args = ["reroute", str(plan), "--failed", item, "-o", str(tmp_path), "--format", "json"]
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
        assert json.loads(res.stdout)["failed"] == [item] and len(built) == builds
    built.clear()
    assert reroute(lab, []).failed == [] and not built
    # of several unknown items, the first given is named
    res = CliRunner().invoke(
        app, ["reroute", str(plan), "--failed", "zz-nope", "--failed", "aa-nope", "-o", str(tmp_path)]
    )
    assert res.exit_code == 2 and "'zz-nope'" in res.output


def test_cli_reroute_refuses_special_targets_and_foreign_pids_before_writing(lab, tmp_path):
    """-o on a FIFO or a symlink, and a --hup PID that is not the OpenSM reading the file, exit 2 and write nothing
    (the old code replaced the FIFO with a regular file, wrote and then exited 1 for the PID)."""
    plan = tmp_path / "plan.yaml"
    plan.write_text(dump_plan(lab))
    cable = _uplink(lab).label
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    link = tmp_path / "link"
    link.symlink_to(victim)
    decoy = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for out, extra, words in (
            (fifo, [], "is a FIFO"),
            (link, [], "is a symlink"),
            (tmp_path / "lfts.dump", ["--hup", str(decoy.pid)], "not opensm"),
        ):
            res = CliRunner().invoke(app, ["reroute", str(plan), "--failed", cable, "-o", str(out), *extra])
            assert res.exit_code == 2 and words in res.output and "nothing was written" in res.output, res.output
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and link.is_symlink() and victim.read_text() == "keep\n"
        assert not (tmp_path / "lfts.dump").exists() and decoy.poll() is None
    finally:
        decoy.kill()
        decoy.wait()


def _swap_ca_cables(topo, a, b):
    """Two CA ports plugged into each other's leaf port (a miscabling the crew can make)."""
    peer = topo.neighbours()
    (la, lb) = (peer[a], peer[b])
    topo.links -= {tuple(sorted((a, la))), tuple(sorted((b, lb)))}
    topo.links |= {tuple(sorted((a, lb))), tuple(sorted((b, la)))}
    return topo


def test_a_miscabled_or_replaced_or_forged_fabric_is_beyond_failures(lab):
    """The old match took these as failures only and reported 0 unreachable while OpenSM left CA pairs unrouted."""
    text = opensm_files(lab)[TOPOLOGY]
    assert missing_from_discovery(lab, parse_topology(text)).beyond_failures() == []
    x, y = lab.nodes[0].ports[0], lab.nodes[-1].ports[0]
    swapped = _swap_ca_cables(parse_topology(text), (x.node_guid, x.port), (y.node_guid, y.port))
    reasons = missing_from_discovery(lab, swapped).beyond_failures()
    assert len(reasons) == 1 and reasons[0].startswith("2 link(s) the plan does not have")
    spine = next(s for s in lab.switches if s.name == "za-spine01")
    replaced = text.replace(spine.node_guid[2:], "00000000deadbeef")
    reasons = missing_from_discovery(lab, parse_topology(replaced)).beyond_failures()
    assert any("GUID the plan does not have: " in r and "za-spine01" in r for r in reasons), reasons
    forged = parse_topology(text)
    leaf = next(s for s in lab.switches if s.name == "za-leaf01")
    forged.kind[leaf.node_guid] = "Ca"
    reasons = missing_from_discovery(lab, forged).beyond_failures()
    assert any("another kind: za-leaf01" in r for r in reasons), reasons


def test_cli_reroute_refuses_a_foreign_or_miscabled_fabric_and_writes_nothing(lab, tmp_path):
    """The lab's discovery against Fire-Flyer 2's plan: its placeholder GUIDs collide, so the old guard passed and
    the tables black-holed nearly every CA pair (exit 1). A replaced spine: old exit 0 with '0 unreachable'."""
    ff2 = tmp_path / "ff2.yaml"
    ff2.write_text(dump_plan(designed("fire-flyer-2")))
    lab_plan = tmp_path / "lab.yaml"
    lab_plan.write_text(dump_plan(lab))
    text = opensm_files(lab)[TOPOLOGY]
    spine = next(s for s in lab.switches if s.name == "za-spine01")
    cases = (
        (ff2, text, "link(s) the plan does not have"),
        (lab_plan, text.replace(spine.node_guid[2:], "00000000deadbeef"), "GUID the plan does not have"),
    )
    for plan, dump, words in cases:
        now = tmp_path / "now.txt"
        now.write_text(dump)
        out = tmp_path / "lfts.dump"
        res = CliRunner().invoke(app, ["reroute", str(plan), "--fabric", str(now), "-o", str(out)])
        assert res.exit_code == 2 and words in res.output and "nothing was written" in res.output, res.output
        assert "ffplan audit" in res.output and not out.exists()


def test_sharp_aggregation_nodes_are_neither_unplanned_nor_refused(lab, tmp_path):
    """A Quantum switch's SHARP Aggregation Node is a CA on its extra port: without this, every SHARP-enabled
    fabric would be refused as 'beyond failures'."""
    text = with_aggregation_nodes(opensm_files(lab)[TOPOLOGY], lab)
    assert missing_from_discovery(lab, parse_topology(text)).beyond_failures() == []
    plan = tmp_path / "plan.yaml"
    plan.write_text(dump_plan(lab))
    (tmp_path / "now.txt").write_text(text)
    res = CliRunner().invoke(
        app, ["reroute", str(plan), "--fabric", str(tmp_path / "now.txt"), "-o", str(tmp_path), "--format", "json"]
    )
    assert res.exit_code == 0, res.output
    # and they get routes (the old file had none): each switch forwards a node's LID as it forwards its switch's
    # LID, the node's switch to its extra port; the walk counts every pair with them reachable
    summary = json.loads(res.stdout)
    cas = sum(len(n.ports) for n in lab.nodes) + len(lab.switches)
    assert summary["unreachable"] == {
        "ca_pairs": 0,
        "of_ca_pairs": cas * (cas - 1),
        "switch_lid_pairs": 0,
        "of_switch_lid_pairs": summary["unreachable"]["of_switch_lid_pairs"],
    }
    tables = parse_lfts((tmp_path / "lfts.dump").read_text()).tables
    by_guid = {s.node_guid: s for s in lab.switches}
    for guid, table in tables.items():
        for i, s in enumerate(lab.switches):
            assert table[900 + i] == (s.ports + 1 if by_guid[guid].name == s.name else table[s.lid]), (guid, s.name)


def test_reroute_file_leaves_out_the_entries_a_switch_does_not_route(lab):
    """A leaf cut off from every spine: no other switch routes to its CA ports (port 255), so their blocks list every
    other LID with its port and its portguid, and not those (the LFT writer's partial blocks)."""
    leaf = "za-leaf01"
    uplinks = [c.label for c in lab.cables if c.kind != "node-leaf" and leaf in (c.a.device, c.b.device)]
    result = reroute(lab, uplinks)
    dump = parse_lfts(lfts_text(result.fab))
    ports = {lft.switch: lft.ports for lft in result.plan.routing.lfts}
    partial = 0
    for s in result.fab.switches:
        table = ports[s.name]
        routed = {lid: int(table[lid]) for lid in result.fab.lid_owner if lid < len(table) and table[lid] != 255}
        assert dump.tables[canonical_guid(s.node_guid)] == routed, s.name
        assert dump.portguids[canonical_guid(s.node_guid)] == {
            lid: canonical_guid(result.fab.lid_owner[lid][0]) for lid in routed
        }
        partial += len(routed) < len(result.fab.lid_owner)
    assert 0 < partial < len(result.fab.switches)  # blocks with entries left out, and whole ones


def test_reroute_reaches_as_far_with_the_route_lengths_the_router_measured():
    """reroute's reachability takes the route lengths the tree router measured (Rerouted.measured) where they are its
    tables': the same pairs, hops and failures as measuring them again, with a CA port down and an Aggregation Node
    on a core at that port's LID (a column the router routed to the CA port: measured again), and with routes left
    broken (a leaf cut off); not those of another fabric."""
    tree = design(load_inventory(SMALL))
    port = tree.nodes[0].ports[0]
    core = next(s for s in tree.switches if s.name == "z1-core01")
    node = AggregationNode("0x00000000000000aa", port.lid, core.name, core.ports + 1)
    uplinks = [c.label for c in tree.cables if c.kind == "leaf-spine" and "z1-leaf02" in (c.a.device, c.b.device)]
    for failed, nodes in ((["z1-core02", port.cable], [node]), (["z1-spine01-p05"], []), (uplinks, [])):
        result = reroute(tree, failed, nodes)
        assert result.measured is not None and [n.lid for n in result.routed] == [n.lid for n in nodes]
        again = dataclasses.replace(result, measured=None).checks
        assert result.checks == again and again.ca_pairs.pairs > 0
        assert (again.ca_pairs.broken > 0) == (failed == uplinks)
    # the lengths of another fabric's tables (the leaf's uplinks up: every route arrives) are not taken
    whole, cut = reroute(tree, ["z1-core02"]), reroute(tree, ["z1-core02", *uplinks])
    assert cut.checks.ca_pairs.broken > 0 and dataclasses.replace(cut, measured=whole.measured).checks == cut.checks
