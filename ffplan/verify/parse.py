"""Parsers for what OpenSM and infiniband-diags print (infiniband-diags 44, OpenSM 3.3.23)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_GUID_ID = re.compile(r'^[SH]-([0-9a-fA-F]{16})$')
_PORT_LINE = re.compile(r'^\[(\d+)\](?:\(([0-9a-fA-F]+)\))?\s+"([^"]+)"\[(\d+)\]')
_LID_TAIL = re.compile(r'#.*?\blid (\d+)')
_RATE_TAIL = re.compile(r'.*\blid \d+ (\d+x[A-Za-z0-9]+)')  # the last `lid N <width>x<speed>`: the link's active rate
_HEADER = re.compile(r'^(Switch|Ca|Hca|Rt)\s+(\d+)\s+"([^"]+)"(.*)$')
_GUID_KEY = re.compile(r'^(switchguid|caguid|hcaguids?|rtguid)=0x([0-9a-fA-F]+)')
_NODE_KEY = re.compile(r'^(vendid|devid|sysimgguid)=0x([0-9a-fA-F]+)')


def guid(value: str | int) -> str:
    """Canonical 0x + 16 lowercase hex digits."""
    n = int(value, 16) if isinstance(value, str) else value
    return f"0x{n:016x}"


class TopologyError(ValueError):
    """Text that is not ibnetdiscover output; `line` is 1-based (0: the text as a whole)."""

    def __init__(self, line: int, message: str):
        self.line = line
        super().__init__(message)


@dataclass
class DiscoveredFabric:
    """A fabric as ibnetdiscover (or ffplan's net file) describes it."""

    kind: dict[str, str] = field(default_factory=dict)  # node GUID -> Switch / Ca
    nports: dict[str, int] = field(default_factory=dict)
    desc: dict[str, str] = field(default_factory=dict)
    links: set[tuple[tuple[str, int], tuple[str, int]]] = field(default_factory=set)  # ((guid, port), (guid, port)) sorted
    port_lid: dict[tuple[str, int], int] = field(default_factory=dict)  # (node guid, port) -> LID (switches: port 0)
    port_guid: dict[tuple[str, int], str] = field(default_factory=dict)  # CA (node guid, port) -> port GUID
    rate: dict[tuple[str, int], str] = field(default_factory=dict)  # (node guid, port) -> active rate, "4xHDR"
    ids: dict[str, dict[str, str]] = field(default_factory=dict)  # node GUID -> {vendid, devid, sysimgguid} as given
    line: dict[str, int] = field(default_factory=dict)  # node GUID -> line of its record's header

    def neighbours(self) -> dict[tuple[str, int], tuple[str, int]]:
        out: dict[tuple[str, int], tuple[str, int]] = {}
        for a, b in self.links:
            out[a] = b
            out[b] = a
        return out


def parse_topology(text: str) -> DiscoveredFabric:
    """ibnetdiscover output (node ids S-/H-<guid>) or an ibsim net file with named nodes and guid lines.

    Raises TopologyError (with the line) for a node without a GUID or a port naming a node the text lacks.
    """
    topo = DiscoveredFabric()
    ids: dict[str, str] = {}
    pending_guid: str | None = None
    pending_ids: dict[str, str] = {}
    records: list[tuple[str, str, list[tuple[int, str | None, str, int, str, int]]]] = []
    current: list | None = None
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        m = _GUID_KEY.match(line)
        if m:
            pending_guid = guid(m.group(2))
            continue
        m = _NODE_KEY.match(line)
        if m:
            pending_ids[m.group(1)] = f"0x{int(m.group(2), 16):x}"
            continue
        m = _HEADER.match(line)
        if m:
            kind, nports, node_id, rest = m.groups()
            kind = "Switch" if kind == "Switch" else "Ca"
            idm = _GUID_ID.match(node_id)
            g = guid(idm.group(1)) if idm else pending_guid
            if g is None:
                raise TopologyError(no, f"no GUID for node {node_id!r} (neither an S-/H-<guid> id nor a guid= line before it)")
            pending_guid = None
            ids[node_id] = g
            topo.kind[g] = kind
            topo.nports[g] = int(nports)
            topo.line[g] = no
            topo.ids[g], pending_ids = pending_ids, {}
            dm = re.search(r'#\s*"([^"]*)"', rest)
            topo.desc[g] = dm.group(1) if dm else node_id
            lm = re.search(r'\blid (\d+)', rest)
            if kind == "Switch" and lm:
                topo.port_lid[(g, 0)] = int(lm.group(1))
            current = []
            records.append((g, kind, current))
            continue
        m = _PORT_LINE.match(line)
        if m and current is not None:
            port, pguid, remote, rport = int(m.group(1)), m.group(2), m.group(3), int(m.group(4))
            current.append((port, pguid, remote, rport, line, no))
    for g, kind, ports in records:
        for port, pguid, remote, rport, line, no in ports:
            rg = ids.get(remote)
            if rg is None:
                m = _GUID_ID.match(remote)
                rg = guid(m.group(1)) if m else None
            if rg is None:
                raise TopologyError(no, f"port [{port}] of {topo.desc[g]!r} names node {remote!r}, which has no record")
            a, b = (g, port), (rg, rport)
            topo.links.add((min(a, b), max(a, b)))
            rm = _RATE_TAIL.match(line)
            if rm:
                topo.rate[(g, port)] = rm.group(1)
            if kind == "Ca":
                if pguid:
                    topo.port_guid[(g, port)] = guid(pguid)
                lm = _LID_TAIL.search(line)
                if lm and int(lm.group(1)):
                    topo.port_lid[(g, port)] = int(lm.group(1))
    return topo


_FT_HEADER = re.compile(r'^Unicast lids \[[^\]]*\] of switch .*? guid (0x[0-9a-fA-F]+)(?:\s|$)')
_FT_ENTRY = re.compile(r'^0x([0-9a-fA-F]+)\s+(\d+)(?:\s|$)')
_FT_PORTGUID = re.compile(r'portguid (0x[0-9a-fA-F]+)')


@dataclass
class LftFile:
    tables: dict[str, dict[int, int]] = field(default_factory=dict)  # switch node GUID -> {lid: port}
    portguids: dict[str, dict[int, str]] = field(default_factory=dict)  # switch -> {lid: dest port GUID}
    lines: dict[str, int] = field(default_factory=dict)  # switch -> line number of its header
    entry_lines: dict[tuple[str, int], int] = field(default_factory=dict)
    junk: list[tuple[int, str]] = field(default_factory=list)  # lines that look like entries but do not parse
    duplicates: list[tuple[int, str]] = field(default_factory=list)


def parse_lfts(text: str) -> LftFile:
    """dump_fts / ibroute output, OpenSM's opensm-lfts.dump, or ffplan's lfts.dump (the `file` engine format)."""
    out = LftFile()
    current: str | None = None
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _FT_HEADER.match(line)
        if m:
            current = guid(m.group(1))
            if current in out.tables:
                out.duplicates.append((no, line))
            out.tables.setdefault(current, {})
            out.portguids.setdefault(current, {})
            out.lines[current] = no
            continue
        if current is None:
            continue
        m = _FT_ENTRY.match(line)
        if m:
            lid, port = int(m.group(1), 16), int(m.group(2))
            out.tables[current][lid] = port
            out.entry_lines[(current, lid)] = no
            pg = _FT_PORTGUID.search(line)
            if pg:
                out.portguids[current][lid] = guid(pg.group(1))
        elif line.startswith("0x") or line[:1].isdigit() and "valid lids dumped" not in line and "lids listed" not in line:
            out.junk.append((no, line))
    return out


_SL2VL_ROW = re.compile(r'^ports: in\s+(\d+), out\s+(\d+):\s*\|(.*)\|\s*$')


def parse_sl2vl(text: str) -> dict[tuple[int, int], list[int]]:
    """smpquery sl2vl: {(in port, out port): [VL for SL 0..15]}."""
    out: dict[tuple[int, int], list[int]] = {}
    for line in text.splitlines():
        m = _SL2VL_ROW.match(line.strip())
        if m:
            out[(int(m.group(1)), int(m.group(2)))] = [int(v) for v in m.group(3).split("|")]
    return out


def parse_vlarb(text: str) -> dict[str, list[tuple[int, int]]]:
    """smpquery vlarb: {"low": [(vl, weight), ...], "high": [...]} in table order."""
    out: dict[str, list[tuple[int, int]]] = {}
    which = None
    vls: list[int] = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("# Low priority"):
            which = "low"
        elif s.startswith("# High priority"):
            which = "high"
        elif s.startswith("VL") and which:
            vls = [int(v.strip(), 16) for v in s.split(":", 1)[1].strip().strip("|").split("|")]
        elif s.startswith("WEIGHT") and which:
            weights = [int(v.strip(), 16) for v in s.split(":", 1)[1].strip().strip("|").split("|")]
            out[which] = list(zip(vls, weights))
    return out


def parse_path_sl(text: str) -> int | None:
    m = re.search(r'^\s*sl\.+0x([0-9a-fA-F]+)\s*$', text, re.M)
    return int(m.group(1), 16) if m else None


def parse_conf(text: str) -> dict[str, str]:
    """opensm.conf: `key value...` lines; comments and blanks skipped; the last occurrence wins."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition(" ")
        out[key] = value.strip()
    return out


def conf_key_lines(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line and not line.startswith("#"):
            out.setdefault(line.split()[0], no)
    return out


_LINT = re.compile(r'(Unrecognized token|-E-|Invalid Cached Option|Warning: Cached Option)')


def lint_messages(opensm_output: str) -> list[str]:
    """The lines of `opensm -F conf -c effective` that mean a key or value was refused."""
    return [ln.strip() for ln in opensm_output.splitlines() if _LINT.search(ln)]


_TS = re.compile(r'^(\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) (\d{6}) ')


def log_time(line: str) -> float | None:
    """Seconds of day of an OpenSM log line (its date is ignored)."""
    m = _TS.match(line)
    if not m:
        return None
    _, _, h, mi, s, us = m.groups()
    return int(h) * 3600 + int(mi) * 60 + int(s) + int(us) / 1e6
