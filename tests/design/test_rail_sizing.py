"""Without ports_per_zone, a rail-optimized tree is sized in the whole scalable units its nodes need, as NVIDIA's
reference architecture builds it (it was the full tree: 127 DGX got 64 leaves + 32 spines, half the leaves empty)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ffplan.design import design
from ffplan.inventory import load_inventory

DGX_1SU = Path(__file__).parent / "inventories" / "dgx-h100-1su.yaml"


def _dgx(tmp_path, nodes: int):
    inv = yaml.safe_load(DGX_1SU.read_text())
    inv["racks"] = [{"name": "net1", "row": 0, "slot": 1, "units": 60}] + [
        {"name": f"c{i:02d}", "row": 1, "slot": i} for i in range(1, 33)]
    group = inv["groups"][0]
    group.update(count=nodes, racks=[f"c{i:02d}" for i in range(1, 33)])
    path = tmp_path / "dgx.yaml"
    path.write_text(yaml.safe_dump(inv, sort_keys=False))
    return design(load_inventory(path))


@pytest.mark.parametrize("nodes, leaves, spines", [(32, 8, 4), (64, 16, 8), (127, 32, 16)])
def test_whole_scalable_units(tmp_path, nodes, leaves, spines):
    plan = _dgx(tmp_path, nodes)
    (zone,) = plan.zones
    assert (zone.leaves, zone.spines) == (leaves, spines)  # NVIDIA's table: 1 SU 8 + 4, 2 SUs 16 + 8, 4 SUs 32 + 16
    assert zone.endpoint_ports == leaves * 32
