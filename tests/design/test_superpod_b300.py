"""inventories/dgx-superpod-b300.yaml against NVIDIA's DGX SuperPOD B300 (Quantum-X800 InfiniBand) reference
architecture, RA-11339-001, "DGX SuperPOD Architecture", Table 3 (Example Compute Fabric Components):
https://docs.nvidia.com/dgx-superpod/reference-architecture/scalable-infrastructure-b300-xdr/latest/dgx-superpod-architecture.html
The shipped inventory is the RA's 8-SU build; 1, 2 and 4 SUs are the same inventory with fewer nodes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from ffplan.design import design
from ffplan.inventory import load_inventory

ROOT = Path(__file__).resolve().parents[2]
B300 = ROOT / "inventories" / "dgx-superpod-b300.yaml"

# Table 3: SU count -> (nodes, GPUs, leaf switches, spine switches, node-leaf cables, leaf-spine cables)
TABLE_3 = {
    1: (72, 576, 8, 4, 576, 576),
    2: (144, 1152, 16, 8, 1152, 1152),
    4: (288, 2304, 32, 18, 2304, 2304),
    8: (576, 4608, 64, 36, 4608, 4608),
}


def _counts(plan):
    (zone,) = plan.zones
    cables = Counter(c.kind for c in plan.cables)
    gpus = sum(1 for node in plan.nodes for _ in node.ports)  # one compute NIC per GPU (8 + 8)
    return len(plan.nodes), gpus, zone.leaves, zone.spines, cables["node-leaf"], cables["leaf-spine"]


@pytest.fixture(scope="module")
def shipped_plan():
    return design(load_inventory(B300))


def test_the_shipped_8_su_build_is_table_3s_row(shipped_plan):
    assert _counts(shipped_plan) == TABLE_3[8]
    assert {m.speed for m in shipped_plan.switch_models} == {"XDR"}
    assert {s.ports for s in shipped_plan.switches} == {144}


@pytest.mark.parametrize("sus", [1, 2, 4])
def test_fewer_units_are_table_3s_rows(tmp_path, sus):
    inv = yaml.safe_load(B300.read_text())
    inv["groups"][0]["count"] = TABLE_3[sus][0]
    path = tmp_path / "b300.yaml"
    path.write_text(yaml.safe_dump(inv, sort_keys=False))
    assert _counts(design(load_inventory(path))) == TABLE_3[sus]


def test_bom_counts_transceivers_per_twin_port_cage(shipped_plan):
    """XDR switch ports sit two to an OSFP cage with one twin-port transceiver; the BOM counted two transceivers per
    optical run (18,432 for the 9,216 runs), about twice what the hardware uses."""
    from ffplan.plan.exports import bom_rows

    rows = {item: n for category, item, n, _ in bom_rows(shipped_plan) if category == "transceiver"}
    optical = sum(1 for c in shipped_plan.cables if c.type == "AOC")
    assert optical == 9216
    # 4,608 node-leaf runs: 4,608 NIC transceivers and 2,304 leaf cages; 4,608 leaf-spine runs: 2 x 2,304 cages
    assert rows == {"XDR twin-port OSFP (switch)": 6912, "XDR OSFP (NIC)": 4608}
    assert sum(rows.values()) == 11520 < 2 * optical
