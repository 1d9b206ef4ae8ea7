"""The node-model checks (FF301-FF310): one definition that lint's rules report and design's host step refuses on.

Each check takes a loaded inventory and one of its node models (name and model) and yields `NodeFinding`s: code,
YAML path, message and hint. Lint runs every check on every node model (`ffplan.lint.rules.nodes`, where
`ffplan explain` finds the why); design runs those it cannot build host profiles without on the models its hosts
use (`ffplan.design.hosts`). This module sits below both, so neither imports the other for them.
"""

from __future__ import annotations

from typing import Callable, Iterator, NamedTuple

from ffplan.codes import lint as codes
from ffplan.codes.code import Code
from ffplan.diagnostics import YamlPath, duplicates, plural, unknown_name
from ffplan.inventory.load import LoadedInventory
from ffplan.inventory.models import GpuModel, NicModel, NodeModel


class NodeFinding(NamedTuple):
    code: Code
    path: YamlPath
    message: str
    hint: str


NodeCheck = Callable[[LoadedInventory, str, NodeModel], Iterator[NodeFinding]]


def _base(name: str) -> YamlPath:
    return ("models", "nodes", name)


def _unknown(
    code: Code, path: YamlPath, kind: str, name: str, known: list[str], defined_at: str, context: str = ""
) -> Iterator[NodeFinding]:
    if unknown := unknown_name(kind, name, known, defined_at, context):
        yield NodeFinding(code, path, *unknown)


def device_models(loaded: LoadedInventory, kind: str) -> dict[str, GpuModel] | dict[str, NicModel]:
    """The GPU or NIC models a device of `kind` names its model among."""
    models = loaded.inventory.models
    return models.gpus if kind == "gpu" else models.nics


def unknown_root_port(loaded: LoadedInventory, name: str, node: NodeModel) -> Iterator[NodeFinding]:
    ports = [rp.name for rp in node.root_ports]
    for di, device in enumerate(node.devices):
        if device.root_port is None:
            continue  # under a PCIe switch (FF308)
        yield from _unknown(
            codes.UNKNOWN_ROOT_PORT,
            _base(name) + ("devices", di, "root_port"),
            "root port",
            device.root_port,
            ports,
            f"models.nodes.{name}.root_ports",
            f" for device '{device.name}' in node model '{name}'",
        )


def unknown_device_model(loaded: LoadedInventory, name: str, node: NodeModel) -> Iterator[NodeFinding]:
    for di, device in enumerate(node.devices):
        section = "models.gpus" if device.kind == "gpu" else "models.nics"
        known = list(device_models(loaded, device.kind))
        for finding in _unknown(
            codes.UNKNOWN_DEVICE_MODEL,
            _base(name) + ("devices", di, "model"),
            f"{device.kind.upper()} model",
            device.model,
            known,
            section,
        ):
            other = "nic" if device.kind == "gpu" else "gpu"
            if device.model in device_models(loaded, other):
                finding = finding._replace(hint=f"'{device.model}' is a {other.upper()} model: set kind: {other}")
            yield finding


def numa_node_out_of_range(loaded: LoadedInventory, name: str, node: NodeModel) -> Iterator[NodeFinding]:
    numa_nodes = 1 if node.cpu.nps == 0 else node.cpu.sockets * node.cpu.nps
    for ri, port in enumerate(node.root_ports):
        if port.numa >= numa_nodes:
            yield NodeFinding(
                codes.NUMA_NODE_OUT_OF_RANGE,
                _base(name) + ("root_ports", ri, "numa"),
                f"root port '{port.name}' of node model '{name}' is on NUMA node {port.numa}, but "
                f"{plural(node.cpu.sockets, 'socket')} at NPS{node.cpu.nps} give {plural(numa_nodes, 'NUMA node')} (0-{numa_nodes - 1})",
                "fix the root port's numa, or the cpu's sockets/nps",
            )


def root_port_lanes_oversubscribed(loaded: LoadedInventory, name: str, node: NodeModel) -> Iterator[NodeFinding]:
    for ri, port in enumerate(node.root_ports):
        users = [(switch.name, switch.pcie.lanes) for switch in node.pcie_switches if switch.upstream == port.name]
        cards: set[str] = set()  # a multi-planar NIC's functions share its one link
        for device in node.devices:
            model = device_models(loaded, device.kind).get(device.model)
            if device.root_port != port.name or model is None:
                continue
            if isinstance(model, NicModel) and model.planes > 1:
                if device.bus_id[:-1] in cards:
                    continue
                cards.add(device.bus_id[:-1])
            users.append((device.name, model.pcie.lanes))
        needed = sum(lanes for _, lanes in users)
        if needed > port.pcie.lanes:
            shown = ", ".join(f"{dev} (x{lanes})" for dev, lanes in users)
            yield NodeFinding(
                codes.ROOT_PORT_LANES_OVERSUBSCRIBED,
                _base(name) + ("root_ports", ri, "pcie", "lanes"),
                f"root port '{port.name}' of node model '{name}' has {port.pcie.lanes} lanes but its devices need {needed}: {shown}",
                f"give the root port pcie: {{lanes: {needed}}} if the host bridge has them, or move a device to another root port",
            )


