"""What the rules see: the loaded inventory plus facts several rules share (computed once, on demand)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ffplan.design.facility import Draw, host_draws, model_draw
from ffplan.design.sizing import PortDemand, SizingError, TreeSize, port_demand, rack_switches, zone_size
from ffplan.diagnostics import InfeasibleError, YamlPath
from ffplan.ethernet.speeds import fabric_radix
from ffplan.inventory import LoadedInventory, ResolvedHost
from ffplan.inventory.models import Inventory, Rack, SwitchModel, expand_rack_block
from ffplan.inventory.resolve import ResolvedInventory

# Where a generated host's field is written: on its group, under another key.
_GROUP_FIELD = {"hostname": "hostname", "rack": "racks", "u": "first_u", "settings": "settings"}


@dataclass
class LintContext:
    loaded: LoadedInventory

    @property
    def inventory(self) -> Inventory:
        return self.loaded.inventory

    @property
    def resolved(self) -> ResolvedInventory:
        return self.loaded.resolved

    @cached_property
    def zone_names(self) -> list[str]:
        return [z.name for z in self.inventory.fabric.trees]

    @cached_property
    def rack_entries(self) -> list[tuple[Rack, YamlPath]]:
        """Every rack as written, duplicates included (the resolver keeps only the first of a name)."""
        entries: list[tuple[Rack, YamlPath]] = [(rack, ("racks", i)) for i, rack in enumerate(self.inventory.racks)]
        for i, block in enumerate(self.inventory.rack_blocks):
            entries += [(rack, ("rack_blocks", i)) for rack in expand_rack_block(block)]
        return entries

    @cached_property
    def used_nic_models(self) -> dict[str, YamlPath]:
        """NIC models that the node models of some group carry, with the first device naming each."""
        used: dict[str, YamlPath] = {}
        for group in self.inventory.groups:
            node = self.inventory.models.nodes.get(group.model)
            for di, device in enumerate(node.devices if node else []):
                if device.kind == "nic":
                    used.setdefault(device.model, ("models", "nodes", group.model, "devices", di, "model"))
        return used

    @cached_property
    def switch_model(self) -> SwitchModel | None:
        return self.inventory.models.switches.get(self.inventory.fabric.switch_model)

    @cached_property
    def zone_shape(self) -> TreeSize | SizingError | None:
        """The designer's zone size, the sizing error, or None when the switch model is unknown."""
        if self.switch_model is None:
            return None
        try:
            return zone_size(self.resolved, fabric_radix(self.inventory))
        except SizingError as exc:
            return exc

    @cached_property
    def rack_draws(self) -> dict[str, tuple[Draw, int, int]]:
        """(draw, nodes, switches) of each rack holding something: its hosts, and the switches as the designer racks
        them (left out when the fabric cannot be sized or racked: other rules and the designer say why)."""
        draws = host_draws(self.loaded)
        nodes: dict[str, int] = {}
        for host in self.resolved.hosts:
            nodes[host.rack] = nodes.get(host.rack, 0) + 1
        switches: dict[str, int] = {}
        named = {
            r for tree in self.inventory.fabric.trees for r in tree.leaf_racks + tree.spine_racks + tree.core_racks
        }
        racked = []
        if (
            self.switch_model is not None
            and isinstance(self.zone_shape, TreeSize)
            and named <= set(self.resolved.racks)
        ):
            try:
                racked = rack_switches(self.loaded, self.zone_shape)
            except InfeasibleError:
                pass
            for sw in racked:
                draws[sw.rack] = draws.get(sw.rack, Draw()) + model_draw(self.switch_model)
                switches[sw.rack] = switches.get(sw.rack, 0) + 1
        return {rack: (draw, nodes.get(rack, 0), switches.get(rack, 0)) for rack, draw in draws.items()}

    @cached_property
    def demand(self) -> PortDemand:
        return port_demand(self.resolved)

    def where(self, path: YamlPath) -> str:
        """`groups[0].hostname (line 12)`: how one finding points at the other place involved."""
        return self.loaded.collector.where(path)

    def node_units(self, model: str) -> int:
        node = self.inventory.models.nodes.get(model)
        return node.rack_units if node else 1

    def host_path(self, host: ResolvedHost, field: str) -> YamlPath:
        """Path of a host's field: on the host when written explicitly, on its group when generated."""
        if host.host_index is not None:
            return host.path + (field,)
        return host.path + (_GROUP_FIELD[field],)

    def is_generated(self, host: ResolvedHost) -> bool:
        return host.host_index is None
