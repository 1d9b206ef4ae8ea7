"""Catalog presets, their calibration against the paper, and overrides."""

import csv
import io
from typing import get_args

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from ffplan.catalog import PRESETS, CatalogOverride, Figure, load_preset, paper_reference
from ffplan.cli.main import app
from ffplan.design import design
from ffplan.design.sizing import size_three_layer
from ffplan.diagnostics import InputError
from ffplan.inventory import load_inventory
from ffplan.plan import load_plan
from tests.support.plans import write_plan
from ffplan.report.catalog import inventory_location, resolve_catalog
from ffplan.report.cost import build_report


def test_paper_preset_reproduces_table_iii_network_prices_at_the_papers_counts():
    """The calibration stated in paper.yaml: switch and cable units against the paper's own designs."""
    cat = load_preset("paper")
    ref = paper_reference()
    k = ref["radix"]
    switch = cat.switches["QM8700"].price.value
    cable = cat.cables.price("AOC", 0)
    assert cat.cables.price("DAC", 0) == cable  # the paper does not tell copper from optics
    ff_cables = 1250 + 2 * 180  # node cables only: leaf-spine links run inside the 800-port frame switches
    pcie = size_three_layer(k, ref["pcie_three_layer"]["access_points"])
    dgx = size_three_layer(k, ref["dgx_three_layer"]["access_points"])
    prices = {
        "fire_flyer": ref["fire_flyer"]["switches"] * switch + ff_cables * cable,
        "pcie_three_layer": pcie.switches * switch + sum(pcie.links.values()) * cable,
        "dgx": ref["dgx_three_layer"]["switches"] * switch + sum(dgx.links.values()) * cable,
    }
    for name, price in prices.items():
        assert price == pytest.approx(ref["table_iii"]["network_price"][name], rel=0.02), name


def test_paper_preset_node_units_come_from_table_iii():
    cat = load_preset("paper")
    server = paper_reference()["table_iii"]["server_price"]
    nodes = paper_reference()["gpus"] // 8
    assert cat.nodes["ff2-compute"].price.value == pytest.approx(server["fire_flyer"] / nodes)
    assert cat.nodes["dgx-a100"].price.value == pytest.approx(server["dgx"] / nodes)


@pytest.mark.parametrize("preset", PRESETS)
def test_every_number_names_a_source_or_is_an_assumption(preset):
    for key, figure in load_preset(preset).figures():
        assert figure.source or figure.assumption, key


def test_a_number_without_source_is_refused():
    with pytest.raises(ValidationError):
        Figure(value=1.0)


def test_list_price_is_in_dollars(ff2_plan):
    report = build_report(ff2_plan, resolve_catalog(ff2_plan, "list-price"))
    assert report.currency == "USD" and not report.relative_units
    dgx = next(d for d in report.designs if d.key == "ft3")
    assert dgx.cost.servers == 1200 * 199000


def test_catalog_file_overrides_the_inventory_and_the_preset(tmp_path, ff2_plan):
    override = tmp_path / "quote.yaml"
    override.write_text(
        "currency: EUR\nprices: {QM8700: 10.0, dgx-a100: 20.0}\ncable: {aoc_base: 0.5, node_leaf_m: 2}\n"
    )
    cat = resolve_catalog(ff2_plan, "paper", override)
    assert cat.currency == "EUR" and not cat.relative_units
    assert cat.switches["QM8700"].price.value == 10.0
    assert cat.switches["QM8700"].price.source == f"--catalog {override}"
    assert cat.nodes["dgx-a100"].price.value == 20.0
    assert cat.cables.aoc_base.value == 0.5 and cat.sized_lengths.node_leaf_m.value == 2
    assert cat.cables.type_for(cat.sized_lengths.node_leaf_m.value) == "DAC"


def test_inventory_power_beats_the_preset(tmp_path, root):
    """The designer copies the node models' power into the plan; the report takes it from there."""
    text = (root / "inventories" / "fire-flyer-2.yaml").read_text()
    inv = tmp_path / "ff2.yaml"
    inv.write_text(text.replace("power_w: 2500", "power_w: 2400"))
    plan = design(load_inventory(inv))
    assert plan.node_model("ff2-compute").power_w == 2400
    cat = resolve_catalog(plan, "paper")
    assert cat.nodes["ff2-compute"].power_w.value == 2400
    assert cat.nodes["ff2-compute"].power_w.source.startswith("inventory")


def test_inventory_catalog_block_is_carried_by_the_plan(tmp_path, root):
    text = (root / "inventories" / "fire-flyer-2.yaml").read_text()
    inv = tmp_path / "ff2.yaml"
    inv.write_text(text + "catalog:\n  currency: EUR\n  prices:\n    QM8700: 7.5\n")
    plan = design(load_inventory(inv))
    assert plan.catalog == CatalogOverride(currency="EUR", prices={"QM8700": 7.5})
    path = tmp_path / "plan.yaml"
    write_plan(plan, path)
    cat = resolve_catalog(load_plan(path), "paper", plan_file=path)
    assert cat.currency == "EUR" and cat.switches["QM8700"].price.value == 7.5
    assert cat.switches["QM8700"].price.source == "inventory ff2.yaml"


