"""Golden files: the host and export files rendered from inventories/lab.yaml, compared whole.

Regenerate with `pytest tests/render --update-golden` (or `make golden`) after a deliberate change, and
review the diff. The OpenSM files are golden-tested with the OpenSM renderer.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from ffplan.render.exports import render_exports
from ffplan.render.hosts import render_hosts

GOLDEN = Path(__file__).resolve().parent / "golden" / "lab"


def _rendered(plan) -> dict[str, str]:
    return {**render_hosts(plan), **render_exports(plan)}


def test_lab_files_match_golden(lab_plan, update_golden):
    files = _rendered(lab_plan)
    if update_golden:
        if GOLDEN.exists():
            for old in sorted(GOLDEN.rglob("*"), reverse=True):
                old.unlink() if old.is_file() else old.rmdir()
        for name, text in files.items():
            target = GOLDEN / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", newline="\n")
        return
    expected = {str(p.relative_to(GOLDEN)): p.read_text(encoding="utf-8") for p in GOLDEN.rglob("*") if p.is_file()}
    missing, extra = sorted(set(expected) - set(files)), sorted(set(files) - set(expected))
    assert not missing and not extra, f"files missing from the render: {missing}; not in golden: {extra} (--update-golden)"
    problems = []
    for name in sorted(files):
        if files[name] != expected[name]:
            diff = "".join(difflib.unified_diff(expected[name].splitlines(True), files[name].splitlines(True),
                                                f"golden/{name}", f"rendered/{name}", n=2))
            problems.append(diff[:4000])
    assert not problems, "rendered files differ from golden (pytest --update-golden to accept):\n" + "\n".join(problems)
