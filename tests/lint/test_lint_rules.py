"""Every registered rule has a pass and a fail fixture, each fixture does what it says, and the registry
holds the documentation `ffplan rules` and `ffplan explain` print."""

import ast
import json
import pathlib
import re

import pytest

from ffplan.codes import STAGES, Code, table
from ffplan.lint import all_rules, lint_file
from ffplan.lint.declare import TOPICS
from ffplan.lint.registry import lint_rules

HERE = pathlib.Path(__file__).parent
FIXTURES = HERE / "fixtures"
RULE_IDS = [r.id for r in all_rules()]
LINT_RULE_IDS = [r.id for r in lint_rules()]  # the rest are errors of later stages, without lint fixtures


def _rules_found(path: pathlib.Path) -> set[str]:
    return {d.rule for d in lint_file(path).diagnostics}


def test_base_inventory_is_clean():
    assert lint_file(HERE / "base.yaml").diagnostics == []


@pytest.mark.parametrize("rule_id", LINT_RULE_IDS)
def test_every_rule_has_both_fixtures(rule_id):
    assert (FIXTURES / rule_id / "pass.yaml").is_file(), f"add tests/lint/fixtures/{rule_id}/pass.yaml"
    assert (FIXTURES / rule_id / "fail.yaml").is_file(), f"add tests/lint/fixtures/{rule_id}/fail.yaml"


def test_no_fixture_without_a_rule():
    assert sorted(p.name for p in FIXTURES.iterdir()) == LINT_RULE_IDS


@pytest.mark.parametrize("rule_id", LINT_RULE_IDS)
def test_fail_fixture_triggers_only_its_rule(rule_id):
    assert _rules_found(FIXTURES / rule_id / "fail.yaml") == {rule_id}


@pytest.mark.parametrize("rule_id", LINT_RULE_IDS)
def test_pass_fixture_is_clean(rule_id):
    assert _rules_found(FIXTURES / rule_id / "pass.yaml") == set()


@pytest.mark.parametrize("rule", all_rules(), ids=RULE_IDS)
def test_rule_is_documented(rule):
    assert rule.id[2] in TOPICS
    assert rule.name == rule.name.lower() and " " not in rule.name
    assert rule.summary and rule.explanation and rule.bad and rule.good
    assert rule.bad != rule.good


def test_rule_names_are_unique():
    names = [r.name for r in all_rules()]
    assert len(names) == len(set(names))


def test_port_budget_rule_keeps_its_id():
    # FF101 is documented in the issue, the example inventory and CI configs: it must never be renumbered.
    assert next(r for r in all_rules() if r.name == "zone-port-budget").id == "FF101"


def test_rules_lists_every_rule(ffplan):
    result = ffplan("rules")
    assert result.exit_code == 0
    for rule_id in RULE_IDS:
        assert rule_id in result.stdout


def test_rules_json(ffplan):
    result = ffplan("rules", "--format", "json")
    rows = json.loads(result.stdout)["rules"]
    assert [r["id"] for r in rows] == RULE_IDS
    assert {"id", "name", "severity", "topic", "summary"} <= set(rows[0])


def test_docs_carry_the_current_rule_table(ffplan, root):
    table = ffplan("rules", "--format", "md").stdout.strip()
    assert table in (root / "docs" / "lint.md").read_text(), "paste `ffplan rules --format md` into docs/lint.md"


@pytest.mark.parametrize("key", ["FF101", "ff101", "zone-port-budget"])
def test_explain_by_id_or_name(ffplan, key):
    result = ffplan("explain", key)
    assert result.exit_code == 0
    assert result.stdout.startswith("FF101 zone-port-budget (error; fabric and port budget)")
    assert "Bad:" in result.stdout and "Good:" in result.stdout


def test_explain_unknown_rule_suggests_one(ffplan):
    result = ffplan("explain", "zone-port-budgt")
    assert result.exit_code == 2
    assert "did you mean 'zone-port-budget'?" in result.stderr


