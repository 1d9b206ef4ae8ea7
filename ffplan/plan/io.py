"""Canonical plan.yaml: fixed key order (the model's field order), flow style for scalar-only collections,
no wrapping surprises, LF line endings, so one plan is byte-identical on every machine."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ffplan.diagnostics import Collector, InputError, YamlPath, validation_message
from ffplan.inventory.source import _Builder, read_text
from ffplan.plan.check import Problem, plan_problems
from ffplan.plan.model import PLAN_VERSION, Plan

try:
    from yaml import CSafeDumper as _Dumper
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover  (no libyaml: the pure-Python classes, a different type for mypy)
    from yaml import SafeDumper as _Dumper  # type: ignore[assignment]
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

MAX_PLAN_BYTES = 512 * 1024 * 1024
MAX_SHOWN_PROBLEMS = 50  # a shifted LID range can break thousands of entries; the first ones say enough
RULE_INVALID_PLAN = "FF903"

HEADER = "# ffplan plan: generated, do not edit. Re-run `ffplan design` to change it.\n"


def dump_plan(plan: Plan) -> str:
    data = plan.model_dump(mode="json")
    body = yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=None, width=1 << 16,
                     allow_unicode=False, line_break="\n")
    return HEADER + body


def write_plan(plan: Plan, path: Path) -> None:
    """Write atomically: a reader never sees half a plan."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".plan-", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(dump_plan(plan))
    os.replace(tmp, path)


class _DuplicateKey(Exception):
    pass


class _PlanLoader(_Loader):
    """libyaml, refusing a mapping with a repeated key: YAML keeps the last one, so a reviewer reading the first
    would approve a value ffplan never uses. Located afterwards by the position-tracking reader (FF002)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        keys = [key.value for key, _ in node.value if isinstance(key, yaml.ScalarNode)]
        if len(set(keys)) != len(keys):
            raise _DuplicateKey
        return super().construct_mapping(node, deep)


def load_plan(path: Path | str, needs: tuple[str, ...] = ()) -> Plan:
    """Read and validate a plan: its schema (every string against a safe pattern, every number in range) and
    its cross-references (ffplan.plan.check). Anything else is refused (InputError, exit 2), each problem
    with the plan's file:line:col and YAML path, so no later stage sees a plan it cannot trust.

    `needs`: the optional sections (routing, qos, hosts; absent in plans of older ffplan) the caller cannot
    do without. Plans are large (routing tables), so they are read with libyaml directly; only a refused
    plan is read again through the inventory reader's position tracking, to locate its problems.
    """
    c = Collector(str(path))
    text = read_text(Path(path), MAX_PLAN_BYTES)
    try:
        data = yaml.load(text, Loader=_PlanLoader)
    except _DuplicateKey:
        raise _refuse(c, text, []) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            c.positions[()] = (mark.line + 1, mark.column + 1)
        problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
        c.error("FF901", (), f"plan is not valid YAML: {problem}", "the plan is truncated or was edited; re-run `ffplan design`")
        raise InputError(c.items) from None
    except (ValueError, KeyError) as exc:  # explicit tags that cannot be built: `!!int abc`, `!!bool 2`
        c.error("FF901", (), f"plan is not valid YAML: {' '.join(str(exc).split())}", "the plan was edited; re-run `ffplan design`")
        raise InputError(c.items) from None
    if not isinstance(data, dict) or "plan_version" not in data:
        c.error("FF901", (), "not an ffplan plan (no plan_version)", "pass the plan.yaml written by `ffplan design`")
        raise InputError(c.items)
    if data["plan_version"] != PLAN_VERSION:
        c.error("FF902", ("plan_version",), f"plan version {data['plan_version']!r} is not supported (this ffplan reads {PLAN_VERSION})",
                "re-run `ffplan design` with this version of ffplan")
        raise InputError(c.items)
    try:
        plan = Plan.model_validate(data)
    except ValidationError as exc:
        problems = _schema_problems(exc, data)
    else:
        problems = plan_problems(plan)
        problems += [((name,), f"the plan has no {name} section (written by an older ffplan?)") for name in needs if getattr(plan, name) is None]
    if problems:
        raise _refuse(c, text, problems)
    return plan


def _schema_problems(exc: ValidationError, data: dict) -> list[Problem]:
    problems: dict[Problem, None] = {}  # one per path and message: a union reports each of its members
    for e in exc.errors(include_url=False):
        path = _data_path(e["loc"], data, e["type"] == "missing")
        shown = repr(e["input"]) if isinstance(e["input"], (str, int, float)) else ""
        value = f"{shown[:60]}{'...' if len(shown) > 60 else ''}: " if shown else ""
        problems[path, f"{value}{validation_message(e)}"] = None
    return list(problems)


def _data_path(loc: tuple, data: object, missing: bool) -> YamlPath:
    """The part of a pydantic error location that is in the data (pydantic adds union members' type names),
    plus the key itself when it is missing."""
    path: list = []
    for part in loc:
        if isinstance(data, dict) and part in data or isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data):
            path.append(part)
            data = data[part]
        else:
            break
    if missing and loc:
        path.append(loc[-1])
    return tuple(path)


def _refuse(c: Collector, text: str, problems: list[Problem]) -> InputError:
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
    finally:
        loader.dispose()
    assert root is not None, "only a plan read as a mapping is refused here"
    _Builder(c).build(root, ())
    for path, message in problems[:MAX_SHOWN_PROBLEMS]:
        c.error(RULE_INVALID_PLAN, path, f"invalid plan: {message}", "the plan was edited or is damaged; re-run `ffplan design`")
    if len(problems) > MAX_SHOWN_PROBLEMS:
        c.error(RULE_INVALID_PLAN, (), f"invalid plan: {len(problems):,} problems, the first {MAX_SHOWN_PROBLEMS} shown", "")
    return InputError(c.items)
