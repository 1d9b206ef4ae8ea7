"""The one reader of what `ibnetdiscover` prints (and of ibsim net files, which name their nodes and give guid
lines), and the one GUID rule: a GUID is written `0x` + 16 lowercase hex digits everywhere ffplan compares them.

`read_fabric(path)` is what audit and reroute call: the file read under a size limit and parsed, anything that is
not ibnetdiscover output refused with its file and line (FF930, exit 2).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import re
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from ffplan.codes.audit import FABRIC_NOT_IBNETDISCOVER_OUTPUT
from ffplan.diagnostics import Collector, InputError

# Numbers are bounded (a GUID has 16 hex digits, a port number 3 digits, a LID 5): longer ones are not ibnetdiscover
# output, and int() of a 5000-digit decimal raises
_GUID_ID = re.compile(r"^[SH]-([0-9a-fA-F]{16})$")
_RATE = r".*\blid \d{1,5} (\d+x[A-Za-z0-9]+)"  # the last `lid N <width>x<speed>`: the link's active rate
_RATE_TAIL = re.compile(_RATE)
# a port line and, in the same match, its rate when the rate follows the remote port (else _RATE_TAIL finds it, if
# it is in the remote's quotes)
_PORT_LINE = re.compile(r'^\[(\d{1,3})\](?:\(([0-9a-fA-F]{1,16})\))?\s+"([^"]+)"\[(\d{1,3})\](?:' + _RATE + ")?")
_LID_TAIL = re.compile(r"#.*?\blid (\d+)")
_HEADER = re.compile(r'^(Switch|Ca|Hca|Rt)\s+(\d{1,3})\s+"([^"]+)"(.*)$')
_HEADER_WORD = re.compile(r"^(Switch|Ca|Hca|Rt)\s")
_DESC = re.compile(r'#\s*"([^"]*)"')
_SWITCH_LID = re.compile(r"\blid (\d+)")
_GUID_KEY = re.compile(r"^(switchguid|caguid|hcaguids?|rtguid)=0x([0-9a-fA-F]{1,16})(?:\([0-9a-fA-F]{1,16}\))?$")
_GUID_KEY_WORD = re.compile(r"^(switchguid|caguid|hcaguids?|rtguid)=")
_NODE_KEY = re.compile(r"^(vendid|devid|sysimgguid)=0x([0-9a-fA-F]{1,16})$")
# What may never reach a terminal: C0 and C1 controls but tab (ESC starts the escape sequences), DEL, and Unicode's
# format characters that reorder text (bidi overrides). ibnetdiscover prints a node description's control
# characters as spaces, so a dump holding one was edited.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
MAX_LINE = 4096  # characters; ibnetdiscover's lines are under 300 (a node description is at most 64 bytes)
MAX_NODES = 0xBFFF  # a subnet has 49,151 unicast LIDs, one per switch and per CA port: no fabric has more nodes

# What a Quantum (or Switch-IB 2) switch's SHARP Aggregation Node calls itself: a CA on the switch's own extra
# port (41 on a QM8700), inside the switch, not a cable.
AGGREGATION_NODE = "Mellanox Technologies Aggregation Node"


def guid(value: str | int) -> str:
    """Canonical 0x + 16 lowercase hex digits."""
    n = int(value, 16) if isinstance(value, str) else value
    return f"0x{n:016x}"


def _hex_guid(digits: str) -> str:
    """guid() of the 1 to 16 hex digits a pattern matched, spelled by str methods (int() and format() took 0.02 s of
    the 51,000 in a 16,384-endpoint dump, these 0.006 s)."""
    return "0x" + digits.lower().rjust(16, "0")


class TopologyError(ValueError):
    """Text that is not ibnetdiscover output, or not the whole of one; `line` and `col` are 1-based (line 0: the text
    as a whole)."""

    def __init__(self, line: int, message: str, col: int = 1):
        self.line, self.col = line, col
        super().__init__(message)


@dataclass
class DiscoveredFabric:
    """A fabric as ibnetdiscover (or ffplan's net file) describes it."""

    kind: dict[str, str] = field(default_factory=dict)  # node GUID -> Switch / Ca
    nports: dict[str, int] = field(default_factory=dict)
    desc: dict[str, str] = field(default_factory=dict)
    links: set[tuple[tuple[str, int], tuple[str, int]]] = field(
        default_factory=set
    )  # ((guid, port), (guid, port)) sorted
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


def lines(text: str) -> Iterator[str]:
    """The lines of `text` one at a time, without a list of them all (io.StringIO would hold a 4-byte-per-character
    copy: 7 GB for a 1.7 GB LFT dump)."""
    start, end = 0, len(text)
    while start < end:
        stop = text.find("\n", start)
        stop = end if stop < 0 else stop
        yield text[start:stop]
        start = stop + 1


# a port line, parsed: (node GUID, port, remote node id, remote port, line number)
_Port = tuple[str, int, str, int, int]
CUT = "the dump is cut short or edited: save the whole `ibnetdiscover` output again"


def parse_topology(text: str) -> DiscoveredFabric:
    """ibnetdiscover output (node ids S-/H-<guid>) or an ibsim net file with named nodes and guid lines.

    Raises TopologyError (with the line) for anything that is not the whole, consistent output of one fabric: a line
    that is not ibnetdiscover's (an over-long line, a control character, a node record or port line that does not
    parse, a number too long), a node without a GUID, two records of one GUID, a port beyond its node's port count,
    a port naming a node with no record or a port its record lacks (a cut dump), two records of a cable that
    disagree, a port GUID or LID that two ports claim.
    """
    topo = DiscoveredFabric()
    ids: dict[str, str] = {}
    pending_guid: str | None = None
    pending_ids: dict[str, str] = {}
    ports: list[_Port] = []
    port_line: dict[tuple[str, int], int] = {}
    lid_at: dict[int, tuple[str, int, int]] = {}  # LID -> (node GUID, port, line)
    guid_at: dict[str, tuple[str, int]] = {}  # CA port GUID -> (node GUID, port)
    current: str | None = None
    nports = 0  # of the current node
    is_ca = False  # the current node is a CA
    rate = topo.rate
    node_keys: dict[str, tuple[str, str]] = {}  # a line -> its vendid/devid/sysimgguid key and value (most repeat)
    bad = _first_control(text)
    bad_no = text.count("\n", 0, bad.start()) + 1 if bad else 0  # its line
    # Per line only what ibnetdiscover's most frequent lines need, first: a port line (most of the text) and the
    # vendid/devid/sysimgguid lines of each record (a third of the rest)
    for no, raw in enumerate(text.split("\n"), 1):  # a list of lines: the text is at most MAX_FABRIC_BYTES
        if len(raw) > MAX_LINE:
            raise TopologyError(
                no, f"a line of {len(raw):,} characters (ibnetdiscover's are under 300): not ibnetdiscover output"
            )
        if no == bad_no and bad:
            raise TopologyError(
                no,
                f"control character {bad.group()!r} (ibnetdiscover prints a node description's "
                "control characters as spaces): the file was edited",
                bad.start() - text.rfind("\n", 0, bad.start()),
            )
        line = raw.strip()
        first = line[:1]
        if first == "[":  # a port line: no other kind of line starts so
            m = _PORT_LINE.match(line)
            if m is None or current is None:
                raise TopologyError(
                    no,
                    f'not a port line of a node record ([port](portguid) "peer"[port], numbers bounded): {line[:80]!r}'
                    if m is None
                    else "a port line before any node record",
                )
            port_digits, pguid, remote, rport_digits, link_rate = m.groups()
            port = int(port_digits)
            if not 1 <= port <= nports:
                raise TopologyError(no, f"port [{port}] of {topo.desc[current]!r}, which has {nports} ports")
            end = (current, port)
            if end in port_line:
                raise TopologyError(
                    no, f"port [{port}] of {topo.desc[current]!r} is listed twice (also at line {port_line[end]})"
                )
            port_line[end] = no
            if link_rate is None:  # a port line without it is rare: one more search
                rm = _RATE_TAIL.match(line)
                link_rate = rm and rm.group(1)
            if link_rate:
                rate[end] = link_rate
            if is_ca:
                _ca_port(topo, lid_at, guid_at, current, port, pguid, _LID_TAIL.search(line), no)
            ports.append((current, port, remote, int(rport_digits), no))
            continue
        if not first or first == "#":
            continue
        if first.islower():  # a key line (vendid=, caguid=, ...); a node record's header is capitalised
            node_key = node_keys.get(line)
            if node_key is None:
                m = _NODE_KEY.match(line)  # no GUID line matches it: the order of the two tests does not matter
                if m:
                    node_key = node_keys[line] = (m.group(1), f"0x{int(m.group(2), 16):x}")
            if node_key is not None:
                pending_ids[node_key[0]] = node_key[1]
                continue
            m = _GUID_KEY.match(line)
            if m:
                pending_guid = _hex_guid(m.group(2))
                continue
            if _GUID_KEY_WORD.match(line):
                raise TopologyError(
                    no, f"not a GUID line (0x and at most 16 hex digits, then its port GUID): {line[:80]!r}"
                )
            continue
        m = _HEADER.match(line)
        if m:
            kind, nports_digits, node_id, rest = m.groups()
            kind = "Switch" if kind == "Switch" else "Ca"
            idm = _GUID_ID.match(node_id)
            g = _hex_guid(idm.group(1)) if idm else pending_guid
            if g is None:
                raise TopologyError(
                    no, f"no GUID for node {node_id!r} (neither an S-/H-<guid> id nor a guid= line before it)"
                )
            dm = _DESC.search(rest)
            desc = dm.group(1) if dm else node_id
            if g in topo.kind:
                raise TopologyError(
                    no,
                    f"node GUID {g} has a second record ({kind} {desc!r}; the first, at line "
                    f"{topo.line[g]}, is {topo.kind[g]} {topo.desc[g]!r}): ibnetdiscover lists "
                    "each node once, so this dump is forged or merged from two",
                )
            if node_id in ids:
                raise TopologyError(
                    no, f"node {node_id!r} has a second record (the first is at line {topo.line[ids[node_id]]})"
                )
            if len(topo.kind) == MAX_NODES:
                raise TopologyError(
                    no,
                    f"more than {MAX_NODES:,} node records, more than a subnet's unicast LIDs "
                    "can address: not the dump of one fabric",
                )
            if g in guid_at:
                h, p = guid_at[g]
                raise TopologyError(
                    no,
                    f"node GUID {g} of {desc!r} is also the port GUID of {topo.desc[h]!r} port [{p}]: "
                    "GUIDs are unique, so this dump is forged or merged from two",
                )
            pending_guid = None
            ids[node_id] = g
            topo.kind[g] = kind
            topo.nports[g] = int(nports_digits)
            topo.line[g] = no
            topo.ids[g], pending_ids = pending_ids, {}
            topo.desc[g] = desc
            lm = _SWITCH_LID.search(rest) if kind == "Switch" else None
            if lm:
                _take_lid(topo, lid_at, _lid(lm, no), g, 0, no)
            current, nports, is_ca = g, int(nports_digits), kind == "Ca"
            continue
        if _HEADER_WORD.match(line):
            raise TopologyError(no, f'not a node record (Switch|Ca N "id", at most 255 ports): {line[:80]!r}')
    _link(topo, ids, ports, port_line)
    return topo


_PRINTABLE_ASCII = bytes(range(0x20, 0x7F)) + b"\t\n"


def _first_control(text: str) -> re.Match[str] | None:
    """The first control character of the text: one search of it, not one per line; a dump of printable ASCII (every
    ibnetdiscover output) is told by bytes.translate, 5 times faster than the search."""
    if text.isascii() and not text.encode("ascii").translate(None, _PRINTABLE_ASCII):
        return None
    return _CONTROL.search(text)


def _lid(m: re.Match[str], no: int) -> int:
    """The LID `lid N` names: at most 5 digits and 0xFFFF (a longer number is not ibnetdiscover's)."""
    digits = m.group(1)
    if len(digits) > 5 or int(digits) > 0xFFFF:
        raise TopologyError(no, f"'lid {digits[:12]}{'...' if len(digits) > 12 else ''}' is not a LID (at most 65535)")
    return int(digits)


def _take_lid(
    topo: DiscoveredFabric, lid_at: dict[int, tuple[str, int, int]], lid: int, g: str, port: int, no: int
) -> None:
    """Record port `port` of node `g` (0: a switch) at LID `lid`; LID 0 (not yet assigned) may repeat, no other."""
    if lid and lid in lid_at:
        h, p, at = lid_at[lid]
        raise TopologyError(
            no,
            f"LID {lid} of {topo.desc[g]!r} port [{port}] is also the LID of {topo.desc[h]!r} "
            f"port [{p}] (line {at}): a forged or merged dump",
        )
    if lid:
        lid_at[lid] = (g, port, no)
    topo.port_lid[(g, port)] = lid


def _ca_port(
    topo: DiscoveredFabric,
    lid_at: dict[int, tuple[str, int, int]],
    guid_at: dict[str, tuple[str, int]],
    g: str,
    port: int,
    pguid: str | None,
    lid: re.Match[str] | None,
    no: int,
) -> None:
    """A CA port line's own port GUID (unique: no other port's, no other node's) and LID."""
    if pguid:
        pg = _hex_guid(pguid)
        taken = guid_at.get(pg) or ((pg, 0) if pg in topo.kind and pg != g else None)
        if taken is not None:
            what = f"port [{taken[1]}] of {topo.desc[taken[0]]!r}" if taken[1] else f"the node {topo.desc[pg]!r}"
            raise TopologyError(
                no,
                f"port GUID {pg} of {topo.desc[g]!r} port [{port}] is also the GUID of {what}: "
                "GUIDs are unique, so this dump is forged or merged from two",
            )
        guid_at[pg] = (g, port)
        topo.port_guid[(g, port)] = pg
    number = _lid(lid, no) if lid else 0
    if number:
        _take_lid(topo, lid_at, number, g, port, no)


def _link(
    topo: DiscoveredFabric, ids: dict[str, str], ports: list[_Port], port_line: dict[tuple[str, int], int]
) -> None:
    """The port lines as links: every port names a node with a record, and every cable is listed from both its ends,
    alike (a cut dump lacks the records or port lines of what it cut)."""
    peer: dict[tuple[str, int], tuple[str, int]] = {}
    agree = peer.setdefault
    for g, port, remote, rport, no in ports:
        rg = ids.get(remote)
        if rg is None:
            raise TopologyError(
                no, f"port [{port}] of {topo.desc[g]!r} names node {remote!r}, which has no record: {CUT}"
            )
        a, b = (g, port), (rg, rport)
        if agree(a, b) != b or agree(b, a) != a:  # ibnetdiscover writes each cable from both ends: they must agree
            end = a if peer[a] != b else b
            raise TopologyError(
                no,
                f"port [{port}] of {topo.desc[g]!r} names {remote!r} port [{rport}], but "
                f"{topo.desc.get(end[0], end[0])!r} port [{end[1]}] is also cabled to "
                f"{topo.desc.get(peer[end][0], peer[end][0])!r} port [{peer[end][1]}]: "
                "the two ends disagree",
            )
    if len(peer) > len(port_line):  # an end no port line lists: the first port line naming one
        for g, port, remote, rport, no in ports:
            b = (ids[remote], rport)
            if b not in port_line:
                raise TopologyError(
                    no,
                    f"port [{port}] of {topo.desc[g]!r} names {topo.desc[b[0]]!r} port [{rport}], which "
                    f"its record (line {topo.line[b[0]]}) does not list: {CUT}",
                )
    # every end is a port line's and every link is in `peer` from both its ends: each once, from its lower end
    topo.links.update((a, b) for a, b in peer.items() if a <= b)


MAX_FABRIC_BYTES = 64 * 1024 * 1024  # Fire-Flyer 2's dump is about 1 MB, a 16,384-endpoint one about 15 MB


def read_fabric(path: Path) -> DiscoveredFabric:
    """Parse a saved `ibnetdiscover` output; anything else is refused with its file and line (exit 2)."""
    from ffplan.inventory.source import read_text  # the inventory loader's size-limited, encoding-checked read

    text = read_text(
        path,
        MAX_FABRIC_BYTES,
        hint="the largest subnet (49,151 LIDs) prints well under this: is it "
        "the dump of one fabric, saved with `ibnetdiscover > fabric.txt`?",
    )
    try:
        topo = parse_topology(text)
    except TopologyError as exc:
        raise _refuse(str(path), exc.line, str(exc), exc.col) from None
    if not topo.kind:
        raise _refuse(str(path), 1, "no Switch or Ca records: this is not ibnetdiscover output")
    return topo


@contextlib.contextmanager
def reading_fabric(path: Path) -> Iterator[Callable[[], DiscoveredFabric]]:
    """read_fabric in a forked child while the caller does something else (reroute loads its plan, which takes
    longer): the body gets a function that returns the fabric, sent back through a pipe. When the child fails for
    whatever reason (a bad dump among them), that function reads the file itself, so every refusal is read_fabric's
    own. A body that ends without asking leaves no child behind."""
    readable, writable = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: nothing of the parent's runs on its way out (no atexit, no buffered output)
        status = 1
        try:
            os.close(readable)
            with os.fdopen(writable, "wb") as out:
                out.write(pickle.dumps(read_fabric(path), protocol=pickle.HIGHEST_PROTOCOL))
            status = 0
        finally:
            os._exit(status)
    os.close(writable)
    waited = False

    def fabric() -> DiscoveredFabric:
        nonlocal waited
        with os.fdopen(os.dup(readable), "rb") as sent:
            data = sent.read()
        waited, status = True, os.waitpid(pid, 0)[1]
        # the pickle is of the child's making (str, int, dict, set, tuple): the dump's text is only values in it
        return pickle.loads(data) if status == 0 else read_fabric(path)

    try:
        yield fabric
    finally:
        os.close(readable)
        if not waited:  # our own child, not yet waited for: its PID is still its own
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def _refuse(file: str, line: int, message: str, col: int = 1) -> InputError:
    c = Collector(file)
    c.positions[()] = (max(line, 1), col)
    c.error(
        FABRIC_NOT_IBNETDISCOVER_OUTPUT,
        (),
        message,
        "save the fabric with `ibnetdiscover > fabric.txt` (optionally with --node-name-map) and pass that file",
    )
    return InputError(c.items)


def lid_guids(topo: DiscoveredFabric) -> dict[int, str]:
    """{LID: port GUID} of a discovered fabric (a switch's LID: its node GUID; a CA port without a port GUID of its
    own: node GUID + port number), to map LFT entries that carry no port GUID onto the plan's LIDs."""
    out: dict[int, str] = {}
    for (g, port), lid in topo.port_lid.items():
        out[lid] = g if topo.kind[g] == "Switch" else topo.port_guid.get((g, port)) or guid(int(g, 16) + port)
    return out
