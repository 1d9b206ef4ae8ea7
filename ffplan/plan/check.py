"""The plan's cross-references, checked once when a plan is loaded (the field patterns and ranges are the
model's job, see ffplan.plan.model).

Every name a later stage looks up must resolve (zones, switches, leaves, nodes, cables, profiles' hosts,
traffic classes, devices), every LID and GUID is unique, every port is within its switch's radix (LFT
entries too) and every count agrees with the lists it counts. A stage that reads a plan can then index
without guarding: a bad plan is refused at load with each problem's YAML path, never a KeyError later.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from itertools import compress, groupby, repeat
from operator import attrgetter, le
from typing import Iterable, TypeVar

import numpy as np

from ffplan.diagnostics import YamlPath
from ffplan.plan.model import LID_BLOCK, Cable, HostProfile, Plan

Problem = tuple[YamlPath, str]  # (YAML path, message)


class _Problems(list):
    def add(self, path: YamlPath, message: str) -> None:
        self.append((path, message))

    def unique(self, at: YamlPath, items: Iterable[str], what: str, field: str = "name") -> set[str]:
        """Report the second and later occurrences of a name in the list at `at`; return the set of names."""
        names = list(items)
        seen = set(names)
        if len(seen) < len(names):  # a duplicate: the names again one at a time, to say where
            seen = set()
            for i, name in enumerate(names):
                if name in seen:
                    self.add(at + (i, field), f"duplicate {what} '{name}'")
                seen.add(name)
        return seen

    def known(self, path: YamlPath, name: str, names: set[str] | dict, what: str) -> bool:
        if name in names:
            return True
        self.add(path, f"unknown {what} '{name}'")
        return False


def plan_problems(plan: Plan) -> list[Problem]:
    """Every cross-reference problem of `plan`, in plan order; empty for a consistent plan."""
    p = _Problems()
    zones = p.unique(("zones",), (z.name for z in plan.zones), "zone")
    if not plan.zones:
        p.add(("zones",), "the plan has no zones")
    for i, z in enumerate(plan.zones):
        if plan.layout == "planes" and z.subnet != z.name:
            p.add(
                ("zones", i, "subnet"), f"plane {z.name} is in subnet {z.subnet}: a plane is a subnet of its own name"
            )
    if plan.layout == "zones" and len(plan.subnets) > 1:
        p.add(("zones",), f"zones share one subnet, but the plan names {len(plan.subnets)}: {', '.join(plan.subnets)}")
    models = {m.name: m for m in plan.switch_models}
    p.unique(("switch_models",), (m.name for m in plan.switch_models), "switch model")
    p.unique(("node_models",), (m.name for m in plan.node_models), "node model")
    p.unique(("nic_models",), (m.name for m in plan.nic_models), "NIC model")
    p.known(("fabric_switch_model",), plan.fabric_switch_model, models, "switch model")
    switches = _check_switches(p, plan, zones, models)
    labels = list(map(attrgetter("label"), plan.cables))  # read once: three checks look cables up by them
    label_set = set(labels)
    _check_nodes(p, plan, zones, switches, label_set)
    _check_cables(p, plan, zones, switches, labels)
    _check_tree_links(p, plan)
    subnet_of = _subnet_of(plan)
    max_lid = _max_lids(plan, subnet_of)
    _check_addresses(p, plan, subnet_of, max_lid)
    _check_routing(p, plan, switches, subnet_of, max_lid, label_set)
    _check_qos(p, plan)
    _check_hosts(p, plan)
    _check_subnet_managers(p, plan, subnet_of, max_lid)
    _check_catalog(p, plan)
    return list(p)


def _check_switches(p: _Problems, plan: Plan, zones: set[str], models: dict) -> dict:
    if not plan.switches:
        p.add(("switches",), "the plan has no switches")
    p.unique(("switches",), map(attrgetter("name"), plan.switches), "switch")
    tiers: Counter = Counter()
    for i, s in enumerate(plan.switches):
        p.known(("switches", i, "zone"), s.zone, zones, "zone")
        if p.known(("switches", i, "model"), s.model, models, "switch model") and s.ports != models[s.model].ports:
            p.add(
                ("switches", i, "ports"),
                f"switch {s.name} has {s.ports} ports, its model {s.model} {models[s.model].ports}",
            )
        tiers[s.zone, s.tier] += 1
    for i, z in enumerate(plan.zones):
        for tier, field, planned in (
            ("leaf", "leaves", z.leaves),
            ("spine", "spines", z.spines),
            ("core", "cores", z.cores),
        ):
            if tiers[z.name, tier] != planned:
                p.add(
                    ("zones", i, field),
                    f"zone {z.name} plans {planned} {tier} switches, the switch list has {tiers[z.name, tier]}",
                )
    return {s.name: s for s in plan.switches}


def _check_nodes(p: _Problems, plan: Plan, zones: set[str], switches: dict, labels: set[str]) -> None:
    p.unique(("nodes",), map(attrgetter("hostname"), plan.nodes), "hostname", "hostname")
    node_models = {m.name for m in plan.node_models}
    nic_models = {m.name for m in plan.nic_models}
    if not _nodes_right(plan, zones, switches, node_models, nic_models, labels):
        _check_node_fields(p, plan, zones, switches, node_models, nic_models, labels)


def _check_node_fields(
    p: _Problems,
    plan: Plan,
    zones: set[str],
    switches: dict,
    node_models: set[str],
    nic_models: set[str],
    labels: set[str],
) -> None:
    leaf_ports: set[tuple[str, int]] = set()
    for i, n in enumerate(plan.nodes):
        if n.hostname in switches:  # one name space: cable ends, node-name-map and topology.net name devices
            p.add(("nodes", i, "hostname"), f"hostname '{n.hostname}' is also a switch's name")
        if node_models:  # plans of older ffplan carry no node models
            p.known(("nodes", i, "model"), n.model, node_models, "node model")
        p.unique(("nodes", i, "ports"), (f"{pt.nic} port {pt.port}" for pt in n.ports), "NIC port", "nic")
        for j, pt in enumerate(n.ports):
            at = ("nodes", i, "ports", j)
            p.known(at + ("nic_model",), pt.nic_model, nic_models, "NIC model")  # topology.net names the device by it
            p.known(at + ("zone",), pt.zone, zones, "zone")
            p.known(at + ("cable",), pt.cable, labels, "cable")
            leaf = switches.get(pt.leaf)
            if leaf is None or leaf.tier != "leaf" or leaf.zone != pt.zone:
                p.add(at + ("leaf",), f"'{pt.leaf}' is not a leaf switch of zone {pt.zone}")
                continue
            if pt.leaf_port > leaf.ports:
                p.add(at + ("leaf_port",), f"{pt.leaf} has {leaf.ports} ports, not port {pt.leaf_port}")
            elif (pt.leaf, pt.leaf_port) in leaf_ports:
                p.add(at + ("leaf_port",), f"port {pt.leaf_port} of {pt.leaf} already has a node")
            leaf_ports.add((pt.leaf, pt.leaf_port))


def _nodes_right(
    plan: Plan, zones: set[str], switches: dict, node_models: set[str], nic_models: set[str], labels: set[str]
) -> bool:
    """Whether _check_node_fields finds nothing, decided a field at a time over all nodes and their ports (a
    16,384-endpoint plan's 16,384 ports: 0.01 s, against 0.04 s a port at a time): the loop then runs only to say
    where and what."""
    ports = [pt for n in plan.nodes for pt in n.ports]
    node_of = [i for i, n in enumerate(plan.nodes) for _ in n.ports]
    leaves, leaf_ports = list(map(attrgetter("leaf"), ports)), list(map(attrgetter("leaf_port"), ports))
    leaves_of_zones = {(name, s.zone) for name, s in switches.items() if s.tier == "leaf"}
    radix = {name: s.ports for name, s in switches.items()}
    return (
        switches.keys().isdisjoint(map(attrgetter("hostname"), plan.nodes))
        and (not node_models or node_models.issuperset(map(attrgetter("model"), plan.nodes)))
        # a NIC port once per node (names hold no spaces: a (nic, port) pair is its "nic port N")
        and len(set(zip(node_of, map(attrgetter("nic"), ports), map(attrgetter("port"), ports)))) == len(ports)
        and nic_models.issuperset(map(attrgetter("nic_model"), ports))
        and zones.issuperset(map(attrgetter("zone"), ports))
        and labels.issuperset(map(attrgetter("cable"), ports))
        and leaves_of_zones.issuperset(zip(leaves, map(attrgetter("zone"), ports)))
        and all(map(le, leaf_ports, map(radix.__getitem__, leaves)))
        and len(set(zip(leaves, leaf_ports))) == len(ports)
    )


_Key = TypeVar("_Key", int, str, tuple[str, int])

_CABLE_ENDS = {
    "node-leaf": ("node", "leaf"),
    "leaf-spine": ("leaf", "spine"),
    "spine-core": ("spine", "core"),
    "inter-zone": ("leaf", "leaf"),
}


def _check_cables(p: _Problems, plan: Plan, zones: set[str], switches: dict, labels: list[str]) -> None:
    p.unique(("cables",), labels, "cable label", "label")
    nics = {n.hostname: {pt.nic for pt in n.ports} for n in plan.nodes}
    if not _cable_ends_right(plan.cables, zones, switches, nics):
        _check_cable_ends(p, plan.cables, zones, switches, nics)
    by_label = dict(zip(labels, plan.cables))
    for i, n in enumerate(plan.nodes):
        for j, pt in enumerate(n.ports):
            cable = by_label.get(pt.cable)
            if cable is not None and ((cable.a.device, cable.a.port), (cable.b.device, cable.b.port)) != (
                (n.hostname, pt.nic),
                (pt.leaf, pt.leaf_port),
            ):
                p.add(
                    ("nodes", i, "ports", j, "cable"),
                    f"cable {pt.cable} does not join {n.hostname} {pt.nic} and {pt.leaf} port {pt.leaf_port}",
                )


def _check_cable_ends(p: _Problems, cables: list[Cable], zones: set[str], switches: dict, nics: dict) -> None:
    used: set[tuple[str, int | str]] = set()  # switch ports (a dual-port NIC has two cables on one NIC name)
    for i, c in enumerate(cables):
        p.known(("cables", i, "zone"), c.zone, zones, "zone")
        for side, end, want in zip("ab", (c.a, c.b), _CABLE_ENDS[c.kind]):
            at = ("cables", i, side)
            if want == "node":
                if p.known(at + ("device",), end.device, nics, "node") and end.port not in nics[end.device]:
                    p.add(at + ("port",), f"{end.device} has no NIC '{end.port}' among its ports")
            else:
                switch = switches.get(end.device)
                if switch is None or switch.tier != want:
                    p.add(
                        at + ("device",), f"a {c.kind} cable's end {side} must be a {want} switch, not '{end.device}'"
                    )
                elif (switch.zone == c.zone) != (c.kind != "inter-zone" or side == "a"):  # `zone` is end a's
                    where = "zone" if switch.zone != c.zone else "a zone other than"
                    p.add(
                        at + ("device",),
                        f"a {c.kind} cable's end {side} must be in {where} {c.zone}; {end.device} is in {switch.zone}",
                    )
                elif not isinstance(end.port, int) or end.port > switch.ports:
                    p.add(at + ("port",), f"{end.device} has {switch.ports} ports, not port {end.port}")
                elif (end.device, end.port) in used:
                    p.add(at, f"{end.device} port {end.port} already has a cable")
                used.add((end.device, end.port))


def _cable_ends_right(cables: list[Cable], zones: set[str], switches: dict, nics: dict) -> bool:
    """Whether _check_cable_ends finds nothing, decided a field at a time over the cables of each kind (a
    16,384-endpoint plan's 49,152 cables: 0.03 s, against 0.12 s a cable at a time): the loop then runs only to say
    where and what."""
    placed = {(name, s.tier, s.zone) for name, s in switches.items()}
    radix = {name: s.ports for name, s in switches.items()}
    switch_ends: list[tuple[str, int | str]] = []
    for kind, of_kind in groupby(sorted(cables, key=attrgetter("kind")), attrgetter("kind")):
        group = list(of_kind)
        cable_zones = list(map(attrgetter("zone"), group))
        if not zones.issuperset(cable_zones):
            return False
        for side, want in zip("ab", _CABLE_ENDS[kind]):
            ends = list(map(attrgetter(side), group))
            devices, ports = list(map(attrgetter("device"), ends)), list(map(attrgetter("port"), ends))
            if want == "node":
                right = all(port in nics.get(device, ()) for device, port in zip(devices, ports))
            elif kind == "inter-zone" and side == "b":  # a leaf of a zone other than end a's
                right = all(
                    s is not None and s.tier == want and s.zone != zone
                    for s, zone in zip(map(switches.get, devices), cable_zones)
                )
            else:
                right = placed.issuperset(zip(devices, repeat(want), cable_zones))
            if want != "node":  # a port number within the radix
                right = (
                    right and set(map(type, ports)) == {int} and all(map(le, ports, map(radix.__getitem__, devices)))
                )
                switch_ends += zip(devices, ports)
            if not right:
                return False
    return len(set(switch_ends)) == len(switch_ends)


_TREE_KINDS = frozenset(("leaf-spine", "spine-core"))


def _check_tree_links(p: _Problems, plan: Plan) -> None:
    """The trees are whole: every leaf has `links_per_leaf_spine` cables to each spine of its zone (of its pod, in a
    three-layer tree) and no others; every spine `links_per_spine_core` to each core it reaches, the same number of
    cores as every other. Routing, reroute and the failure sweep take the planned tree as given."""
    zones = {z.name: z for z in plan.zones}
    ends = zip(map(attrgetter("a.device"), plan.cables), map(attrgetter("b.device"), plan.cables))
    links = Counter(compress(ends, map(_TREE_KINDS.__contains__, map(attrgetter("kind"), plan.cables))))
    spines: dict[tuple[str, int | None], list[str]] = defaultdict(list)
    cores_of: dict[str, list[str]] = defaultdict(list)  # spine -> the cores it has cables to
    for lower, upper in links:
        cores_of[lower].append(upper)
    for s in plan.switches:
        if s.tier == "spine":
            spines[s.zone, s.pod].append(s.name)
    for i, s in enumerate(plan.switches):
        z = zones.get(s.zone)
        if z is None:
            continue
        if s.tier == "leaf":
            for spine in spines[s.zone, s.pod]:
                if links[s.name, spine] != z.links_per_leaf_spine:
                    p.add(
                        ("switches", i, "name"),
                        f"leaf {s.name} has {links[s.name, spine]} cable(s) to spine {spine}; "
                        f"zone {z.name} plans {z.links_per_leaf_spine} between each leaf and spine",
                    )
        elif s.tier == "spine" and z.cores:
            group = z.cores * z.pods // max(z.spines, 1)  # cores per spine position
            reached = [core for core in cores_of[s.name] if links[s.name, core]]
            wrong = [core for core in reached if links[s.name, core] != z.links_per_spine_core]
            if len(reached) != group or wrong:
                p.add(
                    ("switches", i, "name"),
                    f"spine {s.name} has cables to {len(reached)} core(s)"
                    + (f", {links[s.name, wrong[0]]} to {wrong[0]}" if wrong else "")
                    + f"; zone {z.name} plans {z.links_per_spine_core} to each of {group}",
                )


def _subnet_of(plan: Plan) -> dict[str, str]:
    """zone -> its subnet (a zone the plan does not list: its own name; the zone check reports it)."""
    return defaultdict(str, {z.name: z.subnet for z in plan.zones})


def _max_lids(plan: Plan, subnet_of: dict[str, str]) -> dict[str, int]:
    """The highest LID of each subnet."""
    top: dict[str, int] = defaultdict(int)
    for s in plan.switches:
        top[subnet_of[s.zone]] = max(top[subnet_of[s.zone]], s.lid)
    for n in plan.nodes:
        for pt in n.ports:
            top[subnet_of[pt.zone]] = max(top[subnet_of[pt.zone]], pt.lid)
    return top


_GUID_FIELDS = ("node_guid", "port_guid", "sysimg_guid")
_RESERVED_GUIDS = {"0x" + "0" * 16, "0x" + "f" * 16}


def _check_addresses(p: _Problems, plan: Plan, subnet_of: dict[str, str], max_lid: dict[str, int]) -> None:
    """LIDs unique within a subnet. A GUID names one device: a switch, or one NIC of one host (whose ports may share
    its node GUID, or carry it as their port GUID); a port GUID names one port."""
    if not _addresses_right(plan, subnet_of):
        _claim_addresses(p, plan, subnet_of)
    top = max(max_lid.values(), default=0)
    if plan.routing is not None and max_lid and plan.routing.max_lid != top:  # (max_lid: the subnets with a LID)
        p.add(("routing", "max_lid"), f"max_lid is {plan.routing.max_lid}, the highest LID of the plan {top}")


def _addresses_right(plan: Plan, subnet_of: dict[str, str]) -> bool:
    """Whether _claim_addresses finds nothing, decided on sets of (address, owner) pairs: each address has one owner
    (a 16,384-endpoint plan's 17,664 LIDs and 53,000 GUIDs: 0.01 s, against 0.04 s a claim at a time). Owners are
    names, (hostname, NIC) and (hostname, NIC, port), which hold no spaces: a pair is its owner's text. A plan with
    multi-planar NICs is left to the loop."""
    if any(m.planes > 1 for m in plan.nic_models):
        return False
    ports = [pt for n in plan.nodes for pt in n.ports]
    hosts = [n.hostname for n in plan.nodes for _ in n.ports]
    nics = list(zip(hosts, map(attrgetter("nic"), ports)))
    port_names = list(zip(hosts, map(attrgetter("nic"), ports), map(attrgetter("port"), ports)))
    switch_names = list(map(attrgetter("name"), plan.switches))

    def one_owner(addresses: list, owners: list) -> bool:
        return len(set(zip(addresses, owners))) == len(set(addresses))

    def in_subnets(items: list) -> list[tuple[str, int]]:
        return list(zip(map(subnet_of.__getitem__, map(attrgetter("zone"), items)), map(attrgetter("lid"), items)))

    switch_guids = [getattr(s, field) for s in plan.switches for field in _GUID_FIELDS]
    guids = switch_guids + [guid for field in _GUID_FIELDS for guid in map(attrgetter(field), ports)]
    return (
        one_owner(in_subnets(plan.switches) + in_subnets(ports), switch_names + port_names)
        and _RESERVED_GUIDS.isdisjoint(guids)
        and one_owner(guids, [name for name in switch_names for _ in _GUID_FIELDS] + nics * len(_GUID_FIELDS))
        and one_owner(list(map(attrgetter("port_guid"), ports)), port_names)
    )


def _claim_addresses(p: _Problems, plan: Plan, subnet_of: dict[str, str]) -> None:
    lids: dict[tuple[str, int], str] = {}
    devices: dict[str, str] = {}  # GUID -> the device it belongs to
    ports: dict[str, str] = {}  # port GUID -> the port

    def claim(table: dict[_Key, str], key: _Key, owner: str, path: YamlPath, what: str) -> None:
        if table.setdefault(key, owner) != owner:
            p.add(path, f"{what} {key} of {owner} is already {table[key]}'s")

    def guid(path: YamlPath, value: str, owner: str) -> None:
        if value in _RESERVED_GUIDS:
            p.add(path, f"GUID {value} of {owner} is reserved (0 and all ones name no device)")
        else:
            claim(devices, value, owner, path, "GUID")

    for i, s in enumerate(plan.switches):
        claim(lids, (subnet_of[s.zone], s.lid), s.name, ("switches", i, "lid"), "LID")
        for field in _GUID_FIELDS:  # a switch reports one GUID as all three (ffplan.design.guids)
            guid(("switches", i, field), getattr(s, field), s.name)
    planar = {m.name for m in plan.nic_models if m.planes > 1}
    for i, n in enumerate(plan.nodes):
        # a multi-planar card's functions (a device each) share the card's GUIDs: the card is named by function 0
        card = {pt.sysimg_guid: pt.nic for pt in n.ports if pt.nic_model in planar and pt.port_guid == pt.sysimg_guid}
        for j, pt in enumerate(n.ports):
            at = ("nodes", i, "ports", j)
            port = f"{n.hostname} {pt.nic} port {pt.port}"
            claim(lids, (subnet_of[pt.zone], pt.lid), port, at + ("lid",), "LID")
            nic = card.get(pt.sysimg_guid, pt.nic) if pt.nic_model in planar else pt.nic
            for field in _GUID_FIELDS:  # a NIC's ports share its system image GUID, that of its port 1
                guid(at + (field,), getattr(pt, field), f"{n.hostname} {nic}")
            claim(ports, pt.port_guid, port, at + ("port_guid",), "port GUID")


def _check_routing(
    p: _Problems, plan: Plan, switches: dict, subnet_of: dict[str, str], max_lid: dict[str, int], labels: set[str]
) -> None:
    if plan.routing is None:
        return
    r = plan.routing
    p.unique(("routing", "lfts"), map(attrgetter("switch"), r.lfts), "forwarding table of switch", "switch")
    for name in sorted(set(switches) - {t.switch for t in r.lfts}):
        p.add(("routing", "lfts"), f"switch {name} has no forwarding table")
    for i, t in enumerate(r.lfts):
        if not p.known(("routing", "lfts", i, "switch"), t.switch, switches, "switch"):
            continue
        top = max_lid[subnet_of[switches[t.switch].zone]]
        if len(t.ports) != top + 1:
            p.add(
                ("routing", "lfts", i, "ports"),
                f"{t.switch}'s table has {len(t.ports)} entries, not its subnet's highest LID + 1 = {top + 1}",
            )
        radix = switches[t.switch].ports
        beyond = np.flatnonzero((t.ports > radix) & (t.ports != r.unrouted_port))  # entries are 0-255 by type
        if beyond.size:
            lid, port = int(beyond[0]), int(t.ports[beyond[0]])
            p.add(
                ("routing", "lfts", i, "ports"),
                f"{t.switch} forwards LID {lid} to port {port}; it has ports 0-{radix} ({r.unrouted_port} = unrouted)",
            )
    for i, item in enumerate(r.failed):
        name, _, port_suffix = item.partition("[")  # "switch[port]" -> "port]"
        known = item in labels or (
            name in switches and (not port_suffix or int(port_suffix[:-1]) <= switches[name].ports)
        )
        if not known:
            p.add(
                ("routing", "failed", i),
                f"failed link '{item}' is neither a cable label, a switch nor a switch port of the plan",
            )


def _check_qos(p: _Problems, plan: Plan) -> None:
    q = plan.qos
    if q is None:
        return
    p.unique(("qos", "classes"), (c.name for c in q.classes), "traffic class")
    for i, c in enumerate(q.classes):
        if c.vl >= q.data_vls:
            p.add(
                ("qos", "classes", i, "vl"),
                f"traffic class {c.name} uses VL {c.vl}; the plan has data VLs 0-{q.data_vls - 1}",
            )
    for port_class, pc in q.port_classes.items():
        at = ("qos", "port_classes", port_class)
        for i, vl in enumerate(pc.sl2vl):
            if vl >= q.data_vls and vl != 15:
                p.add(at + ("sl2vl", i), f"SL {i} maps to VL {vl}; the plan has data VLs 0-{q.data_vls - 1} (15 drops)")
        for table in ("vlarb_high", "vlarb_low"):
            for i, e in enumerate(getattr(pc, table)):
                if e.vl >= q.data_vls:
                    p.add(
                        at + (table, i, "vl"),
                        f"VL arbitration entry for VL {e.vl}; the plan has data VLs 0-{q.data_vls - 1}",
                    )


def _check_hosts(p: _Problems, plan: Plan) -> None:
    if plan.hosts is None:
        return
    p.unique(("hosts",), (h.name for h in plan.hosts), "host profile")
    nodes = {n.hostname: n for n in plan.nodes}
    classes = {c.name for c in plan.qos.classes} if plan.qos else set()
    profile_of: dict[str, str] = {}
    for i, h in enumerate(plan.hosts):
        _check_profile(p, ("hosts", i), h, classes)
        nic_names = {d.name for d in h.devices if d.kind == "nic"}
        for j, hostname in enumerate(h.hosts):
            at = ("hosts", i, "hosts", j)
            if not p.known(at, hostname, nodes, "host"):
                continue
            node = nodes[hostname]
            if profile_of.setdefault(hostname, h.name) != h.name:
                p.add(at, f"host {hostname} is in profiles {profile_of[hostname]} and {h.name}")
            if (node.model, node.role) != (h.node_model, h.role):
                p.add(
                    at,
                    f"host {hostname} is a {node.role} {node.model}, profile {h.name} is for a {h.role} {h.node_model}",
                )
            missing = sorted({pt.nic for pt in node.ports} - nic_names)
            if missing:
                p.add(at, f"host {hostname} has NIC(s) {', '.join(missing)} that profile {h.name} does not describe")


def _check_profile(p: _Problems, at: YamlPath, h: HostProfile, classes: set[str]) -> None:
    devices = p.unique(at + ("devices",), (d.name for d in h.devices), "device")
    files = p.unique(at + ("files",), (f.name for f in h.files), "file")
    p.unique(at + ("nccl",), (s.name for s in h.nccl), "NCCL setting")
    nics = {d.name for d in h.devices if d.kind == "nic"}
    switches: set[str] = set()
    for i, sw in enumerate(h.pcie_switches):  # top-down, so a parent listed later would be a loop or a typo
        if sw.parent:
            p.known(at + ("pcie_switches", i, "parent"), sw.parent, switches, "PCIe switch listed before it")
        switches.add(sw.name)
    for i, d in enumerate(h.devices):
        if d.pcie_switch:
            p.known(at + ("devices", i, "pcie_switch"), d.pcie_switch, switches, "PCIe switch")
        for j, peer in enumerate(d.root_port_peers):
            p.known(at + ("devices", i, "root_port_peers", j), peer, devices, "device")
        if d.nearest_nic:
            p.known(at + ("devices", i, "nearest_nic"), d.nearest_nic, nics, "NIC")
    for i, pair in enumerate(h.nvlink_pairs):
        p.known(at + ("nvlink_pairs", i, "a"), pair.a, devices, "device")
        p.known(at + ("nvlink_pairs", i, "b"), pair.b, devices, "device")
    nic_buses = {d.bus_id for d in h.devices if d.kind == "nic"}
    for i, bus in enumerate(h.relaxed_ordering.nic_bus_ids):
        p.known(at + ("relaxed_ordering", "nic_bus_ids", i), bus, nic_buses, "NIC bus id")
    for i, s in enumerate(h.sls):
        p.known(at + ("sls", i, "file"), s.file, files, "profile file")
        if s.traffic_class:
            p.known(at + ("sls", i, "traffic_class"), s.traffic_class, classes, "traffic class")


def _check_subnet_managers(p: _Problems, plan: Plan, subnet_of: dict[str, str], max_lid: dict[str, int]) -> None:
    """The SM hosts are nodes, and their ports share the 64-LID block of the highest LID: OpenSM sizes its tables
    from the highest LID present, and the running SM's own port always is (docs/operations.md)."""
    nodes = {n.hostname: n for n in plan.nodes}
    for i, hostname in enumerate(plan.sm_hosts):
        if p.known(("sm_hosts", i), hostname, nodes, "subnet manager host"):
            for j, pt in enumerate(nodes[hostname].ports):
                top = max_lid[subnet_of[pt.zone]]
                if pt.lid // LID_BLOCK != top // LID_BLOCK:
                    node_index = plan.nodes.index(nodes[hostname])
                    p.add(
                        ("nodes", node_index, "ports", j, "lid"),
                        f"LID {pt.lid} of subnet manager host {hostname} is not in the {LID_BLOCK}-LID block of the "
                        f"highest LID of its subnet ({top}): a cold-started OpenSM would size its tables too small",
                    )


def _check_catalog(p: _Problems, plan: Plan) -> None:
    """The catalog block is the inventory's type; its figures feed the cost report, so they must be real amounts."""
    if plan.catalog is None:
        return
    for table in ("prices", "power_w", "cable"):
        for key, value in getattr(plan.catalog, table).items():
            if not math.isfinite(value) or value < 0:
                p.add(("catalog", table, key), f"catalog {table} of {key} is {value}; it must be a finite amount >= 0")
