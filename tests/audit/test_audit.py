"""`ffplan audit` on ibnetdiscover-format text: the faults it names, its formats, exit codes, bad input and
the GUID fragment that pins the real hardware in the next design. (Against the real ibnetdiscover in ibsim:
tests/audit/test_audit_ibsim.py.)"""

from __future__ import annotations

import json
import os
import re

import pytest
import yaml
from typer.testing import CliRunner

from ffplan.audit import audit
from ffplan.audit.output import format_markdown, format_text
from ffplan.opensm import build_fabric
from ffplan.opensm.files import topology_model
from ffplan.templating import render_template
from ffplan.cli.main import app
from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.plan import PLAN_VERSION
from ffplan.plan.io import dump_plan
from ffplan.render.opensm import render_opensm
from ffplan.fabric.discovery import parse_topology
from tests.audit.asbuilt import NEW_GUID, as_built, with_aggregation_nodes
from tests.support.plans import ROOT, designed


@pytest.fixture(scope="module")
def lab():
    return designed("lab")


@pytest.fixture
def files(tmp_path, lab):
    (tmp_path / "plan.yaml").write_text(dump_plan(lab))
    return tmp_path


def run(*args):
    return CliRunner().invoke(app, ["audit", *map(str, args)])


def with_new_guid(text: str, old: str, new: str) -> str:
    o, n = int(old, 16), int(new, 16)
    return text.replace(f"{o:016x}", f"{n:016x}").replace(f"=0x{o:x}\n", f"=0x{n:x}\n").replace(f"({o:x})", f"({n:x})")


def test_the_planned_topology_matches(files, lab):
    (files / "fabric.txt").write_text(render_opensm(lab)["opensm/topology.net"])
    result = run(files / "plan.yaml", files / "fabric.txt")
    assert result.exit_code == 0, result.output
    assert "the fabric matches the plan" in result.stdout


def test_every_built_in_fault_and_nothing_else(lab):
    text, faults = as_built(lab, simulator=False)
    found = audit(lab, parse_topology(text))
    assert {(f.kind, tuple(sorted(f.cables))) for f in found.findings} == faults.expected()
    assert len(found.findings) == 5
    by_kind = {f.kind: f for f in found.findings}
    # by cable label, with both ends' rack, U and port
    swapped = by_kind["swapped"]
    assert len(swapped.planned) == len(swapped.found) == 2
    assert all(end.rack and end.u for pair in swapped.planned + swapped.found for end in pair)
    moved = by_kind["wrong-switch"]
    assert moved.found[0][1].device != moved.planned[0][1].device
    assert "4xEDR" in by_kind["wrong-rate"].detail and "4xHDR" in by_kind["wrong-rate"].detail
    assert faults.new_guid_host in by_kind["guid-differs"].detail and NEW_GUID in by_kind["guid-differs"].detail
    assert by_kind["missing"].cables == [faults.missing] and not by_kind["missing"].found


def test_wrong_port_extra_cable_and_unknown_device(lab):
    text = render_opensm(lab)["opensm/topology.net"]
    spine = next(s for s in lab.switches if s.tier == "spine")
    uplink = next(c for c in lab.cables if c.kind == "leaf-spine" and c.b.device == spine.name)
    leaf = next(s for s in lab.switches if s.name == uplink.a.device)
    # the uplink's spine end sits one port above the planned ones; a device the plan lacks hangs on the next
    sg, lg = int(spine.node_guid, 16), int(leaf.node_guid, 16)
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(f'[{uplink.b.port}]\t"S-{lg:016x}"[{uplink.a.port}]'):
            lines[i] = line.replace(f"[{uplink.b.port}]", f"[{spine.ports + 1}]", 1)
        if line.startswith(f'[{uplink.a.port}]\t"S-{sg:016x}"[{uplink.b.port}]'):
            lines[i] = line.replace(f'"[{uplink.b.port}]', f'"[{spine.ports + 1}]', 1)
    stranger = (
        "\nvendid=0x2c9\ndevid=0x101b\nsysimgguid=0xabc0\ncaguid=0xabc0\n"
        f'Ca\t1 "H-000000000000abc0"\t\t# "laptop mlx5_0"\n'
        f'[1](abc0) \t"S-{sg:016x}"[{spine.ports + 2}]\t\t# lid 999 lmc 0 "{spine.name}" lid {spine.lid} 4xHDR\n'
    )
    header = lines.index(next(ln for ln in lines if ln.startswith(f'Switch\t{spine.ports} "S-{sg:016x}"')))
    # the spine reports two ports more (a real dump never names a port beyond its node's count)
    lines[header] = lines[header].replace(f"Switch\t{spine.ports}", f"Switch\t{spine.ports + 2}")
    lines.insert(header + 1, f'[{spine.ports + 2}]\t"H-000000000000abc0"[1](abc0) \t\t# "laptop mlx5_0" lid 999 4xHDR')
    found = audit(lab, parse_topology("\n".join(lines) + "\n" + stranger))
    assert [(f.kind, f.cables) for f in found.findings] == [
        ("wrong-port", [uplink.label]),
        ("extra", []),
        ("unknown-device", []),
    ]
    assert f"{spine.name} port {spine.ports + 1}" in found.findings[0].detail
    assert "laptop" in found.findings[2].detail


