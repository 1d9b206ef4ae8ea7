"""FF3xx: node models: PCIe root ports, NUMA nodes, devices and NVLink bridges must describe real hardware."""

from __future__ import annotations

from typing import Iterator

from ffplan.codes import lint as codes
from ffplan.design.host_checks import CUDA_DRIVER_SOURCE, driver_minimum, version_key
from ffplan.diagnostics import Severity, YamlPath
from ffplan.inventory import node_checks
from ffplan.inventory.models import NodeModel
from ffplan.inventory.node_checks import NodeCheck
from ffplan.lint.context import LintContext
from ffplan.lint.declare import Finding, rule


def _node_models(ctx: LintContext) -> Iterator[tuple[str, NodeModel, YamlPath]]:
    for name, node in ctx.inventory.models.nodes.items():
        yield name, node, ("models", "nodes", name)


def _on_every_model(ctx: LintContext, check: NodeCheck) -> Iterator[Finding]:
    """The findings of one of the node-model checks that design shares (ffplan.inventory.node_checks)."""
    for name, node, _ in _node_models(ctx):
        for finding in check(ctx.loaded, name, node):
            yield Finding(finding.path, finding.message, finding.hint)


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
    return _on_every_model(ctx, node_checks.unknown_root_port)


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
    return _on_every_model(ctx, node_checks.unknown_device_model)


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
    return _on_every_model(ctx, node_checks.numa_node_out_of_range)


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
    return _on_every_model(ctx, node_checks.root_port_lanes_oversubscribed)


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
    return _on_every_model(ctx, node_checks.duplicate_device_name)


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
    return _on_every_model(ctx, node_checks.duplicate_bus_id)


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
    return _on_every_model(ctx, node_checks.nvlink_pair_invalid)


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
    return _on_every_model(ctx, node_checks.unknown_pcie_switch)


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
    return _on_every_model(ctx, node_checks.pcie_switch_loop)


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
    return _on_every_model(ctx, node_checks.pcie_switch_without_devices)


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
