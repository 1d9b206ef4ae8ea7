"""The cost report of plans beyond Fire-Flyer 2: planes (tests/golden/inventories/planes-lab.yaml: 4 two-layer
planes of 8-port switches, 16 nodes of 4 GPUs and 4 NICs) and a three-layer tree (three-lab.yaml: 2 pods, 4 cores,
8 nodes of 4 NICs, rail-optimized). The plan's own column counts what the plan has and is named after its layout;
the 8-NIC comparisons are built of the plan's nodes; the golden markdown pins the whole report of the planes plan."""

from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ffplan.cli.main import app
from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.report import designs as d
from ffplan.report.catalog import resolve_catalog
from ffplan.report.cost import build_report
from ffplan.report.output import render
from tests.goldens import assert_golden_folder

HERE = Path(__file__).resolve().parent
INVENTORIES = HERE.parent / "golden" / "inventories"
runner = CliRunner()

# LAB8 and the 4-GPU node are in no catalog: priced here so that every total of the golden report is a number.
LAB_PRICES = "preset: deepseek-v3\nprices: {LAB8: 10240, hgx: 150000}\npower_w: {hgx: 5000}\n"


@pytest.fixture(scope="module")
def planes_plan():
    return design(load_inventory(INVENTORIES / "planes-lab.yaml"))


@pytest.fixture(scope="module")
def three_plan():
    return design(load_inventory(INVENTORIES / "three-lab.yaml"))


@pytest.fixture
def lab_catalog(tmp_path):
    path = tmp_path / "lab-prices.yaml"
    path.write_text(LAB_PRICES)
    return path


def by_key(report):
    return {r.key: r for r in report.designs}


def test_planes_column_counts_what_the_plan_has(planes_plan):
    report = build_report(planes_plan, resolve_catalog(planes_plan, "deepseek-v3"))
    own = by_key(report)[d.FIRE_FLYER]
    assert own.title == "this plan: 4 two-layer planes of 16 ports"
    assert "Fire-Flyer" not in own.title + own.description
    assert (
        own.switches
        == dict(Counter(s.tier for s in planes_plan.switches), core=0)
        == {"leaf": 16, "spine": 8, "core": 0}
    )
    assert (
        own.cables_by_kind == dict(Counter(c.kind for c in planes_plan.cables)) == {"node-leaf": 64, "leaf-spine": 64}
    )
    assert own.endpoints == sum(len(n.ports) for n in planes_plan.nodes) == 64
    assert own.fabrics[0].name == "4 two-layer planes of 16 ports"


def test_three_layer_column_counts_cores_and_spine_core_cables(three_plan):
    report = build_report(three_plan, resolve_catalog(three_plan, "deepseek-v3"))
    own = by_key(report)[d.FIRE_FLYER]
    tiers = Counter(s.tier for s in three_plan.switches)
    assert own.title == "this plan: 1 three-layer zone, 2 pods"
    assert (
        own.switches
        == {"leaf": tiers["leaf"], "spine": tiers["spine"], "core": tiers["core"]}
        == {"leaf": 8, "spine": 8, "core": 4}
    )
    assert own.cables_by_kind["spine-core"] == sum(1 for c in three_plan.cables if c.kind == "spine-core") == 32
    assert own.switch_links == 64  # 32 leaf-spine + 32 spine-core
    assert own.fabrics[0].topology == "three-layer"


def test_multi_nic_plan_is_compared_with_its_own_nodes_on_every_layout(planes_plan):
    """4 NICs per node: 4 rails per scalable unit, 4 planes; the plan's 16 nodes, not 8 DGX-A100."""
    report = build_report(planes_plan, resolve_catalog(planes_plan, "paper"))
    designs = by_key(report)
    assert list(designs) == [d.FIRE_FLYER, d.THREE_LAYER, d.RAIL_OPTIMIZED, d.MULTI_PLANE]
    for key in (d.THREE_LAYER, d.RAIL_OPTIMIZED, d.MULTI_PLANE):
        assert designs[key].nodes == {"hgx": 16} and designs[key].gpus == 64, key
        assert designs[key].endpoints == 64 and len(designs[key].fabrics) == 1, (
            key
        )  # no storage NICs, no storage fabric
    assert designs[d.RAIL_OPTIMIZED].fabrics[0].name.endswith("of 4 nodes x 4 rails")
    assert designs[d.MULTI_PLANE].fabrics[0].name == "4 two-layer planes of 16 ports"
    assert designs[d.MULTI_PLANE].switches == designs[d.FIRE_FLYER].switches


