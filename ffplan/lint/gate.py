"""The lint barrier in front of the designer: no design starts on an inventory with lint errors."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ffplan.diagnostics import Diagnostic, InfeasibleError, InputError, Severity, StageError
from ffplan.inventory import LoadedInventory
from ffplan.lint.declare import Suppression
from ffplan.lint.registry import all_rules
from ffplan.lint.runner import FileResult, lint_file

BUDGET_RULE_PREFIX = "FF1"  # FF1xx: the fabric cannot hold the inventory -> infeasible, exit 3


def _hidden_blockers(result: FileResult) -> list[Diagnostic]:
    """Suppressed errors the designer cannot build faithfully: a comment hides them from lint's report,
    not from the design."""
    rules = {r.id: r for r in all_rules()}
    return [
        replace(d, message=f"{d.message} (suppressed in the inventory, but the design cannot be built with it)")
        for d in result.suppressed
        if d.severity is Severity.ERROR and rules[d.rule].suppression is not Suppression.ALLOWED
    ]


def require_clean(path: Path) -> LoadedInventory:
    """Load and lint `path`; raise with every error (exit 2 unreadable, 3 budget-only, 1 otherwise)."""
    result = lint_file(Path(path))
    errors = [d for d in result.diagnostics if d.severity is Severity.ERROR] + _hidden_blockers(result)
    if result.unreadable:
        raise InputError(result.diagnostics)
    if errors:
        if all(d.rule.startswith(BUDGET_RULE_PREFIX) for d in errors):
            raise InfeasibleError(errors)
        raise StageError(errors)
    assert result.loaded is not None  # no errors means the inventory loaded
    return result.loaded
