"""The plan's fabric as a graph the routing, the deadlock proof and the analysis share: switches, the
ports of every link, CA ports, and which cables are failed. Built from the plan alone (no inventory).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ffplan.inventory.failed_items import PortRef, parse_item
from ffplan.plan.model import Plan, SwitchTier

# What a switch port reaches: ("switch", (its name, its port)) or ("ca", the CA port's LID).
Peer = tuple[Literal["switch"], tuple[str, int]] | tuple[Literal["ca"], int]


@dataclass(frozen=True)
class Uplink:
    leaf_port: int
    spine: str
    spine_port: int
    label: str


@dataclass(frozen=True)
class CoreUplink:
    """A three-layer tree's spine-to-core cable, seen from the spine."""

    spine_port: int
    core: str
    core_port: int
    label: str


@dataclass(frozen=True)
class InterZone:
    a_leaf: str
    a_port: int
    b_leaf: str
    b_port: int
    label: str


@dataclass(frozen=True)
class CaPort:
    lid: int
    leaf: str
    leaf_port: int
    host: str
    role: str
    zone: str
    label: str
    port_guid: str


@dataclass
class Topology:
    """Switch-level view of a plan. Ports are switch port numbers; `peer[(sw, port)]` is what the port reaches."""

    plan: Plan
    zones: list[str]
    spines: dict[str, list[str]]  # zone -> spine names by index
    leaves: dict[str, list[str]]  # zone -> leaf names by index
    zone_of: dict[str, str]  # switch -> zone
    tier: dict[str, SwitchTier]  # switch -> "leaf" | "spine" | "core"
    index: dict[str, int]  # switch -> 0-based index within zone and tier
    lid: dict[str, int]  # switch -> LID
    guid: dict[str, str]  # switch -> node GUID
    nports: dict[str, int]  # switch -> number of external ports
    uplinks: dict[str, list[Uplink]]  # leaf -> uplinks in leaf-port order (uplink index u)
    downlinks: dict[str, dict[str, list[tuple[int, int, str]]]]  # spine -> leaf -> [(spine port, leaf port, label)]
    inter_zone: list[InterZone]
    cas: dict[str, list[CaPort]]  # leaf -> CA ports in port order
    ca_by_lid: dict[int, CaPort]
    peer: dict[tuple[str, int], Peer]  # (switch, port) -> what the port reaches
    # three-layer trees: zone -> core names by index, switch -> 1-based pod (leaves and spines), spine -> its cables to
    # the cores in spine-port order (uplink index x), core -> spine -> [(core port, spine port, label)]
    cores: dict[str, list[str]] = field(default_factory=dict)
    pod: dict[str, int] = field(default_factory=dict)
    core_uplinks: dict[str, list[CoreUplink]] = field(default_factory=dict)
    core_downlinks: dict[str, dict[str, list[tuple[int, int, str]]]] = field(default_factory=dict)
    failed_cables: set[str] = field(default_factory=set)
    failed_switches: set[str] = field(default_factory=set)
    by_label: dict[str, tuple] = field(default_factory=dict)  # cable label -> (kind, end a, end b)
    port_label: dict[tuple[str, int], str] = field(default_factory=dict)  # (switch, port) -> cable label

    def switch_peer(self, switch: str, port: int) -> tuple[str, int]:
        """The (switch, port) at the other end of the switch-to-switch link on (switch, port)."""
        what = self.peer[(switch, port)]
        if what[0] != "switch":
            raise KeyError(f"{switch} port {port} does not lead to a switch")
        return what[1]

    # ------------------------------------------------------------------ liveness

    def cable_alive(self, label: str) -> bool:
        if label in self.failed_cables:
            return False
        kind, a, b = self.by_label[label]
        return a not in self.failed_switches and (b not in self.failed_switches)

    @property
    def max_lid(self) -> int:
        return max([*self.lid.values(), *self.ca_by_lid])


