"""`analyze --html` writes its page with ffplan's one atomic file writer: a FIFO (or device) given as the page is
refused and left in place, as `report cost -o` refuses one; a page already there is replaced whole."""

from __future__ import annotations

import os
import stat

from typer.testing import CliRunner

from ffplan.cli.main import app
from tests.support.plans import write_plan


def test_html_onto_a_fifo_is_refused_and_the_fifo_kept(tmp_path, lab_plan):
    write_plan(lab_plan, tmp_path / "plan.yaml")
    fifo = tmp_path / "page.html"
    os.mkfifo(fifo)
    res = CliRunner().invoke(app, ["analyze", str(tmp_path), "-p", "shift", "--html", str(fifo)])
    assert res.exit_code == 2
    assert "FF904" in res.output and "not a regular file" in res.output
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # the old writer renamed a file over it


def test_html_replaces_a_page_keeping_its_mode(tmp_path, lab_plan):
    write_plan(lab_plan, tmp_path / "plan.yaml")
    page = tmp_path / "out" / "page.html"
    page.parent.mkdir()
    page.write_text("old")
    page.chmod(0o600)
    assert CliRunner().invoke(app, ["analyze", str(tmp_path), "-p", "shift", "--html", str(page)]).exit_code == 0
    assert page.read_text().startswith("<!DOCTYPE html>") and stat.S_IMODE(page.stat().st_mode) == 0o600
