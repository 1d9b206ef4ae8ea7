"""The registry of every code ffplan prints: each lint rule's id, name, severity, documentation and check
function, and the codes later stages (design, report, plan, render, output folders) emit, in one place.

`ffplan rules`, `ffplan explain`, the SARIF rule table and the fixture meta-test all read this registry, so
a rule's documentation cannot drift from the rule; a test greps ffplan/ for every code and asserts it is here.
The rules are declared with ffplan.lint.declare; importing the rule modules (below) registers them.
"""

from __future__ import annotations

from typing import Iterator

import ffplan.lint.rules  # noqa: F401  (importing the rule modules registers them)
from ffplan.diagnostics import did_you_mean
from ffplan.lint.declare import LINT, RULES, Check, Rule


def all_rules() -> list[Rule]:
    return [RULES[k] for k in sorted(RULES)]


def lint_rules() -> list[Rule]:
    """The rules lint checks (what a lint report, SARIF's rule table and the fixtures cover)."""
    return [r for r in all_rules() if r.stage == LINT]


def find_rule(key: str) -> Rule | None:
    """A rule by id (any case) or by name."""
    key = key.strip()
    by_id = {r.id: r for r in all_rules()}
    if key.upper() in by_id:
        return by_id[key.upper()]
    return next((r for r in by_id.values() if r.name == key.lower()), None)


def suggest_rule(key: str) -> str:
    """A hint for an unknown id or name: ids and names that start with it first (`FF10` -> FF101), then the
    closest spelling."""
    rules = all_rules()
    started = [r.id for r in rules if r.id.startswith(key.strip().upper())] or [
        r.name for r in rules if r.name.startswith(key.strip().lower())
    ]
    if started:
        shown = ", ".join(started[:5]) + (f" (and {len(started) - 5} more)" if len(started) > 5 else "")
        return f"did you mean {shown}?"
    return did_you_mean(key, [r.id for r in rules] + [r.name for r in rules])


def semantic_checks() -> Iterator[tuple[Rule, Check]]:
    """The rules with a check of their own, and that check."""
    return ((r, r.check) for r in all_rules() if r.check is not None)
