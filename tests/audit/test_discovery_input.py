"""The discovery parser (ffplan.fabric.discovery) never trusts partial or foreign input (issue 24 items 1-2): a cut,
forged, merged or hostile `ibnetdiscover` dump is FF930 at its file:line (exit 2), never a traceback, never a
half-read fabric; audit and reroute refuse it and reroute writes no file. The dumps are the lab's, as ibnetdiscover
prints the fabric as planned (opensm/topology.net), edited the way a cut, a forgery or an attacker would."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from ffplan.cli.main import app
from ffplan.fabric import discovery
from ffplan.fabric.discovery import TopologyError, parse_topology
from ffplan.opensm import build_fabric
from ffplan.opensm.files import simulator_topology
from ffplan.plan.io import dump_plan
from ffplan.render.opensm import render_opensm
from tests.support.plans import designed


@pytest.fixture(scope="module")
def lab():
    return designed("lab")


@pytest.fixture(scope="module")
def dump(lab) -> str:
    return render_opensm(lab)["opensm/topology.net"]


@pytest.fixture
def plan(tmp_path, lab):
    (tmp_path / "plan.yaml").write_text(dump_plan(lab))
    return tmp_path / "plan.yaml"


def refused(plan, text: str, command: str = "audit") -> tuple[int, str]:
    """(line, message) of the FF930 `command` prints for `text`; asserts exit 2, no traceback, no file written."""
    fabric = plan.parent / "fabric.txt"
    fabric.write_text(text)
    out = plan.parent / "lfts.dump"
    args = (
        [command, str(plan), str(fabric)]
        if command == "audit"
        else [command, str(plan), "--fabric", str(fabric), "-o", str(out)]
    )
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception, SystemExit)
    assert not out.exists()
    m = re.search(r"fabric\.txt:(\d+):(\d+): error FF930 (.*)", result.stderr)
    assert m, result.stderr
    return int(m.group(1)), m.group(3)


@pytest.mark.parametrize("fraction", [0.30, 0.50, 0.99])
@pytest.mark.parametrize("command", ["audit", "reroute"])
def test_a_cut_dump_is_refused(plan, dump, fraction, command):
    """Accepted before: reroute wrote tables for the half it saw (1,844,359 of 2,457,056 CA pairs black-holed on
    Fire-Flyer 2 at 50 %; '0 of 0 CA pairs unreachable' at 30 %)."""
    line, message = refused(plan, dump[: int(len(dump) * fraction)], command)
    assert line > 1 and ("cut short" in message or "not a port line" in message or "not a node record" in message)


def test_a_record_cut_after_its_header_is_refused_at_the_port_naming_it(plan, dump):
    """Whole lines only: the last CA record keeps its header and loses its port line, which its leaf names."""
    lines = dump.rstrip("\n").split("\n")
    assert lines[-1].startswith("[1](")
    leaf_line = next(
        i for i, s in enumerate(lines) if s.startswith("[") and re.search(r'"H-' + lines[-2].split('"H-')[1][:16], s)
    )
    line, message = refused(plan, "\n".join(lines[:-1]) + "\n")
    assert line == leaf_line + 1 and "does not list" in message and "cut short" in message


@pytest.mark.parametrize("what", ["switch twice", "CA with a leaf's GUID"])
def test_two_records_of_one_guid_are_refused(plan, dump, lab, what):
    """A CA record reusing a leaf's GUID made reroute report 0 unreachable (exit 0) while 156 pairs were cut off."""
    leaf = next(s for s in lab.switches if s.tier == "leaf")
    g = f"{int(leaf.node_guid, 16):016x}"
    records = dump.split("\n\n")
    if what == "switch twice":
        extra = next(r for r in records if re.search(rf'^Switch\t\d+ "S-{g}"', r, re.M))
    else:
        ca = next(r for r in records if "\nCa\t" in "\n" + r)
        h = re.search(r'"H-([0-9a-f]{16})"', ca).group(1)
        extra = ca.replace(f"H-{h}", f"H-{g}").replace(f"caguid=0x{int(h, 16):x}", f"caguid=0x{int(g, 16):x}")
    line, message = refused(plan, dump.rstrip("\n") + "\n\n" + extra + "\n")
    assert line > dump.count("\n") and f"node GUID 0x{g} has a second record" in message


@pytest.mark.parametrize("edit", ["nports", "lid", "port", "guid"])
def test_5000_digit_numbers_are_located_errors_not_tracebacks(plan, dump, edit):
    big = "9" * 5000
    lines = dump.split("\n")
    at = next(i for i, s in enumerate(lines) if s.startswith("Switch\t"))
    if edit == "nports":
        lines[at] = re.sub(r"^Switch\t\d+", f"Switch\t{big}", lines[at])
    elif edit == "lid":
        lines[at] = re.sub(r"lid \d+", f"lid {big}", lines[at])
    elif edit == "port":
        at += 1
        lines[at] = re.sub(r"^\[\d+\]", f"[{big}]", lines[at])
    else:
        at = next(i for i, s in enumerate(lines) if s.startswith("switchguid="))
        lines[at] = f"switchguid=0x{'f' * 5000}"
    line, message = refused(plan, "\n".join(lines[:at]) + "\n" + lines[at][:4000] + "\n" + "\n".join(lines[at + 1 :]))
    assert line == at + 1


def test_an_over_long_line_is_refused(plan, dump):
    line, message = refused(plan, dump + "#" + "x" * 100_000 + "\n")
    assert line == dump.count("\n") + 1 and "100,001 characters" in message