def test_formats(files, lab):
    text, faults = as_built(lab, simulator=False)
    (files / "fabric.txt").write_text(text)
    js = run(files / "plan.yaml", files / "fabric.txt", "--format", "json")
    assert js.exit_code == 1
    data = json.loads(js.stdout)
    assert data["matches"] is False and data["counts"]["swapped"] == 1 and len(data["findings"]) == 5
    md = run(files / "plan.yaml", files / "fabric.txt", "--format", "markdown")
    assert md.exit_code == 1
    assert md.stdout.startswith("# Cabling work order: lab\n")
    assert "## Swapped pairs (1)" in md.stdout and "## Missing cables (1)" in md.stdout
    assert f"| [ ] | {faults.missing} |" in md.stdout
    assert "(r1 U" in md.stdout and "(net1 U" in md.stdout  # rack and U of both ends
    assert md.stdout == format_markdown(audit(lab, parse_topology(text)), str(files / "fabric.txt"))


@pytest.mark.parametrize(
    "content, line, words",
    [
        ("hello\nworld\n", 1, "not ibnetdiscover output"),
        (
            'vendid=0x2c9\nSwitch\t8 "S-0000000000000001"\t\t# "x" enhanced port 0 lid 1 lmc 0\n[1]\t"leaf9"[1]\n',
            3,
            "has no record",
        ),
        ('Switch\t8 "leaf"\t\t# "leaf"\n', 1, "no GUID"),
    ],
)
def test_bad_fabric_file_exit_2_with_line(files, content, line, words):
    (files / "fabric.txt").write_text(content)
    result = run(files / "plan.yaml", files / "fabric.txt")
    assert result.exit_code == 2
    assert f"fabric.txt:{line}:1" in result.stderr and words in result.stderr and "FF930" in result.stderr
    assert "Traceback" not in result.output


def test_a_cable_edited_on_one_end_only_is_refused_at_its_line(files, lab):
    """Both records of a cable must agree; an edit on one side raised KeyError (docs promise FF930, exit 2)."""
    text = render_opensm(lab)["opensm/topology.net"]
    lines = text.splitlines()
    no, line = next((i, s) for i, s in enumerate(lines) if s.startswith("[1](") and '"S-' in s)
    remote_port = re.search(r'"S-[0-9a-f]+"\[(\d+)\]', line)
    lines[no] = line.replace(f"[{remote_port.group(1)}]", "[39]", 1)
    (files / "fabric.txt").write_text("\n".join(lines) + "\n")
    result = run(files / "plan.yaml", files / "fabric.txt")
    assert result.exit_code == 2, result.output
    assert f"fabric.txt:{no + 1}:1" in result.stderr and "the two ends disagree" in result.stderr
    assert "FF930" in result.stderr and "Traceback" not in result.output


def test_missing_files_exit_2(files):
    assert run(files / "plan.yaml", files / "nothing.txt").exit_code == 2
    (files / "fabric.txt").write_text("x")
    assert run(files / "nope.yaml", files / "fabric.txt").exit_code == 2


def test_write_guids_pins_the_real_hardware_in_the_next_design(files, lab, tmp_path):
    node = next(n for n in lab.nodes if n.hostname == "gpu04")
    gpu04 = node.ports[0]
    leaf = next(s for s in lab.switches if s.name == "zb-leaf02")
    text = render_opensm(lab)["opensm/topology.net"]
    text = with_new_guid(with_new_guid(text, gpu04.port_guid, NEW_GUID), leaf.node_guid, "0x0002c9eeee000002")
    (files / "fabric.txt").write_text(text)
    result = run(files / "plan.yaml", files / "fabric.txt", "--write-guids", files / "guids.yaml")
    assert result.exit_code == 1
    assert {
        f["kind"] for f in json.loads(run(files / "plan.yaml", files / "fabric.txt", "-f", "json").stdout)["findings"]
    } == {"guid-differs"}
    fragment = yaml.safe_load((files / "guids.yaml").read_text())
    assert fragment["fabric"]["switch_guids"]["zb-leaf02"] == "0x0002c9eeee000002"
    assert len(fragment["fabric"]["switch_guids"]) == len(lab.switches)
    hosts = {h["hostname"]: h for g in fragment["groups"] for h in g["hosts"]}
    assert hosts["gpu04"] == {"hostname": "gpu04", "rack": node.rack, "u": node.u, "guids": {"mlx5_0": NEW_GUID}}
    assert len(hosts) == len(lab.nodes)
    # merge: switch GUIDs as they are; every group's hosts listed explicitly with their GUIDs
    inv = yaml.safe_load((ROOT / "inventories" / "lab.yaml").read_text())
    inv["fabric"]["switch_guids"] = fragment["fabric"]["switch_guids"]
    listed = {g["name"]: g["hosts"] for g in fragment["groups"]}
    for group in inv["groups"]:
        for key in ("count", "hostname", "racks", "per_rack", "first_u"):
            group.pop(key, None)
        group["hosts"] = listed[group["name"]]
    (tmp_path / "pinned.yaml").write_text(yaml.safe_dump(inv, sort_keys=False))
    pinned = design(load_inventory(tmp_path / "pinned.yaml"))
    port = next(n for n in pinned.nodes if n.hostname == "gpu04").ports[0]
    assert (port.port_guid, port.guid_placeholder) == (NEW_GUID, False)
    assert next(s for s in pinned.switches if s.name == "zb-leaf02").node_guid == "0x0002c9eeee000002"
    assert not any(s.guid_placeholder for s in pinned.switches)
    assert not any(p.guid_placeholder for n in pinned.nodes for p in n.ports)


