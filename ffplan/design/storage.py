"""Storage bandwidth per GPU: the target (the inventory's, else the GPU-server hardware guide's about 1 GiB/s per
GPU) and what the storage servers' NIC ports can deliver to the GPUs, for lint (FF113), the plan and analyze."""

from __future__ import annotations

from ffplan.inventory import LoadedInventory
from ffplan.inventory.models import Role

GUIDE_GIB_S_PER_GPU = 1.0
GUIDE_SOURCE = "default: the GPU-server hardware guide's about 1 GiB/s of storage throughput per GPU"
GIB = 2**30


def gbps_to_gib_s(gbps: float) -> float:
    return gbps * 1e9 / 8 / GIB


def storage_target(loaded: LoadedInventory) -> tuple[float, str]:
    """(GiB/s per GPU, where it comes from)."""
    given = loaded.inventory.storage
    if given is None:
        return GUIDE_GIB_S_PER_GPU, GUIDE_SOURCE
    return given.gib_s_per_gpu, "inventory storage.gib_s_per_gpu"


def storage_ports(loaded: LoadedInventory) -> tuple[int, float, int]:
    """(storage NIC ports, their Gb/s together, GPUs of the compute nodes)."""
    models = loaded.inventory.models
    ports, gbps, gpus = 0, 0.0, 0
    for host in loaded.resolved.hosts:
        node = models.nodes.get(host.model)
        if host.role is Role.STORAGE:
            for nic in host.nics:
                model = models.nics.get(nic.model)
                ports += nic.ports
                gbps += nic.ports * (model.speed.gbps if model else 0)
        elif host.role is Role.COMPUTE and node is not None:
            gpus += sum(1 for d in node.devices if d.kind == "gpu")
    return ports, gbps, gpus
