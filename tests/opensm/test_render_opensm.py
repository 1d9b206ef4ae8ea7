"""The OpenSM files of a plan: golden files for the lab plan (compared whole) and the format rules each file
must keep whatever the plan (every switch has an LFT block, guid2lid records end with an empty line, GUIDs
carry 0x, names that cannot be written safely are refused).

Regenerate the golden files with `pytest tests/opensm --update-golden` after a deliberate change and review
the diff.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ffplan.diagnostics import StageError
from ffplan.opensm import View, build_fabric
from ffplan.opensm.files import opensm_files, simulator_topology
from ffplan.opensm.layout import (
    CN_GUIDS,
    CONF,
    FTREE_CONF,
    GUID2LID,
    IO_GUIDS,
    LFTS,
    NODE_NAME_MAP,
    PARTITIONS,
    QOS_POLICY,
    ROOT_GUIDS,
    TOPOLOGY,
)
from ffplan.render.opensm import render_opensm
from ffplan.fabric.discovery import parse_topology
from ffplan.fabric.lft import parse_lfts
from ffplan.verify import parse as P
from tests.goldens import assert_golden_folder

GOLDEN = Path(__file__).resolve().parent / "golden" / "lab"


def test_lab_opensm_files_match_golden(lab_plan, update_golden):
    assert_golden_folder(GOLDEN, render_opensm(lab_plan, "/etc/opensm"), update_golden, "OpenSM files")


def test_render_is_deterministic(lab_plan):
    assert render_opensm(lab_plan, "/etc/opensm") == render_opensm(lab_plan, "/etc/opensm")


def test_file_set_and_prefix(lab_plan):
    files = render_opensm(lab_plan, "/srv/sm/opensm")
    assert set(files) == {
        f"opensm/{n}"
        for n in (
            CONF,
            FTREE_CONF,
            LFTS,
            GUID2LID,
            QOS_POLICY,
            PARTITIONS,
            ROOT_GUIDS,
            CN_GUIDS,
            IO_GUIDS,
            TOPOLOGY,
            NODE_NAME_MAP,
        )
    }
    conf = P.parse_conf(files["opensm/opensm.conf"])
    assert conf["routing_engine"] == "file,no_fallback"
    assert conf["qos"] == "TRUE"
    for key in ("lfts_file", "qos_policy_file", "partition_config_file", "node_name_map_name"):
        assert conf[key].startswith("/srv/sm/opensm/"), key
    ftree = P.parse_conf(files["opensm/opensm-ftree.conf"])
    assert ftree["routing_engine"].startswith("ftree")
    assert ftree["root_guid_file"] == "/srv/sm/opensm/root_guids.txt"
    assert "lfts_file" not in ftree


@pytest.mark.parametrize("prefix", ["etc/opensm", "/etc/open sm", "/etc/$(id)", "/etc/x\nqos FALSE", ""])
def test_bad_prefix_is_refused(lab_plan, prefix):
    with pytest.raises(StageError, match="prefix"):
        render_opensm(lab_plan, prefix)


def test_lft_entries_are_what_the_file_engine_reads_and_every_reader_takes_both_forms(lab_plan):
    """An entry is `0x<lid> <port> portguid 0x<guid>`: the file engine (osm_ucast_file.c) reads that and skips the
    description dump_fts prints after it (` : (<type> portguid 0x<guid>: '<name>')`), which would double a
    16,384-endpoint file. ffplan's readers read the file, and dump_fts output of the same tables, alike."""
    from ffplan.analyze.loads import topology_for
    from ffplan.analyze.opensm import read_lfts
    from ffplan.fabric.lft import lft_array
    from ffplan.verify.arrays import read_lft_file

    fab = build_fabric(lab_plan)
    text = render_opensm(lab_plan)["opensm/lfts.dump"]
    entries = [ln for ln in text.splitlines() if ln.startswith("0x")]
    assert entries and all(re.fullmatch(r"0x[0-9a-f]{4} [0-9]{3} portguid 0x[0-9a-f]{16}", e) for e in entries)
    owner = fab.lid_owner
    switch_guids = {s.node_guid for s in fab.switches}

    def described(m: re.Match) -> str:
        g, name = owner[int(m.group(1), 16)]
        kind = "Switch" if g in switch_guids else "Channel Adapter"
        return f"0x{m.group(1)} {m.group(2)} : ({kind} portguid {g}: '{name}')"

    dump_fts_form = re.sub(r"(?m)^0x([0-9a-f]{4}) ([0-9]{3}) portguid (0x[0-9a-f]{16})$", described, text)
    assert dump_fts_form != text and ": 'za-spine01')" in dump_fts_form
    assert parse_lfts(dump_fts_form) == parse_lfts(text)
    guids, width = [s.node_guid for s in fab.switches], max(owner) + 1
    for new, old in zip(lft_array(text, guids, width, 255), lft_array(dump_fts_form, guids, width, 255)):
        assert (new == old).all()
    new_read, old_read = read_lft_file(text, fab), read_lft_file(dump_fts_form, fab)  # verify's reader
    assert all(np.array_equal(v, getattr(old_read, k)) for k, v in vars(new_read).items())
    assert new_read.entries == len(entries) and new_read.no_portguid == 0
    topo = topology_for(lab_plan)
    new_tables, old_tables = read_lfts(text, topo), read_lfts(dump_fts_form, topo)  # analyze's reader
    assert new_tables.tables.keys() == old_tables.tables.keys() and new_tables.unmapped_lids == 0
    assert all(np.array_equal(t, old_tables.tables[name]) for name, t in new_tables.tables.items())


