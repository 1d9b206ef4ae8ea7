"""The as-built fabric against the plan: what `ibnetdiscover` prints, compared cable by cable.

Public surface: `audit(plan, topo) -> Audit` (the fabric read by `ffplan.fabric.discovery.read_fabric`), `Finding`,
`End`, `KINDS`, and (ffplan.audit.output) the text, json and markdown forms and the inventory fragment of discovered
GUIDs.

Devices are identified by GUID first (switches by node GUID; CAs by port GUID, which on mlx5 hardware is also
the node GUID, and which ibsim keeps when its node GUIDs follow its own rule), then by node description (the
switch name, "<hostname> <nic>"): a device found by name reports its GUID as differing from the plan. A
cable is identified by its planned ends. A link found that is not planned is put down to the cable planned
on one of its ends, the node (or leaf, for an uplink) end first: a cable whose node end sits right and whose
switch end does not is on the wrong port or switch. Two cables whose switch ends are exchanged are a swapped
pair. Links no planned cable explains are extra cables; a planned cable with no link is missing.

Whole switches come first, one finding each with their cables under it: a planned switch with no link at all is
missing (not 40 missing cables), and two switches racked in each other's place (each one's cables right for the
other) are one swap (not 39 swapped pairs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from ffplan.fabric.discovery import AGGREGATION_NODE, DiscoveredFabric, guid
from ffplan.plan.model import Plan
from ffplan.opensm import build_fabric, link_rate


# Finding kinds in work-order order (what the crew does first comes first).
KINDS = (
    "switches-swapped",
    "switch-missing",
    "missing",
    "wrong-switch",
    "wrong-port",
    "swapped",
    "extra",
    "wrong-rate",
    "guid-differs",
    "unknown-device",
)

Key = tuple[str, int]  # (device name, port): a switch port, or a CA ("<hostname> <nic>") and its port 1


@dataclass(frozen=True)
class End:
    """One end of a cable where the crew finds it."""

    device: str
    port: str  # "port 3" on a switch, the NIC ("mlx5_0") on a node
    rack: str
    u: int | None

    def __str__(self) -> str:
        where = f"{self.rack} U{self.u}" if self.u is not None else "location unknown"
        return f"{self.device} {self.port} ({where})"

    def as_dict(self) -> dict:
        return {"device": self.device, "port": self.port, "rack": self.rack, "u": self.u}


@dataclass
class Finding:
    kind: str
    cables: list[str]  # planned cable labels concerned ([] for an extra cable or a device)
    planned: list[tuple[End, End]]  # the cables' planned ends
    found: list[tuple[End, End]]  # the links the fabric has instead
    detail: str
    action: str

    def as_dict(self) -> dict:
        return {
            "kind": self.kind,
            "cables": self.cables,
            "detail": self.detail,
            "action": self.action,
            "planned": [[a.as_dict(), b.as_dict()] for a, b in self.planned],
            "found": [[a.as_dict(), b.as_dict()] for a, b in self.found],
        }


@dataclass
class Audit:
    inventory: str
    planned_cables: int
    links_found: int
    devices_found: int
    aggregation_nodes: int  # SHARP Aggregation Nodes inside the switches: not devices of the plan, not compared
    findings: list[Finding] = field(default_factory=list)
    # discovered GUIDs of the planned devices found: switch name -> node GUID, (hostname, nic, port) -> port GUID,
    # (hostname, nic) -> card (system image) GUID
    switch_guids: dict[str, str] = field(default_factory=dict)
    card_guids: dict[tuple[str, str], str] = field(default_factory=dict)

    @property
    def matches(self) -> bool:
        return not self.findings

    def count(self, kind: str) -> int:
        return sum(1 for f in self.findings if f.kind == kind)


@dataclass
class _Planned:
    """The plan's side: devices, where they stand, and every cable by its ends."""

    location: dict[str, tuple[str, int]]  # device name -> (rack, U)
    nic_of: dict[str, tuple[str, str, int]]  # CA name -> (hostname, nic, card port)
    switch_by_guid: dict[str, str]
    ca_by_port_guid: dict[str, str]
    kind: dict[str, str]  # device name -> Switch / Ca
    cables: dict[str, tuple[Key, Key]]  # label -> (a end, b end)
    cable_at: dict[Key, tuple[str, int]]  # end -> (label, 0 for its a end, 1 for its b end)
    rate: str


