"""Canonical plan.yaml: fixed key order (the model's field order), flow style for scalar-only collections,
no wrapping surprises, LF line endings, so one plan is byte-identical on every machine."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import yaml
from pydantic import ValidationError

from ffplan.diagnostics import Collector, InputError, validation_message
from ffplan.inventory.source import read_text
from ffplan.plan.model import PLAN_VERSION, Plan

try:
    from yaml import CSafeDumper as _Dumper
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeDumper as _Dumper  # type: ignore[assignment]
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

MAX_PLAN_BYTES = 512 * 1024 * 1024

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


def load_plan(path: Path | str) -> Plan:
    """Read a plan written by `ffplan design`; a plan of another version or shape is refused with its YAML path.

    Plans are machine-written and large (routing tables), so they are read with libyaml directly rather than
    through the position-tracking inventory reader.
    """
    c = Collector(str(path))
    text = read_text(Path(path), MAX_PLAN_BYTES)
    try:
        data = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            c.positions[()] = (mark.line + 1, mark.column + 1)
        problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
        c.error("FF901", (), f"plan is not valid YAML: {problem}", "the plan is truncated or was edited; re-run `ffplan design`")
        raise InputError(c.items) from None
    if not isinstance(data, dict) or "plan_version" not in data:
        c.error("FF901", (), "not an ffplan plan (no plan_version)", "pass the plan.yaml written by `ffplan design`")
        raise InputError(c.items)
    if data["plan_version"] != PLAN_VERSION:
        c.error("FF902", ("plan_version",), f"plan version {data['plan_version']!r} is not supported (this ffplan reads {PLAN_VERSION})",
                "re-run `ffplan design` with this version of ffplan")
        raise InputError(c.items)
    try:
        return Plan.model_validate(data)
    except ValidationError as exc:
        for e in exc.errors(include_url=False)[:20]:
            c.error("FF903", tuple(e["loc"]), f"plan does not match the plan schema: {validation_message(e)}",
                    "the plan was edited or is damaged; re-run `ffplan design`")
        raise InputError(c.items) from None
