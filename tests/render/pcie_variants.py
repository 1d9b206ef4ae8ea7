"""The HGX-like golden inventory and variants of its PCIe tree, for the path-type tests."""

from __future__ import annotations

from pathlib import Path

from tests.support.plans import design_file

from ffplan.plan.model import Plan

ROOT = Path(__file__).resolve().parents[2]
HGX = ROOT / "tests" / "golden" / "inventories" / "hgx-h800.yaml"

# gpu1 moves under a switch nested in sw0: to sw0's NICs it is PXB (a switch-to-switch hop).
NESTED = [
    (
        "        - {name: sw1, upstream: rp1,",
        '        - {name: sw4, upstream: sw0, bus_id: "0000:16:00.0", pcie: {gen: 5, lanes: 16}}\n'
        "        - {name: sw1, upstream: rp1,",
    ),
    (
        "{name: gpu1, kind: gpu, model: H800-SXM5, pcie_switch: sw0,",
        "{name: gpu1, kind: gpu, model: H800-SXM5, pcie_switch: sw4,",
    ),
]
# sw1 moves onto sw0's root port and its NICs to sw3: gpu2 and gpu3 reach sw0's NICs through the CPU (PHB), as
# NCCL, which skips root ports, sees two switches on one root port.
SHARED_ROOT_PORT = [
    ("- {name: rp0, numa: 0, pcie: {gen: 5, lanes: 16}}", "- {name: rp0, numa: 0, pcie: {gen: 5, lanes: 32}}"),
    ("{name: sw1, upstream: rp1,", "{name: sw1, upstream: rp0,"),
    (
        "{name: mlx5_2, kind: nic, model: CX7-NDR, pcie_switch: sw1,",
        "{name: mlx5_2, kind: nic, model: CX7-NDR, pcie_switch: sw3,",
    ),
    (
        "{name: mlx5_3, kind: nic, model: CX7-NDR, pcie_switch: sw1,",
        "{name: mlx5_3, kind: nic, model: CX7-NDR, pcie_switch: sw3,",
    ),
]
VARIANTS = {"hgx": [], "nested": NESTED, "shared-root-port": SHARED_ROOT_PORT}


def variant_plan(name: str, tmp: Path) -> Plan:
    text = HGX.read_text()
    for old, new in VARIANTS[name]:
        assert old in text, old
        text = text.replace(old, new)
    path = tmp / f"{name}.yaml"
    path.write_text(text)
    return design_file(path)
