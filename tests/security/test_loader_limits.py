"""Items 9, 10, 12 and 15 of issue 14: the loader and lint refuse what they cannot read or generate with a
located finding (never a traceback, a hang or an exhausted memory), and one bad file in a folder does not
stop lint for the others."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from harden_fixtures import ROOT, lab_design_cache, run_cli  # noqa: F401  (a fixture)

from ffplan.lint import lint_file

BASE = (ROOT / "tests" / "lint" / "base.yaml").read_text()


def _write(tmp_path: Path, text: str, name: str = "inv.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _findings(path: Path) -> list[tuple[str, int, str]]:
    return [(d.rule, d.line, d.yaml_path) for d in lint_file(path).diagnostics]


@pytest.mark.parametrize("tagged", ["!!int abc", "!!float sixty", "!!bool 2", "!!timestamp 2001-02-30"])
def test_a_tagged_value_that_does_not_fit_its_tag_is_a_located_finding(tmp_path, tagged):
    path = _write(tmp_path, BASE.replace("name: fixture", f"name: {tagged}"))
    assert _findings(path) == [("FF012", 4, "name")]
    assert f"is not a valid !!{tagged.split()[0][2:]}" in lint_file(path).diagnostics[0].message


def test_a_tagged_key_that_does_not_fit_its_tag_is_a_located_finding(tmp_path):
    path = _write(tmp_path, BASE.replace("    SW8: {ports: 8,", "    !!int LAB8: {ports: 8}\n    SW8: {ports: 8,"))
    assert _findings(path) == [("FF012", 7, "models.switches.LAB8")]


@pytest.mark.parametrize(
    "value, message",
    [
        ("!!omap x", "'x' is not a valid !!omap"),  # a collection's tag on a plain value
        ("!!seq abc", "'abc' is not a valid !!seq"),
        ("!!str {a: 1}", "this mapping is not a valid !!str"),
        ("!custom x", "'x' has the unknown tag !custom"),
        ("!!python/name:os.system x", "not a valid !!python/name:os.system"),
    ],
)
def test_unknown_or_mismatched_tags_are_located_findings(tmp_path, value, message):
    diags = lint_file(_write(tmp_path, BASE.replace("name: fixture", f"name: {value}"))).diagnostics
    assert diags and {(d.rule, d.line) for d in diags} == {("FF012", 4)}
    assert any(message in d.message for d in diags)


@pytest.mark.parametrize(
    "extra, message",
    [("? [a, b]\n: 1", "a key here is a list or mapping"), ("<<: 5", "'<<' merges a mapping or a list of mappings")],
)
def test_odd_keys_are_located_findings(tmp_path, extra, message):
    diags = lint_file(_write(tmp_path, BASE.replace("name: fixture", "name: fixture\n" + extra))).diagnostics
    assert [(d.rule, d.line, d.message) for d in diags] == [("FF012", 5, message)]


def test_one_bad_file_does_not_stop_lint_of_a_folder(tmp_path):
    _write(tmp_path, BASE.replace("name: fixture", "name: !!int abc"), "a-bad.yaml")
    _write(tmp_path, BASE.replace("count: 4", "count: -4"), "b-schema.yaml")
    _write(tmp_path, BASE, "c-good.yaml")
    result = run_cli("lint", tmp_path, "--format", "json")
    assert result.exit_code == 1
    found = {(Path(f["file"]).name, f["rule"]) for f in json.loads(result.stdout)["findings"]}
    assert found == {("a-bad.yaml", "FF012"), ("b-schema.yaml", "FF012")}


@pytest.mark.parametrize(
    "value, message",
    [("-1", "greater than or equal to 0"), (".nan", "finite"), ("-.inf", "finite"), (".inf", "finite")],
)
@pytest.mark.parametrize("table", ["prices", "power_w", "cable"])
def test_catalog_values_are_finite_and_not_negative(tmp_path, table, value, message):
    key = "aoc_per_m" if table == "cable" else "SW8"
    path = _write(tmp_path, BASE + f"catalog:\n  {table}:\n    {key}: {value}\n")
    diags = lint_file(path).diagnostics
    assert [(d.rule, d.line, d.yaml_path) for d in diags] == [("FF012", 64, f"catalog.{table}.{key}")]
    assert message in diags[0].message


@pytest.mark.parametrize("value", ["-1", ".nan", ".inf"])
def test_model_power_is_finite(tmp_path, value):
    path = _write(tmp_path, BASE.replace("SW8: {ports: 8,", f"SW8: {{power_w: {value}, ports: 8,"))
    assert _findings(path) == [("FF012", 7, "models.switches.SW8.power_w")]


def test_design_refuses_a_catalog_infinity_with_the_finding(tmp_path):
    path = _write(tmp_path, BASE + "catalog:\n  prices:\n    SW8: .inf\n")
    result = run_cli("design", path, "-o", tmp_path / "out", "-q")
    assert result.exit_code == 1 and "FF012" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "pattern, expected",
    [
        ("stor{index:0999999999d}", "width 999999999 of {index} is over 63"),
        ("stor{index:064d}", "width 64 of {index} is over 63"),
        ("stor{index:x}", "is not a plain width"),
    ],
)
def test_hostname_pattern_widths_are_bounded_before_expanding(tmp_path, pattern, expected):
    path = _write(tmp_path, BASE.replace('hostname: "gpu{index}"', f'hostname: "{pattern}"'))
    diags = lint_file(path).diagnostics
    assert [(d.rule, d.yaml_path) for d in diags] == [("FF020", "groups[0].hostname")]
    assert expected in diags[0].message


RACK_BLOCK = 'rack_blocks:\n  - {{name: "{name}", rows: {rows}, slots: {slots}}}\ngroups:'


def _with_rack_block(tmp_path, name="c{row:02d}-{slot:02d}", rows="[5, 6]", slots="[1, 3]") -> Path:
    return _write(tmp_path, BASE.replace("groups:", RACK_BLOCK.format(name=name, rows=rows, slots=slots), 1))


def test_a_small_rack_block_is_clean(tmp_path):
    assert _findings(_with_rack_block(tmp_path)) == []


@pytest.mark.parametrize(
    "name, expected",
    [
        ("c{row:0999999999d}", "width 999999999 of {row} is over 63"),
        ("c{row.foo}", "unknown placeholder {row.foo}"),
        ("c{row:x}", "is not a plain width"),
    ],
)
def test_rack_name_patterns_are_bounded_before_expanding(tmp_path, name, expected):
    diags = lint_file(_with_rack_block(tmp_path, name=name)).diagnostics
    assert [(d.rule, d.line, d.yaml_path) for d in diags] == [("FF020", 46, "rack_blocks[0].name")]
    assert expected in diags[0].message


def test_a_million_racks_are_refused_before_generating(tmp_path):
    diags = lint_file(_with_rack_block(tmp_path, rows="[0, 999]", slots="[0, 999]")).diagnostics
    assert [(d.rule, d.yaml_path) for d in diags] == [("FF020", "rack_blocks[0].rows")]
    assert "1,000,000 racks" in diags[0].message


@pytest.mark.parametrize(
    "field, rows, slots, message",
    [
        ("rows", "[6, 5]", "[1, 3]", "reversed"),
        ("slots", "[5, 6]", "[9, 0]", "reversed"),
        ("rows", "[-5, -1]", "[1, 3]", "outside 0-999"),
        ("slots", "[5, 6]", "[998, 1000]", "outside 0-999"),
    ],
)
def test_reversed_or_out_of_range_rack_block_ranges_are_reported(tmp_path, field, rows, slots, message):
    diags = lint_file(_with_rack_block(tmp_path, rows=rows, slots=slots)).diagnostics
    assert [(d.rule, d.yaml_path) for d in diags] == [("FF020", f"rack_blocks[0].{field}")]
    assert message in diags[0].message


def test_hosts_over_the_limit_are_refused_before_generating(tmp_path):
    groups = "".join(
        f'  - {{name: g{i}, role: compute, model: gpu-node, count: 60000, hostname: "g{i}n{{index}}"}}\n'
        for i in range(2)
    )
    path = _write(tmp_path, BASE.replace("groups:\n", "groups:\n" + groups, 1))
    diags = lint_file(path).diagnostics
    assert [(d.rule, d.yaml_path) for d in diags] == [("FF020", "groups[1].count")]
    assert "120,000 hosts" in diags[0].message


@pytest.mark.parametrize(
    "group",
    [
        "{name: spare, role: compute, model: gpu-node}",
        "{name: spare, role: compute, model: gpu-node, count: null}",
        '{name: spare, role: compute, model: gpu-node, hostname: "sp{index}", hosts: []}',
    ],
)
def test_a_group_without_hosts_is_reported(tmp_path, group):
    path = _write(tmp_path, BASE.replace("traffic_classes:", f"  - {group}\ntraffic_classes:"))
    assert _findings(path) == [("FF021", 59, "groups[2]")]


@pytest.mark.parametrize(
    "command",
    [
        "lint IN",
        "design IN -o OUT",
        "report cost IN",
        "render IN -o OUT",
        "analyze IN",
        "diff IN IN",
        "analyze PLAN --lfts IN",
    ],
)
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path, command, lab_design_cache):
    fifo = tmp_path / "plan.yaml"
    os.mkfifo(fifo)
    places = {"IN": fifo, "OUT": tmp_path / "out", "PLAN": lab_design_cache}
    result = run_cli(*(str(places.get(a, a)) for a in command.split()))
    assert result.exit_code == 2, result.output
    assert "not a regular file" in result.output


def test_report_cost_takes_the_design_folder(lab_design_cache):
    """Like render, analyze and verify (was refused as 'not a regular file' with a FIFO hint)."""
    result = run_cli("report", "cost", lab_design_cache, "-f", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["designs"]


def test_a_folder_given_to_design_is_named_a_folder(tmp_path):
    result = run_cli("design", tmp_path, "-o", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert "is a folder" in result.output and "FIFO" not in result.output


def test_a_symlink_to_dev_zero_is_refused(tmp_path):
    link = tmp_path / "inv.yaml"
    link.symlink_to("/dev/zero")
    result = run_cli("design", link, "-o", tmp_path / "out", "-q")
    assert result.exit_code == 2
    assert "FF003" in result.output and "not a regular file" in result.output


def test_reading_stops_at_the_size_limit(tmp_path, monkeypatch):
    # A file that grows while it is read (or lies about its size) is read only up to the limit.
    from ffplan.inventory import source

    path = _write(tmp_path, "#" * 5000)
    with pytest.raises(source.InputError) as exc:
        source.read_text(path, limit=100)
    assert "over the 100-byte limit" in exc.value.diagnostics[0].message


# Issue 26 item 1: PyYAML's constructors raise AttributeError (`!!timestamp x`: no match) or IndexError (`!!int ''`)
# on these; every reader of YAML (inventory, config, catalog; plans in test_plan_load.py) crashed with exit 1.
CRASHING_TAGS = ["!!timestamp x", "!!timestamp ''", "!!int ''", "!!float ''", "!!int :1:2", "!!bool ''"]


@pytest.mark.parametrize("tagged", CRASHING_TAGS)
@pytest.mark.parametrize("command", ["lint IN", "design IN -o OUT", "report cost IN"])
def test_tags_pyyaml_crashes_on_are_located_findings_in_every_inventory_reader(tmp_path, tagged, command):
    path = _write(tmp_path, BASE.replace("name: fixture", f"name: {tagged}"))
    result = run_cli(*(str({"IN": path, "OUT": tmp_path / "out"}.get(a, a)) for a in command.split()))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (1, 2) and "Traceback" not in result.output
    assert (
        f"inv.yaml:4:1: error FF012 '{tagged.split(' ', 1)[1].strip(chr(39))}' is not a valid {tagged.split()[0]}"
        in result.output
    ), result.output


@pytest.mark.parametrize("tagged", CRASHING_TAGS + ["!!int abc"])
def test_tags_in_the_lint_config_are_located_config_errors(tmp_path, tagged, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, BASE)
    _write(tmp_path, f"ignore: [{tagged}]\n", ".ffplan.yaml")
    result = run_cli("lint", "inv.yaml")
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert ".ffplan.yaml:1:1" in result.output and "is not a valid" in result.output


@pytest.mark.parametrize("tagged", CRASHING_TAGS)
def test_tags_in_a_catalog_file_are_located_findings(tmp_path, tagged):
    inventory = _write(tmp_path, BASE)
    catalog = _write(tmp_path, f"prices:\n  SW8: {tagged}\n", "catalog.yaml")
    result = run_cli("report", "cost", inventory, "--catalog", catalog)
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert "catalog.yaml:2:3: error FF012" in result.output, result.output
