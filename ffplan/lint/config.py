"""The project's lint settings, as ruff keeps them: `[tool.ffplan]` in pyproject.toml or a `.ffplan.yaml`, the
nearest one found upward from the current folder.

    select = ["FF1", "FF2"]                 # rule ids or id prefixes to report (default: every rule)
    ignore = ["FF501"]                      # rule ids or prefixes never reported
    per-file-ignores = {"inventories/lab*.yaml" = ["FF103"]}
    inventories = ["inventories/*.yaml", "clusters/**/*.yml"]   # what `ffplan lint` with no path lints

Patterns are fnmatch patterns (`*` also crosses `/`) relative to the folder of the config file; a pattern
without `/` matches the file name alone. A bad setting is an input error (exit 2) located in its file.

A config can silence rules, and CI trusts lint: a config file found upward that belongs to another user (not
root), or that anyone may write, is passed over with a warning (it could be planted in a shared parent folder
such as /tmp or a group share); `--config FILE` names one explicitly.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from ffplan.diagnostics import InputError, did_you_mean
from ffplan.inventory.source import load_source, read_text

CONFIG_NAMES = (".ffplan.yaml", "pyproject.toml")  # in this order within one folder
KEYS = ("select", "ignore", "per-file-ignores", "inventories")


class ConfigError(Exception):
    """A config file that cannot be used: where, what, and how to fix it."""

    def __init__(self, where: str, message: str, hint: str):
        super().__init__(f"{where}: {message}")
        self.where, self.message, self.hint = where, message, hint


@dataclass(frozen=True)
class LintConfig:
    file: Path | None = None  # None: no config file, every rule on
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    inventories: tuple[str, ...] = ()
    root: Path = field(default_factory=Path.cwd)  # patterns are relative to this folder
    passed_over: tuple[str, ...] = ()  # why config files found upward were not used (another user's ...)

    def reports(self, rule: str, file: str) -> bool:
        """Whether a finding of `rule` in `file` is reported under these settings."""
        if self.select and not _matches_any(rule, self.select):
            return False
        ignored = self.ignore + tuple(
            code for pattern, codes in self.per_file_ignores if self._matches(file, pattern) for code in codes
        )
        return not _matches_any(rule, ignored)

    def is_inventory(self, path: Path) -> bool:
        return any(self._matches(str(path), pattern) for pattern in self.inventories)

    def inventory_files(self) -> list[Path]:
        """The files the `inventories` patterns match below the config's folder, sorted."""
        found = (p for p in self.root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
        return sorted(
            p.relative_to(Path.cwd()) if p.is_relative_to(Path.cwd()) else p for p in found if self.is_inventory(p)
        )

    def _matches(self, file: str, pattern: str) -> bool:
        path = Path(os.path.abspath(file))
        relative = path.relative_to(self.root).as_posix() if path.is_relative_to(self.root) else path.as_posix()
        return fnmatch.fnmatchcase(relative if "/" in pattern else path.name, pattern)


def _matches_any(rule: str, codes: tuple[str, ...]) -> bool:
    return any(rule.startswith(code) for code in codes)


def find_config(start: Path | None = None) -> LintConfig:
    """The nearest .ffplan.yaml, or pyproject.toml with a [tool.ffplan] table, from `start` upward."""
    folder = (start or Path.cwd()).resolve()
    passed_over: list[str] = []
    for candidate in (folder, *folder.parents):
        for name in CONFIG_NAMES:
            path = candidate / name
            if not path.is_file():
                continue
            distrust = _untrusted(path)
            if distrust:
                passed_over.append(f"{path}: not used, {distrust}")
            elif name != "pyproject.toml" or "ffplan" in _toml(path).get("tool", {}):
                config = load_config(Path(os.path.relpath(path)))  # named in messages as the user would type it
                return replace(config, passed_over=tuple(passed_over))
    return LintConfig(passed_over=tuple(passed_over))


def _untrusted(path: Path) -> str:
    """Why a config found upward cannot be trusted to silence rules, or ''."""
    info = path.stat()
    if info.st_uid not in (os.geteuid(), 0):
        return f"it belongs to another user (uid {info.st_uid})"
    if info.st_mode & stat.S_IWOTH:
        return "anyone may write it"
    return ""


def load_config(path: Path) -> LintConfig:
    """Read and check one config file (.ffplan.yaml, or a TOML file whose settings are under [tool.ffplan])."""
    if path.suffix == ".toml":
        table = _toml(path).get("tool", {}).get("ffplan")
        if not isinstance(table, dict):
            raise ConfigError(str(path), "no [tool.ffplan] table", "add one, or pass a .ffplan.yaml")
        text = read_text(path)
        where = lambda key: _toml_where(path, text, key)  # noqa: E731
        prefix = "tool.ffplan."
    else:
        try:
            source = load_source(path)
        except InputError as exc:
            d = exc.diagnostics[0]
            raise ConfigError(f"{d.file}:{d.line}:{d.col}", d.message, d.hint) from None
        if (
            source.collector.has_errors
        ):  # a duplicate key or a tag its value does not fit: the value is not the one read
            d = source.collector.items[0]
            raise ConfigError(f"{d.file}:{d.line}:{d.col}", d.message, d.hint)
        table = source.data if source.data is not None else {}
        if not isinstance(table, dict):
            raise ConfigError(f"{path}:1:1", "the config is not a YAML mapping", "write keys such as `ignore: [FF501]`")
        where = lambda key: "{}:{}:{}".format(path, *source.positions.get((key,), (1, 1)))  # noqa: E731
        prefix = ""
    from ffplan.lint.registry import all_rules

    known = [r.id for r in all_rules()]

    def codes(key: str, value: object) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(
                where(key), f"{prefix}{key}: expected a list of rule ids, got {value!r}", 'e.g. ["FF501", "FF1"]'
            )
        for code in value:
            if not any(rule.startswith(code.upper()) for rule in known) or not code:
                raise ConfigError(
                    where(key),
                    f"{prefix}{key}: '{code}' is no rule id or prefix of one",
                    did_you_mean(code, known) or "`ffplan rules` lists them",
                )
        return tuple(code.upper() for code in value)

    def patterns(key: str, value: object) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ConfigError(
                where(key),
                f"{prefix}{key}: expected a list of file patterns, got {value!r}",
                'e.g. ["inventories/*.yaml"]',
            )
        return tuple(value)

    unknown = [k for k in table if k not in KEYS]
    if unknown:
        raise ConfigError(
            where(unknown[0]),
            f"{prefix}{unknown[0]}: unknown setting",
            did_you_mean(unknown[0], KEYS) or f"settings: {', '.join(KEYS)}",
        )
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(
            where("per-file-ignores"),
            f"{prefix}per-file-ignores: expected a mapping of file pattern to rule ids",
            '{"inventories/lab*.yaml" = ["FF103"]}',
        )
    return LintConfig(
        file=path,
        root=path.resolve().parent,
        select=codes("select", table.get("select", [])),
        ignore=codes("ignore", table.get("ignore", [])),
        per_file_ignores=tuple((str(pattern), codes("per-file-ignores", ids)) for pattern, ids in per_file.items()),
        inventories=patterns("inventories", table.get("inventories", [])),
    )


def _toml(path: Path) -> dict:
    try:
        return tomllib.loads(read_text(path))
    except InputError as exc:
        d = exc.diagnostics[0]
        raise ConfigError(str(path), d.message, d.hint) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), f"not valid TOML: {exc}", "check the quoting and brackets of this line") from None


def _toml_where(path: Path, text: str, key: str) -> str:
    """file:line:col of `key` in the [tool.ffplan] table (TOML parsers keep no positions, so we scan)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == "[tool.ffplan]"), 0)
    pattern = re.compile(rf'^\s*"?{re.escape(key)}"?\s*=')
    line = next((i for i in range(start, len(lines)) if pattern.match(lines[i])), start)
    return f"{path}:{line + 1}:1"