def test_fire_flyer_papers_ratios_and_checks_only_for_a_fire_flyer_plan(planes_plan, lab_catalog):
    report = build_report(
        planes_plan,
        resolve_catalog(planes_plan, None, lab_catalog),
        compare=[d.FIRE_FLYER, d.PCIE_THREE_LAYER, d.THREE_LAYER, d.MULTI_PLANE],
    )
    assert {(r.name, r.numerator) for r in report.ratios} == {
        ("network per endpoint", d.MULTI_PLANE),
        ("network per endpoint", d.FIRE_FLYER),
    }
    assert not any("Fire-Flyer 2" in c.item for c in report.paper_checks)
    assert any("Table 3 MPFT" in c.item for c in report.paper_checks)
    assert by_key(report)[d.PCIE_THREE_LAYER].title == "same nodes, three-layer"


def test_three_layer_plan_has_no_table_3_ratio_of_its_own(three_plan, lab_catalog):
    report = build_report(three_plan, resolve_catalog(three_plan, None, lab_catalog))
    assert [r.numerator for r in report.ratios] == [d.MULTI_PLANE]


def test_cables_priced_by_kind_whatever_their_type(planes_plan, lab_catalog):
    """deepseek-v3 prices switch-to-switch cables at 550 and endpoint cables at 0 (Table 3): the plan's DAC
    leaf-spine cables cost 550, its AOC node cables nothing."""
    types = Counter((c.kind, c.type) for c in planes_plan.cables)
    assert types[("leaf-spine", "DAC")] and types[("node-leaf", "AOC")]  # the plan has both the cheap and the dear type
    report = build_report(planes_plan, resolve_catalog(planes_plan, None, lab_catalog))
    own = by_key(report)[d.FIRE_FLYER]
    assert own.cost.cables == 64 * 550
    assert own.cost.network_per_endpoint == (24 * 10240 + 64 * 550) / 64


def test_a_kind_price_is_overridden_like_any_cable_key(planes_plan, tmp_path):
    path = tmp_path / "cat.yaml"
    path.write_text(LAB_PRICES + "cable: {leaf_spine_price: 600, node_leaf_price: 10}\n")
    own = by_key(build_report(planes_plan, resolve_catalog(planes_plan, None, path)))[d.FIRE_FLYER]
    assert own.cost.cables == 64 * 600 + 64 * 10


def test_gpus_sizes_the_plans_own_layout(planes_plan):
    """--gpus 128: twice the nodes, still 4 planes, each two-layer tree sized for its 32 ports."""
    report = build_report(planes_plan, resolve_catalog(planes_plan, "paper"), gpus=128, compare=[d.FIRE_FLYER])
    own = by_key(report)[d.FIRE_FLYER]
    assert own.title == "this plan (sized): 4 two-layer planes of 32 ports"
    assert own.endpoints == 128 and own.switches == {"leaf": 32, "spine": 16, "core": 0}


def test_cli_report_of_a_planes_plan_names_its_layout(tmp_path, planes_plan, lab_catalog):
    from tests.support.plans import write_plan

    plan_file = tmp_path / "plan.yaml"
    write_plan(planes_plan, plan_file)
    result = runner.invoke(app, ["report", "cost", str(plan_file), "--catalog", str(lab_catalog), "-f", "csv"])
    assert result.exit_code == 0, result.output
    header = result.stdout.splitlines()[0]
    assert header == "group,metric,plan,ft3,rail-optimized,mpft"
    rows = {tuple(line.split(",")[:2]): line.split(",")[2:] for line in result.stdout.splitlines()[1:]}
    assert rows[("Network", "leaf-spine cables")] == ["64", "64", "64", "64"]
    assert rows[("Network", "spine-core cables")] == ["0", "64", "64", "0"]


def test_golden_markdown_of_a_planes_plan(planes_plan, lab_catalog, update_golden):
    report = build_report(
        planes_plan, resolve_catalog(planes_plan, None, lab_catalog), input_name="planes-lab/plan.yaml"
    )
    text = render(report, "markdown").replace(str(lab_catalog), "lab-prices.yaml")
    assert_golden_folder(HERE / "golden" / "planes-lab", {"cost.md": text}, update_golden, "cost report of planes-lab")


def test_transceivers_are_counted_per_cage_as_the_bom_does(planes_plan, lab_catalog):
    """At NDR the report counted two transceivers per optical run (128 for 64 runs) where bom.csv counts one per
    switch cage of 2 ports and one per NIC port (96); the sized designs pair their switch ends two to a cage."""
    from ffplan.plan.exports import bom_rows

    bom = sum(n for category, _, n, _ in bom_rows(planes_plan) if category == "transceiver")
    report = build_report(
        planes_plan, resolve_catalog(planes_plan, None, lab_catalog), input_name="planes-lab/plan.yaml"
    )
    by_key = {r.key: r for r in report.designs}
    assert by_key[d.FIRE_FLYER].transceivers == bom == 96
    assert by_key[d.FIRE_FLYER].cables["AOC"] == 64
    # ft3: 128 optical runs between switches (256 ends, 128 cages), none to a NIC
    assert by_key[d.THREE_LAYER].transceivers == 128 and by_key[d.THREE_LAYER].cables["AOC"] == 128
