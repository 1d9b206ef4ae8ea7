"""`ffplan lint`, `ffplan rules`, `ffplan explain` and `ffplan schema`: the commands about the inventory format."""

from __future__ import annotations

import json
import sys
import textwrap
from enum import Enum
from pathlib import Path

import typer

from ffplan.cli import complete
from ffplan.cli.common import EXIT_OK, EXIT_USAGE, err, fail, out, stage_errors
from ffplan.diagnostics import Severity
from ffplan.diagnostics.formats import format_github, format_json, format_sarif, format_text
from ffplan.lint import LintReport, all_rules, find_rule, lint_paths, summarize
from ffplan.lint.config import ConfigError, find_config, load_config
from ffplan.lint.declare import LINT, Rule, Suppression
from ffplan.lint.registry import lint_rules, suggest_rule
from ffplan.lint.runner import looks_like_inventory
from ffplan.outdir import write_file


class LintFormat(str, Enum):
    TEXT = "text"
    JSON = "json"
    GITHUB = "github"
    SARIF = "sarif"


class RulesFormat(str, Enum):
    TEXT = "text"
    JSON = "json"
    MD = "md"


def _render(report: LintReport, fmt: LintFormat) -> str:
    rules = {r.id: r for r in lint_rules()}
    diagnostics = report.diagnostics
    if fmt is LintFormat.JSON:
        return format_json(diagnostics, rules)
    if fmt is LintFormat.GITHUB:
        return format_github(diagnostics)
    if fmt is LintFormat.SARIF:
        return format_sarif(diagnostics, rules)
    return format_text(diagnostics)


def _write(text: str, output: Path | None) -> None:
    if output is None:
        typer.echo(text, nl=False)
        return
    with stage_errors():
        write_file(output, text)


def lint(
    paths: list[Path] = typer.Argument(
        None,
        metavar="INVENTORY",
        show_default=False,
        help="Inventory files, folders (every *.yaml / *.yml inside) or - for standard input. "
        "Default: the config's `inventories`, else the current folder.",
    ),
    fmt: LintFormat = typer.Option(
        LintFormat.TEXT, "--format", "-f", help="text for people; json, github (annotations) or sarif for CI."
    ),
    strict: bool = typer.Option(False, "--strict", help="Warnings fail too (exit 1)."),
    output: Path | None = typer.Option(
        None,
        "--output",
        "-o",
        metavar="FILE",
        help="Write the findings to this file instead of stdout.",
        show_default=False,
    ),
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="Print findings only: no inventory summary, no closing line."
    ),
    config_file: Path | None = typer.Option(
        None,
        "--config",
        metavar="FILE",
        show_default=False,
        help="Settings (select, ignore, per-file-ignores, inventories) from this .ffplan.yaml or pyproject.toml "
        "instead of the nearest one found upward from the current folder.",
    ),
    only_inventories: bool = typer.Option(
        False,
        "--only-inventories",
        help="Skip named files that are not inventories: not matched by the config's `inventories`, or without one, "
        "without a top-level `inventory_version:` or `fabric:` (for the pre-commit hook, which passes every YAML file).",
    ),
) -> None:
    """Check inventories: schema, port budgets, references, node models, QoS, names.

    Exit codes: 0 clean, 1 findings (errors; warnings too with --strict), 2 usage or unreadable input.
    Silence a finding with a comment on its line: `# ffplan: disable=FF201`, or for a project in the
    `[tool.ffplan]` table of pyproject.toml or in .ffplan.yaml (docs/lint.md).

    Example: ffplan lint inventories/ --format github
    """
    try:
        config = load_config(config_file) if config_file else find_config()
    except ConfigError as exc:
        fail(f"{exc.where}: {exc.message}", exc.hint)
    for reason in config.passed_over:
        err.print(f"warning: config {reason}; pass --config FILE to use it", markup=False)
    if not paths:
        paths = config.inventory_files() if config.inventories else [Path(".")]
        if not paths:
            fail(
                f"no file matches the `inventories` of {config.file}",
                "check its patterns: they are relative to its folder",
            )
    if only_inventories:
        named = [
            p
            for p in paths
            if str(p) == "-"
            or p.is_dir()
            or (config.is_inventory(p) if config.inventories else looks_like_inventory(p))
        ]
        if not named:
            err.print(f"no inventories among the {len(paths)} files given", markup=False)
            raise typer.Exit(EXIT_OK)
        paths = named
    report = lint_paths(paths, config, stdin=sys.stdin.buffer)
    _write(_render(report, fmt), output)
    if not quiet:
        if fmt is LintFormat.TEXT:
            for result in report.files:
                if result.loaded is not None and not any(d.severity is Severity.ERROR for d in result.diagnostics):
                    typer.echo("\n".join(summarize(result.loaded)))
        err.print(report.summary(), markup=False)
    raise typer.Exit(report.exit_code(strict))


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def rules(
    fmt: RulesFormat = typer.Option(
        RulesFormat.TEXT, "--format", "-f", help="text (a table), json, or md (for the docs)."
    ),
) -> None:
    """List every code ffplan prints (lint rules and later stages' errors): id, name, severity, stage, meaning.

    Example: ffplan rules --format json
    """
    registered = all_rules()
    if fmt is RulesFormat.JSON:
        rows = [
            {
                "id": r.id,
                "name": r.name,
                "severity": r.severity.value,
                "topic": r.topic,
                "stage": r.stage,
                "summary": r.summary,
            }
            for r in registered
        ]
        typer.echo(json.dumps({"version": 1, "rules": rows}, indent=2))
    elif fmt is RulesFormat.MD:
        lines = ["| id | name | severity | stage | checks |", "| --- | --- | --- | --- | --- |"]
        lines += [f"| {r.id} | {r.name} | {r.severity.value} | {r.stage} | {_md_cell(r.summary)} |" for r in registered]
        typer.echo("\n".join(lines))
    else:
        from rich.table import Table  # only here: `ffplan lint` prints no table

        table = Table("id", "name", "severity", "stage", "checks", box=None, pad_edge=False)
        for r in registered:
            table.add_row(r.id, r.name, r.severity.value, r.stage, r.summary)
        out.print(table)


