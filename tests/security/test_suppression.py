"""Item 5 of issue 14: `# ffplan: disable=` cannot hide reading, schema, safety or reference errors, and
whatever it hides from lint's report, `ffplan design` re-checks: it refuses (naming the rule, no
traceback) what it cannot build faithfully and builds only what stays exactly what the inventory says."""

from __future__ import annotations

from pathlib import Path

import pytest
from harden_fixtures import ROOT, run_cli

from ffplan.lint import all_rules, lint_file
from ffplan.lint.registry import lint_rules
from ffplan.lint.declare import Suppression

FIXTURES = ROOT / "tests" / "lint" / "fixtures"
LAB = (ROOT / "inventories" / "lab.yaml").read_text()
ERROR_RULES = [r for r in lint_rules() if r.severity.value == "error"]


def _suppressed_fixture(tmp_path: Path, rule_id: str, how: str) -> Path:
    """The rule's fail fixture with the rule disabled for the whole file (`how` = disable-file) or on the
    line of each of its findings (`how` = disable)."""
    fail = FIXTURES / rule_id / "fail.yaml"
    text = fail.read_text(encoding="utf-8", errors="surrogateescape")
    if how == "disable-file":
        text += f"\n# ffplan: disable-file={rule_id}\n"
    else:
        lines = text.split("\n")
        for line in {d.line for d in lint_file(fail).diagnostics if d.rule == rule_id}:
            lines[line - 1] += f"  # ffplan: disable={rule_id}"
        text = "\n".join(lines)
    path = tmp_path / "inv.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    return path


def _design(tmp_path: Path, inventory: Path):
    out = tmp_path / "out"
    result = run_cli("design", inventory, "-o", out, "-q")
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    return result, out


@pytest.mark.parametrize("how", ["disable", "disable-file"])
@pytest.mark.parametrize("rule", ERROR_RULES, ids=[r.id for r in ERROR_RULES])
def test_a_suppressed_error_is_refused_by_design_or_built_faithfully(tmp_path, rule, how):
    path = _suppressed_fixture(tmp_path, rule.id, how)
    reported = {d.rule for d in lint_file(path).diagnostics}
    result, out = _design(tmp_path, path)
    if rule.suppression is Suppression.FORBIDDEN:
        assert rule.id in reported
        assert "FF005" in reported or rule.id in ("FF001", "FF003")  # no comment is read from those files
        assert result.exit_code in (1, 2) and rule.id in result.output
        assert not out.exists()
    elif rule.suppression is Suppression.REPORT_ONLY:
        assert rule.id not in reported
        assert result.exit_code == (3 if rule.id.startswith("FF1") else 1), result.output
        assert f"error {rule.id} " in result.output and "suppressed in the inventory" in result.output
        assert not out.exists()
    else:
        assert rule.id not in reported
        assert result.exit_code == 0, result.output
        assert (out / "plan.yaml").is_file()


def _line_of(path, text: str) -> int:
    """The 1-based line of `path` holding `text` (the shipped lab.yaml's lines move as it grows)."""
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_an_unsafe_hostname_cannot_be_suppressed(tmp_path):
    path = tmp_path / "lab.yaml"
    path.write_text(
        LAB.replace(
            "{hostname: mgmt2, rack: r4, u: 31}",
            '{hostname: "mgmt2$(reboot)", rack: r4, u: 31}  # ffplan: disable=FF013',
        )
    )
    line = _line_of(path, "mgmt2$(reboot)")
    found = [(d.rule, d.line) for d in lint_file(path).diagnostics]
    assert ("FF013", line) in found and ("FF005", line) in found
    result, out = _design(tmp_path, path)
    assert result.exit_code == 1 and "error FF013" in result.output
    assert not out.exists()


def test_an_unknown_node_model_cannot_be_suppressed(tmp_path):
    # Before: design exited 0 with the 18 compute hosts in the plan and no cables for them.
    path = tmp_path / "lab.yaml"
    path.write_text(
        LAB.replace("    model: gpu-node\n    count: 18", "    model: gpu-nod  # ffplan: disable=FF210\n    count: 18")
    )
    line = _line_of(path, "model: gpu-nod ")
    assert {(d.rule, d.line) for d in lint_file(path).diagnostics} >= {("FF210", line), ("FF005", line)}
    result, out = _design(tmp_path, path)
    assert result.exit_code == 1 and "error FF210" in result.output and "gpu-nod" in result.output
    assert not out.exists()


def test_reading_schema_safety_and_reference_rules_are_forbidden():
    forbidden = {r.id for r in all_rules() if r.suppression is Suppression.FORBIDDEN}
    assert {r.id for r in all_rules() if r.id[2] in "05"} <= forbidden
    assert {"FF210", "FF211", "FF212", "FF213", "FF301", "FF302", "FF307"} <= forbidden


def test_warnings_may_be_suppressed(tmp_path):
    path = _suppressed_fixture(tmp_path, "FF404", "disable")
    assert lint_file(path).diagnostics == []


def test_explain_says_whether_a_rule_can_be_suppressed():
    assert "cannot be suppressed" in run_cli("explain", "FF013").output
    assert "`ffplan design` still refuses" in run_cli("explain", "FF201").output
    assert "# ffplan: disable=FF205" in run_cli("explain", "FF205").output