def test_a_remote_without_its_own_record_is_refused(files, lab):
    """A port naming S-/H-<guid> without a record of its own is what a cut dump looks like: it was read as an unknown
    device's port (an 'extra' cable) before; FF930 now fires for the standard ids too."""
    text = render_opensm(lab)["opensm/topology.net"]
    spine = next(s for s in lab.switches if s.tier == "spine")
    sg = int(spine.node_guid, 16)
    header = next(ln for ln in text.splitlines() if ln.startswith(f'Switch\t{spine.ports} "S-{sg:016x}"'))
    cut = text.replace(
        header,
        header.replace(f"Switch\t{spine.ports}", f"Switch\t{spine.ports + 1}")
        + f'\n[{spine.ports + 1}]\t"S-00000000000000ff"[3]\t\t# "?" lid 7 4xHDR',
    )
    (files / "fabric.txt").write_text(cut)
    result = run(files / "plan.yaml", files / "fabric.txt")
    line = cut.splitlines().index(next(ln for ln in cut.splitlines() if '"S-00000000000000ff"' in ln)) + 1
    assert result.exit_code == 2 and f"fabric.txt:{line}:1" in result.stderr and "FF930" in result.stderr
    assert "'S-00000000000000ff', which has no record" in result.stderr and "cut short" in result.stderr


@pytest.mark.parametrize(
    "switch_desc, ca_desc",
    [
        ("MF0;zb-leaf02:MQM8700/U1", "gpu04.cluster.example mlx5_0"),  # what the devices name themselves
        ("zb-leaf02", "gpu04 mlx5_0"),  # a node-name-map or set descriptions
        ("MF0;zb-leaf02:MQM8700/U1", "gpu04 HCA-1"),  # MLNX_OFED's HCA description
    ],
)
def test_devices_with_other_guids_found_by_their_own_descriptions(lab, switch_desc, ca_desc):
    leaf = next(s for s in lab.switches if s.name == "zb-leaf02")
    gpu04 = next(n for n in lab.nodes if n.hostname == "gpu04").ports[0]
    text = render_opensm(lab)["opensm/topology.net"]
    text = with_new_guid(with_new_guid(text, gpu04.port_guid, NEW_GUID), leaf.node_guid, "0x0002c9eeee000002")
    text = text.replace('# "zb-leaf02" enhanced', f'# "{switch_desc}" enhanced').replace(
        f'Ca\t1 "H-{int(NEW_GUID, 16):016x}"\t\t# "gpu04 mlx5_0"',
        f'Ca\t1 "H-{int(NEW_GUID, 16):016x}"\t\t# "{ca_desc}"',
    )
    found = audit(lab, parse_topology(text))
    assert [f.kind for f in found.findings] == ["guid-differs", "guid-differs"]
    assert found.switch_guids["zb-leaf02"] == "0x0002c9eeee000002"
    assert found.card_guids[("gpu04", "mlx5_0")] == NEW_GUID


def test_unwritable_guid_file_exit_2_without_traceback(files, lab):
    (files / "fabric.txt").write_text(render_opensm(lab)["opensm/topology.net"])
    result = run(files / "plan.yaml", files / "fabric.txt", "--write-guids", files / "no-such-folder" / "guids.yaml")
    assert result.exit_code == 2
    assert "cannot write" in result.stderr and "Traceback" not in result.output