def test_every_code_ffplan_emits_is_registered(root):
    """A code printed by any stage must be explainable: grep ffplan/ and templates/ for FFnnn."""
    emitted = set()
    for folder in ("ffplan", "templates"):
        for path in (root / folder).rglob("*"):
            if path.is_file() and path.suffix in (".py", ".j2", ".yaml"):
                emitted |= set(re.findall(r"\bFF\d{3}\b", path.read_text(encoding="utf-8")))
    assert emitted and sorted(emitted - set(RULE_IDS)) == []


def test_the_codes_table_is_what_explain_documents():
    """ffplan/codes lists every code once, and every code in it is registered (`ffplan explain` documents it)
    under the table's name and one-line meaning."""
    listed = [code for stage in STAGES for code in vars(stage).values() if isinstance(code, Code)]
    assert len(listed) == len(set(listed)) == len(table())
    assert sorted(table()) == RULE_IDS
    rules = {r.id: r for r in all_rules()}
    assert [(rules[c].name, rules[c].summary) for c in listed] == [(c.name, c.summary) for c in listed]


def test_stages_use_the_codes_table(root):
    """No stage spells a code as a bare "FFnnn" string: each imports its named constant from ffplan/codes
    (a user-facing example inside a longer string, e.g. a hint, is not a code)."""
    bare = []
    for path in sorted((root / "ffplan").rglob("*.py")):
        if path.parent.name == "codes":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"FF\d{3}", node.value):
                bare.append(f"{path.relative_to(root)}:{node.lineno}: {node.value}")
    assert bare == []


@pytest.mark.parametrize("code", ["FF150", "FF602", "FF803", "FF903", "FF920"])
def test_explain_a_code_of_a_later_stage(ffplan, code):
    result = ffplan("explain", code)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"{code} ") and "Bad:" in result.stdout and "Good:" in result.stdout
    assert "Reported by `ffplan " in result.stdout and "disable=" not in result.stdout


def test_explain_a_prefix_suggests_the_ids_it_starts(ffplan):
    result = ffplan("explain", "FF10")
    assert result.exit_code == 2
    assert "did you mean FF101, FF102" in result.stderr and "FF210" not in result.stderr


def test_duplicate_guid_counts_the_second_port_of_a_dual_port_card(tmp_path):
    """mlx5 numbering: port 2 of a card given 0x...01 is 0x...02, so another device given 0x...02 clashes."""
    text = (HERE.parents[1] / "inventories" / "lab.yaml").read_text()
    nic = '{name: mlx5_0, kind: nic, model: CX6-HDR, root_port: rp0, bus_id: "0000:41:00.0"}'
    head, _, tail = text.rpartition(nic)  # the management nodes get a dual-port card
    text = (head + nic.replace("CX6-HDR", "CX6-DUAL") + tail).replace(
        "    CX6-HDR: {ports: 1, speed: HDR, data_vls: 8}",
        "    CX6-HDR: {ports: 1, speed: HDR, data_vls: 8}\n    CX6-DUAL: {ports: 2, speed: HDR, data_vls: 8}",
    )
    clash = text.replace(
        "- {hostname: mgmt2, rack: r4, u: 31}",
        '- {hostname: mgmt2, rack: r4, u: 31, guids: {mlx5_0: "0x0002c90300aa0002"}}',
    )
    apart = clash.replace('"0x0002c90300aa0002"', '"0x0002c90300aa0003"')
    for name, body in (("clash", clash), ("apart", apart)):
        (tmp_path / f"{name}.yaml").write_text(body)
    found = [d for d in lint_file(tmp_path / "clash.yaml").diagnostics if d.rule == "FF202"]
    assert len(found) == 1 and "port 2 of this dual-port card" in found[0].message
    assert "0x0002c90300aa0002" in found[0].message
    assert not [d for d in lint_file(tmp_path / "apart.yaml").diagnostics if d.rule == "FF202"]


def test_planar_nic_functions_counts_a_card_once_for_lanes():
    """FF304 counted a twin-planar card's two functions on one root port as two x16 links (32 lanes needed)."""
    assert "FF304" not in _rules_found(FIXTURES / "FF115" / "pass.yaml")