def build_topology(plan: Plan) -> Topology:
    zones = [z.name for z in plan.zones]
    spines: dict[str, list[str]] = {z: [] for z in zones}
    leaves: dict[str, list[str]] = {z: [] for z in zones}
    cores: dict[str, list[str]] = {z: [] for z in zones}
    by_tier = {"leaf": leaves, "spine": spines, "core": cores}
    zone_of, tier, index, lid, guid, nports, pod = {}, {}, {}, {}, {}, {}, {}
    for s in sorted(plan.switches, key=lambda s: (zones.index(s.zone), s.tier, s.index)):
        by_tier[s.tier][s.zone].append(s.name)
    for s in plan.switches:
        if s.pod is not None:
            pod[s.name] = s.pod
        zone_of[s.name] = s.zone
        tier[s.name] = s.tier
        lid[s.name] = s.lid
        guid[s.name] = s.node_guid
        nports[s.name] = s.ports
    for z in zones:
        for i, n in enumerate(spines[z]):
            index[n] = i
        for i, n in enumerate(leaves[z]):
            index[n] = i
        for i, n in enumerate(cores[z]):
            index[n] = i
    uplinks: dict[str, list[Uplink]] = {n: [] for z in zones for n in leaves[z]}
    downlinks: dict[str, dict[str, list]] = {n: {} for z in zones for n in spines[z]}
    core_uplinks: dict[str, list[CoreUplink]] = {n: [] for z in zones if cores[z] for n in spines[z]}
    core_downlinks: dict[str, dict[str, list]] = {n: {} for z in zones for n in cores[z]}
    inter_zone: list[InterZone] = []
    peer: dict[tuple[str, int], Peer] = {}
    by_label: dict[str, tuple] = {}
    port_label: dict[tuple[str, int], str] = {}
    cas: dict[str, list[CaPort]] = {n: [] for z in zones for n in leaves[z]}
    ca_by_lid: dict[int, CaPort] = {}
    for c in plan.cables:
        if c.kind == "node-leaf":
            continue
        a, ap, b, bp = c.a.device, int(c.a.port), c.b.device, int(c.b.port)
        by_label[c.label] = (c.kind, a, b)
        port_label[(a, ap)] = port_label[(b, bp)] = c.label
        peer[(a, ap)] = ("switch", (b, bp))
        peer[(b, bp)] = ("switch", (a, ap))
        if c.kind == "leaf-spine":
            uplinks[a].append(Uplink(ap, b, bp, c.label))
            downlinks[b].setdefault(a, []).append((bp, ap, c.label))
        elif c.kind == "spine-core":
            core_uplinks[a].append(CoreUplink(ap, b, bp, c.label))
            core_downlinks[b].setdefault(a, []).append((bp, ap, c.label))
        else:
            inter_zone.append(InterZone(a, ap, b, bp, c.label))
    for ups in uplinks.values():
        ups.sort(key=lambda u: u.leaf_port)
    for cups in core_uplinks.values():
        cups.sort(key=lambda u: u.spine_port)
    for d in [*downlinks.values(), *core_downlinks.values()]:
        for links in d.values():
            links.sort()
    for node in plan.nodes:
        for p in node.ports:
            ca = CaPort(p.lid, p.leaf, p.leaf_port, node.hostname, node.role, p.zone, p.cable, p.port_guid)
            cas[p.leaf].append(ca)
            ca_by_lid[p.lid] = ca
            peer[(p.leaf, p.leaf_port)] = ("ca", p.lid)
            by_label[p.cable] = ("node-leaf", p.leaf, node.hostname)
            port_label[(p.leaf, p.leaf_port)] = p.cable
    for lst in cas.values():
        lst.sort(key=lambda c: c.leaf_port)
    inter_zone.sort(key=lambda link: link.label)
    return Topology(
        plan,
        zones,
        spines,
        leaves,
        zone_of,
        tier,
        index,
        lid,
        guid,
        nports,
        uplinks,
        downlinks,
        inter_zone,
        cas,
        ca_by_lid,
        peer,
        cores=cores,
        pod=pod,
        core_uplinks=core_uplinks,
        core_downlinks=core_downlinks,
        by_label=by_label,
        port_label=port_label,
    )


def resolve_failed(topo: Topology, items: list[str]) -> tuple[set[str], set[str], list[int]]:
    """Cable labels, switch names and `switch[port]` references (fabric.items) -> (cables, switches, indexes of
    unknown items: not in the plan, or not items at all)."""
    cables: set[str] = set()
    switches: set[str] = set()
    unknown: list[int] = []
    for i, text in enumerate(items):
        item = parse_item(text)
        if isinstance(item, PortRef):
            label = topo.port_label.get((item.switch, item.port))
            if label is None:
                unknown.append(i)
            else:
                cables.add(label)
        elif item in topo.by_label:
            cables.add(item)
        elif item in topo.lid:
            switches.add(item)
        else:
            unknown.append(i)
    return cables, switches, unknown
