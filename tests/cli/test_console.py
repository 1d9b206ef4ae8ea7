"""Output that is not a terminal (CI logs, pipes, files) is never cut to `…` nor wrapped at 80 columns."""

import re

from typer.testing import CliRunner

from ffplan.cli.main import app
from ffplan.cli.verify import print_report
from ffplan.verify.report import Check, Report

runner = CliRunner()  # stdout is not a tty here, as in CI


def _cells(text: str) -> list[str]:
    return [c.strip() for line in text.splitlines() for c in re.split(r"[│┃]", line) if c.strip()]


def test_analyze_table_keeps_every_cell_whole(lab_plan_dir):
    res = runner.invoke(app, ["analyze", str(lab_plan_dir)], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    assert "…" not in res.output
    cells = _cells(res.output)
    for header in ("pattern", "lower bound", "worst phase", "unroutable"):
        assert header in cells
    assert {"all-to-all", "storage-incast", "double-binary-tree"} <= set(cells)


def test_rules_table_keeps_every_summary_whole():
    res = runner.invoke(app, ["rules"])
    assert res.exit_code == 0
    assert "…" not in res.output
    assert max(len(line.rstrip()) for line in res.output.splitlines()) > 80  # one row per rule, not wrapped


def test_verify_tables_keep_every_cell_whole(capsys):
    long_detail = "OpenSM installed every planned entry; " * 6
    report = Report(
        target="out/ff2",
        source="rendered folder",
        view="zone z1",
        engine="ftree",
        excluded=[],
        checks=[Check("LFTs installed == plan", "pass", long_detail.strip())],
        comparison=[
            {
                "case": "without z1-leaf01-p21",
                "routing": "OpenSM ftree",
                "pattern": "double-binary-tree",
                "max flows/link": 1227744,
                "mean flows/link": 747.2,
                "lower bound": 780,
                "max/bound": 1.17,
                "reachable": "1568/1568 CA pairs",
                "route s": 0.123,
            }
        ],
    )
    print_report(report)
    text = capsys.readouterr().out
    assert "…" not in text
    cells = _cells(text)
    for whole in (
        "without z1-leaf01-p21",
        "OpenSM ftree",
        "double-binary-tree",
        "1227744",
        "1568/1568 CA pairs",
        "max flows/link",
        long_detail.strip(),
    ):
        assert whole in cells, whole


def test_names_with_colons_are_printed_as_written(lab_plan_dir, tmp_path):
    # rich would print `:smile:` as an emoji: ffplan's consoles print what they are given
    out = tmp_path / "files:smile:"
    res = runner.invoke(app, ["render", str(lab_plan_dir), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert f"wrote {out}:" in res.output
