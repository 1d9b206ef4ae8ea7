"""Synthetic CA GUIDs leave each host room for all its NICs."""

from __future__ import annotations

import re
from pathlib import Path

from ffplan.design import design
from ffplan.inventory import load_inventory

HGX = Path(__file__).parents[1] / "golden" / "inventories" / "hgx-h800.yaml"


def test_placeholder_guids_of_8_nic_hosts_are_unique(tmp_path):
    """With a fixed 16 GUIDs per host, hgx1's mlx5_4-7 took hgx2's mlx5_0-3 GUIDs (the plan check refused the
    plan: FF903)."""
    path = tmp_path / "hgx.yaml"
    path.write_text(re.sub(r", guids: \{[^}]*\}", "", HGX.read_text()))
    plan = design(load_inventory(path))
    ports = [p for n in plan.nodes for p in n.ports]
    assert len(ports) == 16 and all(p.guid_placeholder for p in ports)
    assert len({p.port_guid for p in ports}) == 16
