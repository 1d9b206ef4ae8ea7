"""Small building blocks the rules share, so that no two rules carry copies of the same logic."""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Iterator, TypeVar

from ffplan.diagnostics import YamlPath, unknown_name
from ffplan.lint.declare import Finding

T = TypeVar("T")


def unknown_reference(
    path: YamlPath, kind: str, name: str, known: Iterable[str], defined_at: str, context: str = ""
) -> Finding | None:
    """A finding for `name` when it is not among `known` (`ffplan.diagnostics.unknown_name` words it)."""
    unknown = unknown_name(kind, name, known, defined_at, context)
    return None if unknown is None else Finding(path, *unknown)


def collapse(items: Iterable[tuple[YamlPath, YamlPath, T]]) -> Iterator[tuple[YamlPath, YamlPath, T, int]]:
    """Group (path, other_path, example) by the two paths: generated hosts repeat one mistake many times.

    Yields (path, other_path, first example, how many) in first-seen order.
    """
    counts: Counter = Counter()
    example: dict[tuple[YamlPath, YamlPath], T] = {}
    for path, other, text in items:
        counts[(path, other)] += 1
        example.setdefault((path, other), text)
    for key, text in example.items():
        yield key[0], key[1], text, counts[key]


def more(count: int, noun: str) -> str:
    """' (and 3 more hosts)' when a finding stands for several, '' otherwise."""
    return f" (and {count - 1:,} more {noun})" if count > 1 else ""


def out_of_range(path: YamlPath, what: str, value: int | None, low: int, high: int, why: str) -> Finding | None:
    if value is None or low <= value <= high:
        return None
    return Finding(path, f"{what} {value} is outside {low}-{high}", why)