def _planned(plan: Plan) -> _Planned:
    fab = build_fabric(plan)
    location: dict[str, tuple[str, int]] = {s.name: (s.rack, s.u) for s in plan.switches}
    kind = {s.name: "Switch" for s in plan.switches}
    node_of = {n.hostname: n for n in plan.nodes}
    nic_of: dict[str, tuple[str, str, int]] = {}
    ca_by_port_guid: dict[str, str] = {}
    ca_by_cable: dict[str, str] = {}
    planned_port = {p.port_guid: p for n in plan.nodes for p in n.ports}
    for ca in fab.cas:
        port = planned_port[ca.ports[0].port_guid]
        node = node_of[ca.hostname]
        location[ca.id] = (node.rack, node.u)
        kind[ca.id] = "Ca"
        nic_of[ca.id] = (ca.hostname, ca.nic, port.port)
        ca_by_port_guid[port.port_guid] = ca.id
        ca_by_cable[port.cable] = ca.id
    cables: dict[str, tuple[Key, Key]] = {}
    for c in plan.cables:
        if c.kind == "node-leaf":
            a: Key = (ca_by_cable[c.label], 1)
        else:
            a = (c.a.device, int(c.a.port))
        cables[c.label] = (a, (c.b.device, int(c.b.port)))
    cable_at = {end: (label, i) for label, ends in cables.items() for i, end in enumerate(ends)}
    return _Planned(
        location,
        nic_of,
        {s.node_guid: s.name for s in plan.switches},
        ca_by_port_guid,
        kind,
        cables,
        cable_at,
        link_rate(plan),
    )


def audit(plan: Plan, topo: DiscoveredFabric) -> Audit:
    """Compare a discovered fabric (parsed ibnetdiscover output) with the plan."""
    pl = _planned(plan)
    inside = {g for g, kind in topo.kind.items() if kind == "Ca" and topo.desc.get(g) == AGGREGATION_NODE}
    links = [(x, y) for x, y in topo.links if x[0] not in inside and y[0] not in inside]
    result = Audit(
        inventory=plan.inventory.name,
        planned_cables=len(pl.cables),
        links_found=len(links),
        devices_found=len(topo.kind) - len(inside),
        aggregation_nodes=len(inside),
    )
    name_of = _identify(pl, topo, inside, result)

    def end(key: Key) -> End:
        device, port = key
        if device in pl.nic_of:
            hostname, nic, card_port = pl.nic_of[device]
            return End(hostname, nic if card_port == 1 else f"{nic} port {card_port}", *pl.location[device])
        if device in pl.location:
            return End(device, f"port {port}", *pl.location[device])
        return End(device, f"port {port}", "?", None)

    found: dict[Key, Key] = {}
    rate: dict[Key, str] = {}
    for (ga, pa), (gb, pb) in links:
        # a remote named S-/H-<guid> without a record of its own (a cut dump) is an unknown device's port
        a, b = (name_of.get(ga, f"unknown {ga}"), pa), (name_of.get(gb, f"unknown {gb}"), pb)
        found[a], found[b] = b, a
        for g, p, key in ((ga, pa, a), (gb, pb, b)):
            if (g, p) in topo.rate:
                rate[key] = topo.rate[(g, p)]

    bad: dict[str, tuple[Key, Key]] = {}
    for label, (a, b) in sorted(pl.cables.items()):
        if found.get(a) == b:
            got = rate.get(a) or rate.get(b)
            if got and got != pl.rate:
                result.findings.append(
                    Finding(
                        "wrong-rate",
                        [label],
                        [(end(a), end(b))],
                        [(end(a), end(b))],
                        f"runs at {got}, planned {pl.rate}",
                        "reseat or replace the cable (and its transceivers); check both ports' speed settings",
                    )
                )
        else:
            bad[label] = (a, b)

    explained = _whole_switches(pl, found, set(name_of.values()), bad, end, result)

    # Links the plan does not have, put down to a broken cable at one of their (known) ends.
    attributed: dict[str, list[tuple[Key, Key]]] = {}
    extra: list[tuple[Key, Key]] = []
    planned_links = {frozenset(ends) for ends in pl.cables.values()}
    for x, y in sorted({tuple(sorted((k, v))) for k, v in found.items()}):
        if frozenset((x, y)) in planned_links or frozenset((x, y)) in explained:
            continue
        known = x[0] in pl.location and y[0] in pl.location
        ends = [(pl.cable_at[k][1], pl.cable_at[k][0], k, o) for k, o in ((x, y), (y, x)) if k in pl.cable_at]
        if known and ends:
            _, label, k, o = min(ends)  # the cable's a end (node, or leaf of an uplink) first
            attributed.setdefault(label, []).append((k, o))
        else:
            extra.append((x, y))

    swapped: set[str] = set()
    for label, links in sorted(attributed.items()):
        a, b = bad[label]
        if label in swapped or len(links) != 1 or links[0][0] != a:
            continue
        other = pl.cable_at.get(links[0][1])
        if other and other[1] == 1 and other[0] not in swapped and attributed.get(other[0]) == [(bad[other[0]][0], b)]:
            a2, b2 = bad[other[0]]
            swapped |= {label, other[0]}
            result.findings.append(
                Finding(
                    "swapped",
                    [label, other[0]],
                    [(end(a), end(b)), (end(a2), end(b2))],
                    [(end(a), end(b2)), (end(a2), end(b))],
                    f"{label} and {other[0]} have their far ends exchanged",
                    f"swap the ends at {end(b)} and {end(b2)}",
                )
            )

    for label, (a, b) in sorted(bad.items()):
        if label in swapped:
            continue
        links = attributed.get(label, [])
        if not links:
            taken = [
                f"{end(k)} holds {pl.cable_at[found[k]][0] if found[k] in pl.cable_at else 'another cable'}"
                for k in (a, b)
                if k in found
            ]
            result.findings.append(
                Finding(
                    "missing",
                    [label],
                    [(end(a), end(b))],
                    [],
                    "not found" + (f" ({'; '.join(taken)})" if taken else ""),
                    f"install cable {label}",
                )
            )
            continue
        for here, there in links:
            planned_far = b if here == a else a
            kind = "wrong-port" if there[0] == planned_far[0] else "wrong-switch"
            result.findings.append(
                Finding(
                    kind,
                    [label],
                    [(end(a), end(b))],
                    [(end(here), end(there))],
                    f"the end planned at {end(planned_far)} is at {end(there)}",
                    f"move the end from {end(there)} to {end(planned_far)}",
                )
            )

    for x, y in extra:
        result.findings.append(
            Finding(
                "extra",
                [],
                [],
                [(end(x), end(y))],
                "a link the plan does not have",
                "remove the cable, or re-plan with it",
            )
        )
    result.findings.sort(key=lambda f: (KINDS.index(f.kind), f.cables, f.detail))
    return result


