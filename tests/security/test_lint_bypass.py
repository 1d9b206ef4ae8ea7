"""Issue 26 item 5: CI trusts lint, so nothing but the project's own settings and real comments may change its
verdict: another user's config in a shared parent folder, a one-line manifest.json, quoted top-level keys and a
`disable-file=` inside a quoted string each did."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from harden_fixtures import ROOT, run_cli

from ffplan.lint import lint_file
from ffplan.lint.suppress import parse_suppressions

FAIL_FF205 = (ROOT / "tests" / "lint" / "fixtures" / "FF205" / "fail.yaml").read_text()


def _rules(output: str) -> set[str]:
    return {f["rule"] for f in json.loads(output)["findings"]}


@pytest.fixture
def shared(tmp_path, monkeypatch) -> Path:
    """A shared parent folder (/tmp, a group share) with a config silencing FF205, and an inventory below it."""
    (tmp_path / ".ffplan.yaml").write_text("ignore: [FF205]\n")
    work = tmp_path / "work"
    work.mkdir()
    (work / "inv.yaml").write_text(FAIL_FF205)
    monkeypatch.chdir(work)
    return tmp_path


def test_another_users_config_in_a_parent_folder_is_passed_over(shared):
    os.chown(shared / ".ffplan.yaml", 65534, 65534)
    result = run_cli("lint", "inv.yaml", "--strict", "--format", "json")
    assert result.exit_code == 1 and _rules(result.stdout) == {"FF205"}
    assert (
        f"warning: config {shared / '.ffplan.yaml'}: not used, it belongs to another user (uid 65534)" in result.stderr
    )


def test_a_config_anyone_may_write_is_passed_over(shared):
    os.chmod(shared / ".ffplan.yaml", 0o666)
    result = run_cli("lint", "inv.yaml", "--strict", "--format", "json")
    assert result.exit_code == 1 and _rules(result.stdout) == {"FF205"}
    assert "not used, anyone may write it" in result.stderr


def test_the_users_own_config_is_still_used(shared):
    result = run_cli("lint", "inv.yaml", "--strict", "--format", "json")
    assert result.exit_code == 0 and _rules(result.stdout) == set(), result.output


@pytest.mark.parametrize(
    "manifest",
    [
        '{"format": "ffplan-output", "files": []}',
        '{"format": "ffplan-output", "kind": "plan", "files": [{"path": "inv.yaml", "sha256": "x"}]}',
    ],
)
def test_a_manifest_does_not_hide_an_inventory_from_lint_of_a_folder(tmp_path, manifest):
    folder = tmp_path / "clusters" / "prod"
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(manifest + "\n")
    (folder / "inv.yaml").write_text(FAIL_FF205)
    (folder / "plan.yaml").write_text("plan_version: 3\n")  # what ffplan writes there is still no inventory
    result = run_cli("lint", tmp_path, "--format", "json")
    assert result.exit_code == 1, result.output
    assert {(Path(f["file"]).name, f["rule"]) for f in json.loads(result.stdout)["findings"]} == {("inv.yaml", "FF205")}


@pytest.mark.parametrize("quote", ['"', "'"])
def test_the_pre_commit_hook_lints_inventories_with_quoted_top_level_keys(tmp_path, quote, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no project config naming `inventories`
    text = FAIL_FF205
    for key in ("inventory_version", "fabric"):
        text = text.replace(f"\n{key}:", f"\n{quote}{key}{quote}:", 1)
    path = tmp_path / "inv.yaml"
    path.write_text(text)
    result = run_cli("lint", "--only-inventories", path, "--format", "json")
    assert result.exit_code == 1 and _rules(result.stdout) == {"FF205"}, result.output


def test_the_pre_commit_hook_still_skips_other_yaml(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "workflow.yaml"
    path.write_text("on: push\njobs: {fabric_check: {runs-on: x}}\n# fabric: in a comment\n")
    result = run_cli("lint", "--only-inventories", path)
    assert result.exit_code == 0 and "no inventories among the 1 files given" in result.output


@pytest.mark.parametrize(
    "carrier",
    [
        'description: "fixture # ffplan: disable-file=FF205"',
        "description: 'fixture # ffplan: disable-file=FF205'",
    ],
)
def test_a_directive_inside_a_scalar_is_no_suppression(tmp_path, carrier):
    path = tmp_path / "inv.yaml"
    path.write_text(FAIL_FF205.replace("name: fixture\n", f"name: fixture\n{carrier}\n", 1))
    result = lint_file(path)
    assert "FF205" in {d.rule for d in result.diagnostics}
    assert not result.suppressed


def test_a_directive_inside_a_block_scalar_is_text():
    text = "a: 1\nnotes: |\n  a block scalar\n  # ffplan: disable-file=FF205\nb: 2  # ffplan: disable=FF101\n"
    found = parse_suppressions("inv.yaml", text)
    assert found.whole_file == set() and found.by_line == {5: {"FF101"}}


def test_a_directive_in_a_comment_still_suppresses(tmp_path):
    path = tmp_path / "inv.yaml"
    path.write_text(
        FAIL_FF205.replace("name: fixture\n", 'name: fixture  # "ffplan: quoted" # ffplan: disable-file=FF205\n', 1)
    )
    result = lint_file(path)
    assert "FF205" not in {d.rule for d in result.diagnostics} and result.suppressed
