"""Inline suppression comments: `# ffplan: disable=FF201,FF205` and `# ffplan: disable-file=FF103`.

`disable` applies to findings on its own line; written on a line of its own, it applies to the next line
(for findings on long flow-style lines). `disable-file` applies to the whole file wherever it is written.
Only a YAML comment is a directive: the same words inside a quoted or block scalar are the scalar's text.
Rules whose findings must never be hidden (registry: Suppression.FORBIDDEN) are not suppressed, and the
attempt is a finding of its own (FF005).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Iterable

import yaml

from ffplan.codes.inventory import UNKNOWN_RULE_IN_SUPPRESSION, UNSUPPRESSIBLE_RULE
from ffplan.diagnostics import Diagnostic, Severity
from ffplan.inventory.source import FastLoader
from ffplan.lint.declare import Suppression
from ffplan.lint.registry import all_rules

# A YAML comment starts at '#' preceded by whitespace or the start of the line.
_DIRECTIVE = re.compile(r"(?:^|\s)#\s*ffplan:\s*(disable|disable-file)\s*=\s*([A-Za-z0-9_,\s-]*)")
_RULE_TOKEN = re.compile(r"[A-Za-z0-9_-]+")


@dataclass
class Suppressions:
    by_line: dict[int, set[str]] = field(default_factory=dict)
    whole_file: set[str] = field(default_factory=set)
    problems: list[Diagnostic] = field(default_factory=list)

    def covers(self, diag: Diagnostic) -> bool:
        return diag.rule in self.whole_file or diag.rule in self.by_line.get(diag.line, ())


def _scalar_spans(text: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) (0-based line, column) of every scalar of `text`, in order: a `#` inside one is text, not a
    comment (`name: "x # ffplan: disable-file=FF301"`). Up to a syntax error, which the reader reports."""
    spans = []
    try:
        for token in yaml.scan(text, Loader=FastLoader):
            if isinstance(token, yaml.ScalarToken):
                spans.append(
                    ((token.start_mark.line, token.start_mark.column), (token.end_mark.line, token.end_mark.column))
                )
    except yaml.YAMLError:
        pass
    return spans


def _in_scalar(spans: list[tuple[tuple[int, int], tuple[int, int]]], at: tuple[int, int]) -> bool:
    i = bisect.bisect_right(spans, (at, (1 << 62, 0))) - 1
    return i >= 0 and spans[i][0] <= at < spans[i][1]


def parse_suppressions(file: str, text: str) -> Suppressions:
    known = {r.id: r for r in all_rules()}
    found = Suppressions()
    spans: list[tuple[tuple[int, int], tuple[int, int]]] | None = None  # scanned only when a directive is seen
    for number, line in enumerate(text.splitlines(), start=1):
        match = _DIRECTIVE.search(line)
        if not match:
            continue
        if spans is None:
            spans = _scalar_spans(text)
        if _in_scalar(spans, (number - 1, match.start() + match.group(0).index("#"))):
            continue  # inside a quoted or block scalar: text, not a comment
        target = number + 1 if line.lstrip().startswith("#") else number
        ids = set()
        for token in _RULE_TOKEN.finditer(match.group(2)):
            rule_id = token.group(0).upper()
            col = match.start(2) + token.start() + 1
            if rule_id not in known:
                found.problems.append(
                    Diagnostic(
                        file,
                        number,
                        col,
                        UNKNOWN_RULE_IN_SUPPRESSION,
                        Severity.WARNING,
                        f"suppression names unknown rule '{token.group(0)}'",
                        "",
                        "use the ids that `ffplan rules` lists, e.g. # ffplan: disable=FF201",
                    )
                )
            elif known[rule_id].suppression is Suppression.FORBIDDEN:
                found.problems.append(
                    Diagnostic(
                        file,
                        number,
                        col,
                        UNSUPPRESSIBLE_RULE,
                        Severity.WARNING,
                        f"{rule_id} ({known[rule_id].name}) cannot be suppressed: its findings are still reported",
                        "",
                        "fix the inventory; reading, schema, safety and reference errors are never silenced",
                    )
                )
            else:
                ids.add(rule_id)
        if match.group(1) == "disable-file":
            found.whole_file |= ids
        else:
            found.by_line.setdefault(target, set()).update(ids)
    return found


def apply_suppressions(
    diagnostics: Iterable[Diagnostic], suppressions: Suppressions
) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(what the report shows, what the suppressions hide): the designer re-checks the hidden ones."""
    kept: list[Diagnostic] = []
    hidden: list[Diagnostic] = []
    for d in diagnostics:
        (hidden if suppressions.covers(d) else kept).append(d)
    return kept + suppressions.problems, hidden
