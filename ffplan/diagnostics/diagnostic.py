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
from typing import Hashable, Iterable, Iterator, Mapping, Sequence, TypeVar


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


NO_POSITION = (0, 0)  # line/col of a finding about a whole file, a plan without a position map, or an option
COMMAND_LINE = "command line"  # the `file` of a finding about an option's value; its yaml_path names the option


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

    @property
    def located(self) -> bool:
        return self.line > 0

    @property
    def where(self) -> str:
        """`file:line:col`, or just `file` when there is no position to show (never a made-up 1:1)."""
        return f"{self.file}:{self.line}:{self.col}" if self.located else self.file

    def as_dict(self) -> dict:
        return {
            "rule": self.rule,
            "severity": self.severity.value,
            "file": self.file,
            "line": self.line if self.located else None,
            "col": self.col if self.located else None,
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


def option_error(rule: str, option: str, message: str, hint: str) -> InputError:
    """A bad value of a command-line option (exit 2): located at the option, not in a file."""
    c = Collector(COMMAND_LINE)
    c.error(rule, (option,), message, hint)
    return InputError(c.items)


def validation_message(error: Mapping) -> str:
    """A pydantic error's message without the 'Value error, ' prefix of a validator's ValueError: users wrote
    YAML, not Python."""
    msg = str(error["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            return msg[len(prefix) :]
    return msg


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """A 'did you mean' hint for a misspelt name, or '' when nothing is close."""
    match = difflib.get_close_matches(str(word), sorted(set(map(str, choices))), n=1, cutoff=0.6)
    return f"did you mean '{match[0]}'?" if match else ""


def unknown_name(
    kind: str, name: str, known: Iterable[str], defined_at: str, context: str = ""
) -> tuple[str, str] | None:
    """(message, hint) when `name` is not among `known`: a did-you-mean, or where to define it and the choices.

    `context` follows the name in the message (" in node model 'x'").
    """
    known = sorted(set(known))
    if name in known:
        return None
    hint = did_you_mean(name, known)
    if not hint:
        shown = ", ".join(known[:8]) + (", ..." if len(known) > 8 else "")
        hint = f"define it under {defined_at}" + (f", or use one of: {shown}" if known else "")
    return f"unknown {kind} '{name}'{context}", hint


PathKey = TypeVar("PathKey", bound=Hashable)


def duplicates(entries: Iterable[tuple[PathKey, YamlPath]]) -> Iterator[tuple[PathKey, YamlPath, YamlPath]]:
    """(key, path, first_path) for every entry whose key was already seen at first_path."""
    first: dict[PathKey, YamlPath] = {}
    for key, path in entries:
        if key in first:
            yield key, path, first[key]
        else:
            first[key] = path


def plural(count: int, noun: str, nouns: str = "") -> str:
    """`1 leaf`, `40 leaves`: the count with its noun in the right number."""
    return f"{count:,} {noun if count == 1 else nouns or noun + 's'}"


@dataclass
class Collector:
    """Accumulates diagnostics for one source file, locating YAML paths through its position map."""

    file: str
    positions: dict[YamlPath, tuple[int, int]] = field(default_factory=dict)
    items: list[Diagnostic] = field(default_factory=list)

    def locate(self, path: YamlPath) -> tuple[int, int]:
        """Line/col of the deepest existing prefix of `path` (a missing key points at its parent); NO_POSITION
        without a position map (plans, options, unreadable files)."""
        path = tuple(path)
        while path and path not in self.positions:
            path = path[:-1]
        return self.positions.get(path, NO_POSITION)

    def where(self, path: YamlPath) -> str:
        """`groups[0].hostname (line 12)`: how one finding points at the other place involved."""
        line, _ = self.locate(path)
        return f"{format_yaml_path(path)} (line {line})"

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
