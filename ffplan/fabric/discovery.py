"""The one reader of what `ibnetdiscover` prints (and of ibsim net files, which name their nodes and give guid
lines), and the one GUID rule: a GUID is written `0x` + 16 lowercase hex digits everywhere ffplan compares them.

`read_fabric(path)` is what audit and reroute call: the file read under a size limit and parsed, anything that is
not ibnetdiscover output refused with its file and line (FF930, exit 2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ffplan.diagnostics import Collector, InputError

_GUID_ID = re.compile(r'^[SH]-([0-9a-fA-F]{16})$')
_PORT_LINE = re.compile(r'^\[(\d+)\](?:\(([0-9a-fA-F]+)\))?\s+"([^"]+)"\[(\d+)\]')
_LID_TAIL = re.compile(r'#.*?\blid (\d+)')
_RATE_TAIL = re.compile(r'.*\blid \d+ (\d+x[A-Za-z0-9]+)')  # the last `lid N <width>x<speed>`: the link's active rate
_HEADER = re.compile(r'^(Switch|Ca|Hca|Rt)\s+(\d+)\s+"([^"]+)"(.*)$')
_GUID_KEY = re.compile(r'^(switchguid|caguid|hcaguids?|rtguid)=0x([0-9a-fA-F]+)')
_NODE_KEY = re.compile(r'^(vendid|devid|sysimgguid)=0x([0-9a-fA-F]+)')

# What a Quantum (or Switch-IB 2) switch's SHARP Aggregation Node calls itself: a CA on the switch's own extra
# port (41 on a QM8700), inside the switch, not a cable.
AGGREGATION_NODE = "Mellanox Technologies Aggregation Node"


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
    peer: dict[tuple[str, int], tuple[str, int]] = {}
    for g, kind, ports in records:
        for port, pguid, remote, rport, line, no in ports:
            rg = ids.get(remote)
            if rg is None:
                m = _GUID_ID.match(remote)
                rg = guid(m.group(1)) if m else None
            if rg is None:
                raise TopologyError(no, f"port [{port}] of {topo.desc[g]!r} names node {remote!r}, which has no record")
            a, b = (g, port), (rg, rport)
            for end, other in ((a, b), (b, a)):  # ibnetdiscover writes each cable from both ends: they must agree
                if peer.setdefault(end, other) != other:
                    raise TopologyError(no, f"port [{port}] of {topo.desc[g]!r} names {remote!r} port [{rport}], but "
                                            f"{topo.desc.get(end[0], end[0])!r} port [{end[1]}] is also cabled to "
                                            f"{topo.desc.get(peer[end][0], peer[end][0])!r} port [{peer[end][1]}]: "
                                            "the two ends disagree")
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


RULE_NOT_IBNETDISCOVER = "FF930"
MAX_FABRIC_BYTES = 256 * 1024 * 1024  # Fire-Flyer 2's dump is about 1 MB


def read_fabric(path: Path) -> DiscoveredFabric:
    """Parse a saved `ibnetdiscover` output; anything else is refused with its file and line (exit 2)."""
    from ffplan.inventory.source import read_text  # the inventory loader's size-limited, encoding-checked read

    text = read_text(path, MAX_FABRIC_BYTES)
    try:
        topo = parse_topology(text)
    except TopologyError as exc:
        raise _refuse(str(path), exc.line, str(exc)) from None
    if not topo.kind:
        raise _refuse(str(path), 1, "no Switch or Ca records: this is not ibnetdiscover output")
    return topo


def _refuse(file: str, line: int, message: str) -> InputError:
    c = Collector(file)
    c.positions[()] = (max(line, 1), 1)
    c.error(RULE_NOT_IBNETDISCOVER, (), message,
            "save the fabric with `ibnetdiscover > fabric.txt` (optionally with --node-name-map) and pass that file")
    return InputError(c.items)


def lid_guids(topo: DiscoveredFabric) -> dict[int, str]:
    """{LID: port GUID} of a discovered fabric (a switch's LID: its node GUID; a CA port without a port GUID of its
    own: node GUID + port number), to map LFT entries that carry no port GUID onto the plan's LIDs."""
    out: dict[int, str] = {}
    for (g, port), lid in topo.port_lid.items():
        out[lid] = g if topo.kind[g] == "Switch" else topo.port_guid.get((g, port)) or guid(int(g, 16) + port)
    return out
