"""FF2xx: names that must be unique, references that must resolve, and hosts that must fit their racks."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Iterator

from ffplan.codes import lint as codes
from ffplan.diagnostics import Severity, YamlPath, duplicates, plural
from ffplan.inventory import ResolvedHost
from ffplan.lint.context import LintContext
from ffplan.lint.helpers import collapse, more, unknown_reference
from ffplan.lint.declare import Finding, rule


@rule(
    codes.DUPLICATE_HOSTNAME,
    Severity.ERROR,
    bad="""
    groups:
      - {name: compute, role: compute, model: gpu-node, count: 20, hostname: "cn{index:02d}"}
      - name: extra
        role: compute
        model: gpu-node
        hosts: [{hostname: cn07, rack: r9, u: 1}]
    """,
    good="""
    groups:
      - {name: compute, role: compute, model: gpu-node, count: 20, hostname: "cn{index:02d}"}
      - name: extra
        role: compute
        model: gpu-node
        hosts: [{hostname: cn21, rack: r9, u: 1}]
    """,
)
def duplicate_hostname(ctx: LintContext) -> Iterator[Finding]:
    """
    A hostname names one machine in DNS, Slurm, OpenSM node descriptions and every rendered host file.
    Two hosts with one name (two explicit hosts, or a generated range that runs into another group or
    an explicit host) would make all of these ambiguous. Collisions inside one generated range are
    FF502's.
    """
    entries = ((h.hostname, ctx.host_path(h, "hostname")) for h in ctx.resolved.hosts)
    clashes = ((path, first, name) for name, path, first in duplicates(entries) if path != first)
    for path, first, name, count in collapse(clashes):
        yield Finding(
            path,
            f"hostname '{name}'{more(count, 'hostnames')} is also given by {ctx.where(first)}",
            "rename one of the hosts, or shift the generated range (a different pattern or count)",
        )


@rule(
    codes.DUPLICATE_GUID,
    Severity.ERROR,
    bad="""
    hosts:
      - {hostname: cn01, rack: r1, u: 1, guids: {mlx5_0: "0x0002c90300aa0001"}}
      - {hostname: cn02, rack: r1, u: 5, guids: {mlx5_0: "0x0002c90300aa0001"}}
    """,
    good="""
    hosts:
      - {hostname: cn01, rack: r1, u: 1, guids: {mlx5_0: "0x0002c90300aa0001"}}
      - {hostname: cn02, rack: r1, u: 5, guids: {mlx5_0: "0x0002c90300aa0002"}}
    """,
)
def duplicate_guid(ctx: LintContext) -> Iterator[Finding]:
    """
    GUIDs identify ports and switches to the subnet manager: OpenSM's guid2lid file, the planned LIDs
    and the routing tables are all keyed by them. A GUID given twice (host port GUIDs and
    `fabric.switch_guids` together, compared without regard to case) means one of the two devices
    gets the other's LID and routes. Usually a copy-paste slip when typing GUIDs from labels. A dual-port
    card's second port takes the card's GUID + 1 (mlx5 numbering), so that GUID counts as given too.
    """
    entries = []
    second_ports = []  # GUIDs implied for port 2 of dual-port cards: after the given ones, so a clash names them
    ports = {(h.hostname, nic.name): nic.ports for h in ctx.resolved.hosts for nic in h.nics}
    for host in ctx.resolved.hosts:
        if host.host_index is not None:
            group = ctx.inventory.groups[host.group_index]
            for nic, guid in group.hosts[host.host_index].guids.items():
                entries.append((guid.lower(), host.path + ("guids", nic)))
                if ports.get((host.hostname, nic), 1) == 2:
                    second_ports.append((f"0x{int(guid, 16) + 1:016x}", host.path + ("guids", nic)))
    for switch, guid in ctx.inventory.fabric.switch_guids.items():
        entries.append((guid.lower(), ("fabric", "switch_guids", switch)))
    implied = set(second_ports)
    for guid, path, first in duplicates(entries + second_ports):
        port2 = " (port 2 of this dual-port card: its GUID + 1)" if (guid, path) in implied else ""
        yield Finding(
            path, f"GUID {guid}{port2} is also given by {ctx.where(first)}", "check the GUIDs against the device labels"
        )


@rule(
    codes.DUPLICATE_RACK_NAME,
    Severity.ERROR,
    bad="""
    racks:
      - {name: r1, row: 1, slot: 1}
      - {name: r1, row: 1, slot: 2}
    """,
    good="""
    racks:
      - {name: r1, row: 1, slot: 1}
      - {name: r2, row: 1, slot: 2}
    """,
)
def duplicate_rack_name(ctx: LintContext) -> Iterator[Finding]:
    """
    Hosts and switches are placed by rack name, and cable lengths come from the rack's floor position.
    With two racks of one name (also from overlapping rack blocks) only the first is used and the
    second silently vanishes.
    """
    entries = ((rack.name, path) for rack, path in ctx.rack_entries)
    for name, path, first in duplicates(entries):
        yield Finding(path, f"rack '{name}' is also defined by {ctx.where(first)}", "rename one of the racks")


@rule(
    codes.DUPLICATE_RACK_POSITION,
    Severity.ERROR,
    bad="""
    racks:
      - {name: r1, row: 1, slot: 1}
      - {name: r2, row: 1, slot: 1}
    """,
    good="""
    racks:
      - {name: r1, row: 1, slot: 1}
      - {name: r2, row: 1, slot: 2}
    """,
)
def duplicate_rack_position(ctx: LintContext) -> Iterator[Finding]:
    """
    A rack's (row, slot) is its place on the floor, from which cable lengths and cable types are
    computed. Two racks cannot stand in one place; the second would get cables of the wrong length.
    """
    entries = (((rack.row, rack.slot), path) for rack, path in ctx.rack_entries)
    for (row, slot), path, first in duplicates(entries):
        yield Finding(
            path,
            f"row {row}, slot {slot} is already taken by {ctx.where(first)}",
            "give each rack its own row and slot",
        )


@dataclass(frozen=True)
class _Slot:
    """The rack units a host occupies."""

    first_u: int
    last_u: int
    host: ResolvedHost

    @property
    def units(self) -> str:
        return f"U{self.first_u}-U{self.last_u}"


def _occupied(ctx: LintContext) -> dict[str, list[_Slot]]:
    """Hosts by (known) rack, sorted by position, then inventory order."""
    by_rack: dict[str, list[_Slot]] = defaultdict(list)
    for host in ctx.resolved.hosts:
        if host.rack in ctx.resolved.racks:
            by_rack[host.rack].append(_Slot(host.u, host.u + ctx.node_units(host.model) - 1, host))
    return {rack: sorted(slots, key=lambda s: (s.first_u, s.host.order)) for rack, slots in by_rack.items()}


@rule(
    codes.RACK_UNIT_OVERLAP,
    Severity.ERROR,
    bad="""
    # gpu-node is 4U high: U1-U4 and U3-U6 overlap
    hosts:
      - {hostname: cn01, rack: r1, u: 1}
      - {hostname: cn02, rack: r1, u: 3}
    """,
    good="""
    hosts:
      - {hostname: cn01, rack: r1, u: 1}
      - {hostname: cn02, rack: r1, u: 5}
    """,
)
def rack_unit_overlap(ctx: LintContext) -> Iterator[Finding]:
    """
    A host occupies `rack_units` units of its rack (from its node model) starting at `u`. Two hosts
    whose units overlap cannot both be installed: one of the positions is wrong (explicit hosts), or two
    groups fill the same racks from overlapping `first_u` ranges.
    """
    overlaps = []
    for rack, slots in _occupied(ctx).items():
        top: _Slot | None = None  # the host reaching highest so far
        for slot in slots:
            if top is not None and slot.first_u <= top.last_u:
                overlaps.append((ctx.host_path(slot.host, "u"), ctx.host_path(top.host, "u"), (rack, slot, top)))
            if top is None or slot.last_u > top.last_u:
                top = slot
    for path, other_path, (rack, slot, other), count in collapse(overlaps):
        yield Finding(
            path,
            f"host '{slot.host.hostname}' at {slot.units} of rack '{rack}' overlaps host '{other.host.hostname}' "
            f"at {other.units}{more(count, 'overlaps')}",
            f"move one of them (see {ctx.where(other_path)})",
        )


@rule(
    codes.RACK_HEIGHT_EXCEEDED,
    Severity.ERROR,
    bad="""
    racks: [{name: r1, row: 1, slot: 1, units: 42}]
    hosts: [{hostname: cn01, rack: r1, u: 40}]   # a 4U node at U40 needs U40-U43
    """,
    good="""
    racks: [{name: r1, row: 1, slot: 1, units: 42}]
    hosts: [{hostname: cn01, rack: r1, u: 38}]   # U38-U41
    """,
)
def rack_height_exceeded(ctx: LintContext) -> Iterator[Finding]:
    """
    A host at `u` with a node model of `rack_units` ends at U(u + rack_units - 1), which must not
    exceed the rack's `units` (42 by default). For generated hosts this means
    `first_u + per_rack x rack_units - 1` must fit.
    """
    too_high = []
    for rack, slots in _occupied(ctx).items():
        units = ctx.resolved.racks[rack].units
        too_high += [(ctx.host_path(s.host, "u"), (), (rack, s, units)) for s in slots if s.last_u > units]
    for path, _, (rack, slot, units), count in collapse(too_high):
        yield Finding(
            path,
            f"host '{slot.host.hostname}' needs {slot.units} but rack '{rack}' has {units} units{more(count, 'hosts')}",
            "start lower, put fewer hosts in each rack (per_rack), or use taller racks (units)",
        )


@rule(
    codes.GROUP_RACK_OVERFLOW,
    Severity.ERROR,
    bad="""
    - {name: compute, role: compute, model: gpu-node, count: 20, hostname: "cn{index:02d}", racks: [r1, r2], per_rack: 8}
    """,
    good="""
    - {name: compute, role: compute, model: gpu-node, count: 20, hostname: "cn{index:02d}", racks: [r1, r2, r3], per_rack: 8}
    """,
)
def group_rack_overflow(ctx: LintContext) -> Iterator[Finding]:
    """
    Generated hosts fill the group's `racks` in order, `per_rack` (default 1) in each. When
    `count` is larger than `per_rack x len(racks)`, the remaining hosts have no rack and cannot be
    placed or cabled.
    """
    for gi, group in enumerate(ctx.inventory.groups):
        per_rack = group.per_rack or 1
        room = per_rack * len(group.racks)
        if group.count is None or group.count <= room:
            continue
        homeless = group.count - room
        options = [f"list at least {math.ceil(group.count / per_rack)} racks"]
        if group.racks and math.ceil(group.count / len(group.racks)) <= 60:
            options.append(f"raise per_rack to {math.ceil(group.count / len(group.racks))}")
        yield Finding(
            ("groups", gi, "racks"),
            f"group '{group.name}' generates {group.count:,} hosts but {plural(len(group.racks), 'rack')} x {per_rack} per rack "
            f"hold {room:,}: {homeless:,} would have no rack",
            " or ".join(options),
        )


@rule(
    codes.DUPLICATE_NAME,
    Severity.ERROR,
    bad="""
    zones:
      - {name: z1, leaf_racks: [n1], spine_racks: [n1]}
      - {name: z1, leaf_racks: [n2], spine_racks: [n2]}
    """,
    good="""
    zones:
      - {name: z1, leaf_racks: [n1], spine_racks: [n1]}
      - {name: z2, leaf_racks: [n2], spine_racks: [n2]}
    """,
)
def duplicate_name(ctx: LintContext) -> Iterator[Finding]:
    """
    Zones, groups and traffic classes are referred to by name (pinned zones, inter-zone links, switch
    names such as z1-leaf01, QoS settings). Two of one kind with the same name make every reference to
    it ambiguous.
    """
    inv = ctx.inventory
    lists: dict[str, list[tuple[str, YamlPath]]] = {
        "zone": [(z.name, ("fabric", inv.fabric.tree_key, i, "name")) for i, z in enumerate(inv.fabric.trees)],
        "group": [(g.name, ("groups", i, "name")) for i, g in enumerate(inv.groups)],
        "traffic class": [(t.name, ("traffic_classes", i, "name")) for i, t in enumerate(inv.traffic_classes or [])],
    }
    for kind, entries in lists.items():
        for name, path, first in duplicates(entries):
            yield Finding(
                path, f"{kind} '{name}' is also defined by {ctx.where(first)}", f"give each {kind} its own name"
            )


@rule(
    codes.UNKNOWN_MODEL,
    Severity.ERROR,
    bad="""
    fabric: {switch_model: QM8790, ...}   # models.switches defines QM8700
    """,
    good="""
    fabric: {switch_model: QM8700, ...}
    """,
)
def unknown_model(ctx: LintContext) -> Iterator[Finding]:
    """
    The fabric's `switch_model` must be a key of `models.switches`, and each group's `model` a key of
    `models.nodes`. The hint names the closest defined model.
    """
    models = ctx.inventory.models
    refs: list[tuple[YamlPath, str, str, Iterable[str], str]] = [
        (
            ("fabric", "switch_model"),
            "switch model",
            ctx.inventory.fabric.switch_model,
            models.switches,
            "models.switches",
        )
    ]
    refs += [
        (("groups", gi, "model"), "node model", g.model, models.nodes, "models.nodes")
        for gi, g in enumerate(ctx.inventory.groups)
    ]
    for path, kind, name, known, defined_at in refs:
        if finding := unknown_reference(path, kind, name, known, defined_at):
            yield finding


@rule(
    codes.UNKNOWN_RACK,
    Severity.ERROR,
    bad="""
    racks: [{name: r01, row: 1, slot: 1}]
    groups: [{name: compute, ..., racks: [r1]}]
    """,
    good="""
    groups: [{name: compute, ..., racks: [r01]}]
    """,
)
def unknown_rack(ctx: LintContext) -> Iterator[Finding]:
    """
    Zones place their leaf and spine switches in `leaf_racks` and `spine_racks`; groups and hosts
    place nodes in `racks` / `rack`. Each must be a rack from `racks` or generated by `rack_blocks`.
    """
    refs: list[tuple[YamlPath, str]] = []
    for zi, zone in enumerate(ctx.inventory.fabric.trees):
        for key in ("leaf_racks", "spine_racks", "core_racks"):
            refs += [
                (("fabric", ctx.inventory.fabric.tree_key, zi, key, ri), name)
                for ri, name in enumerate(getattr(zone, key))
            ]
    for gi, group in enumerate(ctx.inventory.groups):
        refs += [(("groups", gi, "racks", ri), name) for ri, name in enumerate(group.racks)]
        refs += [(("groups", gi, "hosts", hi, "rack"), host.rack) for hi, host in enumerate(group.hosts)]
    for path, name in refs:
        if finding := unknown_reference(path, "rack", name, ctx.resolved.racks, "racks or rack_blocks"):
            yield finding


@rule(
    codes.UNKNOWN_ZONE,
    Severity.ERROR,
    bad="""
    groups:
      - {name: mgmt, ..., settings: {zone: zone1}}   # fabric.zones defines z1, z2
    """,
    good="""
    groups:
      - {name: mgmt, ..., settings: {zone: z1}}
    """,
)
def unknown_zone(ctx: LintContext) -> Iterator[Finding]:
    """
    `settings.zone` (in `defaults`, a group or a host) pins single-attached hosts to a zone, and each
    inter-zone link joins two zones. A name that is not in `fabric.zones` would leave the host unpinned
    (or the link unplanned) without a word.
    """
    inv = ctx.inventory
    refs: list[tuple[YamlPath, str | None]] = [(("defaults", "zone"), inv.defaults.zone)]
    for gi, group in enumerate(inv.groups):
        refs.append((("groups", gi, "settings", "zone"), group.settings.zone))
        refs += [(("groups", gi, "hosts", hi, "settings", "zone"), h.settings.zone) for hi, h in enumerate(group.hosts)]
    for li, link in enumerate(inv.fabric.inter_zone_links):
        refs += [(("fabric", "inter_zone_links", li, "zones", zi), name) for zi, name in enumerate(link.zones)]
    for path, name in refs:
        if name is not None and (finding := unknown_reference(path, "zone", name, ctx.zone_names, "fabric.zones")):
            yield finding


@rule(
    codes.UNKNOWN_SUBNET_MANAGER,
    Severity.ERROR,
    bad="""
    fabric: {subnet_managers: [ufm01]}   # the hosts are ufm1 and ufm2
    """,
    good="""
    fabric: {subnet_managers: [ufm1, ufm2]}   # master, then standby
    """,
)
def unknown_subnet_manager(ctx: LintContext) -> Iterator[Finding]:
    """
    The subnet managers (UFM appliances or OpenSM hosts) run on the hosts `fabric.subnet_managers` names, the master
    first: their ports get the top LID block and OpenSM's files name them. A name the inventory lacks, a host with
    no NIC port on the fabric (it could not reach the subnet) or a name given twice would leave the fabric without
    the manager the inventory meant.
    """
    hosts = {h.hostname: h for h in ctx.resolved.hosts}
    seen: set[str] = set()
    for i, name in enumerate(ctx.inventory.fabric.subnet_managers):
        path: YamlPath = ("fabric", "subnet_managers", i)
        if finding := unknown_reference(path, "host", name, hosts, "groups (a host or a group's hostname pattern)"):
            yield finding
        elif not any(nic.ports for nic in hosts[name].nics):
            yield Finding(
                path,
                f"host '{name}' has no NIC port on the fabric, so it cannot run its subnet manager",
                "name a host with an InfiniBand NIC (a UFM appliance, a management node)",
            )
        elif name in seen:
            yield Finding(path, f"host '{name}' is named twice", "name each subnet manager host once")
        seen.add(name)


@rule(
    codes.GUID_FOR_UNKNOWN_NIC,
    Severity.ERROR,
    bad="""
    # the node model's NIC is mlx5_0
    hosts: [{hostname: cn01, rack: r1, u: 1, guids: {mlx5_1: "0x0002c90300aa0001"}}]
    """,
    good="""
    hosts: [{hostname: cn01, rack: r1, u: 1, guids: {mlx5_0: "0x0002c90300aa0001"}}]
    """,
)
def guid_for_unknown_nic(ctx: LintContext) -> Iterator[Finding]:
    """
    A host's `guids` map the node model's NIC device names (mlx5_0, ...) to port GUIDs read from the
    hardware. A key that is not a NIC of the model is ignored, so the port silently gets a placeholder
    GUID instead of the real one.
    """
    for gi, group in enumerate(ctx.inventory.groups):
        node = ctx.inventory.models.nodes.get(group.model)
        if node is None:
            continue  # FF210
        nics = [d.name for d in node.devices if d.kind == "nic"]
        for hi, host in enumerate(group.hosts):
            for nic in host.guids:
                path = ("groups", gi, "hosts", hi, "guids", nic)
                defined_at = f"models.nodes.{group.model}.devices"
                if finding := unknown_reference(path, "NIC", nic, nics, defined_at, f" in node model '{group.model}'"):
                    yield finding


def normalised_name(name: str) -> str:
    """What a name becomes where only identifiers are allowed (Ansible groups: other characters become '_')
    or case is not kept (file names on case-insensitive file systems)."""
    return re.sub(r"[^a-z0-9_]", "_", name.lower())


@rule(
    codes.NAMES_COLLIDE_WHEN_NORMALISED,
    Severity.ERROR,
    bad="""
    zones:
      - {name: z-a, leaf_racks: [n1], spine_racks: [n1]}
      - {name: z_a, leaf_racks: [n2], spine_racks: [n2]}
    """,
    good="""
    zones:
      - {name: za, leaf_racks: [n1], spine_racks: [n1]}
      - {name: zb, leaf_racks: [n2], spine_racks: [n2]}
    """,
)
def names_collide_when_normalised(ctx: LintContext) -> Iterator[Finding]:
    """
    Zone names and node-model names (which name the host profiles) become Ansible group names
    (`zone_z_a`, `profile_gpu_node`), where every character but letters, digits and '_' is replaced by
    '_', and file names (`exports/z-a.svg`, `hosts/gpu-node/`), which a case-insensitive file system does
    not tell apart from `Z-A.svg`. Two names that differ only there would be merged or overwritten when
    the plan is rendered.
    """
    inv = ctx.inventory
    used_models = dict.fromkeys(g.model for g in inv.groups if g.model in inv.models.nodes)
    lists: dict[str, list[tuple[str, YamlPath]]] = {
        "zone": [(z.name, ("fabric", inv.fabric.tree_key, i, "name")) for i, z in enumerate(inv.fabric.trees)],
        "node model": [(m, ("models", "nodes", m)) for m in used_models],
    }
    for kind, entries in lists.items():
        name_at = {path: name for name, path in entries}
        for _, path, first in duplicates((normalised_name(name), path) for name, path in entries):
            if name_at[path] != name_at[first]:  # the same name twice is FF208's
                yield Finding(
                    path,
                    f"{kind} '{name_at[path]}' and '{name_at[first]}' ({ctx.where(first)}) both become "
                    f"'{normalised_name(name_at[path])}' in Ansible group and file names",
                    f"rename one {kind} so that the names differ in letters or digits",
                )
