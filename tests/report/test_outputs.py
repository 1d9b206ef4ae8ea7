"""Output formats and the `ffplan report cost` command, including its refusals."""

import csv
import io
import json
import re

import pytest
from typer.testing import CliRunner

from ffplan.catalog import CatalogOverride
from ffplan.cli.main import app
from tests.support.plans import write_plan
from ffplan.report.catalog import resolve_catalog
from ffplan.report.cost import build_report
from ffplan.report.pricing import EnergyOptions, HOURS_PER_YEAR
from ffplan.report.output import render, to_html

runner = CliRunner()


def test_html_is_self_contained_with_svg_charts(ff2_report):
    html = to_html(ff2_report)
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I)
    names = re.sub(r' xmlns(:\w+)?="http://www\.w3\.org/[^"]*"', "", html)  # SVG's namespaces are names, not links
    assert "http://" not in names and "https://" not in names
    assert "<script" not in html.lower() and "<?xml" not in html and "<metadata" not in html
    assert html.count("<svg") == 5  # cost, network cost, network cost per endpoint, power, switches per layer
    charts = re.findall(r'<figure id="chart-([\w-]+)">\n<figcaption>[^<]*</figcaption>\n<svg (.*?)</svg>', html, re.S)
    assert [c for c, _ in charts] == ["cost", "network", "per-endpoint", "power", "switches"]
    for _, chart in charts:  # drawn by matplotlib: the designs' names and the totals are text a reader can select
        assert all(f">{d.title}<" in chart for d in ff2_report.designs) and "<path" in chart
    assert ">120<" in charts[4][1]  # Fire-Flyer 2's switches: 80 leaves + 40 spines
    assert to_html(ff2_report) == html  # the same bytes every time (fixed ids, no dates)


def test_html_escapes_what_it_prints(ff2_plan):
    report = build_report(ff2_plan, resolve_catalog(ff2_plan, "paper"), input_name="<b>x</b>")
    html = to_html(report)
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html


def test_markdown_has_a_column_per_design(ff2_report):
    md = render(ff2_report, "markdown")
    header = next(line for line in md.splitlines() if line.startswith("| |"))
    assert header.count("|") == len(ff2_report.designs) + 2
    assert "| Network: switches | 120 | 198 | 1,398 |" in md


def test_json_round_trips(ff2_report):
    data = json.loads(render(ff2_report, "json"))
    assert [d["key"] for d in data["designs"]] == ["plan", "plan-ft3", "ft3"]
    assert data["designs"][0]["switches"] == {"leaf": 80, "spine": 40, "core": 0}


def test_csv_keeps_raw_numbers(ff2_report):
    table = list(csv.reader(io.StringIO(render(ff2_report, "csv"))))
    assert table[0] == ["group", "metric", "plan", "plan-ft3", "ft3"]
    power = next(r for r in table if r[1] == "nodes, average (W)")
    assert float(power[2]) == 1200 * 2500


def test_csv_numbers_are_exact_and_in_the_unit_of_their_header(ff2_plan):
    energy = EnergyOptions(years=5, pue=1.25, kwh_price=0.1)
    report = build_report(ff2_plan, resolve_catalog(ff2_plan, "list-price"), energy=energy)
    text = render(report, "csv")
    assert not re.search(r"\d[eE][+-]?\d", text)  # no exponents anywhere
    table = {r[1]: r[2:] for r in csv.reader(io.StringIO(text))}
    ff = report.designs[0]
    assert table["total"][0] == str(round(ff.cost.total)) and float(table["total"][0]) == ff.cost.total
    assert float(table["energy (MWh)"][0]) == pytest.approx(ff.energy.kwh / 1000, abs=1e-9)
    assert table["total, peak (W)"][0] == str(round(ff.power.peak_w))


def test_energy_over_years(ff2_plan):
    energy = EnergyOptions(years=5, pue=1.25, kwh_price=0.1)
    report = build_report(ff2_plan, resolve_catalog(ff2_plan, "list-price"), energy=energy)
    ff = report.designs[0]
    assert ff.energy.kwh == pytest.approx(ff.power.average_w / 1000 * HOURS_PER_YEAR * 5 * 1.25)
    assert ff.tco == pytest.approx(ff.cost.total + ff.energy.kwh * 0.1)
    assert "total with energy" in render(report, "markdown")


def test_energy_in_relative_units_is_not_added(ff2_plan):
    energy = EnergyOptions(years=1, pue=1.3, kwh_price=0.1)
    report = build_report(ff2_plan, resolve_catalog(ff2_plan, "paper"), energy=energy)
    assert report.designs[0].tco is None
    assert any("not added to the total" in n for n in report.notes)


@pytest.fixture(scope="module")
def lonely_plan(tmp_path_factory, ff2_plan):
    """A plan alone in its folder: its inventory is neither next to it nor in the current directory."""
    path = tmp_path_factory.mktemp("lonely") / "plan.yaml"
    write_plan(ff2_plan, path)
    return path


