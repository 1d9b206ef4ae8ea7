"""`ffplan COMMAND` registers only that command's module: the same command as in the full app (help, options), and
none of the other commands' imports (the report's catalogs, lint's rules) nor, for lint, the plan model, numpy,
jinja2, pulp or networkx."""

import subprocess
import sys
import textwrap

import pytest
from typer.testing import CliRunner

from ffplan.cli.main import COMMAND_MODULES, app, build_app
from tests.conftest import ROOT

runner = CliRunner()


def test_every_command_is_mapped_to_its_module():
    import typer.main

    full = typer.main.get_command(app)
    assert sorted(full.commands) == sorted(COMMAND_MODULES)


@pytest.mark.parametrize("command", sorted(COMMAND_MODULES))
def test_a_command_alone_is_the_command_of_the_full_app(command):
    alone = runner.invoke(build_app((COMMAND_MODULES[command],)), [command, "--help"])
    assert alone.exit_code == 0
    assert alone.output == runner.invoke(app, [command, "--help"]).output


def _modules_after(argv: list[str]) -> set[str]:
    """The modules `ffplan ARGV` (run as the console script runs it) has imported when it ends."""
    script = textwrap.dedent(f"""
        import sys
        sys.argv = ["ffplan", *{argv!r}]
        from ffplan.cli.main import run
        try:
            run()
        except SystemExit:
            pass
        sys.__stdout__.write("\\nMODULES " + " ".join(sorted(sys.modules)))
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return set(out.rsplit("\nMODULES ", 1)[1].split())


def test_lint_loads_neither_other_commands_nor_the_plan_stages():
    loaded = _modules_after(["lint", "inventories/lab.yaml"])
    assert "ffplan.cli.lint" in loaded
    for module in (
        "ffplan.cli.report",
        "ffplan.cli.analyze",
        "ffplan.cli.render",
        "ffplan.catalog",
        "ffplan.plan.model",
        "numpy",
        "jinja2",
        "pulp",
        "networkx",
    ):
        assert module not in loaded, module


def test_render_loads_no_other_command(tmp_path):
    loaded = _modules_after(["render", str(tmp_path / "no-plan.yaml")])  # exits 2 (no such plan) once registered
    assert "ffplan.cli.render" in loaded
    assert not {f"ffplan.cli.{m}" for m in COMMAND_MODULES.values() if m != "render"} & loaded


def test_help_and_unknown_commands_get_every_command():
    assert "ffplan.cli.report" in _modules_after(["--help"])
    assert "ffplan.cli.report" in _modules_after(["lnit"])


def test_analyze_as_json_loads_no_table(tmp_path):
    """rich's table is only for the table format: --format json (and --help) import none."""
    loaded = _modules_after(["analyze", str(tmp_path / "no-plan.yaml"), "--format", "json"])  # exits 2: no plan
    assert "ffplan.cli.analyze" in loaded
    assert "rich.table" not in loaded
