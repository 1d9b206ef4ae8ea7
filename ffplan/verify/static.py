"""Checks of the files alone, before the simulation: OpenSM's own config lint, the LFT file, guid2lid."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from ffplan.render import opensm_layout as L
from ffplan.render.opensm import Subnet, expected_conf
from ffplan.verify import parse as P
from ffplan.verify.expect import compare_tables, lid_name, planned_tables
from ffplan.verify.inputs import Inputs
from ffplan.verify.lifetime import die_with_parent
from ffplan.verify.report import Report


def lint_config(report: Report, tools: dict[str, str], workdir: Path, conf_name: str, conf_text: str,
                expected: dict[str, str]) -> None:
    """`opensm -F conf -c effective`: no refused key or value, and the effective values equal the plan's."""
    src = workdir / f"lint-{conf_name}"
    src.write_text(conf_text)
    eff = workdir / f"effective-{conf_name}"
    proc = subprocess.run([tools["opensm"], "-F", str(src), "-c", str(eff)], cwd=workdir, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL, preexec_fn=die_with_parent())
    msgs = P.lint_messages(proc.stdout + proc.stderr)
    lines = P.conf_key_lines(conf_text)
    items = []
    for m in msgs:
        tok = re.search(r'Unrecognized token: "([^"]+)"', m) or re.search(r'field (\w+)', m) or re.search(r'(\w+)\s*=', m)
        where = f"{conf_name} line {lines[tok.group(1)]}: " if tok and tok.group(1) in lines else f"{conf_name}: "
        items.append(where + m)
    report.add(f"config accepted ({conf_name})", not msgs,
               "opensm -F ... -c: every key and value accepted" if not msgs else f"{len(msgs)} refused key(s) or value(s)",
               items)
    if not eff.is_file():
        report.add(f"config effective ({conf_name})", False, "opensm -c wrote no effective configuration")
        return
    got = P.parse_conf(eff.read_text())
    mism = [f"{k}: plan {v!r}, effective {got.get(k)!r}" for k, v in expected.items()
            if k not in ("log_file",) and got.get(k) != v]
    report.add(f"config effective ({conf_name})", not mism,
               f"{len(expected) - len(mism)}/{len(expected)} keys equal the plan's (routing, LIDs, QoS sets, paths)",
               mism)


def check_lft_file(report: Report, fab: Subnet, text: str) -> None:
    parsed = P.parse_lfts(text)
    names = {s.node_guid: s.name for s in fab.switches}
    ports = {s.node_guid: s.ports for s in fab.switches}
    items = []
    missing = [s for s in fab.switches if s.node_guid not in parsed.tables]
    for s in missing:
        items.append(f"no block for switch {s.name} (guid {s.node_guid}): OpenSM would leave its LFT empty")
    for no, line in parsed.duplicates:
        items.append(f"{L.LFTS} line {no}: second block for the same switch: {line[:80]}")
    for no, line in parsed.junk:
        items.append(f"{L.LFTS} line {no}: not an entry OpenSM can read: {line[:80]!r}")
    for sw, table in parsed.tables.items():
        if sw not in names:
            items.append(f"{L.LFTS} line {parsed.lines[sw]}: switch guid {sw} is not in the fabric (OpenSM skips it)")
            continue
        for lid, port in table.items():
            if port > ports[sw]:
                items.append(f"{L.LFTS} line {parsed.entry_lines[(sw, lid)]}: {names[sw]} {lid_name(fab, lid)} "
                             f"port {port} > {ports[sw]} ports (OpenSM: 'Invalid port', the file engine fails)")
        for lid, pg in parsed.portguids.get(sw, {}).items():
            owner = fab.lid_owner.get(lid)
            if owner and owner[0] != pg:
                items.append(f"{L.LFTS} line {parsed.entry_lines[(sw, lid)]}: LID {lid} names portguid {pg}, "
                             f"the plan gives it to {owner[1]} ({owner[0]})")
    no_guid = sum(1 for sw, t in parsed.tables.items() for lid in t if lid not in parsed.portguids.get(sw, {}))
    if no_guid:
        items.append(f"{no_guid} entries carry no 'portguid 0x...' (OpenSM cannot remap them if a LID moves)")
    expected = planned_tables(fab)
    diffs, diff_items = compare_tables(fab, expected, {k: v for k, v in parsed.tables.items() if k in names}, L.LFTS)
    diff_items = [d for d in diff_items if "EMPTY" not in d and "no table" not in d]
    items += diff_items
    ok = not items
    report.add(f"LFT file ({L.LFTS})", ok,
               f"{len(parsed.tables)}/{len(fab.switches)} switch blocks, {sum(len(t) for t in parsed.tables.values())} "
               f"entries, {diffs} differ from the plan" + ("" if ok else f"; {len(items)} problem(s)"), items)


def check_guid2lid(report: Report, fab: Subnet, text: str) -> None:
    items = []
    records: dict[str, int] = {}
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 3 or not all(p.startswith("0x") for p in parts):
            items.append(f"{L.GUID2LID} line {i + 1}: not '0x<guid> 0x<lid> 0x<lid>': {line[:60]!r}")
            continue
        if i + 1 < len(lines) and lines[i + 1].strip():
            items.append(f"{L.GUID2LID} line {i + 1}: record not followed by an empty line (OpenSM's database "
                         f"would silently drop the records after it)")
        records[P.guid(parts[0])] = int(parts[1], 16)
    for lid, (g, name) in sorted(fab.lid_owner.items()):
        if records.get(g) != lid:
            items.append(f"{name} ({g}): plan LID {lid}, {L.GUID2LID} {records.get(g)}")
    report.add(f"LID pinning ({L.GUID2LID})", not items, f"{len(records)} records, {len(fab.lid_owner)} planned LIDs", items)


def static_checks(report: Report, inp: Inputs, fab: Subnet, tools: dict[str, str], workdir: Path, engine: str) -> None:
    conf_name = L.CONF if engine == "file" else L.FTREE_CONF
    text = inp.files.get(conf_name)
    if text is None:
        report.add(f"config ({conf_name})", False, f"{conf_name} is missing from the rendered folder")
        return
    conf = P.parse_conf(text)
    prefix = str(Path(conf.get("qos_policy_file", f"{L.DEFAULT_PREFIX}/x")).parent)
    lint_config(report, tools, workdir, conf_name, text, expected_conf(inp.plan, prefix, engine, inp.instance))
    for name in (L.TOPOLOGY, L.GUID2LID) + ((L.LFTS,) if engine == "file" else (L.ROOT_GUIDS, L.CN_GUIDS, L.IO_GUIDS)):
        if name not in inp.files:
            report.add(f"file {name}", False, f"{name} is missing from the rendered folder")
    if engine == "file" and L.LFTS in inp.files:
        check_lft_file(report, fab, inp.files[L.LFTS])
    if L.GUID2LID in inp.files:
        check_guid2lid(report, fab, inp.files[L.GUID2LID])
