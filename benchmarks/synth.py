"""Synthetic inventories for benchmarks: any number of zones, any radix, a floor laid out to fit."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import yaml

# The 4-NIC HGX node model of the three-layer golden inventory
THREE_LAYER_MODELS = yaml.safe_load(
    (Path(__file__).resolve().parents[1] / "tests" / "golden" / "inventories" / "three-lab.yaml").read_text()
)["models"]

NODE_MODELS = {
    "gpu-node": {
        "cpu": {"sockets": 2, "cores_per_socket": 32, "nps": 1},
        "rack_units": 4,
        "power_w": 2500,
        "root_ports": [{"name": f"rp{i}", "numa": i // 4} for i in range(8)],
        "devices": [
            {
                "name": f"gpu{i}",
                "kind": "gpu",
                "model": "A100-PCIe-40GB",
                "root_port": f"rp{i}",
                "bus_id": f"0000:{0x01 + i * 0x20:02x}:00.0",
            }
            for i in range(7)
        ]
        + [{"name": "mlx5_0", "kind": "nic", "model": "CX6-HDR", "root_port": "rp7", "bus_id": "0000:f1:00.0"}],
    },
    "storage-node": {
        "cpu": {"sockets": 1, "cores_per_socket": 64, "nps": 1},
        "rack_units": 2,
        "power_w": 900,
        "root_ports": [{"name": "rp0", "numa": 0}],
        "devices": [],  # NICs added per zone count
    },
    "mgmt-node": {
        "cpu": {"sockets": 1, "cores_per_socket": 16, "nps": 1},
        "rack_units": 1,
        "power_w": 400,
        "root_ports": [{"name": "rp0", "numa": 0}],
        "devices": [
            {"name": "mlx5_0", "kind": "nic", "model": "CX6-HDR", "root_port": "rp0", "bus_id": "0000:41:00.0"}
        ],
    },
}


def make_inventory(
    name: str, zones: int, radix: int, compute: int, storage: int, mgmt: int, inter_zone: int = 2, planes: bool = False
) -> str:
    """A full-size zone per zone name; hosts fill racks row by row, network racks at the row ends.

    `compute`, `storage` and `mgmt` count nodes of the zones layout: compute and management nodes have one NIC,
    storage nodes one per zone. Two zones are joined by `inter_zone` links; more are independent (ffplan routes
    between two zones only, lint FF106) but still share one subnet and LID space. With `planes` the trees are planes
    (`fabric.planes`: a subnet and LID space each, as in the paper's 4-plane next generation and DeepSeek-V3's
    MPFT) and every node has one NIC per plane: the same NIC ports on a `zones`-th of the compute and management
    nodes.
    """
    zone_names = [f"z{i + 1}" for i in range(zones)]
    models = {key: dict(model) for key, model in NODE_MODELS.items()}
    for key in ("storage-node",) + (("gpu-node", "mgmt-node") if planes else ()):
        models[key] = _one_nic_per_tree(models[key], zones)
    if planes:
        compute, mgmt = compute // zones, mgmt // zones
    per_rack = {"compute": 8, "storage": 10, "management": 10}
    slots = 20
    groups, racks, row = [], [], 1
    for role, model, count, prefix in (
        ("compute", "gpu-node", compute, "cn"),
        ("storage", "storage-node", storage, "st"),
        ("management", "mgmt-node", mgmt, "mg"),
    ):
        if not count:
            continue
        n_racks = math.ceil(count / per_rack[role])
        names = []
        for i in range(n_racks):
            r, s = row + i // slots, 1 + i % slots
            names.append(f"{prefix}r{r:02d}-{s:02d}")
            racks.append({"name": names[-1], "row": r, "slot": s})
        row += math.ceil(n_racks / slots)
        groups.append(
            {
                "name": role,
                "role": role,
                "model": model,
                "count": count,
                "hostname": prefix + "{index:05d}",
                "racks": names,
                "per_rack": per_rack[role],
                "first_u": 2,
            }
        )
    zone_specs = []
    for zi, z in enumerate(zone_names):
        # A full zone has `radix` leaves and radix/2 spines of 1U, at most 40 to a 42U rack (64-port: two racks of
        # leaves, one of spines); the first leaf rack opens the zone's row, the others close it.
        zone_row = 1 + zi * max(1, row // zones)
        leaf_racks = [f"net-{z}-leaf{i + 1}" for i in range(max(2, math.ceil(radix / 40)))]
        spine_racks = [f"net-{z}-spine" + (f"{i + 1}" if i else "") for i in range(math.ceil(radix / 2 / 40))]
        racks += [
            {"name": name, "row": zone_row, "slot": 0 if i == 0 else slots + i}
            for i, name in enumerate(leaf_racks + spine_racks)
        ]
        zone_specs.append({"name": z, "leaf_racks": leaf_racks, "spine_racks": spine_racks})
    inventory = {
        "inventory_version": 1,
        "name": name,
        "models": {
            "switches": {f"SW{radix}": {"ports": radix, "speed": "HDR", "data_vls": 8, "rack_units": 1}},
            "nics": {"CX6-HDR": {"ports": 1}},
            "gpus": {"A100-PCIe-40GB": {}},
            "nodes": models,
        },
        "fabric": {
            "switch_model": f"SW{radix}",
            "planes" if planes else "zones": zone_specs,
            "inter_zone_links": [{"zones": zone_names, "count": inter_zone}]
            if zones == 2 and inter_zone and not planes
            else [],
        },
        "racks": racks,
        "groups": groups,
    }
    return yaml.safe_dump(inventory, sort_keys=False, width=1 << 16)


def _one_nic_per_tree(model: dict, trees: int) -> dict:
    """`model` with `trees` NICs (mlx5_0 ... on the last root ports, or on new ones) in place of its own."""
    root_ports = model["root_ports"]
    if len(root_ports) < trees:
        root_ports = [{"name": f"rp{i}", "numa": 0, "pcie": {"lanes": 16}} for i in range(trees)]
    nic_ports = [rp["name"] for rp in root_ports[-trees:]]
    devices = [d for d in model["devices"] if d["kind"] != "nic" and d["root_port"] not in nic_ports]
    devices += [
        {"name": f"mlx5_{i}", "kind": "nic", "model": "CX6-HDR", "root_port": rp, "bus_id": f"0000:{0xC1 + i:02x}:00.0"}
        for i, rp in enumerate(nic_ports)
    ]
    return {**model, "root_ports": root_ports, "devices": devices}


def three_layer_inventory(name: str, radix: int, nodes: int) -> dict:
    """A single three-layer subnet of `radix`-port switches, rail-optimized, every leaf port used by a 4-NIC node."""
    ports = nodes * 4
    net = [f"net{i:02d}" for i in range(1, 41)]
    hosts = [f"r{i:03d}" for i in range(1, nodes // 8 + 1)]
    models = dict(THREE_LAYER_MODELS)
    models["switches"] = {"SW": {"ports": radix, "speed": "HDR", "data_vls": 8, "power_w": 500}}
    models["nics"] = {"CX7": {"ports": 1, "speed": "HDR", "data_vls": 8, "pci_id": "0x15b3:0x1021"}}
    return {
        "inventory_version": 1,
        "name": name,
        "description": f"three-layer tree of {radix}-port switches, {ports} ports",
        "models": models,
        "fabric": {
            "topology": "three-layer-fat-tree",
            "switch_model": "SW",
            "placement": "rail-optimized",
            "ports_per_zone": ports,
            "zones": [{"name": "z1", "leaf_racks": net[:14], "spine_racks": net[14:28], "core_racks": net[28:]}],
        },
        "racks": [{"name": n, "row": 1 + i // 20, "slot": 1 + i % 20, "units": 48} for i, n in enumerate(net)]
        + [{"name": n, "row": 3 + i // 20, "slot": 1 + i % 20} for i, n in enumerate(hosts)],
        "groups": [
            {
                "name": "gpu",
                "role": "compute",
                "model": "hgx",
                "count": nodes,
                "hostname": "gpu{index:04d}",
                "racks": hosts,
                "per_rack": 8,
                "first_u": 2,
            }
        ],
    }


def plan_file(given: str | None, work: Path) -> Path:
    """The plan.yaml of PLAN as given on a benchmark's command line (a plan folder or file), else of Fire-Flyer 2
    designed into `work`."""
    if given is None:
        root = Path(__file__).resolve().parents[1]
        inventory = root / "inventories" / "fire-flyer-2.yaml"
        design = [sys.executable, "-m", "ffplan", "design", str(inventory), "-o", str(work), "-q", "--force"]
        subprocess.run(design, check=True, cwd=root)
        return work / "plan.yaml"
    path = Path(given)
    return path / "plan.yaml" if path.is_dir() else path