def test_cli_inventory_and_plan_inputs_agree(root, lonely_plan):
    inventory = root / "inventories" / "fire-flyer-2.yaml"
    from_inventory = runner.invoke(app, ["report", "cost", str(inventory), "--format", "json", "-q"])
    assert from_inventory.exit_code == 0, from_inventory.output
    from_plan = runner.invoke(app, ["report", "cost", str(lonely_plan), "--format", "json"])
    assert from_plan.exit_code == 0, from_plan.output
    a, b = json.loads(from_inventory.stdout), json.loads(from_plan.stdout)
    assert a["designs"] == b["designs"] and a["sources"] == b["sources"]


def test_cli_reads_only_the_plan(tmp_path, monkeypatch, lonely_plan):
    """plan.yaml copied alone to an empty folder, run from there: no inventory anywhere, and none is read."""
    (tmp_path / "plan.yaml").write_bytes(lonely_plan.read_bytes())
    monkeypatch.chdir(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["plan.yaml"]

    def no_inventory(*args, **kwargs):
        raise AssertionError("the report read an inventory")

    monkeypatch.setattr("ffplan.inventory.load_inventory", no_inventory)
    for extra in ([], ["--gpus", "10000"]):
        result = runner.invoke(app, ["report", "cost", "plan.yaml", "-f", "json", *extra])
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        assert report["inventory"] == "fire-flyer-2" and report["designs"][0]["nodes"] == {
            "ff2-compute": 1250 if extra else 1200
        }


def test_cli_gpus_from_plan_and_inventory_agree(root, lonely_plan):
    inventory = root / "inventories" / "fire-flyer-2.yaml"
    results = [
        runner.invoke(app, ["report", "cost", str(path), "--gpus", "10000", "-f", "json", "-q"])
        for path in (inventory, lonely_plan)
    ]
    assert all(r.exit_code == 0 for r in results), [r.output for r in results]
    a, b = (json.loads(r.stdout) for r in results)
    assert a["designs"] == b["designs"] and a["notes"] == b["notes"]


def test_cli_plan_with_a_bad_catalog_block_is_located(tmp_path, ff2_plan):
    """The designer refuses a bad `catalog:` block; an edited plan gets a located error, not a traceback."""
    path = tmp_path / "plan.yaml"
    write_plan(ff2_plan.model_copy(update={"catalog": CatalogOverride(prices={"QM870": 1.0})}), path)
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if text.startswith("  prices:"))
    result = runner.invoke(app, ["report", "cost", str(path)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert f"{path}:{line}:" in result.output and "catalog.prices.QM870" in result.output
    assert "QM8700" in result.output  # did you mean


def test_cli_plan_of_an_older_ffplan_is_refused(tmp_path, ff2_plan):
    path = tmp_path / "plan.yaml"
    write_plan(ff2_plan.model_copy(update={"node_models": []}), path)
    result = runner.invoke(app, ["report", "cost", str(path)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "re-run `ffplan design`" in result.output


def test_cli_writes_a_file(tmp_path, root):
    target = tmp_path / "out" / "cost.html"
    result = runner.invoke(
        app,
        [
            "report",
            "cost",
            str(root / "inventories" / "fire-flyer-2.yaml"),
            "--gpus",
            "10000",
            "-f",
            "html",
            "-o",
            str(target),
        ],
    )
    assert result.exit_code == 0, result.output
    assert target.read_text().startswith("<!DOCTYPE html>")


def test_cli_table_is_the_default(root):
    result = runner.invoke(app, ["report", "cost", str(root / "inventories" / "fire-flyer-2.yaml"), "--gpus", "10000"])
    assert result.exit_code == 0, result.output
    assert "DGX-A100" in result.stdout and "1,320" in result.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["missing.yaml"], "no such file"),
        (["{inv}", "--catalog", "missing.yaml"], "no such file"),
        (["{inv}", "--catalog", "{bad}"], "unknown key 'price'"),
        (["{inv}", "--catalog", "{typo}"], "no node or switch model named 'QM870'"),
        (["{inv}", "--years", "3"], "--years and --kwh-price go together"),
        (["{plan}", "--catalog", "{typo}"], "no node or switch model named 'QM870'"),
        (["{plan}", "--inventory", "{inv}"], "No such option"),
    ],
)
def test_cli_refuses_bad_input_with_a_message_and_exit_2(tmp_path, root, lonely_plan, args, message):
    bad = tmp_path / "bad.yaml"
    bad.write_text("price: {QM8700: 1}\n")
    typo = tmp_path / "typo.yaml"
    typo.write_text("prices:\n  QM870: 1\n")
    paths = {
        "inv": str(root / "inventories" / "fire-flyer-2.yaml"),
        "bad": str(bad),
        "typo": str(typo),
        "plan": str(lonely_plan),
    }
    result = runner.invoke(app, ["report", "cost", *[a.format(**paths) for a in args], "--gpus", "80"])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    if args[-1] == "{typo}":
        assert f"{typo}:2:3:" in result.output  # located in the catalog file
