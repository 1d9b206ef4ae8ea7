"""Diagnostic output formats: text for people; json, github (workflow commands) and SARIF 2.1.0 for machines."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path, PurePath
from typing import Any, Iterable, Mapping, Protocol

from ffplan import __version__
from ffplan.diagnostics import Diagnostic, Severity

JSON_FORMAT_VERSION = 1
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


class RuleMeta(Protocol):
    """What the machine formats need to know about a rule (the lint registry's Rule has it); read-only, as the
    registry's frozen Rule is."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def severity(self) -> Severity: ...
    @property
    def summary(self) -> str: ...


def format_text(diagnostics: Iterable[Diagnostic]) -> str:
    """`file:line:col: error FF101 message [yaml.path]` then an indented hint, one finding per block."""
    lines = []
    for d in diagnostics:
        where = f" [{d.yaml_path}]" if d.yaml_path else ""
        message = " ".join(d.message.splitlines())  # one finding, one line: tools grep and parse it
        lines.append(f"{d.where}: {d.severity.value} {d.rule} {message}{where}")
        if d.hint:
            lines.append(f"    hint: {d.hint}")
    return "\n".join(lines) + ("\n" if lines else "")


def fingerprint(d: Diagnostic) -> str:
    """Stable across runs and line shifts: file, rule, YAML path and message, not line numbers."""
    return hashlib.sha256(f"{d.file}\0{d.rule}\0{d.yaml_path}\0{d.message}".encode()).hexdigest()[:16]


def format_json(diagnostics: Iterable[Diagnostic], rules: Mapping[str, RuleMeta]) -> str:
    """`{"version": 1, "findings": [...]}`; each finding adds the rule's name and a fingerprint."""
    findings = []
    for d in diagnostics:
        rule = rules.get(d.rule)
        findings.append({**d.as_dict(), "name": rule.name if rule else "", "fingerprint": fingerprint(d)})
    return (
        json.dumps({"version": JSON_FORMAT_VERSION, "tool": f"ffplan {__version__}", "findings": findings}, indent=2)
        + "\n"
    )


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_github(diagnostics: Iterable[Diagnostic]) -> str:
    """GitHub Actions workflow commands: `::error file=F,line=L,col=C,title=FF101::message`, one per finding."""
    lines = []
    for d in diagnostics:
        level = "error" if d.severity is Severity.ERROR else "warning" if d.severity is Severity.WARNING else "notice"
        message = d.message + (f" [{d.yaml_path}]" if d.yaml_path else "") + (f"\nhint: {d.hint}" if d.hint else "")
        position = f",line={d.line},col={d.col}" if d.located else ""
        props = f"file={_escape_property(d.file)}{position},title={d.rule}"
        lines.append(f"::{level} {props}::{_escape_data(message)}")
    return "\n".join(lines) + ("\n" if lines else "")


def _artifact_uri(file: str) -> str:
    """A repository-relative URI when the file is under the working directory (what code scanning wants)."""
    path = Path(file)
    if path.is_absolute():
        try:
            path = path.relative_to(Path.cwd())
        except ValueError:
            return path.as_uri()
    return PurePath(path).as_posix()


def format_sarif(diagnostics: Iterable[Diagnostic], rules: Mapping[str, RuleMeta]) -> str:
    """A SARIF 2.1.0 log with one run: the full rule table, then one result per finding."""
    ordered = sorted(rules.values(), key=lambda r: r.id)
    index = {r.id: i for i, r in enumerate(ordered)}
    driver = {
        "name": "ffplan",
        "version": __version__,
        "rules": [
            {
                "id": r.id,
                "name": r.name,
                "shortDescription": {"text": r.summary},
                "help": {"text": f"ffplan explain {r.id}"},
                "defaultConfiguration": {"level": _SARIF_LEVEL[r.severity]},
            }
            for r in ordered
        ],
    }
    results = []
    for d in diagnostics:
        physical: dict = {"artifactLocation": {"uri": _artifact_uri(d.file)}}
        if d.located:
            physical["region"] = {"startLine": d.line, "startColumn": d.col}
        result: dict[str, Any] = {
            "ruleId": d.rule,
            "level": _SARIF_LEVEL[d.severity],
            "message": {"text": d.message + (f" (hint: {d.hint})" if d.hint else "")},
            "locations": [
                {
                    "physicalLocation": physical,
                    "logicalLocations": [{"fullyQualifiedName": d.yaml_path or "<root>", "kind": "element"}],
                }
            ],
            "partialFingerprints": {"ffplan/v1": fingerprint(d)},
        }
        if d.rule in index:
            result["ruleIndex"] = index[d.rule]
        results.append(result)
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{"tool": {"driver": driver}, "results": results}]}
    return json.dumps(log, indent=2) + "\n"
