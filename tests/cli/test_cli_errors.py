"""A bad option value or input exits 2 everywhere, names the option and the valid values, and shows a real
position or none: no made-up `:1:1`, no pydantic wording."""

from __future__ import annotations

import json
import re

import pytest
from pydantic import BaseModel, ValidationError, field_validator
from typer.testing import CliRunner

from ffplan.cli.main import app
from ffplan.diagnostics import validation_message

runner = CliRunner()


@pytest.fixture(scope="module")
def lab(tmp_path_factory, request):
    """The lab inventory designed and rendered: (plan folder, render folder)."""
    root = request.config.rootpath
    base = tmp_path_factory.mktemp("cli-errors")
    plan, files = base / "plan", base / "files"
    assert runner.invoke(app, ["design", str(root / "inventories" / "lab.yaml"), "-o", str(plan), "-q"]).exit_code == 0
    assert runner.invoke(app, ["render", str(plan), "-o", str(files), "-q"]).exit_code == 0
    return plan, files


def _no_fake_position(text: str) -> None:
    assert ":1:1:" not in text and "\\n" not in text and "Value error" not in text


def test_unknown_exclude_link_names_the_option_and_valid_values(lab, root):
    result = runner.invoke(
        app,
        [
            "design",
            str(root / "inventories" / "lab.yaml"),
            "-o",
            str(lab[0].parent / "x"),
            "--exclude-link",
            "za-leaf01-p5",
        ],
    )
    assert result.exit_code == 2
    assert result.stderr.startswith("command line: error FF601 --exclude-link 'za-leaf01-p5' is neither")
    assert "lab.yaml" not in result.stderr  # the inventory is not where the mistake is
    assert "did you mean 'za-leaf01-p05'?" in result.stderr and "switch[port]" in result.stderr


def test_unknown_failed_link_in_the_inventory_is_located_there(root, tmp_path):
    inventory = tmp_path / "lab.yaml"
    text = (root / "inventories" / "lab.yaml").read_text()
    inventory.write_text(text.replace("  switch_model: LAB8\n", "  switch_model: LAB8\n  failed_links: [nope]\n", 1))
    result = runner.invoke(app, ["design", str(inventory), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    line = text[: text.index("  switch_model: LAB8")].count("\n") + 2
    assert re.search(rf"lab\.yaml:{line}:\d+: error FF601 failed link 'nope'", result.stderr), result.stderr


def test_unknown_role_is_a_usage_error_naming_the_roles(lab):
    result = runner.invoke(app, ["analyze", str(lab[0]), "--role", "gpu"])
    assert result.exit_code == 2
    unboxed = " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.stderr).split())  # typer's error panel wraps lines
    assert "Invalid value for '--role': 'gpu' is not one of 'compute', 'storage', 'management'." in unboxed
    _no_fake_position(result.stderr)


def test_unknown_zone_is_a_usage_error_naming_the_zones(lab):
    from ffplan.verify.sim import ToolsMissing, find_tools

    try:
        find_tools()
    except ToolsMissing as exc:
        pytest.skip(str(exc))
    result = runner.invoke(app, ["verify", str(lab[1]), "--zone", "z3"])
    assert result.exit_code == 2
    assert result.stderr == (
        "command line: error FF910 zone 'z3' is not in the plan [--zone]\n    hint: zones: za, zb\n"
    )


def test_a_plan_that_does_not_match_the_schema_exits_2(lab, tmp_path):
    damaged = tmp_path / "plan.yaml"
    damaged.write_text(
        (lab[0] / "plan.yaml").read_text().replace("fabric_switch_model: LAB8", "fabric_switch_model: [1]")
    )
    result = runner.invoke(app, ["render", str(damaged), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert (
        f"{damaged}:14:1: error FF903 invalid plan: Input should be a valid string [fabric_switch_model]"
        in result.stderr
    )
    _no_fake_position(result.stderr)


def test_a_truncated_plan_names_its_line(lab, tmp_path):
    text = (lab[0] / "plan.yaml").read_text()
    cut = text.index("{", text.index("\nswitches:"))
    truncated = tmp_path / "plan.yaml"
    truncated.write_text(text[: cut + 10])
    result = runner.invoke(app, ["render", str(truncated), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    last_line = text[: cut + 10].count("\n") + 1
    assert re.match(
        rf"{re.escape(str(truncated))}:{last_line + 1}:1: error FF901 plan is not valid YAML: ", result.stderr
    )
    _no_fake_position(result.stderr)


@pytest.mark.parametrize(
    "command", [["render", "{missing}", "-o", "{out}"], ["lint", "{missing}"], ["analyze", "{missing}"]]
)
def test_a_missing_path_has_no_position(tmp_path, command):
    args = [a.format(missing=tmp_path / "nope.yaml", out=tmp_path / "out") for a in command]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert f"{tmp_path / 'nope.yaml'}: error FF003 no such file" in result.output  # lint's findings are its data
    _no_fake_position(result.output)


def test_validator_messages_lose_pydantics_prefix():
    class Model(BaseModel):
        count: int

        @field_validator("count")
        @classmethod
        def positive(cls, value: int) -> int:
            if value < 1:
                raise ValueError("count must be at least 1")
            return value

    with pytest.raises(ValidationError) as exc:
        Model(count=0)
    assert validation_message(exc.value.errors()[0]) == "count must be at least 1"


def test_machine_formats_leave_out_a_missing_position(tmp_path):
    missing = tmp_path / "nope.yaml"
    github = runner.invoke(app, ["lint", str(missing), "--format", "github"]).stdout
    assert github.startswith(f"::error file={missing},title=FF003::") and "line=" not in github
    sarif = json.loads(runner.invoke(app, ["lint", str(missing), "--format", "sarif"]).stdout)
    assert "region" not in sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    finding = json.loads(runner.invoke(app, ["lint", str(missing), "--format", "json"]).stdout)["findings"][0]
    assert finding["line"] is None and finding["col"] is None