def _whole_switches(
    pl: _Planned,
    found: dict[Key, Key],
    present: set[str],
    bad: dict[str, tuple[Key, Key]],
    end: Callable[[Key], End],
    result: Audit,
) -> set[frozenset[Key]]:
    """Findings for switches missing as a whole and for pairs racked in each other's place; the cables they
    explain leave `bad`. Returns the found links a swap explains (not extra cables)."""
    switches = [name for name, kind in pl.kind.items() if kind == "Switch"]
    cables_of: dict[str, list[str]] = {s: [] for s in switches}
    for label, (a, b) in pl.cables.items():
        for device in {a[0], b[0]} & cables_of.keys():
            cables_of[device].append(label)
    for s in switches:
        if s not in present and cables_of[s] and all(label in bad for label in cables_of[s]):
            labels = sorted(cables_of[s])
            result.findings.append(
                Finding(
                    "switch-missing",
                    labels,
                    [(end(bad[x][0]), end(bad[x][1])) for x in labels],
                    [],
                    f"{s} ({_where(pl, s)}) is not in the fabric: none of its {len(labels)} cables has a link",
                    f"check {s}'s power and that it boots; then its cables",
                )
            )
            for label in labels:
                del bad[label]
    # votes[(a, b)]: cables planned on switch a whose far end is found on switch b at the planned port number
    votes: dict[tuple[str, str], list[str]] = {}
    for label, ends in bad.items():
        for here, there in (ends, ends[::-1]):
            got = found.get(here)
            if (
                there[0] in cables_of
                and got is not None
                and got[0] in cables_of
                and got[0] != there[0]
                and got[1] == there[1]
            ):
                votes.setdefault((there[0], got[0]), []).append(label)
    explained: set[frozenset[Key]] = set()
    for (one, other), labels in sorted(votes.items()):
        back = votes.get((other, one), [])
        if one > other or 2 * len(labels) < len(cables_of[one]) or 2 * len(back) < len(cables_of[other]):
            continue
        moved = sorted(x for x in set(labels) | set(back) if x in bad)
        swap = {one: other, other: one}
        found_links = [tuple((swap.get(k[0], k[0]), k[1]) for k in bad[x]) for x in moved]
        result.findings.append(
            Finding(
                "switches-swapped",
                moved,
                [(end(bad[x][0]), end(bad[x][1])) for x in moved],
                [(end(x), end(y)) for x, y in found_links],
                f"{one} ({_where(pl, one)}) and {other} ({_where(pl, other)}) are in each other's place: {len(moved)} cables are "
                "right for the other switch",
                f"exchange {one} and {other} in their racks (or, if the cabling is meant to stay, exchange their GUIDs in "
                "fabric.switch_guids and re-run design)",
            )
        )
        explained |= {frozenset(link) for link in found_links}
        for x in moved:
            del bad[x]
    return explained


