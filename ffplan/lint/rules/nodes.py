"""FF3xx: node models: PCIe root ports, NUMA nodes, devices and NVLink bridges must describe real hardware."""

from __future__ import annotations

import dataclasses
from typing import Iterator

from ffplan.diagnostics import Severity, YamlPath
from ffplan.inventory.models import NodeModel
from ffplan.lint.context import LintContext
from ffplan.lint.helpers import duplicates, plural, unknown_reference
from ffplan.lint.registry import Finding, rule


def _node_models(ctx: LintContext) -> Iterator[tuple[str, NodeModel, YamlPath]]:
    for name, node in ctx.inventory.models.nodes.items():
        yield name, node, ("models", "nodes", name)


def _device_models(ctx: LintContext, kind: str) -> dict:
    return ctx.inventory.models.gpus if kind == "gpu" else ctx.inventory.models.nics


@rule(
    "FF301", "unknown-root-port", Severity.ERROR,
    summary="a device sits on a root port the node model does not define",
    bad="""
    root_ports: [{name: rp0, numa: 0}]
    devices:
      - {name: gpu0, kind: gpu, model: A100, root_port: rp1, bus_id: "0000:01:00.0"}
    """,
    good="""
    root_ports: [{name: rp0, numa: 0}, {name: rp1, numa: 0}]
    devices:
      - {name: gpu0, kind: gpu, model: A100, root_port: rp1, bus_id: "0000:01:00.0"}
    """,
)
def unknown_root_port(ctx: LintContext) -> Iterator[Finding]:
    """
    Each GPU and NIC hangs off a PCIe root port (a host bridge), and the root port fixes its NUMA node.
    That is what GPU-NIC affinity, NCCL's topology file and the GPUDirect level are computed from, so a
    device on an undefined root port has no place in the node's topology.
    """
    for name, node, base in _node_models(ctx):
        ports = [rp.name for rp in node.root_ports]
        for di, device in enumerate(node.devices):
            path = base + ("devices", di, "root_port")
            context = f" for device '{device.name}' in node model '{name}'"
            if finding := unknown_reference(path, "root port", device.root_port, ports, f"models.nodes.{name}.root_ports", context):
                yield finding


@rule(
    "FF302", "unknown-device-model", Severity.ERROR,
    summary="a device names a GPU or NIC model that is not defined",
    bad="""
    models:
      gpus: {A100-PCIe-40GB: {}}
      nodes:
        gpu-node:
          devices: [{name: gpu0, kind: gpu, model: A100-PCIE-40GB, root_port: rp0, bus_id: "0000:01:00.0"}]
    """,
    good="""
    models:
      gpus: {A100-PCIe-40GB: {}}
      nodes:
        gpu-node:
          devices: [{name: gpu0, kind: gpu, model: A100-PCIe-40GB, root_port: rp0, bus_id: "0000:01:00.0"}]
    """,
)
def unknown_device_model(ctx: LintContext) -> Iterator[Finding]:
    """
    A device of kind `gpu` must name a key of `models.gpus`, one of kind `nic` a key of `models.nics`:
    the model gives its PCIe lanes, port count, speed and VLs. A model of the other kind (a NIC model on
    a `kind: gpu` device) is reported with a hint to fix the kind.
    """
    for name, node, base in _node_models(ctx):
        for di, device in enumerate(node.devices):
            section = "models.gpus" if device.kind == "gpu" else "models.nics"
            finding = unknown_reference(base + ("devices", di, "model"), f"{device.kind.upper()} model", device.model,
                                        _device_models(ctx, device.kind), section)
            if finding is None:
                continue
            other = "nic" if device.kind == "gpu" else "gpu"
            if device.model in _device_models(ctx, other):
                finding = dataclasses.replace(finding, hint=f"'{device.model}' is a {other.upper()} model: set kind: {other}")
            yield finding


