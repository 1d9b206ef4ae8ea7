"""Progress of the long stages: told by the stages through a callback, drawn by the CLI on stderr only on a terminal."""

import pytest
from typer.testing import CliRunner

from ffplan.cli import common
from ffplan.cli.main import app
from ffplan.design import DESIGN_STEPS, design
from ffplan.inventory import load_inventory
from ffplan.plan import load_plan
from ffplan.progress import RENDER_STAGES, RENDER_WRITING
from ffplan.render import render_plan
from tests.conftest import ROOT

runner = CliRunner()


def test_design_and_render_name_every_stage_in_order(lab_plan_dir):
    seen: list[str] = []
    design(load_inventory(ROOT / "inventories" / "lab.yaml"), on_stage=seen.append)
    assert seen == list(DESIGN_STEPS)
    seen.clear()
    render_plan(load_plan(lab_plan_dir / "plan.yaml"), on_stage=seen.append)
    assert seen == list(RENDER_STAGES)


@pytest.fixture
def stderr_is_a_terminal(monkeypatch):
    monkeypatch.setattr(common.err, "_force_terminal", True)
    monkeypatch.setattr(common.err, "is_interactive", True)
    monkeypatch.setenv("TERM", "xterm-256color")  # rich draws nothing on a dumb terminal


def test_progress_on_a_terminal_names_the_stages(stderr_is_a_terminal, lab_plan_dir, tmp_path):
    res = runner.invoke(app, ["design", str(ROOT / "inventories" / "lab.yaml"), "-o", str(tmp_path / "plan")])
    assert res.exit_code == 0, res.output
    for stage in DESIGN_STEPS:
        assert f"designing lab: {stage}" in res.stderr
    assert "designing lab" not in res.stdout  # data and progress stay apart
    res = runner.invoke(app, ["render", str(lab_plan_dir), "-o", str(tmp_path / "files")])
    for stage in RENDER_STAGES + (RENDER_WRITING,):
        assert f"rendering lab: {stage}" in res.stderr


def test_quiet_on_a_terminal_draws_nothing(stderr_is_a_terminal, tmp_path):
    res = runner.invoke(app, ["design", str(ROOT / "inventories" / "lab.yaml"), "-o", str(tmp_path / "plan"), "-q"])
    assert res.exit_code == 0 and res.stderr == ""


def test_no_progress_when_stderr_is_not_a_terminal(lab_plan_dir, tmp_path):
    res = runner.invoke(app, ["render", str(lab_plan_dir), "-o", str(tmp_path / "files")])
    assert res.exit_code == 0 and res.stderr == ""