def test_lft_blocks_are_the_entries_written_one_by_one_on_random_tables(lab_plan):
    """lfts_chunks' numpy blocks against the file written an entry at a time (lft_entry), on random tables with
    unrouted entries, tables shorter than the LIDs and a switch with no entry at all (an empty line, as before)."""
    from ffplan.opensm.files import lft_entry, lfts_chunks

    rng = np.random.default_rng(3)
    routing = lab_plan.routing
    for _ in range(5):
        lfts = []
        for i, lft in enumerate(routing.lfts):
            ports = rng.integers(0, 40, len(lft.ports)).astype(np.uint8)
            ports[rng.random(len(ports)) < 0.2] = 255
            lfts.append(lft.model_copy(update={"ports": ports[: rng.integers(1, len(ports))] if i % 3 == 1 else ports}))
        lfts[0] = lfts[0].model_copy(update={"ports": np.full(len(lfts[0].ports), 255, dtype=np.uint8)})
        fab = build_fabric(lab_plan.model_copy(update={"routing": routing.model_copy(update={"lfts": lfts})}))
        table = {lft.switch: lft.ports.tolist() for lft in lfts}
        lids = sorted(fab.lid_owner)
        text = [next(lfts_chunks(fab)).decode()]
        for s in fab.switches:
            listed = [lid for lid in lids if lid < len(table[s.name]) and table[s.name][lid] != 255]
            text.append(f"\nUnicast lids [0x0-0x{lids[-1]:x}] of switch Lid {s.lid} guid {s.node_guid} ({s.name}):\n")
            text += [lft_entry(lid, table[s.name][lid], fab.lid_owner[lid][0]) for lid in listed] or ["\n"]
            text.append(f"# {len(listed)} lids listed\n")
        assert b"".join(lfts_chunks(fab)).decode() == "".join(text)


def test_every_switch_has_a_full_lft_block(lab_plan):
    text = render_opensm(lab_plan)["opensm/lfts.dump"]
    parsed = parse_lfts(text)
    assert set(parsed.tables) == {s.node_guid for s in lab_plan.switches}
    lids = {s.lid for s in lab_plan.switches} | {p.lid for n in lab_plan.nodes for p in n.ports}
    port_guid = {s.lid: s.node_guid for s in lab_plan.switches}
    port_guid.update({p.lid: p.port_guid for n in lab_plan.nodes for p in n.ports})
    for sw, table in parsed.tables.items():
        assert set(table) == lids
        assert parsed.portguids[sw] == {lid: port_guid[lid] for lid in table}
    headers = [ln for ln in text.splitlines() if ln.startswith("Unicast lids")]
    assert all(
        re.fullmatch(r"Unicast lids \[0x0-0x[0-9a-f]+\] of switch Lid \d+ guid 0x[0-9a-f]{16} \([\w-]+\):", h)
        for h in headers
    )


