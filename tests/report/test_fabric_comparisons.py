"""Fabrics beyond Fire-Flyer 2: DeepSeek-V3's Table 3 (MPFT, FT3), DGX SuperPOD rail-optimized sizes, the
`deepseek-v3` preset's calibration, sizing for other radices, and `report cost` without an INPUT."""

import csv
import io
import json

import pytest
from typer.testing import CliRunner

from ffplan.catalog import SwitchEntry, fabric_reference, load_preset
from ffplan.cli.main import app
from ffplan.report import designs as d
from ffplan.report.catalog import resolve_catalog
from ffplan.report.cost import ComparisonError, build_report

runner = CliRunner()
TABLE_3 = fabric_reference()["deepseek_v3_table_3"]
SUPERPOD = fabric_reference()["dgx_superpod"]


def sized(gpus: int, *compare: str, preset: str = "deepseek-v3"):
    report = build_report(None, load_preset(preset), gpus=gpus, compare=compare)
    return {r.key: r for r in report.designs}, report


def with_switch(ports: int):
    """The deepseek-v3 catalog with a fabric switch of another radix (priced alike per port)."""
    cat = load_preset("deepseek-v3")
    entry = SwitchEntry(ports=ports, price=cat.switches["QM9700"].price)
    return cat.model_copy(update={"fabric_switch": f"X{ports}", "switches": {**cat.switches, f"X{ports}": entry}})


@pytest.mark.parametrize(
    "key, gpus, row, layers",
    [
        (d.MULTI_PLANE, 16384, "mpft", {"leaf": 8 * 64, "spine": 8 * 32, "core": 0}),  # per plane 64 leaves + 32 spines
        (d.THREE_LAYER, 65536, "ft3", {"leaf": 2048, "spine": 2048, "core": 1024}),
    ],
)
def test_table_3_switches_and_links_exactly(key, gpus, row, layers):
    designs, _ = sized(gpus, key)
    design, published = designs[key], TABLE_3[row]
    assert (design.endpoints, design.switch_total, design.switch_links) == (
        published["endpoints"],
        published["switches"],
        published["links"],
    )
    assert design.switches == layers
    # all cables = endpoint links + switch-to-switch links
    assert design.cable_total == published["endpoints"] + published["links"]


def test_table_3_figures_as_the_issue_quotes_them():
    assert (TABLE_3["mpft"]["switches"], TABLE_3["mpft"]["links"]) == (768, 16384)
    assert (TABLE_3["ft3"]["switches"], TABLE_3["ft3"]["links"]) == (5120, 131072)


def test_ft2_row_of_table_3_is_one_plane():
    fabric = d.tree("FT2", "QM9700", 64, 2048, load_preset("deepseek-v3"))
    links = sum(lot.count for lot in fabric.cables if lot.kind != "node-leaf")
    assert (sum(fabric.switches.values()), links) == (TABLE_3["ft2"]["switches"], TABLE_3["ft2"]["links"])


@pytest.mark.parametrize("key, gpus", [(d.MULTI_PLANE, 16384), (d.THREE_LAYER, 65536)])
def test_deepseek_v3_preset_reproduces_table_3_cost(key, gpus):
    """Table 3 rounds: $4.39k and $7.5k per endpoint, $72M and $491M: within that rounding (0.5 %)."""
    designs, _ = sized(gpus, key)
    row = TABLE_3["mpft" if key == d.MULTI_PLANE else "ft3"]
    assert designs[key].cost.network_per_endpoint == pytest.approx(row["cost_per_endpoint_usd"], rel=0.005)
    assert designs[key].cost.network == pytest.approx(row["cost_usd"], rel=0.005)


def test_deepseek_v3_calibration_stated_in_the_preset():
    """S per switch and C per switch-to-switch link solve the two per-endpoint equations; endpoint cables cost 0."""
    cat = load_preset("deepseek-v3")
    switch, link = cat.switches["QM9700"].price.value, cat.cables.price("AOC", 20)
    assert cat.cables.price("DAC", cat.sized_lengths.node_leaf_m.value) == 0
    assert cat.cables.type_for(cat.sized_lengths.node_leaf_m.value) == "DAC"
    assert cat.cables.type_for(cat.sized_lengths.leaf_spine_m.value) == "AOC"
    assert 96 / 2048 * switch + link == pytest.approx(4390)
    assert 5120 / 65536 * switch + 2 * link == pytest.approx(7500)
    assert cat.switches["QM9700"].ports == 64


def test_network_per_endpoint_ratio_against_table_3():
    _, report = sized(16384, d.MULTI_PLANE, d.THREE_LAYER)
    ratio = next(r for r in report.ratios if r.name == "network per endpoint")
    assert ratio.paper == pytest.approx(4390 / 7500)
    assert ratio.computed == pytest.approx(ratio.paper, rel=0.005)


