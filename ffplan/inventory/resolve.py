"""Expand an Inventory into concrete hosts and racks, applying host -> group -> node model -> defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

from ffplan.codes.inventory import EMPTY_GROUP, PATTERN_EXPANSION
from ffplan.diagnostics import Collector, YamlPath
from ffplan.inventory.models import (
    Attach,
    HostSettings,
    Inventory,
    NodeModel,
    Rack,
    Role,
    RackBlock,
    expand_rack_block,
    pattern_problem,
)


# Bounds checked before generating anything: far above any real cluster (a subnet holds 49,151 LIDs), far
# below what exhausts memory or time (a million racks took minutes and gigabytes).
MAX_HOSTS = 100_000
MAX_GENERATED_RACKS = 10_000
MAX_RACK_POSITION = 999  # Rack.row and Rack.slot

BUILTIN_DEFAULTS = HostSettings(
    relaxed_ordering=True,
    gdr_level="PHB",
    topo_file="/etc/nccl/topo.xml",
)
ROLE_ATTACH = {Role.STORAGE: Attach.EVERY_ZONE, Role.COMPUTE: Attach.SINGLE, Role.MANAGEMENT: Attach.SINGLE}


def default_attach(inv: Inventory, role: Role) -> Attach:
    """On planes every node has a NIC in each plane (NIC i in plane i); on zones it depends on the role."""
    return Attach.EVERY_ZONE if inv.fabric.planes else ROLE_ATTACH[role]


def merge_settings(*layers: HostSettings) -> HostSettings:
    """The first layer that sets a field wins (layers are given most specific first)."""
    merged: dict = {}
    for layer in layers:
        for key, value in layer.model_dump(exclude_none=True).items():
            merged.setdefault(key, value)
    return HostSettings(**merged)


@dataclass(frozen=True)
class ResolvedNic:
    name: str
    model: str
    ports: int
    guid: str | None  # port GUID of port 1 from the inventory, or None for a placeholder
    # a multi-planar NIC's PCI function (one IB device per plane): its plane, and the card's function-0 device
    plane: int | None = None
    card: str = ""


@dataclass(frozen=True)
class ResolvedHost:
    hostname: str
    group: str
    role: Role
    model: str
    rack: str
    u: int
    nics: tuple[ResolvedNic, ...]
    settings: HostSettings
    group_index: int  # groups[group_index] in the inventory
    host_index: int | None  # groups[..].hosts[host_index]; None for a host generated from the group's count
    order: int  # position in inventory order, for stable output

    @property
    def path(self) -> YamlPath:
        """Where the host (or, for a generated one, its group) is written, for diagnostics."""
        group: YamlPath = ("groups", self.group_index)
        return group if self.host_index is None else group + ("hosts", self.host_index)

    def port_zones(self, zones: list[str]) -> list[str]:
        """The zone (or plane) of each NIC port, in NIC and port order: for a host on every zone its k-th port is
        in the k-th zone (one port per zone, FF104, whether the ports are on one NIC or several), a multi-planar
        NIC's function f in plane f; else every port is in the host's zone, or "*" where the planner chooses."""
        ports = sum(nic.ports for nic in self.nics)
        if self.settings.attach is Attach.EVERY_ZONE:
            return [
                zones[nic.plane % len(zones)] if nic.plane is not None else zones[k % len(zones)]
                for k, nic in enumerate(nic for nic in self.nics for _ in range(nic.ports))
            ]
        return [self.settings.zone or "*"] * ports


@dataclass
class ResolvedInventory:
    inventory: Inventory
    racks: dict[str, Rack]
    rack_paths: dict[str, YamlPath]
    hosts: list[ResolvedHost] = field(default_factory=list)


def _host_nics(model: NodeModel | None, inv: Inventory, guids: dict[str, str]) -> tuple[ResolvedNic, ...]:
    if model is None:
        return ()
    nics = []
    for dev in model.devices:
        if dev.kind != "nic":
            continue
        nic_model = inv.models.nics.get(dev.model)
        if nic_model and nic_model.planes > 1:  # function f of the card is its link in plane f
            card = next(
                (d.name for d in model.devices if d.kind == "nic" and d.bus_id == dev.bus_id[:-1] + "0"), dev.name
            )
            nics.append(
                ResolvedNic(dev.name, dev.model, nic_model.ports, guids.get(dev.name), int(dev.bus_id[-1]), card)
            )
        else:
            nics.append(ResolvedNic(dev.name, dev.model, nic_model.ports if nic_model else 1, guids.get(dev.name)))
    return tuple(nics)


def _rack_block_problem(block: RackBlock, budget: int) -> tuple[str, str, str] | None:
    """(field, message, hint) when the block cannot be expanded: bad pattern, reversed range, too many racks."""
    problem = pattern_problem(block.name, ("row", "slot"))
    if problem:
        return (
            "name",
            f"rack name pattern '{block.name}' cannot be expanded: {problem}",
            "use {row} and {slot}, optionally with a width such as {row:02d}",
        )
    for axis, (first, last) in (("rows", block.rows), ("slots", block.slots)):
        if first > last:
            return (
                axis,
                f"{axis} range [{first}, {last}] is reversed: it generates no racks",
                f"write [{last}, {first}]",
            )
        if first < 0 or last > MAX_RACK_POSITION:
            return (
                axis,
                f"{axis} range [{first}, {last}] is outside 0-{MAX_RACK_POSITION}",
                "rows and slots of racks are 0-999",
            )
    count = (block.rows[1] - block.rows[0] + 1) * (block.slots[1] - block.slots[0] + 1)
    if count > budget:
        return (
            "rows",
            (f"the block generates {count:,} racks, over the {MAX_GENERATED_RACKS:,} racks all blocks may generate"),
            "check the row and slot ranges: they are inclusive [first, last]",
        )
    return None


def resolve(inv: Inventory, collector: Collector) -> ResolvedInventory:
    racks: dict[str, Rack] = {}
    rack_paths: dict[str, YamlPath] = {}
    for i, rack in enumerate(inv.racks):
        racks.setdefault(rack.name, rack)
        rack_paths.setdefault(rack.name, ("racks", i))
    rack_budget = MAX_GENERATED_RACKS
    for i, block in enumerate(inv.rack_blocks):
        problem = _rack_block_problem(block, rack_budget)
        if problem:
            field, message, hint = problem
            collector.error(PATTERN_EXPANSION, ("rack_blocks", i, field), message, hint)
            continue
        try:
            generated = expand_rack_block(block)
        except (KeyError, IndexError, ValueError) as exc:
            collector.error(
                PATTERN_EXPANSION,
                ("rack_blocks", i, "name"),
                f"rack name pattern '{block.name}' cannot be expanded: {exc}",
                "use {row} and {slot}, optionally with a width such as {row:02d}",
            )
            continue
        rack_budget -= len(generated)
        for rack in generated:
            racks.setdefault(rack.name, rack)
            rack_paths.setdefault(rack.name, ("rack_blocks", i))

    resolved = ResolvedInventory(inventory=inv, racks=racks, rack_paths=rack_paths)
    order = 0
    for gi, group in enumerate(inv.groups):
        model = inv.models.nodes.get(group.model)
        base = merge_settings(group.settings, inv.defaults, BUILTIN_DEFAULTS)
        for hi, host in enumerate(group.hosts):
            settings = merge_settings(host.settings, base, HostSettings(attach=default_attach(inv, group.role)))
            resolved.hosts.append(
                ResolvedHost(
                    host.hostname,
                    group.name,
                    group.role,
                    group.model,
                    host.rack,
                    host.u,
                    _host_nics(model, inv, dict(host.guids)),
                    settings,
                    gi,
                    hi,
                    order,
                )
            )
            order += 1
        if group.count is None:
            if not group.hosts:
                collector.error(
                    EMPTY_GROUP,
                    ("groups", gi),
                    f"group '{group.name}' has no hosts: no count (or count: null) and no hosts list",
                    'give it count and hostname: "cn{index:04d}", or list its hosts, or remove the group',
                )
            continue
        if not group.hostname:
            collector.error(
                PATTERN_EXPANSION,
                ("groups", gi, "count"),
                f"group '{group.name}' has a count but no hostname pattern",
                'add hostname: "cn{index:04d}" or list the hosts explicitly',
            )
            continue
        if pattern_error := pattern_problem(group.hostname, ("index",)):
            collector.error(
                PATTERN_EXPANSION,
                ("groups", gi, "hostname"),
                f"hostname pattern '{group.hostname}' cannot be expanded: {pattern_error}",
                "use {index} or a width such as {index:04d}",
            )
            continue
        if order + group.count > MAX_HOSTS:
            collector.error(
                PATTERN_EXPANSION,
                ("groups", gi, "count"),
                f"group '{group.name}' would bring the inventory to {order + group.count:,} hosts, over the limit of {MAX_HOSTS:,}",
                "an InfiniBand subnet holds at most 49,151 LIDs; split the cluster into several inventories",
            )
            continue
        per_rack = group.per_rack or 1
        units = model.rack_units if model else 1
        settings = merge_settings(base, HostSettings(attach=default_attach(inv, group.role)))
        nics = _host_nics(model, inv, {})
        for index in range(1, group.count + 1):
            try:
                hostname = group.hostname.format(index=index)
            except (KeyError, IndexError, ValueError) as exc:
                collector.error(
                    PATTERN_EXPANSION,
                    ("groups", gi, "hostname"),
                    f"hostname pattern '{group.hostname}' cannot be expanded: {exc}",
                    "use {index} or a width such as {index:04d}",
                )
                break
            slot = (index - 1) // per_rack
            rack_name = group.racks[slot] if slot < len(group.racks) else ""
            u = group.first_u + ((index - 1) % per_rack) * units
            resolved.hosts.append(
                ResolvedHost(
                    hostname, group.name, group.role, group.model, rack_name, u, nics, settings, gi, None, order
                )
            )
            order += 1
    return resolved
