"""Inventory stage: load YAML with positions, validate against the schema, resolve inheritance.

Public surface: `load_inventory(path) -> LoadedInventory`, `inventory_json_schema()`, the models.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ffplan.codes.inventory import BAD_VALUE, MISSING_KEY, NOT_A_MAPPING, UNKNOWN_KEY, UNSAFE_STRING
from ffplan.diagnostics import Collector, StageError, did_you_mean, validation_message
from ffplan.inventory.models import PATTERN_HINTS, Inventory
from ffplan.inventory.resolve import ResolvedInventory, resolve
from ffplan.inventory.source import Source, load_source


# Schema rule ids (FF0xx: reading and schema).

SCHEMA_RULES = {UNKNOWN_KEY, MISSING_KEY, BAD_VALUE, UNSAFE_STRING, NOT_A_MAPPING}


@dataclass
class LoadedInventory:
    source: Source
    inventory: Inventory
    resolved: ResolvedInventory
    sha256: str

    @property
    def collector(self) -> Collector:
        return self.source.collector


def _allowed_keys(model_cls: type | None, loc: tuple) -> list[str]:
    """Field names of the model that owns the location `loc` (for did-you-mean hints)."""
    cls = model_cls
    for part in loc[:-1]:
        if isinstance(part, int) or cls is None:
            continue
        fields = getattr(cls, "model_fields", None)
        if not fields or part not in fields:
            # dict values: keep the class found by the annotation of the container
            continue
        cls = _inner_model(fields[part].annotation)
    fields = getattr(cls, "model_fields", None) or {}
    return list(fields)


def _inner_model(annotation: object) -> type | None:
    from typing import get_args

    if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
        return annotation
    for arg in get_args(annotation):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _schema_diagnostics(exc: ValidationError, collector: Collector) -> None:
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        kind = err["type"]
        value = err.get("input")
        if kind == "extra_forbidden":
            key = loc[-1]
            hint = (
                did_you_mean(str(key), _allowed_keys(Inventory, loc))
                or "remove the key; `ffplan schema` lists the allowed ones"
            )
            collector.error(UNKNOWN_KEY, loc, f"unknown key '{key}'", hint)
        elif kind == "missing":
            collector.error(
                MISSING_KEY, loc, f"missing required key '{loc[-1]}'", "add it; `ffplan schema` describes it"
            )
        elif kind == "string_pattern_mismatch":
            pattern = err.get("ctx", {}).get("pattern", "")
            collector.error(
                UNSAFE_STRING,
                loc,
                f"value {_short(value)} is not allowed here: it must match {pattern}",
                "values here reach hostnames, XML and shell scripts; "
                + PATTERN_HINTS.get(pattern, f"write a value matching {pattern}"),
            )
        elif kind == "model_type" or kind == "dict_type":
            collector.error(
                NOT_A_MAPPING, loc, f"expected a mapping, got {_type_name(value)}", "write key: value pairs here"
            )
        else:
            msg = validation_message(err)
            if kind in ("literal_error", "enum"):
                expected = err.get("ctx", {}).get("expected", "")
                hint = (
                    did_you_mean(str(value), [e.strip(" '") for e in str(expected).replace(" or ", ",").split(",")])
                    or f"expected {expected}"
                )
            else:
                hint = "see `ffplan schema` for the expected type"
            collector.error(BAD_VALUE, loc, f"{msg.lower().rstrip('.')} (got {_short(value)})", hint)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _type_name(value: object) -> str:
    return {list: "a list", str: "a string", int: "a number", float: "a number", type(None): "nothing"}.get(
        type(value), type(value).__name__
    )


def load_inventory(path: Path | str, text: str | None = None) -> LoadedInventory:
    """Load and schema-validate an inventory (`text`, when given, is its content read from elsewhere, such as
    standard input). Raises StageError with every schema finding.

    Semantic checks (budgets, references, NUMA) are the lint stage's; this stage only guarantees that the
    data has the right shape, so the linter and the designer work on typed models.
    """
    source = load_source(path, text)
    collector = source.collector
    if not isinstance(source.data, dict):
        collector.error(
            NOT_A_MAPPING,
            (),
            f"an inventory is a YAML mapping, got {_type_name(source.data)}",
            "start with `name:`, `models:`, `fabric:` and `groups:`",
        )
        raise StageError(collector.items)
    try:
        inventory = Inventory.model_validate(source.data)
    except ValidationError as exc:
        _schema_diagnostics(exc, collector)
        raise StageError(collector.items) from None
    if collector.has_errors:  # duplicate keys found while reading
        raise StageError(collector.items)
    resolved = resolve(inventory, collector)
    if collector.has_errors:
        raise StageError(collector.items)
    digest = hashlib.sha256(source.text.encode("utf-8")).hexdigest()
    return LoadedInventory(source=source, inventory=inventory, resolved=resolved, sha256=digest)


def inventory_json_schema() -> dict:
    """Draft-07 compatible JSON Schema generated from the same models the loader uses."""
    schema = Inventory.model_json_schema(mode="validation")
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    schema["$id"] = "https://ffplan.dev/schema/inventory-v1.json"
    _to_draft07(schema)
    return schema


def _to_draft07(node: object) -> None:
    """pydantic emits 2020-12 `$defs`; draft-07 tools want `definitions`."""
    if isinstance(node, dict):
        if "$defs" in node:
            node["definitions"] = node.pop("$defs")
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            node["$ref"] = "#/definitions/" + ref[len("#/$defs/") :]
        if "prefixItems" in node:  # tuples
            node["items"] = node.pop("prefixItems")
        for value in node.values():
            _to_draft07(value)
    elif isinstance(node, list):
        for value in node:
            _to_draft07(value)