_SWITCH_DESC = re.compile(r"^MF0;([^:]+):")  # a Mellanox switch's own description: "MF0;z1-leaf01:MQM8700/U1"
_OFED_DESC = re.compile(r"^HCA-([1-9]\d*)$")  # MLNX_OFED's HCA description "<host> HCA-1" (first device)


def _names(desc: str) -> list[str]:
    """The planned names a node description can stand for: itself, the system name in a Mellanox switch's
    `MF0;<name>:<model>/U1`, `<host> <nic>` for rdma-ndd's `<host.domain> <nic>`, and `<host> mlx5_<n-1>` for
    MLNX_OFED's `<host> HCA-<n>`."""
    names = [desc]
    m = _SWITCH_DESC.match(desc)
    if m:
        names.append(m.group(1))
    host, _, nic = desc.partition(" ")
    short = host.split(".")[0]
    m = _OFED_DESC.match(nic)
    if m:
        nic = f"mlx5_{int(m.group(1)) - 1}"
    if nic and f"{short} {nic}" != desc:
        names.append(f"{short} {nic}")
    return names


def _where(pl: _Planned, device: str) -> str:
    rack, u = pl.location[device]
    return f"{rack} U{u}"


def _identify(pl: _Planned, topo: DiscoveredFabric, skip: set[str], result: Audit) -> dict[str, str]:
    """Discovered node GUID -> planned device name (or "unknown <guid>"); records GUID findings and the
    GUIDs of every planned device found."""
    name_of: dict[str, str] = {}
    pending: list[str] = []
    for g in sorted(set(topo.kind) - skip):
        if topo.kind[g] == "Switch":
            name = pl.switch_by_guid.get(g)
        else:
            name = pl.ca_by_port_guid.get(topo.port_guid.get((g, 1), g)) or pl.ca_by_port_guid.get(g)
        if name is None:
            pending.append(g)
        else:
            name_of[g] = name
    taken = set(name_of.values())
    for g in pending:
        desc = next(
            (n for n in _names(topo.desc.get(g, "")) if pl.kind.get(n) == topo.kind[g] and n not in taken),
            topo.desc.get(g, ""),
        )
        if desc in pl.kind and pl.kind[desc] == topo.kind[g] and desc not in taken:
            name_of[g] = desc
            taken.add(desc)
            planned = next(k for k, v in (pl.switch_by_guid | pl.ca_by_port_guid).items() if v == desc)
            real = topo.port_guid.get((g, 1), g) if topo.kind[g] == "Ca" else g
            result.findings.append(
                Finding(
                    "guid-differs",
                    [],
                    [],
                    [],
                    f"{desc} ({_where(pl, desc)}): plan {planned}, fabric {real} (found by its node description)",
                    "pin the real GUID: ffplan audit --write-guids, merge into the inventory, re-run design",
                )
            )
        else:
            name_of[g] = f"unknown {topo.kind[g]} {g}"
            result.findings.append(
                Finding(
                    "unknown-device",
                    [],
                    [],
                    [],
                    f'{topo.kind[g]} {g} "{desc}" is not in the plan (by GUID or by name)',
                    "identify the device; add it to the inventory or remove it",
                )
            )
    for g, name in name_of.items():
        if name in pl.nic_of:
            hostname, nic, card_port = pl.nic_of[name]
            # the inventory's NIC GUID is the card's port 1 GUID: from the printed port GUID when there is one
            # (ibsim's CA node and system image GUIDs are one below it; on mlx5 all three agree), else the card's
            # system image GUID
            sysimg = topo.ids.get(g, {}).get("sysimgguid")
            if (g, 1) in topo.port_guid or not sysimg:
                result.card_guids[(hostname, nic)] = guid(int(topo.port_guid.get((g, 1), g), 16) - (card_port - 1))
            else:
                result.card_guids[(hostname, nic)] = guid(sysimg)
        elif topo.kind[g] == "Switch" and not name.startswith("unknown "):
            result.switch_guids[name] = g
    return name_of