def explain(
    rule_id: str = typer.Argument(
        ...,
        metavar="RULE",
        autocompletion=complete.rules,
        help="A rule id (FF101) or name (zone-port-budget); or host-check, or one of its checks (gpudirect-rdma, max-read-request, irq-affinity, ib-mtu, versions).",
        show_default=False,
    ),
) -> None:
    """Explain one rule: why it exists, with a bad and a good example; or what host-check.sh checks.

    Example: ffplan explain FF101; ffplan explain host-check
    """
    rule = find_rule(rule_id)
    if rule is None:
        from ffplan.design.host_checks import explain_host_checks

        checks = explain_host_checks(rule_id)
        if checks is not None:
            typer.echo(checks)
            return
        fail(f"unknown rule '{rule_id}'", suggest_rule(rule_id) or "`ffplan rules` lists them", EXIT_USAGE)
    footer = (
        _suppression_text(rule)
        if rule.stage == LINT
        else f"Reported by `ffplan {rule.stage}` (not a lint finding, so it cannot be silenced)."
    )
    typer.echo(
        f"{rule.id} {rule.name} ({rule.severity.value}; {rule.topic}{'' if rule.stage == LINT else '; ffplan ' + rule.stage})\n"
        f"{rule.summary}\n\n{rule.explanation}\n\nBad:\n{textwrap.indent(rule.bad, '    ')}\n\nGood:\n{textwrap.indent(rule.good, '    ')}\n\n"
        + footer
    )


def _suppression_text(rule: Rule) -> str:
    if rule.suppression is Suppression.FORBIDDEN:
        return "Its findings cannot be suppressed: fix the inventory."
    text = f"Silence one finding with `# ffplan: disable={rule.id}` on its line."
    if rule.suppression is Suppression.REPORT_ONLY:
        text += " That hides it from lint's report only: `ffplan design` still refuses the inventory."
    return text


def schema(
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Write the schema to this file instead of stdout.", show_default=False
    ),
) -> None:
    """Print the inventory's JSON Schema (draft-07), for editors' YAML language servers.

    Example: ffplan schema -o schema/inventory.schema.json
    """
    from ffplan.inventory import inventory_json_schema

    _write(json.dumps(inventory_json_schema(), indent=2) + "\n", output)


def register(app: typer.Typer) -> None:
    app.command("lint")(lint)
    app.command("rules")(rules)
    app.command("explain")(explain)
    app.command("schema")(schema)
