"""Read LFTs in OpenSM's dump formats and map them onto the plan's topology.

Accepted (the formats `opensm -R file` accepts, reference section 4.1): `dump_fts` / `ibroute` output (with or
without destination info, `-n`), OpenSM's own `opensm-lfts.dump` (`-D 0x43`), and ffplan's `lfts.dump`:

    Unicast lids [0x0-0x35c] of switch DR path slid 0; dlid 0; 0,1,21,40 guid 0x0002c90102000028 (z1-leaf40):
    0x0001 021 : (Channel Adapter portguid 0x0002c90103000003: 'z1-cn0001')
    Unicast lids [0-860] of switch Lid 2 guid 0x0002c90101000001 ('z1-spine01'):
    0x0001 001 # Channel Adapter portguid 0x0002c90103000003: 'z1-cn0001 HCA-1'

Switch blocks are matched to the plan's switches by node GUID. A destination is mapped to the plan's LID by the
entry's `portguid` when present (OpenSM may have assigned other LIDs), else through an ibnetdiscover topology
(`--topology`, LID -> GUID), else taken as the plan's LID. A plan switch missing from the dump gets an empty
table (what OpenSM installs in that case).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ffplan.fabric.discovery import guid
from ffplan.fabric.lft import ENTRY, HEADER, portguid, scan_lfts
from ffplan.plan.model import UNROUTED
from ffplan.plan.topology import Topology


@dataclass
class OpenSmTables:
    tables: dict[str, np.ndarray]  # switch name -> uint8 port per LID, as in the plan
    switches_read: int
    unknown_switches: list[str] = field(default_factory=list)  # GUIDs in the dump but not in the plan
    missing_switches: list[str] = field(default_factory=list)  # plan switches without a block
    unmapped_lids: int = 0  # entries whose destination is not in the plan (or whose port no switch has)


def read_lfts(text: str, topo: Topology, lid_to_guid: dict[int, str] | None = None) -> OpenSmTables:
    """`lid_to_guid`: the discovered fabric's {LID: port GUID} (fabric.discovery.lid_guids)."""
    by_guid = {guid(g): name for name, g in topo.guid.items()}
    plan_lid_of_guid: dict[str, int] = {guid(g): topo.lid[name] for name, g in topo.guid.items()}
    for lid, ca in topo.ca_by_lid.items():
        plan_lid_of_guid[guid(ca.port_guid)] = lid
    max_lid = topo.max_lid
    tables: dict[str, np.ndarray] = {}
    unknown: list[str] = []
    unmapped = 0
    current: np.ndarray | None = None
    for rec in scan_lfts(text):
        if rec[1] == HEADER:
            name = by_guid.get(rec[2])
            if name is None:
                unknown.append(rec[2])
                current = None
            else:
                current = tables[name] = np.full(max_lid + 1, UNROUTED, dtype=np.uint8)
            continue
        if current is None or rec[1] != ENTRY:
            continue
        lid, port = rec[2], rec[3]
        pg = portguid(rec[4])
        plan_lid = None
        if pg:
            plan_lid = plan_lid_of_guid.get(pg)
        elif lid_to_guid is not None:
            port_guid = lid_to_guid.get(lid)
            plan_lid = plan_lid_of_guid.get(port_guid) if port_guid else None
        else:
            plan_lid = lid if lid <= max_lid else None
        if plan_lid is None:
            unmapped += 1
            continue
        current[plan_lid] = port
    missing = [name for name in topo.lid if name not in tables]
    for name in missing:
        tables[name] = np.full(max_lid + 1, UNROUTED, dtype=np.uint8)
    return OpenSmTables(tables, len(tables) - len(missing), unknown, missing, unmapped)
