"""Lint files and folders: load each inventory, run every rule, apply suppressions, decide the exit code."""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterable

import yaml

from ffplan.codes.inventory import UNREADABLE_INPUT
from ffplan.diagnostics import Collector, Diagnostic, InputError, Severity, StageError
from ffplan.inventory import LoadedInventory, load_inventory
from ffplan.inventory.source import MAX_FILE_BYTES, STDIN_NAME, FastLoader, read_stream, read_text
from ffplan.lint.config import LintConfig
from ffplan.lint.context import LintContext
from ffplan.lint.registry import semantic_checks
from ffplan.outdir import is_ffplan_output, is_leftover
from ffplan.lint.suppress import apply_suppressions, parse_suppressions

INVENTORY_SUFFIXES = (".yaml", ".yml")


@dataclass
class FileResult:
    file: str
    diagnostics: list[Diagnostic]
    loaded: LoadedInventory | None = None  # None when the file did not load (its findings say why)
    unreadable: bool = False
    suppressed: list[Diagnostic] = field(default_factory=list)  # hidden by `# ffplan: disable=` comments


@dataclass
class LintReport:
    files: list[FileResult] = field(default_factory=list)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for f in self.files for d in f.diagnostics]

    def count(self, severity: Severity) -> int:
        return sum(d.severity is severity for d in self.diagnostics)

    def exit_code(self, strict: bool = False) -> int:
        """2 unreadable input, 1 errors (or warnings when strict), 0 clean."""
        if any(f.unreadable for f in self.files):
            return 2
        if self.count(Severity.ERROR) or (strict and self.count(Severity.WARNING)):
            return 1
        return 0

    def summary(self) -> str:
        """`2 errors, 1 warning in 3 files (FF101 x1, FF201 x2)`."""
        errors, warnings = self.count(Severity.ERROR), self.count(Severity.WARNING)
        files = f"{len(self.files)} file" + ("" if len(self.files) == 1 else "s")
        if not errors and not warnings:
            return f"no findings in {files}"
        by_rule = Counter(d.rule for d in self.diagnostics)
        rules = ", ".join(f"{rule} x{n}" for rule, n in sorted(by_rule.items()))
        return (
            f"{errors} error{'' if errors == 1 else 's'}, {warnings} warning{'' if warnings == 1 else 's'} "
            f"in {files} ({rules})"
        )


def run_rules(loaded: LoadedInventory) -> list[Diagnostic]:
    """Every semantic rule over one loaded inventory, located through the file's position map."""
    ctx = LintContext(loaded)
    collector = Collector(loaded.source.file, loaded.source.positions)
    for rule, check in semantic_checks():
        for finding in check(ctx):
            collector.add(rule.id, rule.severity, finding.path, finding.message, finding.hint)
    return collector.items


def lint_file(path: Path, text: str | None = None, config: LintConfig = LintConfig()) -> FileResult:
    """One inventory (`text`, when given, is its content read from standard input), filtered by `config`."""
    loaded: LoadedInventory | None
    try:
        valid = load_inventory(path, text)
    except InputError as exc:
        return FileResult(str(path), exc.diagnostics, unreadable=True)
    except StageError as exc:  # schema or reading findings: the semantic rules need valid data
        found, loaded = exc.diagnostics, None
    else:
        found, loaded = valid.collector.items + run_rules(valid), valid
    # The text was readable a moment ago; its comments carry the suppressions.
    suppressions = parse_suppressions(str(path), read_text(path) if text is None else text)
    kept, hidden = apply_suppressions(found, suppressions)
    kept = [d for d in kept if config.reports(d.rule, str(path))]
    return FileResult(str(path), sorted(kept, key=Diagnostic.sort_key), loaded, suppressed=hidden)


def _refused(path: Path, message: str, hint: str) -> FileResult:
    collector = Collector(str(path))
    collector.error(UNREADABLE_INPUT, (), message, hint)
    return FileResult(str(path), collector.items, unreadable=True)


def inventory_files(folder: Path) -> list[Path]:
    """The YAML files below `folder`; inside what ffplan writes (output folders, whose plan.yaml is no inventory,
    and the staging and old folders an interrupted write left) only those that look like inventories: a
    manifest.json anyone can write, or a folder's name, must not hide an inventory from lint."""
    found = []
    generated: set[str] = set()  # folders inside an output or leftover folder
    for root, dirs, names in os.walk(folder):
        inside = root in generated or is_leftover(Path(root).name) or is_ffplan_output(Path(root))
        if inside:
            generated.update(os.path.join(root, d) for d in dirs)
        files = [Path(root) / n for n in names if Path(n).suffix in INVENTORY_SUFFIXES and (Path(root) / n).is_file()]
        found += [f for f in files if not inside or _may_be_inventory(f)]
    return sorted(found)


def _may_be_inventory(path: Path) -> bool:
    """Whether a YAML file inside an output folder may be an inventory: within the inventory size limit (a large
    plan.yaml is not one, and no inventory can be larger) and with an inventory's top-level keys."""
    try:
        return path.stat().st_size <= MAX_FILE_BYTES and looks_like_inventory(path)
    except OSError:
        return True  # lint reports why it cannot be read


def lint_paths(paths: Iterable[Path], config: LintConfig = LintConfig(), stdin: BinaryIO | None = None) -> LintReport:
    """Lint files and folders (every *.yaml / *.yml inside, sorted); all findings of all files. The path `-` is
    `stdin`, named `<stdin>` in findings."""
    report = LintReport()
    for path in paths:
        if str(path) == "-" and stdin is not None:
            try:
                text = read_stream(stdin)
            except InputError as exc:
                report.files.append(FileResult(STDIN_NAME, exc.diagnostics, unreadable=True))
            else:
                report.files.append(lint_file(Path(STDIN_NAME), text, config))
        elif path.is_dir():
            files = inventory_files(path)
            if not files:
                report.files.append(
                    _refused(path, f"no *.yaml or *.yml files in {path}", "point ffplan lint at inventories")
                )
            report.files += [lint_file(f, config=config) for f in files]
        else:
            report.files.append(lint_file(path, config=config))
    return report


def looks_like_inventory(path: Path) -> bool:
    """A YAML file whose top level has `inventory_version` or `fabric` as a key, however spelled (quoted, flow
    style, in any document): what `--only-inventories` lints when the config names no `inventories`. An unreadable
    file counts, so its error is reported; text that is not YAML (a template) counts when a line starts with
    such a key."""
    try:
        text = read_text(path)
    except InputError:
        return True
    try:
        for node in yaml.compose_all(text, Loader=FastLoader):  # nodes only: no value is built, no alias expanded
            if isinstance(node, yaml.MappingNode) and any(
                isinstance(key, yaml.ScalarNode) and key.value in INVENTORY_KEYS for key, _ in node.value
            ):
                return True
        return False
    except yaml.YAMLError:
        return _INVENTORY_KEY.search(text) is not None


INVENTORY_KEYS = ("inventory_version", "fabric")
_INVENTORY_KEY = re.compile(r"""^[?\s]*["']?(inventory_version|fabric)["']?\s*:""", re.MULTILINE)
