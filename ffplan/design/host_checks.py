"""What host-check.sh checks beyond the devices and files: GPUDirect RDMA's peer-memory module, each NIC's PCIe
MaxReadReqSize, the IB MTU, and the software versions the inventory declares against NVIDIA's driver table.

Lint (FF311) reads the table too, so this module loads no plan model at import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ffplan.inventory.models import NodeModel

if TYPE_CHECKING:
    from ffplan.plan.model import HostChecks

# Minimum NVIDIA driver (major) per CUDA major release: NVIDIA's "CUDA Compatibility" guide, "Minor Version
# Compatibility", Table 1 (CUDA 13.x >= 580, 12.x >= 525, 11.x >= 450; the release notes give each toolkit's own).
CUDA_DRIVER_MINIMUM = {13: 580, 12: 525, 11: 450}
CUDA_DRIVER_SOURCE = "NVIDIA CUDA Compatibility guide, Minor Version Compatibility, Table 1"
# The RDMA profiling article among the project's sources: MaxReadReqSize >= 512 B on every RDMA NIC (below it a
# NIC reading GPU or host memory issues more, smaller reads and loses bandwidth).
MAX_READ_REQUEST_MIN = 512
# InfiniBand's largest MTU, which HDR and NDR ports run at (docs/hosts.md); 128 << 5.
IB_MTU: Final = 4096


def version_key(version: str) -> tuple[int, ...]:
    """1.2.10 > 1.2.9: the numbers of a version, in order (a suffix such as -1.1.4 counts on)."""
    return tuple(int(part) for part in version.replace("-", ".").split(".") if part.isdigit())


def driver_minimum(model: NodeModel) -> int | None:
    """The driver major the declared CUDA needs, when the table has its major release."""
    cuda = model.versions.cuda
    return CUDA_DRIVER_MINIMUM.get(version_key(cuda)[0]) if cuda else None


def host_checks(model_name: str, model: NodeModel, has_gpus: bool) -> HostChecks:
    from ffplan.plan.model import HostChecks, VersionCheck

    declared = model.versions
    where = f"inventory models.nodes.{model_name}.versions"
    versions = []
    needed = driver_minimum(model)
    if declared.nvidia_driver:
        table = f"; CUDA {declared.cuda} needs >= {needed} ({CUDA_DRIVER_SOURCE})" if needed else ""
        versions.append(
            VersionCheck(name="nvidia-driver", minimum=declared.nvidia_driver, source=f"{where}.nvidia_driver{table}")
        )
    elif needed:
        versions.append(
            VersionCheck(
                name="nvidia-driver",
                minimum=str(needed),
                source=f"CUDA {declared.cuda} ({where}.cuda) needs >= {needed} ({CUDA_DRIVER_SOURCE})",
            )
        )
    if declared.cuda:
        versions.append(VersionCheck(name="cuda", minimum=declared.cuda, source=f"{where}.cuda"))
    if declared.ofed:
        versions.append(VersionCheck(name="ofed", minimum=declared.ofed, source=f"{where}.ofed"))
    return HostChecks(peer_memory=has_gpus, max_read_request_min=MAX_READ_REQUEST_MIN, ib_mtu=IB_MTU, versions=versions)


# What `ffplan explain host-check` (and `ffplan explain <check>`) prints: each check host-check.sh runs beyond the
# devices and files, as (name, the label it reports under, what it reads, why, when it SKIPs instead of failing).
HOST_CHECKS: tuple[tuple[str, str, str, str, str], ...] = (
    (
        "gpudirect-rdma",
        "GPUDirect RDMA peer memory",
        "/sys/module/nvidia_peermem (or nv_peer_mem, its name before driver 470); profiles with GPUs only",
        "without the peer-memory module the NIC cannot read or write GPU memory: NCCL's GPUDirect RDMA "
        "(NCCL_NET_GDR_LEVEL) fails at memory registration or falls back to staging through host memory",
        "never: the module directory is readable by anyone",
    ),
    (
        "max-read-request",
        "MaxReadReqSize of <NIC bus id>",
        f"the NIC's PCIe Device Control register (setpci CAP_EXP+8.w, bits 14:12: 128 << n bytes); at least "
        f"{MAX_READ_REQUEST_MIN} B",
        "the RDMA profiling article among the project's sources: below 512 B a NIC reading GPU or host memory "
        "issues more, smaller reads and loses bandwidth",
        "without root or setpci (config space beyond the header is root-only)",
    ),
    (
        "irq-affinity",
        "<NIC> IRQ affinity",
        "/sys/bus/pci/devices/<bdf>/msi_irqs/* and /proc/irq/<n>/smp_affinity against the NIC's NUMA node's "
        "cpumap in the plan",
        "interrupts handled on the other socket add a cross-socket hop to every completion (the RDMA article: "
        "pin NIC interrupts to the NIC's NUMA CPUs; irqbalance may move them)",
        "never: smp_affinity is world-readable",
    ),
    (
        "ib-mtu",
        "<NIC>/<port> active MTU",
        f"`ibv_devinfo -d <NIC> -i <port>`'s active_mtu; the plan expects {IB_MTU} (InfiniBand's largest, "
        "what HDR and NDR ports run at)",
        "a port at a smaller MTU (a switch or subnet-manager setting) splits every message into more packets",
        "without ibv_devinfo (rdma-core); on RoCE plans the Ethernet MTU is checked instead (ethernet-link)",
    ),
    (
        "versions",
        "nvidia-driver / cuda / ofed version",
        "/sys/module/nvidia/version, /usr/local/cuda/version.json, /sys/module/mlx5_core/version (MLNX_OFED / "
        "DOCA-OFED; the inbox driver has none) against the node model's `versions`; the driver also against "
        f"CUDA's minimum ({CUDA_DRIVER_SOURCE}: CUDA 13.x >= 580, 12.x >= 525, 11.x >= 450)",
        "a host behind what the inventory declares runs other code than the one tested; a driver older than "
        "CUDA needs fails to start CUDA at all (lint's FF311 checks the declared pair)",
        "never: a version that is not found FAILs (the inventory says it is installed)",
    ),
)


# The checks only a RoCE plan's host-check.sh runs (the rest of the article's checklist is shared with InfiniBand's:
# PCIe, NUMA, IRQ affinity, GPUDirect RDMA, MaxReadReqSize, versions).
ROCE_HOST_CHECKS: tuple[tuple[str, str, str, str, str], ...] = (
    (
        "ethernet-link",
        "<NIC> link / speed / MTU (<netdev>)",
        "/sys/class/net/<netdev>/operstate, speed (Mb/s) and mtu of each fabric NIC's network interface (the one under "
        "/sys/class/infiniband/<NIC>/device/net); the plan's link speed and host MTU (ethernet.qos.host_mtu)",
        "a port that trained at a lower speed slows its whole rail; an MTU below the plan's splits every RoCE message "
        "into more packets, one above the switches' is dropped",
        "never: sysfs is world-readable",
    ),
    (
        "cq-depth",
        "<NIC> CQ depth",
        "`ibv_devinfo -v -d <NIC>`'s max_cqe, at least the plan's CQ depth (8192)",
        "the RDMA article: CQ depth 4096-8192; a NIC (or firmware profile) that cannot hold the completion queue the "
        "collective library asks for fails QP setup",
        "without ibv_devinfo (rdma-core)",
    ),
    (
        "nic-qos",
        "<NIC> trust / PFC / RDMA-CM default ToS / ECN / roce_np / roce_rp",
        "`mlnx_qos -i <netdev>` (trust state, PFC enabled row), /sys/kernel/config/rdma_cm/<NIC>/ports/1/"
        "default_roce_tos, /sys/class/net/<netdev>/ecn/roce_np and roce_rp (enable/<priority>, the CNP DSCP and "
        "priority, the DCQCN parameters) against the plan's ethernet.nic_qos; roce-qos.sh --apply sets them",
        "a NIC that does not trust DSCP or pauses other priorities than the switches breaks the lossless class (drops "
        "or PFC storms); without ECN or DCQCN on the RoCE priority the NIC never slows down and PFC does all the work",
        "trust and PFC without mlnx_qos (MLNX_OFED / DOCA-OFED); the sysfs files FAIL as missing on the inbox driver",
    ),
)


def explain_host_checks(name: str) -> str | None:
    """The text of one check (by name), of all of them ("host-check"), or None."""
    chosen = [c for c in HOST_CHECKS + ROCE_HOST_CHECKS if name in ("host-check", c[0])]
    if not chosen:
        return None
    return "\n\n".join(
        f'host-check.sh: {check} (reported as "{label}")\nreads: {reads}\nwhy: {why}\nSKIP: {skip}'
        for check, label, reads, why, skip in chosen
    )