def test_guid2lid_records_are_followed_by_an_empty_line(lab_plan):
    text = render_opensm(lab_plan)["opensm/guid2lid"]
    lines = text.split("\n")
    records = [i for i, ln in enumerate(lines) if ln]
    assert records and all(lines[i + 1] == "" for i in records)
    assert all(re.fullmatch(r"0x[0-9a-f]{16} 0x[0-9a-f]{4} 0x[0-9a-f]{4}", lines[i]) for i in records)
    switch_guids = {s.node_guid: s.lid for s in lab_plan.switches}
    got = {lines[i].split()[0]: int(lines[i].split()[1], 16) for i in records}
    assert {g: got[g] for g in switch_guids} == switch_guids
    assert len(got) == len(lab_plan.switches) + sum(len(n.ports) for n in lab_plan.nodes)


def test_guid_files(lab_plan):
    files = render_opensm(lab_plan)

    def body(name: str) -> list[str]:
        return [ln.split()[0] for ln in files[f"opensm/{name}"].splitlines() if ln and not ln.startswith("#")]

    assert body(ROOT_GUIDS) == [s.node_guid for s in lab_plan.switches if s.tier == "spine"]
    assert body(CN_GUIDS) == [p.port_guid for n in lab_plan.nodes if n.role == "compute" for p in n.ports]
    assert sorted(body(IO_GUIDS)) == sorted(p.port_guid for n in lab_plan.nodes if n.role != "compute" for p in n.ports)
    assert all(g.startswith("0x") for name in (ROOT_GUIDS, CN_GUIDS, IO_GUIDS) for g in body(name))


def test_topology_is_what_ibnetdiscover_prints(lab_plan):
    """Every field ibnetdiscover (infiniband-diags 44) prints, with the real hardware's GUIDs and ids."""
    text = render_opensm(lab_plan)["opensm/topology.net"]
    topo = parse_topology(text)
    assert len(topo.links) == len(lab_plan.cables)
    port_lines = [ln for ln in text.splitlines() if ln.startswith("[")]
    assert len(port_lines) == 2 * len(lab_plan.cables)
    lid = {s.name: s.lid for s in lab_plan.switches}
    for s in lab_plan.switches:
        g = int(s.node_guid, 16)
        assert (
            f"\nvendid=0x2c9\ndevid=0xd2f0\nsysimgguid=0x{g:x}\nswitchguid=0x{g:x}({g:x})\n"
            f'Switch\t{s.ports} "S-{g:016x}"\t\t# "{s.name}" enhanced port 0 lid {s.lid} lmc 0\n'
        ) in text
    for n in lab_plan.nodes:
        for p in n.ports:
            g = int(p.port_guid, 16)
            assert (
                f"\nvendid=0x2c9\ndevid=0x101b\nsysimgguid=0x{int(p.sysimg_guid, 16):x}\ncaguid=0x{g:x}\n"
                f'Ca\t1 "H-{g:016x}"\t\t# "{n.hostname} {p.nic}"\n'
                f'[1]({g:x}) \t"S-{int(_switch(lab_plan, p.leaf).node_guid, 16):016x}"[{p.leaf_port}]\t\t'
                f'# lid {p.lid} lmc 0 "{p.leaf}" lid {lid[p.leaf]} 4xHDR\n'
            ) in text
            assert (
                f'[{p.leaf_port}]\t"H-{g:016x}"[1]({g:x}) \t\t# "{n.hostname} {p.nic}" lid {p.lid} 4xHDR' in port_lines
            )
    for c in lab_plan.cables:
        if c.kind != "node-leaf":
            b = _switch(lab_plan, c.b.device)
            assert (
                f'[{c.a.port}]\t"S-{int(b.node_guid, 16):016x}"[{c.b.port}]\t\t# "{b.name}" lid {b.lid} 4xHDR'
                in port_lines
            )