def test_inventory_catalog_block_with_unknown_name_is_located(tmp_path, root):
    """Refused by the designer, located in the inventory."""
    text = (root / "inventories" / "fire-flyer-2.yaml").read_text()
    inv = tmp_path / "ff2.yaml"
    inv.write_text(text + "catalog:\n  preset: list-price\n  prices:\n    QM870: 1.0\n")
    with pytest.raises(InputError) as exc:
        design(load_inventory(inv))
    (diag,) = exc.value.diagnostics
    assert diag.rule == "FF802" and diag.yaml_path == "catalog.prices.QM870"
    assert diag.file == str(inv) and diag.line == len(text.splitlines()) + 4
    assert "QM8700" in diag.hint


def test_plan_catalog_block_with_unknown_name_is_located_in_the_plan(tmp_path, ff2_plan):
    """An edited plan: the same refusal, located in the plan file."""
    path = tmp_path / "plan.yaml"
    write_plan(
        ff2_plan.model_copy(update={"catalog": CatalogOverride(preset="list-price", prices={"QM870": 1.0})}), path
    )
    with pytest.raises(InputError) as exc:
        resolve_catalog(load_plan(path), plan_file=path)
    (diag,) = exc.value.diagnostics
    assert diag.rule == "FF802" and diag.yaml_path == "catalog.prices.QM870" and diag.file == str(path)
    line = path.read_text().splitlines()[diag.line - 1]
    assert line.startswith("  prices:") and line[diag.col - 1 :].startswith("QM870: ")
    assert "QM8700" in diag.hint


@pytest.fixture(scope="module")
def lab_plan(request):
    return design(load_inventory(request.config.rootpath / "inventories" / "lab.yaml"))


def test_node_model_without_price_uses_its_gpus(tmp_path, lab_plan):
    """The lab inventory's 4-GPU node is not in the catalog: it is priced per GPU of its GPU model."""
    quote = tmp_path / "lab-switch.yaml"
    quote.write_text("prices: {LAB8: 0.5}\n")
    report = build_report(lab_plan, resolve_catalog(lab_plan, "paper", quote), gpus=72)
    ff = report.designs[0]
    assert ff.nodes == {"gpu-node": 18}
    assert ff.cost.servers == pytest.approx(
        18 * 4 * load_preset("paper").gpus["A100-PCIe-40GB"].node_price_per_gpu.value
    )
    assert ff.power.switches_w == ff.switch_total * 60  # the inventory's LAB8 power, priced by the override


def test_switch_without_price_is_one_located_warning_in_the_plan(tmp_path, lab_plan):
    path = tmp_path / "plan.yaml"
    write_plan(lab_plan, path)
    report = build_report(lab_plan, resolve_catalog(lab_plan, "paper"), gpus=72, input_name=str(path))
    (diag,) = report.warnings
    index = [m.name for m in lab_plan.switch_models].index("LAB8")
    assert diag.rule == "FF803" and diag.severity.value == "warning"
    assert diag.yaml_path == f"switch_models[{index}]" and diag.file == str(path)
    assert "name: LAB8" in path.read_text().splitlines()[diag.line - 1]
    assert "--catalog" in diag.hint


def test_switch_without_price_is_located_in_the_inventory_it_was_designed_from(root, lab_plan):
    loaded = load_inventory(root / "inventories" / "lab.yaml")
    where = inventory_location(loaded.source.file, loaded.source.positions)
    (diag,) = build_report(lab_plan, resolve_catalog(lab_plan, "paper"), gpus=72, where=where).warnings
    assert diag.rule == "FF803" and diag.yaml_path == "models.switches.LAB8"
    assert (diag.line, diag.col) == loaded.source.positions[("models", "switches", "LAB8")]


def test_a_lint_clean_inventory_reports_its_unpriced_switch_as_such(root):
    """lab.yaml lints clean but the `paper` catalog has no LAB8: the report is still written, with every total
    that needs the switch price as n/a (never a partial sum), and the unpriced figure named."""
    from ffplan.report.output import render

    result = CliRunner().invoke(app, ["report", "cost", str(root / "inventories" / "lab.yaml"), "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert "warning FF803 no price for 'LAB8' in catalog 'paper' [models.switches.LAB8]" in result.stderr
    table = {(r[0], r[1]): r[2:] for r in csv.reader(io.StringIO(result.stdout))}
    assert table[("Cost", "switches")] == table[("Cost", "total")] == ["", "", ""]
    assert table[("Cost", "servers")] == ["81", "81", "136.8"] and table[("Network", "switches")] == ["12", "18", "54"]
    assert float(table[("Performance", "cost-performance")][0]) > 1  # needs server prices only
    plan = design(load_inventory(root / "inventories" / "lab.yaml"))
    report = build_report(plan, resolve_catalog(plan, "paper"))
    assert report.unpriced == ["no price for 'LAB8' in catalog 'paper'"]
    assert "Unpriced: no price for 'LAB8'" in render(report, "markdown") and render(report, "html").count("<svg") == 2
    assert all(r.name not in ("total price", "network price") for r in report.ratios)


def test_an_inventory_names_every_preset():
    """The inventory's `catalog.preset` takes what `--preset` takes."""
    presets, none = get_args(CatalogOverride.model_fields["preset"].annotation)  # Literal[...] | None
    assert get_args(presets) == PRESETS and none is type(None)