def duplicate_device_name(loaded: LoadedInventory, name: str, node: NodeModel) -> Iterator[NodeFinding]:
    base = _base(name)
    devices = [(d.name, base + ("devices", i, "name")) for i, d in enumerate(node.devices)]
    parents = [(r.name, base + ("root_ports", i, "name")) for i, r in enumerate(node.root_ports)]
    parents += [(sw.name, base + ("pcie_switches", i, "name")) for i, sw in enumerate(node.pcie_switches)]
    for kind, entries in (("device", devices), ("root port or PCIe switch", parents)):
        for item_name, path, first in duplicates(entries):
            yield NodeFinding(
                codes.DUPLICATE_DEVICE_NAME,
                path,
                f"{kind} '{item_name}' is also defined by {loaded.collector.where(first)}",
                f"give each {kind} its own name",
            )


def duplicate_bus_id(loaded: LoadedInventory, name: str, node: NodeModel) -> Iterator[NodeFinding]:
    base = _base(name)
    entries = [(device.bus_id, base + ("devices", di, "bus_id")) for di, device in enumerate(node.devices)]
    entries += [(switch.bus_id, base + ("pcie_switches", si, "bus_id")) for si, switch in enumerate(node.pcie_switches)]
    for bus_id, path, first in duplicates(entries):
        yield NodeFinding(
            codes.DUPLICATE_BUS_ID,
            path,
            f"bus id {bus_id} is also used by {loaded.collector.where(first)}",
            "take the bus ids from `lspci -D` on the node",
        )


def _nvlink_problem(node: NodeModel, pair: tuple[str, str], bridged: dict[str, str]) -> str:
    kinds = {d.name: d.kind for d in node.devices}
    first, second = pair
    if first == second:
        return f"pairs '{first}' with itself"
    for device in pair:
        if kinds.get(device, "gpu") != "gpu":
            return f"names '{device}', a {kinds[device].upper()}: NVLink bridges join two GPUs"
        if device in bridged:
            return f"bridges '{device}' again (already paired with '{bridged[device]}')"
    return ""


def nvlink_pair_invalid(loaded: LoadedInventory, name: str, node: NodeModel) -> Iterator[NodeFinding]:
    devices = [d.name for d in node.devices]
    bridged: dict[str, str] = {}
    for pi, pair in enumerate(node.nvlink_pairs):
        unknown = [
            finding
            for ni, device in enumerate(pair)
            for finding in _unknown(
                codes.NVLINK_PAIR_INVALID,
                _base(name) + ("nvlink_pairs", pi, ni),
                "device",
                device,
                devices,
                f"models.nodes.{name}.devices",
                f" in node model '{name}'",
            )
        ]
        if unknown:
            yield from unknown
        elif problem := _nvlink_problem(node, pair, bridged):
            yield NodeFinding(
                codes.NVLINK_PAIR_INVALID,
                _base(name) + ("nvlink_pairs", pi),
                f"NVLink pair {pi} of node model '{name}' {problem}",
                "list each bridged pair of GPUs once",
            )
        else:
            bridged.update({pair[0]: pair[1], pair[1]: pair[0]})


def unknown_pcie_switch(loaded: LoadedInventory, name: str, node: NodeModel) -> Iterator[NodeFinding]:
    switches = [sw.name for sw in node.pcie_switches]
    parents = [rp.name for rp in node.root_ports] + switches
    for si, switch in enumerate(node.pcie_switches):
        yield from _unknown(
            codes.UNKNOWN_PCIE_SWITCH,
            _base(name) + ("pcie_switches", si, "upstream"),
            "root port or PCIe switch",
            switch.upstream,
            parents,
            f"models.nodes.{name}.root_ports or pcie_switches",
            f" above PCIe switch '{switch.name}' in node model '{name}'",
        )
    for di, device in enumerate(node.devices):
        if device.pcie_switch is None:
            continue
        yield from _unknown(
            codes.UNKNOWN_PCIE_SWITCH,
            _base(name) + ("devices", di, "pcie_switch"),
            "PCIe switch",
            device.pcie_switch,
            switches,
            f"models.nodes.{name}.pcie_switches",
            f" for device '{device.name}' in node model '{name}'",
        )


def pcie_switch_loop(loaded: LoadedInventory, name: str, node: NodeModel) -> Iterator[NodeFinding]:
    index = {sw.name: i for i, sw in reversed(list(enumerate(node.pcie_switches)))}
    for loop in node.pcie_switch_loops():
        yield NodeFinding(
            codes.PCIE_SWITCH_LOOP,
            _base(name) + ("pcie_switches", index[loop[0]], "upstream"),
            f"PCIe switches {' -> '.join(loop + loop[:1])} of node model '{name}' hang under each other and reach no root port",
            "set the upstream of the top switch to its root port (lspci -tv shows the tree)",
        )


def pcie_switch_without_devices(loaded: LoadedInventory, name: str, node: NodeModel) -> Iterator[NodeFinding]:
    upstream = {sw.name: sw.upstream for sw in node.pcie_switches}
    used: set[str] = set()
    for device in node.devices:
        current = device.pcie_switch
        while current in upstream and current not in used:
            used.add(current)
            current = upstream[current]
    for si, switch in enumerate(node.pcie_switches):
        if switch.name not in used:
            yield NodeFinding(
                codes.PCIE_SWITCH_WITHOUT_DEVICES,
                _base(name) + ("pcie_switches", si, "name"),
                f"PCIe switch '{switch.name}' of node model '{name}' has no GPU or NIC under it",
                "point the devices behind it at it with pcie_switch, or remove it",
            )
