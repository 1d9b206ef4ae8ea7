"""Golden files: compare generated text with the files under a folder; rewrite them only when asked.

Every golden test goes through `assert_golden_folder` so that a mismatch always reads the same way (a
unified diff per file) and `pytest --update-golden` is the only way to accept a change.
"""

from __future__ import annotations

import difflib
from pathlib import Path


def assert_golden_folder(folder: Path, files: dict[str, str], update: bool, what: str) -> None:
    """`files` (relative path -> text) must equal exactly the files under `folder`."""
    if update:
        if folder.exists():
            for old in sorted(folder.rglob("*"), reverse=True):
                old.unlink() if old.is_file() else old.rmdir()
        for name, text in files.items():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", newline="\n")
        return
    expected = {str(p.relative_to(folder)): p.read_text(encoding="utf-8") for p in folder.rglob("*") if p.is_file()}
    missing, extra = sorted(set(expected) - set(files)), sorted(set(files) - set(expected))
    assert not missing and not extra, f"{what}: missing {missing}; not in golden {extra} (pytest --update-golden)"
    problems = []
    for name in sorted(files):
        if files[name] != expected[name]:
            diff = "".join(
                difflib.unified_diff(
                    expected[name].splitlines(True),
                    files[name].splitlines(True),
                    f"golden/{name}",
                    f"actual/{name}",
                    n=2,
                )
            )
            problems.append(diff[:4000])
    assert not problems, f"{what} differ from golden (pytest --update-golden to accept):\n" + "\n".join(problems)
