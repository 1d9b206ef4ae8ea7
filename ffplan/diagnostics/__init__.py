"""Located findings shared by every stage: what went wrong, where (file:line:col and YAML path), and a hint.

Stages collect diagnostics and raise `StageError` at their error barrier, so one mistake is reported once
and the next stage never starts on bad data.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Iterable, Sequence


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 2, "warning": 1, "info": 0}[self.value]


YamlPath = tuple[str | int, ...]


_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def printable(text: str) -> str:
    """Control characters from user input (a key named "\r") must not break a one-line finding."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def format_yaml_path(path: Sequence[str | int]) -> str:
    """`('groups', 0, 'count')` -> `groups[0].count`; odd keys are quoted: `fabric["a b"]`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(str(part)):
            out += ("." if out else "") + str(part)
        else:
            out += "[" + json.dumps(str(part)) + "]"
    return out or "<root>"


@dataclass(frozen=True, order=True)
class Diagnostic:
    file: str
    line: int
    col: int
    rule: str
    severity: Severity
    message: str
    yaml_path: str = ""
    hint: str = ""

    def sort_key(self) -> tuple:
        return (self.file, self.line, self.col, self.rule, self.message)

    def as_dict(self) -> dict:
        return {
            "rule": self.rule,
            "severity": self.severity.value,
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "yaml_path": self.yaml_path,
            "message": self.message,
            "hint": self.hint,
        }


class StageError(Exception):
    """Raised at a stage's error barrier; carries every diagnostic the stage collected."""

    exit_code = 1

    def __init__(self, diagnostics: Iterable[Diagnostic]):
        self.diagnostics = sorted(diagnostics, key=Diagnostic.sort_key)
        super().__init__("\n".join(d.message for d in self.diagnostics))


class InputError(StageError):
    """Unreadable or refused input (missing file, not YAML, too large): exit code 2."""

    exit_code = 2


class InfeasibleError(StageError):
    """The inventory cannot be built as asked (a budget is exceeded): exit code 3."""

    exit_code = 3


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """A 'did you mean' hint for a misspelt name, or '' when nothing is close."""
    match = difflib.get_close_matches(str(word), sorted(set(map(str, choices))), n=1, cutoff=0.6)
    return f"did you mean '{match[0]}'?" if match else ""


@dataclass
class Collector:
    """Accumulates diagnostics for one source file, locating YAML paths through its position map."""

    file: str
    positions: dict[YamlPath, tuple[int, int]] = field(default_factory=dict)
    items: list[Diagnostic] = field(default_factory=list)

    def locate(self, path: YamlPath) -> tuple[int, int]:
        """Line/col of the deepest existing prefix of `path` (a missing key points at its parent)."""
        path = tuple(path)
        while path and path not in self.positions:
            path = path[:-1]
        return self.positions.get(path, (1, 1))

    def add(
        self,
        rule: str,
        severity: Severity,
        path: YamlPath,
        message: str,
        hint: str = "",
    ) -> Diagnostic:
        line, col = self.locate(path)
        diag = Diagnostic(
            file=self.file,
            line=line,
            col=col,
            rule=rule,
            severity=severity,
            message=printable(message),
            yaml_path=format_yaml_path(path),
            hint=printable(hint),
        )
        self.items.append(diag)
        return diag

    def error(self, rule: str, path: YamlPath, message: str, hint: str = "") -> Diagnostic:
        return self.add(rule, Severity.ERROR, path, message, hint)

    def warning(self, rule: str, path: YamlPath, message: str, hint: str = "") -> Diagnostic:
        return self.add(rule, Severity.WARNING, path, message, hint)

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.items)
