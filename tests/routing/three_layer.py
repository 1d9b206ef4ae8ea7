"""Three-layer fat-tree inventories of any radix for the routing tests and benchmarks: the 8-port lab tree of
tests/golden/inventories/three-layer-8.yaml scaled to `radix`-port switches and `ports` CA ports (4-NIC nodes,
rail-optimized)."""

from __future__ import annotations

import math
from pathlib import Path

import yaml

SMALL = Path(__file__).parent.parent / "golden" / "inventories" / "three-layer-8.yaml"
NICS = 4  # per node of the lab model
NODES_PER_RACK = 8
SWITCHES_PER_RACK = 40


def three_layer_inventory(radix: int, ports: int, name: str | None = None) -> str:
    """YAML text of a three-layer tree of `radix`-port switches with `ports` CA ports (a multiple of 4)."""
    inv = yaml.safe_load(SMALL.read_text())
    inv["name"] = name or f"three-layer-{radix}-{ports}"
    inv["models"]["switches"]["LAB8"]["ports"] = radix
    inv["fabric"]["ports_per_zone"] = ports
    down = radix // 2
    leaves = math.ceil(ports / down)
    pods = math.ceil(leaves / down)
    switches = leaves + pods * down + down * down  # at most: leaves, spines and cores
    net = [f"net{i + 1}" for i in range(math.ceil(switches / SWITCHES_PER_RACK))]
    nodes = ports // NICS
    hosts = [f"r{i + 1}" for i in range(math.ceil(nodes / NODES_PER_RACK))]
    inv["racks"] = [{"name": r, "row": 1, "slot": i + 1, "units": 48} for i, r in enumerate(net)] + [
        {"name": r, "row": 2 + i // 20, "slot": 1 + i % 20} for i, r in enumerate(hosts)
    ]
    inv["fabric"]["zones"] = [{"name": "z1", "leaf_racks": net, "spine_racks": net, "core_racks": net}]
    inv["groups"][0].update(count=nodes, hostname="gpu{index:05d}", racks=hosts, per_rack=NODES_PER_RACK)
    return yaml.safe_dump(inv, sort_keys=False)
