"""Bad inventories and the whole diagnostic output they must produce (exit code, findings, summary).

Each `<case>.yaml` here has a golden `<case>.expected`; regenerate them only with `pytest --update-golden`
and review the diff.
"""

import difflib
import pathlib

import pytest
from typer.testing import CliRunner

from ffplan.cli.main import app

HERE = pathlib.Path(__file__).parent
CASES = sorted(HERE.glob("*.yaml"))


def _lint_output(case: pathlib.Path, root: pathlib.Path) -> str:
    result = CliRunner().invoke(app, ["lint", str(case.relative_to(root))])
    return f"exit {result.exit_code}\n{result.stdout}{result.stderr}"


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_error_case(case, root, monkeypatch, update_golden):
    monkeypatch.chdir(root)
    actual = _lint_output(case, root)
    golden = case.with_suffix(".expected")
    if update_golden:
        golden.write_text(actual)
        return
    assert golden.exists(), f"no golden file for {case.name}: run pytest --update-golden and review it"
    expected = golden.read_text()
    if actual != expected:
        diff = difflib.unified_diff(expected.splitlines(True), actual.splitlines(True), str(golden), "actual output")
        pytest.fail("diagnostics differ from the golden file:\n" + "".join(diff), pytrace=False)


def test_every_case_has_a_golden_file():
    assert sorted(p.stem for p in HERE.glob("*.expected")) == [c.stem for c in CASES]
