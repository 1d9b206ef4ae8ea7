"""Small building blocks the rules share, so that no two rules carry copies of the same logic."""

from __future__ import annotations

from collections import Counter
from typing import Hashable, Iterable, Iterator, TypeVar

from ffplan.diagnostics import YamlPath, did_you_mean
from ffplan.lint.declare import Finding

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)


def unknown_reference(
    path: YamlPath, kind: str, name: str, known: Iterable[str], defined_at: str, context: str = ""
) -> Finding | None:
    """A finding for `name` when it is not among `known`, with a did-you-mean or the list of choices.

    `context` follows the name in the message (" in node model 'x'").
    """
    known = sorted(set(known))
    if name in known:
        return None
    hint = did_you_mean(name, known)
    if not hint:
        shown = ", ".join(known[:8]) + (", ..." if len(known) > 8 else "")
        hint = f"define it under {defined_at}" + (f", or use one of: {shown}" if known else "")
    return Finding(path, f"unknown {kind} '{name}'{context}", hint)


def duplicates(entries: Iterable[tuple[K, YamlPath]]) -> Iterator[tuple[K, YamlPath, YamlPath]]:
    """(key, path, first_path) for every entry whose key was already seen at first_path."""
    first: dict[K, YamlPath] = {}
    for key, path in entries:
        if key in first:
            yield key, path, first[key]
        else:
            first[key] = path


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


def plural(count: int, noun: str, nouns: str = "") -> str:
    """`1 leaf`, `40 leaves`: the count with its noun in the right number."""
    return f"{count:,} {noun if count == 1 else nouns or noun + 's'}"