@rule(
    "FF303", "numa-node-out-of-range", Severity.ERROR,
    summary="a root port is on a NUMA node the CPU configuration does not have",
    bad="""
    cpu: {sockets: 2, nps: 1}          # NUMA nodes 0 and 1
    root_ports: [{name: rp0, numa: 2}]
    """,
    good="""
    cpu: {sockets: 2, nps: 2}          # NUMA nodes 0-3
    root_ports: [{name: rp0, numa: 2}]
    """,
)
def numa_node_out_of_range(ctx: LintContext) -> Iterator[Finding]:
    """
    A node has `sockets x nps` NUMA nodes (AMD's NPS setting: NUMA nodes per socket), numbered from 0;
    NPS0 makes the whole machine one NUMA node. A root port on a higher NUMA node cannot exist, and the
    CPU affinity rendered for its devices would point at nothing.
    """
    for name, node, base in _node_models(ctx):
        numa_nodes = 1 if node.cpu.nps == 0 else node.cpu.sockets * node.cpu.nps
        for ri, port in enumerate(node.root_ports):
            if port.numa >= numa_nodes:
                yield Finding(
                    base + ("root_ports", ri, "numa"),
                    f"root port '{port.name}' of node model '{name}' is on NUMA node {port.numa}, but "
                    f"{plural(node.cpu.sockets, 'socket')} at NPS{node.cpu.nps} give {plural(numa_nodes, 'NUMA node')} (0-{numa_nodes - 1})",
                    "fix the root port's numa, or the cpu's sockets/nps",
                )


@rule(
    "FF304", "root-port-lanes-oversubscribed", Severity.ERROR,
    summary="the devices on a root port need more PCIe lanes than it has",
    bad="""
    root_ports: [{name: rp6, numa: 1}]     # x16 by default
    devices:
      - {name: gpu5, kind: gpu, model: A100, root_port: rp6, bus_id: "0000:a1:00.0"}
      - {name: gpu6, kind: gpu, model: A100, root_port: rp6, bus_id: "0000:a2:00.0"}
    """,
    good="""
    root_ports: [{name: rp6, numa: 1, pcie: {lanes: 32}}]   # one host bridge, two x16 links
    devices:
      - {name: gpu5, kind: gpu, model: A100, root_port: rp6, bus_id: "0000:a1:00.0"}
      - {name: gpu6, kind: gpu, model: A100, root_port: rp6, bus_id: "0000:a2:00.0"}
    """,
)
def root_port_lanes_oversubscribed(ctx: LintContext) -> Iterator[Finding]:
    """
    Two devices may share a root port (GPU5 and GPU6 of a Fire-Flyer 2 node share a host bridge), but
    without a PCIe switch the root port must have the lanes for both: the sum of the devices' lanes
    (from their GPU/NIC models) must not exceed the root port's `pcie.lanes`.
    """
    for name, node, base in _node_models(ctx):
        for ri, port in enumerate(node.root_ports):
            users = []
            for device in node.devices:
                model = _device_models(ctx, device.kind).get(device.model)
                if device.root_port == port.name and model is not None:
                    users.append((device.name, model.pcie.lanes))
            needed = sum(lanes for _, lanes in users)
            if needed > port.pcie.lanes:
                shown = ", ".join(f"{dev} (x{lanes})" for dev, lanes in users)
                yield Finding(
                    base + ("root_ports", ri, "pcie", "lanes"),
                    f"root port '{port.name}' of node model '{name}' has {port.pcie.lanes} lanes but its devices need {needed}: {shown}",
                    f"give the root port pcie: {{lanes: {needed}}} if the host bridge has them, or move a device to another root port",
                )