@pytest.mark.parametrize("bad", ["\x1b[2J\x1b[31mpwned", "bell\x07", "\u202eevil", "nul\x00", "del\x7f"])
def test_control_characters_never_reach_the_terminal(plan, dump, lab, bad):
    """Node descriptions carrying terminal escape sequences reached the terminal through audit and reroute."""
    leaf = next(s for s in lab.switches if s.tier == "leaf")
    text = dump.replace(f'# "{leaf.name}" enhanced', f'# "{leaf.name}{bad}" enhanced', 1)
    fabric = plan.parent / "fabric.txt"
    fabric.write_text(text)
    result = CliRunner().invoke(app, ["audit", str(plan), str(fabric)])
    assert result.exit_code == 2 and "FF930" in result.stderr
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f\u202e]", result.output)
    line = next(s for s in text.split("\n") if bad in s)
    col = line.index(bad) + 1 + next(i for i, ch in enumerate(bad) if not ch.isprintable())
    assert f"fabric.txt:{text.split(chr(10)).index(line) + 1}:{col}:" in result.stderr


def test_a_port_guid_or_lid_two_ports_claim_is_refused(dump, lab):
    cas = [p for n in lab.nodes for p in n.ports][:2]
    a, b = (f"{int(p.port_guid, 16):x}" for p in cas)
    with pytest.raises(TopologyError, match="is also the GUID of"):
        parse_topology(dump.replace(f"[1]({b})", f"[1]({a})"))
    with pytest.raises(TopologyError, match=f"LID {cas[0].lid} of .* is also the LID of"):
        parse_topology(re.sub(rf"# lid {cas[1].lid} lmc", f"# lid {cas[0].lid} lmc", dump))


def test_more_nodes_than_a_subnet_can_address_are_refused(monkeypatch, dump):
    monkeypatch.setattr(discovery, "MAX_NODES", 3)
    with pytest.raises(TopologyError, match="more than 3 node records") as exc:
        parse_topology(dump)
    assert exc.value.line > 1


def test_an_oversized_dump_is_refused_before_it_is_parsed(plan, monkeypatch):
    """A 68 MB dump made audit use 3.4 GB: now nothing over MAX_FABRIC_BYTES is read (FF003)."""
    monkeypatch.setattr(discovery, "MAX_FABRIC_BYTES", 1000)
    fabric = plan.parent / "fabric.txt"
    fabric.write_text("#\n" * 1000)
    result = CliRunner().invoke(app, ["audit", str(plan), str(fabric)])
    assert result.exit_code == 2 and "over the 1,000-byte limit" in result.stderr and "one fabric" in result.stderr


def test_a_port_lines_rate_is_the_last_lid_and_rate_on_it_wherever_it_is(lab):
    """The rate read with the port line is the line's last `lid N <width>x<speed>`: also when that is only inside
    the remote's quoted id (an ibsim net file names its nodes), and when the line has two."""
    text = simulator_topology(build_fabric(lab))
    text = text.replace('"za-leaf01"[', '"za-leaf01 lid 9 1xSDR"[').replace(
        '8 "za-leaf01"\t', '8 "za-leaf01 lid 9 1xSDR"\t'
    )
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("[") and "1xSDR" in line and i % 2:
            lines[i] = line.rsplit(" lid ", 1)[0]  # no rate after the remote: only the one in its quotes
        elif line.startswith("[") and i % 3 == 0:
            lines[i] = line + " lid 12 2xEDR"
    topo = parse_topology("\n".join(lines))
    expected, header = {}, 0
    for no, line in enumerate(lines, 1):
        if line.startswith(("Switch", "Ca")):
            header = no
        elif line.startswith("["):
            rates = re.findall(r"\blid \d{1,5} (\d+x[A-Za-z0-9]+)", line)
            if rates:
                expected[(header, int(line[1 : line.index("]")]))] = rates[-1]
    assert {(topo.line[g], p): r for (g, p), r in topo.rate.items()} == expected
    assert {"1xSDR", "2xEDR", "4xHDR"} <= set(expected.values())


@pytest.mark.parametrize("digits", ["1", "2c9", "2C90003000000", "0002c90104000001", "FFFFFFFFFFFFFFFF", "0" * 16])
def test_a_guid_read_as_hex_digits_is_spelled_as_guid_spells_it(digits: str) -> None:
    assert discovery._hex_guid(digits) == discovery.guid(digits)


def _children() -> set[int]:
    """The PIDs of this process's children (a test's own: pytest starts none in this process)."""
    import os

    tasks = f"/proc/{os.getpid()}/task"
    return {int(pid) for tid in os.listdir(tasks) for pid in open(f"{tasks}/{tid}/children").read().split()}


def test_reading_fabric_aside_gives_what_read_fabric_gives_and_leaves_no_child(plan, dump, monkeypatch):
    """reroute parses the discovery in a forked child while the plan loads: the fabric comes back through the pipe
    (the parent's read_fabric is broken after the fork and never called), and a body that does not ask for it (a
    bad plan) kills and reaps the child."""
    fabric = plan.parent / "fabric.txt"
    fabric.write_text(dump)
    expected = discovery.read_fabric(fabric)
    before = _children()
    with discovery.reading_fabric(fabric) as discovered:
        assert len(_children() - before) == 1
        monkeypatch.setattr(discovery, "read_fabric", lambda path: pytest.fail("read in the parent"))
        assert discovered() == expected
    monkeypatch.undo()
    assert _children() == before
    with pytest.raises(RuntimeError):
        with discovery.reading_fabric(fabric):
            raise RuntimeError("the plan does not load")
    assert _children() == before
