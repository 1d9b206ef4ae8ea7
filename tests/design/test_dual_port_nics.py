"""A host on every zone puts its k-th NIC port in the k-th zone, whether the ports are on one NIC or several."""

from __future__ import annotations

from pathlib import Path

from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.lint import lint_file

LAB = Path(__file__).parents[2] / "inventories" / "lab.yaml"
ONE_DUAL_PORT_NIC = """        - {name: mlx5_0, kind: nic, model: CX6-HDR-2P, root_port: rp0, bus_id: "0000:41:00.0"}
"""


def _dual_port_storage(tmp_path: Path) -> Path:
    """The lab with storage servers on one dual-port NIC (FF104: as many ports as zones, so lint-clean)."""
    text = LAB.read_text()
    two_nics = (
        '        - {name: mlx5_0, kind: nic, model: CX6-HDR, root_port: rp0, bus_id: "0000:41:00.0"}\n'
        '        - {name: mlx5_1, kind: nic, model: CX6-HDR, root_port: rp1, bus_id: "0000:c1:00.0"}\n'
    )
    assert two_nics in text
    text = text.replace(two_nics, ONE_DUAL_PORT_NIC, 1)
    text = text.replace("  nics:\n", "  nics:\n    CX6-HDR-2P: {ports: 2, speed: HDR, data_vls: 8}\n", 1)
    path = tmp_path / "lab.yaml"
    path.write_text(text)
    return path


def test_a_dual_port_nic_on_every_zone_has_a_port_in_each_zone(tmp_path):
    """Both ports of the NIC went to the first zone (NIC i in zone i), leaving zone zb without storage."""
    path = _dual_port_storage(tmp_path)
    assert [d.code for d in lint_file(path).diagnostics] == []
    plan = design(load_inventory(path))
    storage = [n for n in plan.nodes if n.hostname.startswith("stor")]
    assert len(storage) == 4
    for node in storage:
        assert [(p.nic, p.port, p.zone) for p in node.ports] == [("mlx5_0", 1, "za"), ("mlx5_0", 2, "zb")]