@rule(
    "FF305", "duplicate-device-name", Severity.ERROR,
    summary="a node model names two devices or two root ports alike",
    bad="""
    devices:
      - {name: gpu0, kind: gpu, model: A100, root_port: rp0, bus_id: "0000:01:00.0"}
      - {name: gpu0, kind: gpu, model: A100, root_port: rp1, bus_id: "0000:21:00.0"}
    """,
    good="""
    devices:
      - {name: gpu0, kind: gpu, model: A100, root_port: rp0, bus_id: "0000:01:00.0"}
      - {name: gpu1, kind: gpu, model: A100, root_port: rp1, bus_id: "0000:21:00.0"}
    """,
)
def duplicate_device_name(ctx: LintContext) -> Iterator[Finding]:
    """
    Device names are OS names (gpu0, mlx5_0) used in NCCL's topology file, port GUID maps and NVLink
    pairs; root port names are what devices refer to. Each must be unique within its node model.
    """
    for name, node, base in _node_models(ctx):
        device_names, root_port_names = [d.name for d in node.devices], [r.name for r in node.root_ports]
        for key, kind, names in (("devices", "device", device_names), ("root_ports", "root port", root_port_names)):
            entries = ((item_name, base + (key, i, "name")) for i, item_name in enumerate(names))
            for item_name, path, first in duplicates(entries):
                yield Finding(path, f"{kind} '{item_name}' is also defined by {ctx.where(first)}", f"give each {kind} its own name")


@rule(
    "FF306", "duplicate-bus-id", Severity.ERROR,
    summary="two devices of a node model have the same PCI bus id",
    bad="""
    devices:
      - {name: gpu0, kind: gpu, model: A100, root_port: rp0, bus_id: "0000:01:00.0"}
      - {name: gpu1, kind: gpu, model: A100, root_port: rp1, bus_id: "0000:01:00.0"}
    """,
    good="""
    devices:
      - {name: gpu0, kind: gpu, model: A100, root_port: rp0, bus_id: "0000:01:00.0"}
      - {name: gpu1, kind: gpu, model: A100, root_port: rp1, bus_id: "0000:21:00.0"}
    """,
)
def duplicate_bus_id(ctx: LintContext) -> Iterator[Finding]:
    """
    A PCI bus id (domain:bus:device.function) addresses exactly one function. NCCL's topology XML and
    the host scripts find devices by it, so two devices with one bus id cannot both be found; usually a
    copied line whose bus id was not updated (compare `lspci -D`).
    """
    for name, node, base in _node_models(ctx):
        entries = ((device.bus_id, base + ("devices", di, "bus_id")) for di, device in enumerate(node.devices))
        for bus_id, path, first in duplicates(entries):
            yield Finding(path, f"bus id {bus_id} is also used by {ctx.where(first)}", "take the bus ids from `lspci -D` on the node")


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


@rule(
    "FF307", "nvlink-pair-invalid", Severity.ERROR,
    summary="an NVLink pair names an unknown device, a non-GPU, or a GPU twice",
    bad="""
    nvlink_pairs: [[gpu0, mlx5_0], [gpu2, gpu9]]
    """,
    good="""
    nvlink_pairs: [[gpu0, gpu1], [gpu2, gpu3]]
    """,
)
def nvlink_pair_invalid(ctx: LintContext) -> Iterator[Finding]:
    """
    `nvlink_pairs` lists the GPUs joined by an NVLink bridge (PCIe A100s pair up two at a time). Each
    entry must name two different GPU devices of the node model, and a GPU can sit in one pair only.
    """
    for name, node, base in _node_models(ctx):
        devices = [d.name for d in node.devices]
        bridged: dict[str, str] = {}
        for pi, pair in enumerate(node.nvlink_pairs):
            unknown = [
                f for ni, device in enumerate(pair)
                if (f := unknown_reference(base + ("nvlink_pairs", pi, ni), "device", device, devices,
                                           f"models.nodes.{name}.devices", f" in node model '{name}'"))
            ]
            if unknown:
                yield from unknown
            elif problem := _nvlink_problem(node, pair, bridged):
                yield Finding(base + ("nvlink_pairs", pi), f"NVLink pair {pi} of node model '{name}' {problem}",
                              "list each bridged pair of GPUs once")
            else:
                bridged.update({pair[0]: pair[1], pair[1]: pair[0]})