def test_a_fifo_as_the_guid_file_is_refused_without_waiting_for_a_reader(files, lab):
    """Issue 26 item 4: writing the GUID fragment into a FIFO hung `audit --write-guids` until a reader came."""
    (files / "fabric.txt").write_text(render_opensm(lab)["opensm/topology.net"])
    os.mkfifo(files / "guids.yaml")
    result = run(files / "plan.yaml", files / "fabric.txt", "--write-guids", files / "guids.yaml")
    assert result.exit_code == 2 and "is not a regular file" in result.stderr and "Traceback" not in result.output


def test_a_plan_from_before_the_hardware_guids_is_refused_with_its_version(files):
    """Version 1 plans carry ibsim's CA node GUIDs (port GUID - 1); they must be re-designed, not read."""
    text = (files / "plan.yaml").read_text()
    (files / "old.yaml").write_text(text.replace(f"plan_version: {PLAN_VERSION}\n", "plan_version: 1\n", 1))
    (files / "fabric.txt").write_text("x")
    result = run(files / "old.yaml", files / "fabric.txt")
    assert result.exit_code == 2
    assert "FF902" in result.stderr and "plan version 1 is not supported" in result.stderr


def test_sharp_aggregation_nodes_inside_quantum_switches_are_not_cables(lab):
    """A real QM8700 reports 41 ports: port 41 holds its SHARP Aggregation Node, a CA inside the switch."""
    text = with_aggregation_nodes(render_opensm(lab)["opensm/topology.net"], lab)
    found = audit(lab, parse_topology(text))
    assert found.matches, [f.detail for f in found.findings]
    assert found.aggregation_nodes == len(lab.switches)
    assert (found.devices_found, found.links_found) == (
        len(lab.switches) + sum(len(n.ports) for n in lab.nodes),
        len(lab.cables),
    )


def _rendered(fab) -> str:
    return render_template("opensm/topology.net.j2", **topology_model(fab, simulator=False))


def _cables_of(plan, switch: str) -> list[str]:
    return sorted(c.label for c in plan.cables if switch in (c.a.device, c.b.device))


def test_a_missing_switch_is_one_finding_with_its_cables_under_it(lab):
    """The old audit listed 'install cable' once per cable of the absent switch and never named the switch."""
    fab = build_fabric(lab)
    fab.switches = [s for s in fab.switches if s.name != "za-leaf02"]
    fab.links = [link for link in fab.links if "za-leaf02" not in (link[0], link[2])]
    found = audit(lab, parse_topology(_rendered(fab)))
    assert [(f.kind, f.cables) for f in found.findings] == [("switch-missing", _cables_of(lab, "za-leaf02"))]
    assert "za-leaf02" in found.findings[0].detail and "is not in the fabric" in found.findings[0].detail
    text = format_text(found, "x")
    assert text.count("za-leaf02-p") >= len(_cables_of(lab, "za-leaf02")) and "switch-missing" in text


def test_two_leaves_in_each_others_place_are_one_finding(lab):
    """The old audit called two racked-in-each-other's-place leaves a dozen swapped pairs and wrong-switch rows."""
    fab = build_fabric(lab)
    swap = {"za-leaf01": "za-leaf02", "za-leaf02": "za-leaf01"}
    fab.links = sorted((swap.get(a, a), pa, swap.get(b, b), pb) for a, pa, b, pb in fab.links)
    found = audit(lab, parse_topology(_rendered(fab)))
    both = sorted(_cables_of(lab, "za-leaf01") + _cables_of(lab, "za-leaf02"))
    assert [(f.kind, f.cables) for f in found.findings] == [("switches-swapped", both)]
    assert "za-leaf01" in found.findings[0].detail and "each other's place" in found.findings[0].detail
    assert "| [ ] | za-leaf01-p01 |" in format_markdown(found, "x")


def test_write_guids_writes_the_port_guid_the_finding_prints_on_an_ibsim_dump(files, lab):
    """ibsim's CA node and system image GUIDs are one below the port GUID; the old fragment wrote the system
    image GUID while the finding printed the port GUID, so the next design pinned a GUID one off."""
    gpu04 = next(n for n in lab.nodes if n.hostname == "gpu04").ports[0]
    node_guid = f"0x{int(NEW_GUID, 16) - 1:016x}"
    text = with_new_guid(render_opensm(lab)["opensm/topology.net"], gpu04.port_guid, node_guid)
    text = text.replace(f"({int(node_guid, 16):x})", f"({int(NEW_GUID, 16):x})")
    (files / "fabric.txt").write_text(text)
    result = run(files / "plan.yaml", files / "fabric.txt", "--write-guids", files / "guids.yaml")
    assert result.exit_code == 1 and f"fabric {NEW_GUID}" in result.stdout
    hosts = {h["hostname"]: h for g in yaml.safe_load((files / "guids.yaml").read_text())["groups"] for h in g["hosts"]}
    assert hosts["gpu04"]["guids"] == {"mlx5_0": NEW_GUID}
