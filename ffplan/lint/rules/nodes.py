"""FF3xx: node models: PCIe root ports, NUMA nodes, devices and NVLink bridges must describe real hardware."""

from __future__ import annotations

import dataclasses
from typing import Iterator

from ffplan.codes import lint as codes
from ffplan.design.host_checks import CUDA_DRIVER_SOURCE, driver_minimum, version_key
from ffplan.diagnostics import Severity, YamlPath
from ffplan.inventory.models import NicModel, NodeModel
from ffplan.lint.context import LintContext
from ffplan.lint.helpers import duplicates, plural, unknown_reference
from ffplan.lint.declare import Finding, rule


def _node_models(ctx: LintContext) -> Iterator[tuple[str, NodeModel, YamlPath]]:
    for name, node in ctx.inventory.models.nodes.items():
        yield name, node, ("models", "nodes", name)


def _device_models(ctx: LintContext, kind: str) -> dict:
    return ctx.inventory.models.gpus if kind == "gpu" else ctx.inventory.models.nics


@rule(
    codes.UNKNOWN_ROOT_PORT,
    Severity.ERROR,
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
            if device.root_port is None:
                continue  # under a PCIe switch (FF308)
            path = base + ("devices", di, "root_port")
            context = f" for device '{device.name}' in node model '{name}'"
            if finding := unknown_reference(
                path, "root port", device.root_port, ports, f"models.nodes.{name}.root_ports", context
            ):
                yield finding


@rule(
    codes.UNKNOWN_DEVICE_MODEL,
    Severity.ERROR,
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
    for _, node, base in _node_models(ctx):
        for di, device in enumerate(node.devices):
            section = "models.gpus" if device.kind == "gpu" else "models.nics"
            finding = unknown_reference(
                base + ("devices", di, "model"),
                f"{device.kind.upper()} model",
                device.model,
                _device_models(ctx, device.kind),
                section,
            )
            if finding is None:
                continue
            other = "nic" if device.kind == "gpu" else "gpu"
            if device.model in _device_models(ctx, other):
                finding = dataclasses.replace(
                    finding, hint=f"'{device.model}' is a {other.upper()} model: set kind: {other}"
                )
            yield finding


@rule(
    codes.NUMA_NODE_OUT_OF_RANGE,
    Severity.ERROR,
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
    codes.ROOT_PORT_LANES_OVERSUBSCRIBED,
    Severity.ERROR,
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
    (from their GPU/NIC models) and of the upstream links of the PCIe switches on it must not exceed
    the root port's `pcie.lanes`. Devices under a switch share the switch's upstream link instead, and the
    functions of one card (a multi-planar NIC's planes, bus ids that differ only in the function) its one link.
    """
    for name, node, base in _node_models(ctx):
        for ri, port in enumerate(node.root_ports):
            users = [(switch.name, switch.pcie.lanes) for switch in node.pcie_switches if switch.upstream == port.name]
            cards: set[str] = set()  # a multi-planar NIC's functions share its one link
            for device in node.devices:
                model = _device_models(ctx, device.kind).get(device.model)
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
                yield Finding(
                    base + ("root_ports", ri, "pcie", "lanes"),
                    f"root port '{port.name}' of node model '{name}' has {port.pcie.lanes} lanes but its devices need {needed}: {shown}",
                    f"give the root port pcie: {{lanes: {needed}}} if the host bridge has them, or move a device to another root port",
                )


@rule(
    codes.DUPLICATE_DEVICE_NAME,
    Severity.ERROR,
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
    pairs; root port and PCIe switch names are what devices and switches hang under, so they share one
    name space. Each must be unique within its node model.
    """
    for _, node, base in _node_models(ctx):
        devices = [(d.name, base + ("devices", i, "name")) for i, d in enumerate(node.devices)]
        parents = [(r.name, base + ("root_ports", i, "name")) for i, r in enumerate(node.root_ports)]
        parents += [(sw.name, base + ("pcie_switches", i, "name")) for i, sw in enumerate(node.pcie_switches)]
        for kind, entries in (("device", devices), ("root port or PCIe switch", parents)):
            for item_name, path, first in duplicates(entries):
                yield Finding(
                    path,
                    f"{kind} '{item_name}' is also defined by {ctx.where(first)}",
                    f"give each {kind} its own name",
                )


@rule(
    codes.DUPLICATE_BUS_ID,
    Severity.ERROR,
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
    A PCI bus id (domain:bus:device.function) addresses exactly one function (a PCIe switch is named by
    its upstream port's). NCCL's topology XML and the host scripts find devices by it, so two devices with one bus id cannot both be found; usually a
    copied line whose bus id was not updated (compare `lspci -D`).
    """
    for _, node, base in _node_models(ctx):
        entries = [(device.bus_id, base + ("devices", di, "bus_id")) for di, device in enumerate(node.devices)]
        entries += [
            (switch.bus_id, base + ("pcie_switches", si, "bus_id")) for si, switch in enumerate(node.pcie_switches)
        ]
        for bus_id, path, first in duplicates(entries):
            yield Finding(
                path,
                f"bus id {bus_id} is also used by {ctx.where(first)}",
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


@rule(
    codes.NVLINK_PAIR_INVALID,
    Severity.ERROR,
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
                f
                for ni, device in enumerate(pair)
                if (
                    f := unknown_reference(
                        base + ("nvlink_pairs", pi, ni),
                        "device",
                        device,
                        devices,
                        f"models.nodes.{name}.devices",
                        f" in node model '{name}'",
                    )
                )
            ]
            if unknown:
                yield from unknown
            elif problem := _nvlink_problem(node, pair, bridged):
                yield Finding(
                    base + ("nvlink_pairs", pi),
                    f"NVLink pair {pi} of node model '{name}' {problem}",
                    "list each bridged pair of GPUs once",
                )
            else:
                bridged.update({pair[0]: pair[1], pair[1]: pair[0]})


@rule(
    codes.UNKNOWN_PCIE_SWITCH,
    Severity.ERROR,
    bad="""
    root_ports: [{name: rp0, numa: 0}]
    pcie_switches: [{name: sw0, upstream: rp1, bus_id: "0000:17:00.0"}]
    devices:
      - {name: gpu0, kind: gpu, model: H800, pcie_switch: sw1, bus_id: "0000:19:00.0"}
    """,
    good="""
    root_ports: [{name: rp0, numa: 0}]
    pcie_switches: [{name: sw0, upstream: rp0, bus_id: "0000:17:00.0"}]
    devices:
      - {name: gpu0, kind: gpu, model: H800, pcie_switch: sw0, bus_id: "0000:19:00.0"}
    """,
)
def unknown_pcie_switch(ctx: LintContext) -> Iterator[Finding]:
    """
    On HGX-style boards GPUs and NICs sit behind PCIe switches: a device names its switch in
    `pcie_switch` (instead of `root_port`), and each switch names in `upstream` the root port or the
    switch above it. Both must be defined in the same node model, or the device has no place in NCCL's
    topology file and its GPU-NIC path type (PIX, PXB, PHB) cannot be computed.
    """
    for name, node, base in _node_models(ctx):
        switches = [sw.name for sw in node.pcie_switches]
        parents = [rp.name for rp in node.root_ports] + switches
        for si, switch in enumerate(node.pcie_switches):
            if finding := unknown_reference(
                base + ("pcie_switches", si, "upstream"),
                "root port or PCIe switch",
                switch.upstream,
                parents,
                f"models.nodes.{name}.root_ports or pcie_switches",
                f" above PCIe switch '{switch.name}' in node model '{name}'",
            ):
                yield finding
        for di, device in enumerate(node.devices):
            if device.pcie_switch is None:
                continue
            if finding := unknown_reference(
                base + ("devices", di, "pcie_switch"),
                "PCIe switch",
                device.pcie_switch,
                switches,
                f"models.nodes.{name}.pcie_switches",
                f" for device '{device.name}' in node model '{name}'",
            ):
                yield finding


@rule(
    codes.PCIE_SWITCH_LOOP,
    Severity.ERROR,
    bad="""
    pcie_switches:
      - {name: sw0, upstream: sw1, bus_id: "0000:17:00.0"}
      - {name: sw1, upstream: sw0, bus_id: "0000:18:00.0"}
    """,
    good="""
    pcie_switches:
      - {name: sw0, upstream: rp0, bus_id: "0000:17:00.0"}
      - {name: sw1, upstream: sw0, bus_id: "0000:18:00.0"}
    """,
)
def pcie_switch_loop(ctx: LintContext) -> Iterator[Finding]:
    """
    Following `upstream` from any PCIe switch must end at a CPU root port: that root port gives the
    switch and everything under it a NUMA node. Switches that name each other (directly or through
    others) never reach one; the loop is reported once, at its first switch.
    """
    for name, node, base in _node_models(ctx):
        index = {sw.name: i for i, sw in reversed(list(enumerate(node.pcie_switches)))}
        for loop in node.pcie_switch_loops():
            yield Finding(
                base + ("pcie_switches", index[loop[0]], "upstream"),
                f"PCIe switches {' -> '.join(loop + loop[:1])} of node model '{name}' hang under each other and reach no root port",
                "set the upstream of the top switch to its root port (lspci -tv shows the tree)",
            )


@rule(
    codes.PCIE_SWITCH_WITHOUT_DEVICES,
    Severity.WARNING,
    bad="""
    pcie_switches: [{name: sw0, upstream: rp0, bus_id: "0000:17:00.0"}, {name: sw1, upstream: rp1, bus_id: "0000:97:00.0"}]
    devices:
      - {name: gpu0, kind: gpu, model: H800, pcie_switch: sw0, bus_id: "0000:19:00.0"}
    """,
    good="""
    pcie_switches: [{name: sw0, upstream: rp0, bus_id: "0000:17:00.0"}, {name: sw1, upstream: rp1, bus_id: "0000:97:00.0"}]
    devices:
      - {name: gpu0, kind: gpu, model: H800, pcie_switch: sw0, bus_id: "0000:19:00.0"}
      - {name: mlx5_0, kind: nic, model: CX7, pcie_switch: sw1, bus_id: "0000:99:00.0"}
    """,
)
def pcie_switch_without_devices(ctx: LintContext) -> Iterator[Finding]:
    """
    A switch is in the node model for the GPUs and NICs under it (directly or through lower switches):
    they decide the PIX/PXB paths and GPUDirect RDMA. A switch with none is usually a device whose
    `pcie_switch` names the wrong switch; NCCL would drop the empty branch from the topology anyway.
    """
    for name, node, base in _node_models(ctx):
        upstream = {sw.name: sw.upstream for sw in node.pcie_switches}
        used: set[str] = set()
        for device in node.devices:
            current = device.pcie_switch
            while current in upstream and current not in used:
                used.add(current)
                current = upstream[current]
        for si, switch in enumerate(node.pcie_switches):
            if switch.name not in used:
                yield Finding(
                    base + ("pcie_switches", si, "name"),
                    f"PCIe switch '{switch.name}' of node model '{name}' has no GPU or NIC under it",
                    "point the devices behind it at it with pcie_switch, or remove it",
                )


@rule(
    codes.DRIVER_OLDER_THAN_CUDA_NEEDS,
    Severity.ERROR,
    bad="""
    versions: {nvidia_driver: 550.127.05, cuda: "13.0"}   # CUDA 13.x needs a 580 driver
    """,
    good="""
    versions: {nvidia_driver: 580.82.07, cuda: "13.0"}
    """,
)
def driver_older_than_cuda_needs(ctx: LintContext) -> Iterator[Finding]:
    """
    `versions` says what the hosts of a node model run; host-check.sh checks each host has at least
    that. NVIDIA's CUDA Compatibility guide (Minor Version Compatibility, Table 1) gives the oldest
    driver each CUDA major release runs on: CUDA 13.x needs 580 or later, 12.x 525, 11.x 450. A node
    model declaring an older driver than its CUDA needs describes hosts where CUDA fails to start.
    """
    for name, node, base in _node_models(ctx):
        needed, driver = driver_minimum(node), node.versions.nvidia_driver
        if needed and driver and version_key(driver)[0] < needed:
            yield Finding(
                base + ("versions", "nvidia_driver"),
                f"node model '{name}' declares NVIDIA driver {driver}, but CUDA {node.versions.cuda} "
                f"needs {needed} or later ({CUDA_DRIVER_SOURCE})",
                f"declare (and install) a {needed}-series driver or later, or an older CUDA",
            )
