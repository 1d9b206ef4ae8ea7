"""`ffplan report facility`: per rack and per row power, cooling and headroom from the plan's racks, the floor map,
and agreement with the cost report's power figures (both come from the inventory's model figures)."""

import json

import pytest
from typer.testing import CliRunner

from ffplan.cli.main import app
from ffplan.design import design
from ffplan.inventory import load_inventory
from tests.support.plans import write_plan
from ffplan.report.facility import build_facility, floor_map, render_facility

runner = CliRunner()


@pytest.fixture(scope="module")
def lab_plan(request):
    return design(load_inventory(request.config.rootpath / "inventories" / "lab.yaml"))


@pytest.fixture(scope="module")
def ff2_facility(ff2_plan):
    return build_facility(ff2_plan)


def test_fire_flyer_2_racks_and_rows(ff2_facility):
    report = ff2_facility
    assert (len(report.racks), len(report.rows)) == (181, 10)
    rack = {r.name: r for r in report.racks}
    c = rack["c01-01"]
    assert (c.nodes, c.typical_kw, c.peak_kw, c.limit_kw, c.headroom_kw, c.cooling) == (8, 20.0, 25.6, 30.0, 4.4, "air")
    assert (rack["s09-01"].peak_kw, rack["s09-01"].limit_kw) == (12.0, 15.0)  # 10 storage nodes at 1.2 kW
    assert rack["n00-05"].switches == 20 and rack["n00-05"].typical_kw == 3.78  # 20 QM8700 at 189 W
    row1 = report.rows[1]
    assert (row1.row, row1.racks, row1.peak_kw, row1.limit_kw, row1.headroom_kw) == (1, 19, 486.4, 570.0, 83.6)
    assert report.over == []
    assert report.total_typical_kw == 3187.88  # the paper: "approximately just over 3 MW"


def test_the_facility_totals_agree_with_the_cost_report(ff2_plan, ff2_report, ff2_facility):
    plan_design = next(d for d in ff2_report.designs if d.key == "plan")
    models = {m.name: m for m in ff2_plan.node_models}
    others = sum(models[node.model].power_w for node in ff2_plan.nodes if node.role != "compute")
    # the cost report counts compute nodes and switches (the paper's Table III scope); the facility every rack
    assert ff2_facility.total_typical_kw == pytest.approx((plan_design.power.average_w + others) / 1000, abs=1e-6)
    switches_w = sum(r.typical_w for r in ff2_plan.racks if r.switches and not r.nodes)
    assert switches_w == pytest.approx(plan_design.power.switches_w)


def test_over_budget_racks_are_listed_and_outlined(lab_plan, tmp_path):
    racks = [r.model_copy(update={"power_budget_w": 1000.0}) if r.name == "r1" else r for r in lab_plan.racks]
    report = build_facility(lab_plan.model_copy(update={"racks": racks}))
    assert report.over == ["r1"]
    assert next(r for r in report.racks if r.name == "r1").headroom_kw < 0
    assert "over their limit: r1" in render_facility(report, "markdown")


def test_formats(lab_plan):
    report = build_facility(lab_plan)
    data = json.loads(render_facility(report, "json"))
    assert [r["name"] for r in data["racks"]] == ["net1", "r1", "r2", "r3", "net2", "r4"]
    csv_text = render_facility(report, "csv")
    assert csv_text.splitlines()[0] == "rack,row,slot,cooling,nodes,switches,typical_kw,peak_kw,limit_kw,headroom_kw"
    assert len(csv_text.splitlines()) == 7
    md = render_facility(report, "markdown")
    assert "## Rows" in md and "| net1 | 1 | 1 | air |" in md
    assert "Racks" in render_facility(report, "table")


def test_floor_map_is_a_deterministic_png(ff2_facility, tmp_path):
    first, second = tmp_path / "a.png", tmp_path / "b.png"
    floor_map(ff2_facility, first)
    floor_map(ff2_facility, second)
    data = first.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data == second.read_bytes()
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (2560, 960)  # 21 slots x 110 px + legend; 10 rows x 80 px + title and axis


def test_cli_reads_a_plan_and_writes_the_map(lab_plan, tmp_path):
    plan_file = tmp_path / "plan.yaml"
    write_plan(lab_plan, plan_file)
    result = runner.invoke(
        app, ["report", "facility", str(plan_file), "-f", "csv", "--floor-map", str(tmp_path / "floor.png"), "-q"]
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("rack,row,slot")
    assert (tmp_path / "floor.png").read_bytes()[:4] == b"\x89PNG"
