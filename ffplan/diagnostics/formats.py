"""Diagnostic output formats. Text is for people; the machine formats are in the lint stage's formatters."""

from __future__ import annotations

from typing import Iterable

from ffplan.diagnostics import Diagnostic


def format_text(diagnostics: Iterable[Diagnostic]) -> str:
    """`file:line:col: error FF101 message [yaml.path]` then an indented hint, one finding per block."""
    lines = []
    for d in diagnostics:
        where = f" [{d.yaml_path}]" if d.yaml_path else ""
        lines.append(f"{d.file}:{d.line}:{d.col}: {d.severity.value} {d.rule} {d.message}{where}")
        if d.hint:
            lines.append(f"    hint: {d.hint}")
    return "\n".join(lines) + ("\n" if lines else "")
