"""QoS plan: ffplan defaults (labelled as such), inventory overrides, SL2VL and VLArb within the data VLs."""

from __future__ import annotations

import pytest

from ffplan.design.qos import design_qos
from ffplan.diagnostics import StageError
from ffplan.inventory import load_inventory
from tests.conftest import ROOT


def test_defaults_are_labelled_and_mapped(ff2_routed):
    q = ff2_routed.qos
    assert q.data_vls == 8
    assert {(c.name, c.sl, c.vl) for c in q.classes} == {
        ("other", 0, 0),
        ("hfreduce", 1, 1),
        ("nccl", 2, 2),
        ("storage", 3, 3),
    }
    assert all(c.source == "ffplan default" for c in q.classes)
    assert all(c.weight % 64 == 0 and 0 < c.weight <= 255 for c in q.classes)
    assert set(q.port_classes) == {"default", "ca", "swe", "sw0"}
    for pc in q.port_classes.values():
        assert pc.sl2vl == [0, 1, 2, 3] + [0] * 12  # unused SLs on VL0
        assert max(pc.sl2vl) < q.data_vls and pc.max_vls == 4
        assert {e.vl for e in pc.vlarb_low} == {0, 1, 2, 3} and pc.high_limit == 0


def _loaded_with(tmp_path, classes: str):
    text = (ROOT / "inventories" / "lab.yaml").read_text()
    path = tmp_path / "inv.yaml"
    path.write_text(text + "\ntraffic_classes:\n" + classes)
    return load_inventory(path)


def test_inventory_overrides(tmp_path, lab_routed):
    loaded = _loaded_with(
        tmp_path, "  - {name: nccl, sl: 5, vl: 2, weight: 128, priority: high}\n  - {name: storage}\n"
    )
    q = design_qos(loaded, lab_routed)
    by = {c.name: c for c in q.classes}
    assert set(by) == {"nccl", "storage"}
    assert by["nccl"].source == "inventory" and by["storage"].source == "ffplan default"  # only named: ffplan's numbers
    assert (by["nccl"].sl, by["nccl"].vl, by["nccl"].weight) == (5, 2, 128)
    assert (by["storage"].sl, by["storage"].vl, by["storage"].weight) == (3, 3, 128)  # the default fills in
    pc = q.port_classes["ca"]
    assert pc.sl2vl[5] == 2 and pc.sl2vl[3] == 3 and pc.sl2vl[2] == 0
    assert [(e.vl, e.weight) for e in pc.vlarb_high] == [(2, 128)] and pc.high_limit == 4


def test_sl_on_two_vls_is_refused(tmp_path, lab_routed):
    loaded = _loaded_with(tmp_path, "  - {name: a, sl: 4, vl: 1}\n  - {name: b, sl: 4, vl: 2}\n")
    with pytest.raises(StageError) as exc:
        design_qos(loaded, lab_routed)
    d = exc.value.diagnostics[0]
    assert d.rule == "FF603" and "SL 4" in d.message and d.line > 1
