"""Lint stage: the rule registry, the rules grouped by topic, and the runner behind `ffplan lint`.

Public surface: `lint_paths`, `lint_file`, `LintReport`, `all_rules`, `find_rule`, `summarize`.
"""

from ffplan.lint.declare import Finding, Rule
from ffplan.lint.registry import all_rules, find_rule
from ffplan.lint.runner import FileResult, LintReport, lint_file, lint_paths
from ffplan.lint.summary import summarize

__all__ = [
    "FileResult",
    "Finding",
    "LintReport",
    "Rule",
    "all_rules",
    "find_rule",
    "lint_file",
    "lint_paths",
    "summarize",
]
