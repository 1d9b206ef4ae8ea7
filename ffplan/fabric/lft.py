"""The one reader of LFT dumps: `dump_fts` / `ibroute` output (with or without destination info, `-n`), OpenSM's
own `opensm-lfts.dump` (`-D 0x43`) and ffplan's `lfts.dump` (the `file` routing engine's input):

    Unicast lids [0x0-0x35c] of switch DR path slid 0; dlid 0; 0,1,21,40 guid 0x0002c90102000028 (z1-leaf40):
    0x0001 021 : (Channel Adapter portguid 0x0002c90103000003: 'z1-cn0001')
    Unicast lids [0-860] of switch Lid 2 guid 0x0002c90101000001 ('z1-spine01'):
    0x0001 001 # Channel Adapter portguid 0x0002c90103000003: 'z1-cn0001 HCA-1'
    Unicast lids [0x0-0x4507] of switch Lid 1 guid 0x0002c90104000001 (z1-core001):
    0x0001 000 portguid 0x0002c90104000001

(the last: ffplan's own, without dump_fts's description, which the file engine skips)

`scan_lfts` streams the text as (line, kind, ...) records without holding a dict per entry (a 16,384-endpoint
subnet's file has 22.6 M entries); verify, analyze and reroute build what they need from the records.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from ffplan.fabric.discovery import guid, lines

HEADER, ENTRY, JUNK = 0, 1, 2
# bounded: a GUID has 16 hex digits, a LID 4, a port 3 (at most 255); longer numbers are not entries (a 5000-digit
# decimal would make int() raise)
_HEADER = re.compile(r"^Unicast lids \[[^\]]*\] of switch .*? guid (0x[0-9a-fA-F]{1,16})(?:\s|$)")
_ENTRY = re.compile(r"^0x([0-9a-fA-F]{1,4})\s+([0-9]{1,3})(?:\s|$)")
_PORTGUID = re.compile(r"portguid (0x[0-9a-fA-F]{1,16})\b")
MAX_PORT = 255
# A record: (line number, HEADER, switch node GUID, line), (line number, ENTRY, LID, port, line) or
# (line number, JUNK, line): a line inside a block that looks like an entry but does not parse.
Record = tuple


def scan_lfts(text: str) -> Iterator[Record]:
    """The blocks and entries of an LFT dump, in file order; comments, blank lines and anything before the first
    block are skipped."""
    in_block = orphan = False  # orphan: after a block header that does not parse, whose entries belong to no switch
    for no, raw in enumerate(lines(text), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _ENTRY.match(line)
        if m is not None and int(m.group(2)) <= MAX_PORT and not orphan:
            if in_block:
                yield no, ENTRY, int(m.group(1), 16), int(m.group(2)), line
            continue
        h = _HEADER.match(line)
        if h is not None:
            in_block, orphan = True, False
            yield no, HEADER, guid(h.group(1)), line
        elif line.startswith("Unicast lids"):
            orphan = True
            yield no, JUNK, line
        elif (
            orphan
            or in_block
            and (
                line.startswith("0x")
                or line[:1].isdigit()
                and "valid lids dumped" not in line
                and "lids listed" not in line
            )
        ):
            yield no, JUNK, line


def portguid(line: str) -> str | None:
    """The destination port GUID an entry names (`portguid 0x...`), if it names one."""
    m = _PORTGUID.search(line)
    return guid(m.group(1)) if m else None


@dataclass
class LftFile:
    tables: dict[str, dict[int, int]] = field(default_factory=dict)  # switch node GUID -> {lid: port}
    portguids: dict[str, dict[int, str]] = field(default_factory=dict)  # switch -> {lid: dest port GUID}
    lines: dict[str, int] = field(default_factory=dict)  # switch -> line number of its header
    entry_lines: dict[tuple[str, int], int] = field(default_factory=dict)
    junk: list[tuple[int, str]] = field(default_factory=list)  # lines that look like entries but do not parse
    duplicates: list[tuple[int, str]] = field(default_factory=list)


def parse_lfts(text: str) -> LftFile:
    """An LFT dump as dicts (small fabrics and tests; `lft_array` for large ones)."""
    out = LftFile()
    current = ""
    for rec in scan_lfts(text):
        no, kind = rec[0], rec[1]
        if kind == HEADER:
            current = rec[2]
            if current in out.tables:
                out.duplicates.append((no, rec[3]))
            out.tables.setdefault(current, {})
            out.portguids.setdefault(current, {})
            out.lines[current] = no
        elif kind == ENTRY:
            lid = rec[2]
            out.tables[current][lid] = rec[3]
            out.entry_lines[(current, lid)] = no
            pg = portguid(rec[4])
            if pg:
                out.portguids[current][lid] = pg
        else:
            out.junk.append((no, rec[2]))
    return out


def lft_array(text: str, guids: list[str], width: int, unrouted: int) -> tuple[np.ndarray, np.ndarray]:
    """An LFT dump as a (switches x width) array in `guids` order, `unrouted` where no entry is listed; and the
    entries read per switch (-1 for a switch with no table in the dump). Entries for LIDs >= width are dropped."""
    row = {g: i for i, g in enumerate(guids)}
    out = np.full((len(guids), width), unrouted, dtype=np.uint8)
    entries = np.full(len(guids), -1, dtype=np.int64)
    i = -1
    for rec in scan_lfts(text):
        if rec[1] == HEADER:
            i = row.get(rec[2], -1)
            if i >= 0:
                entries[i] = max(entries[i], 0)
        elif rec[1] == ENTRY and i >= 0 and rec[3] != unrouted:  # dump_fts -a lists unrouted LIDs too
            entries[i] += 1
            if rec[2] < width:
                out[i, rec[2]] = rec[3]
    return out, entries