def test_only_the_simulator_copy_follows_ibsim_guid_rule(lab_plan):
    fab = build_fabric(lab_plan)
    production = render_opensm(lab_plan)["opensm/topology.net"]
    sim = simulator_topology(fab)
    for n in lab_plan.nodes:
        for p in n.ports:
            g = int(p.port_guid, 16)
            assert f"caguid=0x{g:x}\n" in production and f"caguid=0x{g - 1:x}\n" in sim
            assert f'Ca\t1 "{n.hostname} {p.nic}"\t\t# "{n.hostname} {p.nic}"' in sim  # ibsim addresses nodes by id
            assert f"[1]({g:x}) " in sim  # the port GUID ibsim derives (caguid + 1) is the real one

    def strip(t: str) -> list[str]:
        return [ln for ln in t.splitlines() if not ln.startswith(("#", "caguid="))]

    assert len(strip(production)) == len(strip(sim))
    # no production file (OpenSM files, host manifest and scripts, exports, plan) carries ibsim's node GUIDs
    from ffplan.render import render_plan

    files = render_plan(lab_plan)
    assert "hosts/manifest.csv" in files and "opensm/node-name-map" in files
    for n in lab_plan.nodes:
        for p in n.ports:
            sim_guid = f"{int(p.port_guid, 16) - 1:016x}"
            assert not any(sim_guid in text for text in files.values())


def _switch(plan, name):
    return next(s for s in plan.switches if s.name == name)


def test_qos_policy_structure(lab_plan):
    text = render_opensm(lab_plan)["opensm/qos-policy.conf"]
    for opener, closer in (
        ("port-groups", "end-port-groups"),
        ("qos-levels", "end-qos-levels"),
        ("qos-match-rules", "end-qos-match-rules"),
    ):
        assert text.count(f"\n{opener}\n") == 1 and text.count(f"\n{closer}\n") == 1
    assert len(re.findall(r"^\s+port-group$", text, re.M)) == len(re.findall(r"^\s+end-port-group$", text, re.M)) > 0
    assert re.search(r"qos-level\n\s+name: DEFAULT\n", text)
    levels = set(re.findall(r"^\s+name: (\S+)$", text.split("qos-levels")[1].split("end-qos-levels")[0], re.M))
    used = set(re.findall(r"qos-level-name: (\S+)", text))
    assert used <= levels
    groups = set(re.findall(r"^\s+name: (\S+)$", text.split("end-port-groups")[0], re.M))
    refs = {g.strip() for m in re.findall(r"(?:source|destination): (.+)", text) for g in m.split(",")}
    assert refs <= groups
    for cls in lab_plan.qos.classes:
        assert re.search(rf"name: {cls.name}\n.*\n\s+sl: {cls.sl}\n", text)
    guids = set(re.findall(r"0x[0-9a-f]{16}", text))
    assert guids == {p.port_guid for n in lab_plan.nodes for p in n.ports}


def test_zone_view_is_a_closed_subfabric(ff2_plan):
    view = View(zone="z1")
    fab = build_fabric(ff2_plan, view)
    names = {s.name for s in fab.switches}
    assert names == {s.name for s in ff2_plan.switches if s.zone == "z1"}
    ids = names | {ca.id for ca in fab.cas}
    assert all(a in ids and b in ids for a, _, b, _ in fab.links)
    assert any("inter-zone" in line for line in fab.excluded)
    files = opensm_files(ff2_plan, "/etc/opensm", view)
    assert set(parse_lfts(files[LFTS]).tables) == {s.node_guid for s in fab.switches}


def test_hostile_names_are_refused(lab_plan):
    node = lab_plan.nodes[0]
    for bad in ('gpu"01', "gpu#1", "gpu\n01", "gpu@1"):
        evil = lab_plan.model_copy(update={"nodes": [node.model_copy(update={"hostname": bad})] + lab_plan.nodes[1:]})
        with pytest.raises(StageError, match="cannot be written"):
            render_opensm(evil)


def test_incomplete_plan_is_refused(lab_plan):
    with pytest.raises(StageError, match="no routing"):
        render_opensm(lab_plan.model_copy(update={"routing": None}))