@pytest.mark.parametrize("k", [40, 64, 128])
def test_sizing_formulas_for_other_radices(k):
    cat = with_switch(k)
    plane_nodes = k * k // 2
    mpft = build_report(None, cat, gpus=8 * plane_nodes, compare=[d.MULTI_PLANE]).designs[0]
    assert mpft.switches == {"leaf": 8 * k, "spine": 8 * k // 2, "core": 0}  # 3k/2 switches per plane
    assert mpft.switch_links == 8 * k * k // 2
    ft3 = build_report(None, cat, gpus=k**3 // 4, compare=[d.THREE_LAYER]).designs[0]
    assert ft3.endpoints == k**3 // 4
    assert ft3.switch_total == 5 * k * k // 4
    assert ft3.switch_links == 2 * k**3 // 4
    with pytest.raises(ComparisonError, match="exceed a three-layer tree"):
        build_report(None, cat, gpus=k**3 // 4 + 8, compare=[d.THREE_LAYER])


def test_radix_40_and_128_figures():
    """k = 40: 16,000 endpoints on 2,000 switches (reference notes); k = 128: the Fire-Flyer paper's next
    generation, 4 planes of two-layer trees hold 32,768 GPUs at one NIC per GPU (here 4-GPU, 4-NIC nodes)."""
    ft3 = build_report(None, with_switch(40), gpus=16000, compare=[d.THREE_LAYER]).designs[0]
    assert ft3.switch_total == 2000
    cat = with_switch(128).model_copy(
        update={
            "nodes": {
                "hgx-h800": load_preset("deepseek-v3")
                .nodes["hgx-h800"]
                .model_copy(update={"gpus": 4, "compute_nics": 4})
            }
        }
    )
    mpft = build_report(None, cat, gpus=32768, compare=[d.MULTI_PLANE]).designs[0]
    assert mpft.fabrics[0].topology == "two-layer"
    assert mpft.switch_total == 4 * (128 + 64) and mpft.endpoints == 32768


@pytest.mark.parametrize("size", SUPERPOD["sizes"], ids=lambda s: f"{s['sus']}su")
def test_rail_optimized_reproduces_dgx_superpod(size):
    designs, _ = sized(size["gpus"], d.RAIL_OPTIMIZED)
    rail = designs[d.RAIL_OPTIMIZED]
    assert rail.nodes == {"hgx-h800": size["nodes"]}
    assert rail.switches == {"leaf": size["leaf"], "spine": size["spine"], "core": size["core"]}
    if "cables_per_tier" in size:
        per_tier = size["cables_per_tier"]
        assert rail.cables_by_kind == {"node-leaf": per_tier, "leaf-spine": per_tier, "spine-core": per_tier}


def test_rail_optimized_builds_whole_scalable_units():
    designs, _ = sized(100 * 8, d.RAIL_OPTIMIZED)  # 100 nodes: 4 units of 32, the last one partial
    rail = designs[d.RAIL_OPTIMIZED]
    assert rail.switches == {"leaf": 4 * 8, "spine": 16, "core": 0}
    assert rail.cables_by_kind["node-leaf"] == 800  # only the NICs that exist are cabled
    assert rail.cables_by_kind["leaf-spine"] == 4 * 8 * 32


def test_a_plane_too_big_for_two_layers_gets_three():
    designs, _ = sized(8 * 4096, d.MULTI_PLANE)  # 4,096 nodes per plane > 64 * 32
    mpft = designs[d.MULTI_PLANE]
    assert mpft.fabrics[0].topology == "three-layer"
    assert mpft.switches == {"leaf": 8 * 128, "spine": 8 * 128, "core": 8 * 64}


def test_published_counts_are_recomputed_in_the_report():
    _, report = sized(16384, d.MULTI_PLANE)
    checks = {c.item.split(":")[0]: c for c in report.paper_checks}
    mpft = checks["DeepSeek-V3 Table 3 MPFT"]
    assert "768 switches, 16,384 links" in mpft.paper and "768 switches, 16,384 links" in mpft.computed
    ft3 = checks["DeepSeek-V3 Table 3 FT3"]
    assert "5,120 switches, 131,072 links; 491,520,000 USD, 7,500 per endpoint" in ft3.computed
    pods = [c for c in report.paper_checks if c.item.startswith("DGX SuperPOD")]
    assert len(pods) == 3 and all(c.paper == c.computed for c in pods)


def test_published_counts_are_not_priced_with_a_switch_of_another_radix():
    """`paper` sizes with the 40-port QM8700: Table 3's 64-port configurations are counted, not priced."""
    _, report = sized(512, d.RAIL_OPTIMIZED, preset="paper")
    mpft = next(c for c in report.paper_checks if c.item.startswith("DeepSeek-V3 Table 3 MPFT"))
    assert mpft.computed == "768 switches, 16,384 links"


def test_fire_flyer_plan_against_the_new_layouts(ff2_plan):
    """The inventory's design against the reference node in every layout, at the plan's GPU count; the
    plan's storage and management ports go to a storage fabric in each."""
    report = build_report(
        ff2_plan,
        resolve_catalog(ff2_plan, "paper"),
        compare=[d.FIRE_FLYER, d.THREE_LAYER, d.RAIL_OPTIMIZED, d.MULTI_PLANE],
    )
    designs = {r.key: r for r in report.designs}
    assert list(designs) == [d.FIRE_FLYER, d.THREE_LAYER, d.RAIL_OPTIMIZED, d.MULTI_PLANE]
    assert {r.gpus for r in designs.values()} == {9600}
    storage = designs[d.THREE_LAYER].fabrics[1]
    for key in (d.RAIL_OPTIMIZED, d.MULTI_PLANE):
        assert designs[key].fabrics[0].access_points == 1200 * 8
        assert designs[key].fabrics[1] == storage
    assert designs[d.MULTI_PLANE].fabrics[0].name.startswith("8 ")
    # k = 40: units of 20 DGX nodes, 60 units x 8 rails = 480 leaves, too many for two layers
    assert designs[d.RAIL_OPTIMIZED].fabrics[0].switches == {"leaf": 480, "spine": 480, "core": 240}
    assert any(r.name == "network price" and r.denominator == d.THREE_LAYER for r in report.ratios)
    assert any(c.item.startswith("DeepSeek-V3 Table 3") for c in report.paper_checks)


ARGS = ["report", "cost", "--gpus", "16384", "--compare", "mpft,ft3,rail-optimized", "--preset", "deepseek-v3"]


@pytest.mark.parametrize("fmt", ["table", "markdown", "html", "json", "csv"])
def test_cli_without_input_in_every_format(fmt):
    result = runner.invoke(app, [*ARGS, "--format", fmt])
    assert result.exit_code == 0, result.output
    text = result.stdout
    if fmt == "json":
        data = json.loads(text)
        assert [x["key"] for x in data["designs"]] == ["mpft", "ft3", "rail-optimized"]
        assert [x["switch_total"] for x in data["designs"]] == [768, 1280, 1280]
        assert data["designs"][0]["cost"]["network_per_endpoint"] == pytest.approx(4390, rel=0.005)
    elif fmt == "csv":
        table = list(csv.reader(io.StringIO(text)))
        assert table[0] == ["group", "metric", "mpft", "ft3", "rail-optimized"]
        rows = {(r[0], r[1]): r[2:] for r in table[1:]}
        assert rows[("Network", "switches")] == ["768", "1280", "1280"]
        assert rows[("Network", "switch-to-switch links")] == ["16384", "32768", "32768"]
        assert rows[("Cost", "network per endpoint")] == ["4390", "7500", "7500"]
    elif fmt == "table":  # rich wraps the cells to the terminal: numbers only
        assert all(n in text for n in ("768", "1,280", "16,384", "4,390", "7,500", "5,120"))
    else:
        assert "HGX-H800 multi-plane" in text and "768" in text and "16,384" in text
        if fmt == "html":
            assert "Network cost per endpoint (USD)" in text and "4,390" in text
        assert "DeepSeek-V3 Table 3" in text and "128 leaf + 128 spine + 64 core" in text
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["report", "cost", "--gpus", "64", "--compare", "mpf"], "no design named 'mpf'"),
        (["report", "cost", "--gpus", "64", "--compare", "plan"], "no INPUT was given"),
        (["report", "cost", "--gpus", "64", "--compare", "fire-flyer"], "the design 'fire-flyer' is now named 'plan'"),
        (["report", "cost", "--gpus", "64", "--compare", "pcie-three-layer"], "is now named 'plan-ft3'"),
        (["report", "cost", "--compare", "mpft"], "without INVENTORY_OR_PLAN, --gpus is required"),
        (["report", "cost", "--gpus", "20000", "--compare", "ft3"], "exceed a three-layer tree of 40-port switches"),
    ],
)
def test_cli_refuses_a_comparison_it_cannot_build(args, message):
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    if "--compare" in args and "--gpus is required" not in message:
        assert "FF805" in result.output and "[--compare]" in result.output


def test_cli_with_an_inventory_and_compare(root):
    result = runner.invoke(
        app,
        [
            "report",
            "cost",
            str(root / "inventories" / "fire-flyer-2.yaml"),
            "-q",
            "--compare",
            "plan,rail-optimized",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert [x["key"] for x in json.loads(result.stdout)["designs"]] == ["plan", "rail-optimized"]


def test_without_a_plan_or_gpus_the_library_refuses_with_a_comparison_error():
    """mypy found `gpus / ref.gpus` reachable with gpus None: a TypeError before, a located reason now."""
    with pytest.raises(ComparisonError, match="GPU count"):
        build_report(None, load_preset("deepseek-v3"), compare=[d.THREE_LAYER])
