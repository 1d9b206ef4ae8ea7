"""Checks of the files alone, before the simulation: OpenSM's own config lint, the LFT file, guid2lid."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np

from ffplan.opensm import layout as L
from ffplan.opensm import Subnet, expected_conf
from ffplan.fabric.discovery import guid
from ffplan.verify import parse as P
from ffplan.verify.arrays import planned_array, read_lft_file
from ffplan.verify.expect import lid_name
from ffplan.verify.inputs import Inputs
from ffplan.verify.lifetime import die_with_parent
from ffplan.verify.report import Report


def lint_config(
    report: Report, tools: dict[str, str], workdir: Path, conf_name: str, conf_text: str, expected: dict[str, str]
) -> None:
    """`opensm -F conf -c effective`: no refused key or value, and the effective values equal the plan's."""
    src = workdir / f"lint-{conf_name}"
    src.write_text(conf_text)
    eff = workdir / f"effective-{conf_name}"
    proc = subprocess.run(
        [tools["opensm"], "-F", str(src), "-c", str(eff)],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        preexec_fn=die_with_parent(),
    )
    msgs = P.lint_messages(proc.stdout + proc.stderr)
    lines = P.conf_key_lines(conf_text)
    items = []
    for m in msgs:
        tok = (
            re.search(r'Unrecognized token: "([^"]+)"', m) or re.search(r"field (\w+)", m) or re.search(r"(\w+)\s*=", m)
        )
        where = f"{conf_name} line {lines[tok.group(1)]}: " if tok and tok.group(1) in lines else f"{conf_name}: "
        items.append(where + m)
    report.add(
        f"config accepted ({conf_name})",
        not msgs,
        "opensm -F ... -c: every key and value accepted" if not msgs else f"{len(msgs)} refused key(s) or value(s)",
        items,
    )
    if not eff.is_file():
        report.add(f"config effective ({conf_name})", False, "opensm -c wrote no effective configuration")
        return
    got = P.parse_conf(eff.read_text())
    mism = [
        f"{k}: plan {v!r}, effective {got.get(k)!r}"
        for k, v in expected.items()
        if k not in ("log_file",) and got.get(k) != v
    ]
    report.add(
        f"config effective ({conf_name})",
        not mism,
        f"{len(expected) - len(mism)}/{len(expected)} keys equal the plan's (routing, LIDs, QoS sets, paths)",
        mism,
    )


def check_lft_file(report: Report, fab: Subnet, text: str, max_differences: int = 12) -> None:
    """The rendered LFT file against the plan, each problem with its file line (read into arrays: a
    16,384-endpoint subnet's file has 22.6 M entries)."""
    routing = fab.plan.routing
    assert routing is not None
    read = read_lft_file(text, fab)
    names = [s.name for s in fab.switches]
    items = [
        f"no block for switch {s.name} (guid {s.node_guid}): OpenSM would leave its LFT empty"
        for i, s in enumerate(fab.switches)
        if not read.header_line[i]
    ]
    items += [f"{L.LFTS} line {no}: second block for the same switch: {line[:80]}" for no, line in read.duplicates]
    items += [f"{L.LFTS} line {no}: not an entry OpenSM can read: {line[:80]!r}" for no, line in read.junk]
    items += [f"{L.LFTS} line {no}: switch guid {g} is not in the fabric (OpenSM skips it)" for no, g in read.foreign]
    radix = np.array([s.ports for s in fab.switches], dtype=np.int16)
    for i, lid in zip(*np.nonzero(read.ports > radix[:, None])):
        items.append(
            f"{L.LFTS} line {read.lines[i, lid]}: {names[i]} {lid_name(fab, int(lid))} port "
            f"{read.ports[i, lid]} > {radix[i]} ports (OpenSM: 'Invalid port', the file engine fails)"
        )
    items += [
        f"{L.LFTS} line {no}: LID {lid} names portguid {pg}, the plan gives it to {fab.lid_owner[lid][1]} "
        f"({fab.lid_owner[lid][0]})"
        for no, lid, pg in read.portguid_mismatch
    ]
    if read.no_portguid:
        items.append(f"{read.no_portguid} entries carry no 'portguid 0x...' (OpenSM cannot remap them if a LID moves)")
    width = read.ports.shape[1]
    planned = planned_array(fab, width).astype(np.int16)
    planned[planned == routing.unrouted_port] = -1
    planned[:, np.setdiff1d(np.arange(width), np.array(sorted(fab.lid_owner)))] = -1
    rows, lids = np.nonzero(read.ports != planned)
    diffs = len(rows) + read.beyond
    listed = read.header_line[rows] > 0  # a missing block is reported once, above
    for i, lid in zip(rows[listed][:max_differences].tolist(), lids[listed][:max_differences].tolist()):
        e, h = int(planned[i, lid]), int(read.ports[i, lid])
        items.append(
            f"{names[i]} {lid_name(fab, lid)}: plan port {e if e >= 0 else '-'}, {L.LFTS} port {h if h >= 0 else '-'}"
        )
    ok = not items
    report.add(
        f"LFT file ({L.LFTS})",
        ok,
        f"{read.blocks - len(read.duplicates)}/{len(fab.switches)} switch blocks, {read.entries} entries, "
        f"{diffs} differ from the plan" + ("" if ok else f"; {len(items)} problem(s)"),
        items,
    )


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
            items.append(
                f"{L.GUID2LID} line {i + 1}: record not followed by an empty line (OpenSM's database "
                f"would silently drop the records after it)"
            )
        records[guid(parts[0])] = int(parts[1], 16)
    for lid, (g, name) in sorted(fab.lid_owner.items()):
        if records.get(g) != lid:
            items.append(f"{name} ({g}): plan LID {lid}, {L.GUID2LID} {records.get(g)}")
    report.add(
        f"LID pinning ({L.GUID2LID})", not items, f"{len(records)} records, {len(fab.lid_owner)} planned LIDs", items
    )


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
