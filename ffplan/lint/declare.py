"""How a code is declared: `rule` (a lint check), `loader_rule` (reported by the loader) and `stage_code` (emitted
by a stage after lint) put a `Rule` into RULES. The rule modules import this leaf module alone; the registry
(ffplan.lint.registry) imports the rule modules and reads RULES, so nothing imports in a circle.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Callable, Iterable

from ffplan.codes import Code
from ffplan.codes import lint as codes
from ffplan.diagnostics import Severity, YamlPath

if TYPE_CHECKING:
    from ffplan.lint.context import LintContext

RULE_ID = re.compile(r"^FF\d{3}$")
TOPICS = {
    "0": "reading and schema",
    "1": "fabric and port budget",
    "2": "references and duplicates",
    "3": "node models (NUMA, PCIe)",
    "4": "QoS (SL/VL)",
    "5": "naming and safety",
    "6": "routing and QoS design",
    "7": "Ethernet (RoCE)",
    "8": "cost report inputs",
    "9": "plans and output folders",
}
LINT = "lint"  # the stage of lint rules; other codes name the command that emits them


class Suppression(str, Enum):
    """What `# ffplan: disable=` may do to a rule's findings."""

    ALLOWED = "allowed"  # hidden everywhere: the designer builds the inventory faithfully anyway
    REPORT_ONLY = "report-only"  # hidden from lint's report, but design refuses the inventory naming the rule
    FORBIDDEN = "forbidden"  # never hidden: reading, schema, safety and reference errors


# Reference errors name something that does not exist: nothing downstream can be built from them.
_REFERENCE_RULES = {
    codes.UNKNOWN_MODEL,
    codes.UNKNOWN_RACK,
    codes.UNKNOWN_ZONE,
    codes.GUID_FOR_UNKNOWN_NIC,
    codes.UNKNOWN_ROOT_PORT,
    codes.UNKNOWN_DEVICE_MODEL,
    codes.NVLINK_PAIR_INVALID,
}
# Physical layout and PCIe findings: the plan is still exactly what the inventory says.
_LAYOUT_RULES = {
    codes.DUPLICATE_RACK_POSITION,
    codes.RACK_UNIT_OVERLAP,
    codes.RACK_HEIGHT_EXCEEDED,
    codes.ROOT_PORT_LANES_OVERSUBSCRIBED,
}


def default_suppression(rule_id: str, severity: Severity) -> Suppression:
    if rule_id[2] in "05" or rule_id in _REFERENCE_RULES:  # FF0xx reading and schema, FF5xx safety
        return Suppression.FORBIDDEN
    if severity is Severity.WARNING or rule_id in _LAYOUT_RULES:
        return Suppression.ALLOWED
    return Suppression.REPORT_ONLY


@dataclass(frozen=True)
class Finding:
    """What a check reports: where (YAML path), what, and how to fix it. The runner adds id and severity."""

    path: YamlPath
    message: str
    hint: str = ""


Check = Callable[["LintContext"], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    severity: Severity
    summary: str
    explanation: str
    bad: str
    good: str
    check: Check | None  # None: the loader or a later stage reports it
    stage: str = LINT  # `lint`, or the command that emits the code (`design`, `report cost`, ...)

    @property
    def topic(self) -> str:
        return TOPICS[self.id[2]]

    @property
    def suppression(self) -> Suppression:
        return default_suppression(self.id, self.severity)


RULES: dict[str, Rule] = {}


def _register(
    code: Code, severity: Severity, explanation: str, bad: str, good: str, check: Check | None, stage: str = LINT
) -> None:
    """Declare `code` with its explanation and its `bad`/`good` examples (dedented), as `ffplan explain` prints them."""
    if not RULE_ID.match(code) or code in RULES:
        raise ValueError(f"bad or duplicate rule id {code}")  # a programming error, caught by the tests
    RULES[code] = Rule(
        code,
        code.name,
        severity,
        code.summary,
        inspect.cleandoc(explanation),
        textwrap.dedent(bad).strip("\n"),
        textwrap.dedent(good).strip("\n"),
        check,
        stage,
    )


def rule(code: Code, severity: Severity, *, bad: str, good: str) -> Callable[[Check], Check]:
    """Register a check function; its docstring is the long explanation that `ffplan explain` prints."""

    def decorate(check: Check) -> Check:
        _register(code, severity, check.__doc__ or "", bad, good, check)
        return check

    return decorate


def loader_rule(code: Code, severity: Severity, *, explanation: str, bad: str, good: str) -> None:
    """Register a rule whose findings come from the loader (YAML reading, schema), for docs and suppression."""
    _register(code, severity, explanation, bad, good, None)


def stage_code(
    code: Code, stage: str, *, explanation: str, bad: str, good: str, severity: Severity = Severity.ERROR
) -> None:
    """Register a code a stage after lint emits (`bad`/`good`: the command or input that triggers it and the one
    that does not), so `ffplan explain` documents every code ffplan can print."""
    _register(code, severity, explanation, bad, good, None, stage)
