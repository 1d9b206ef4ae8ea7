"""Rack power and cooling in the design: the plan's racks carry what each rack draws, switches go where the power
budget and cooling still take them, and FF155 stops a design whose switch racks have no power left."""

from collections import Counter

from typer.testing import CliRunner

from ffplan.cli.main import app
from ffplan.design import design
from ffplan.inventory import load_inventory
from tests.conftest import ROOT

LAB = ROOT / "inventories" / "lab.yaml"
NET1 = "  - {name: net1, row: 1, slot: 1, power_kw: 5, cooling: air}"


def _lab_variant(tmp_path, *edits):
    text = LAB.read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "lab.yaml"
    path.write_text(text)
    return path


def test_the_plan_records_every_rack_with_its_draw(lab_plan):
    inv = load_inventory(LAB).inventory
    assert [r.name for r in lab_plan.racks] == ["net1", "r1", "r2", "r3", "net2", "r4"]  # by row, then slot
    nodes = Counter(n.rack for n in lab_plan.nodes)
    switches = Counter(s.rack for s in lab_plan.switches)
    for rack in lab_plan.racks:
        typical = (
            sum(inv.models.nodes[n.model].power_w for n in lab_plan.nodes if n.rack == rack.name)
            + switches[rack.name] * inv.models.switches["LAB8"].power_w
        )
        assert (rack.nodes, rack.switches) == (nodes[rack.name], switches[rack.name])
        assert rack.typical_w == typical
        assert rack.peak_w == typical  # the lab's models give no peak: power_w is their peak
        assert rack.cooling == "air" and rack.cooling_limit_w == 30_000
    assert {r.name: r.power_budget_w for r in lab_plan.racks}["net1"] == 5000


def test_the_designer_moves_a_switch_to_the_next_rack_when_the_budget_is_spent(tmp_path):
    # za's 2 spines and 4 leaves at 60 W: net1 (0.2 kW) takes the spines and one leaf, the even share's second
    # leaf would bring it to 240 W, so it goes to net2
    path = _lab_variant(
        tmp_path,
        (NET1, NET1.replace("power_kw: 5", "power_kw: 0.2")),
        (
            "{name: za, leaf_racks: [net1], spine_racks: [net1]}",
            "{name: za, leaf_racks: [net1, net2], spine_racks: [net1]}",
        ),
    )
    plan = design(load_inventory(path))
    where = {s.name: s.rack for s in plan.switches if s.zone == "za"}
    assert where == {
        "za-spine01": "net1",
        "za-spine02": "net1",
        "za-leaf01": "net1",
        "za-leaf02": "net2",
        "za-leaf03": "net2",
        "za-leaf04": "net2",
    }
    for rack in plan.racks:
        limits = [w for w in (rack.power_budget_w, rack.cooling_limit_w) if w is not None]
        assert rack.peak_w <= min(limits), rack
    assert {r.name: r.peak_w for r in plan.racks}["net1"] == 180


def test_switch_racks_without_power_left_exit_3_with_ff155(tmp_path):
    path = _lab_variant(tmp_path, (NET1, NET1.replace("power_kw: 5", "power_kw: 0.1")))
    result = CliRunner().invoke(app, ["design", str(path), "-o", str(tmp_path / "out"), "-q"], env={"COLUMNS": "300"})
    assert result.exit_code == 3, result.output
    assert (
        "error FF155 no rack of spine_racks has power left for za-spine02 (0.06 kW): rack 'net1' draws 0.06 kW at peak against "
        "its power budget of 0.1 kW"
    ) in result.output
    assert not (tmp_path / "out").exists()


def test_the_cooling_defaults_the_docs_give_are_the_table():
    from ffplan.design.facility import COOLING_LIMIT_KW
    from ffplan.lint.registry import all_rules

    explained = next(r for r in all_rules() if r.id == "FF216").explanation
    docs = (ROOT / "docs" / "facility.md").read_text()
    for cooling, limit in COOLING_LIMIT_KW.items():
        assert f"{cooling} {limit:g} kW" in explained
        assert f"| `{cooling}` | {limit:g} |" in docs
