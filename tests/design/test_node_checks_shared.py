"""Design refuses a bad node model with lint's findings, word for word: both run ffplan.inventory.node_checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from ffplan.design import design
from ffplan.diagnostics import StageError
from ffplan.inventory import load_inventory
from ffplan.lint import lint_file

BASE = Path(__file__).parents[1] / "lint" / "base.yaml"

# One node model with every mistake design's host step cannot build a profile from.
BAD_NODE = """\
    gpu-node:
      cpu: {sockets: 2, nps: 1}
      rack_units: 4
      root_ports:
        - {name: rp0, numa: 0}
        - {name: rp1, numa: 5}
      pcie_switches:
        - {name: sw0, upstream: rp9, bus_id: "0000:01:00.0"}
        - {name: sw1, upstream: sw2, bus_id: "0000:02:00.0"}
        - {name: sw2, upstream: sw1, bus_id: "0000:05:00.0"}
      devices:
        - {name: gpu0, kind: gpu, model: GPU1, root_port: rp7, bus_id: "0000:03:00.0"}
        - {name: mlx5_0, kind: nic, model: NIC1, pcie_switch: sw0, bus_id: "0000:04:00.0"}
        - {name: gpu1, kind: gpu, model: GPU9, pcie_switch: sw1, bus_id: "0000:81:00.0"}
        - {name: mlx5_1, kind: nic, model: NIC1, pcie_switch: sw7, bus_id: "0000:82:00.0"}
"""


@pytest.fixture
def bad_inventory(tmp_path: Path) -> Path:
    text = BASE.read_text()
    start = text.index("    gpu-node:\n")
    end = text.index("    storage-node:\n")
    path = tmp_path / "inventory.yaml"
    path.write_text(text[:start] + BAD_NODE + text[end:])
    return path


def test_design_refuses_a_bad_node_model_with_lints_findings(bad_inventory):
    linted = [d for d in lint_file(bad_inventory).diagnostics if d.rule.startswith("FF3")]
    assert sorted({d.rule for d in linted}) == ["FF301", "FF302", "FF303", "FF308", "FF309"]
    with pytest.raises(StageError) as refused:
        design(load_inventory(bad_inventory))
    assert refused.value.diagnostics == linted
