"""Canonical plan.yaml: fixed key order (the model's field order), flow style for scalar-only collections,
no wrapping surprises, LF line endings, so one plan is byte-identical on every machine."""

from __future__ import annotations

import gc
import re
import string
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator
from contextlib import contextmanager
from itertools import islice, repeat, takewhile
from operator import itemgetter, methodcaller
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ffplan.codes.plan import NOT_A_PLAN, PLAN_SCHEMA_MISMATCH, UNSUPPORTED_PLAN_VERSION
from ffplan.diagnostics import Collector, InputError, YamlPath, validation_message
from ffplan.inventory.source import BadTaggedValue, _Builder, construct_scalar, read_text
from ffplan.plan.check import Problem, plan_problems
from ffplan.plan.model import PLAN_VERSION, Plan

try:
    from yaml import CSafeDumper as _Dumper
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover  (no libyaml: the pure-Python classes, a different type for mypy)
    from yaml import SafeDumper as _Dumper  # type: ignore[assignment]
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

# Limits from the largest plans ffplan designs (docs/security.md, "Loader limits"; benchmarks/plan_limits.py measures
# them): a hostile plan is refused after reading what a real one needs, before it costs gigabytes.
# The largest, a three-layer tree of 16,384 endpoints: 75.5 MiB (mostly forwarding tables), 1,650,326 nodes, depth 7.
MAX_PLAN_BYTES = 128 * 1024 * 1024
MAX_PLAN_NODES = 4_000_000
LARGEST_PLAN_NODES = 1_650_326
MAX_PLAN_DEPTH = 32
PLAN_SIZE_HINT = "the largest plan ffplan designs (16,384 endpoints in a three-layer tree) is 76 MiB; check the file"
MAX_SHOWN_PROBLEMS = 50  # a shifted LID range can break thousands of entries; the first ones say enough
INFINIBAND_SECTIONS = ("routing", "qos", "hosts")  # a RoCE plan has its `ethernet` section instead

HEADER = "# ffplan plan: generated, do not edit. Re-run `ffplan design` to change it.\n"


# No line is ever wrapped: a routing table of a large fabric is one long line, as every other.
_YAML_STYLE: dict[str, Any] = {"sort_keys": False, "width": (1 << 31) - 1, "allow_unicode": False, "line_break": "\n"}


def dump_plan(plan: Plan) -> str:
    # An InfiniBand plan has no `ethernet:` key at all, so its file is what it was before RoCE existed.
    # A RoCE plan has `path_selection` and its switches' `pinned` lists only when pinned, so ECMP plans are what they
    # were before the option existed.
    exclude: dict[str, Any] | None = (
        {"ethernet": True}
        if plan.ethernet is None
        else (
            {"ethernet": {"path_selection": True, "switches": {"__all__": {"pinned"}}}}
            if plan.ethernet.path_selection == "ecmp"
            else None
        )
    )
    data = plan.model_dump(mode="json", exclude=exclude)
    for nic_model in data["nic_models"]:  # an ordinary NIC's entry is what it was before multi-planar NICs
        if nic_model["planes"] == 1:
            del nic_model["planes"]
    try:
        body = _PlanWriter().document(data)
    except _Unusual:
        body = yaml.dump(data, Dumper=_Dumper, default_flow_style=None, **_YAML_STYLE)
    return HEADER + body


_SAFE_PLAIN = re.compile(r"[A-Za-z0-9_/](?:[A-Za-z0-9_./ -]*[A-Za-z0-9_./])?")  # plain in every context, if a str


def _always_str(word: str) -> bool:
    """Whether no implicit resolver of YAML 1.1 (bool, float, int, merge, null, timestamp, value) can match the
    word: none takes a '/' or two dots. Addresses and prefixes (10.1.0.59/31) are most of a RoCE plan's distinct
    scalars, and resolving each one took 1.3 s of a 16k-GPU plan's dump."""
    return "/" in word or word.count(".") > 1


class _PlanWriter:
    """What `yaml.dump(data, default_flow_style=None, ...)` writes, without PyYAML's representer and emitter in
    Python per scalar: block style for collections holding collections, flow style for those holding only scalars
    (or nothing), 2-space indents, sequences in a mapping not indented. Each distinct scalar is spelled once, by
    PyYAML itself unless it is a plain word; a shape this writer does not know (a list of lists, a scalar PyYAML
    would write over several lines) raises _Unusual, and PyYAML writes the whole plan."""

    def __init__(self) -> None:
        self.loader = _Loader("")  # its resolver: a plain word that reads back as no string needs quotes
        self.spelled: dict[tuple[type, object, bool, bool], str] = {}
        # the strings' spellings in each context, looked up without building a key (most of a plan's scalars)
        self.block_keys: dict[object, str] = {}
        self.block_values: dict[object, str] = {}
        self.flow_keys: dict[object, str] = {}
        self.flow_values: dict[object, str] = {}

    def document(self, data: object) -> str:
        if not isinstance(data, dict) or self.flat(data):  # PyYAML writes a mapping of scalars on one line
            raise _Unusual
        out: list[str] = []
        self.mapping(data, 0, out)
        out.append("")
        return "\n".join(out)

    def mapping(self, data: dict, indent: int, out: list[str], first_prefix: str | None = None) -> None:
        pad = " " * indent
        keys, values = self.block_keys, self.block_values
        for i, (key, value) in enumerate(data.items()):
            head = (
                (first_prefix if i == 0 and first_prefix is not None else pad)
                + (keys.get(key) or self.word(key, keys, False, True))
                + ":"
            )
            kind = value.__class__
            if (kind is dict or kind is list) and not self.flat(value):
                out.append(head)
                if kind is dict:
                    self.mapping(value, indent + 2, out)
                else:
                    self.sequence(value, indent, out)
            elif kind is dict or kind is list:
                out.append(head + " " + self.inline(value))
            elif kind is int:
                out.append(head + " " + int.__repr__(value))
            else:
                out.append(head + " " + (values.get(value) or self.word(value, values, False, False)))

    def sequence(self, data: list, indent: int, out: list[str]) -> None:
        pad = " " * indent
        for item in data:
            kind = item.__class__
            if kind is dict and not self.flat(item):
                self.mapping(item, indent + 2, out, first_prefix=pad + "- ")
            elif kind is list and not self.flat(item):
                raise _Unusual
            else:
                out.append(pad + "- " + self.inline(item))

    @staticmethod
    def flat(value: dict | list) -> bool:
        for v in value.values() if value.__class__ is dict else value:
            if v.__class__ is dict or v.__class__ is list:
                return False
        return True

    def inline(self, value: object) -> str:
        """A scalar in a block, or a collection of scalars in flow style: one call per collection, a dictionary
        lookup per string (an integer is its digits)."""
        keys, values = self.flow_keys, self.flow_values
        if value.__class__ is dict:
            return (
                "{"
                + ", ".join(
                    [
                        (keys.get(k) or self.word(k, keys, True, True))
                        + ": "
                        + (
                            int.__repr__(v)
                            if v.__class__ is int
                            else values.get(v) or self.word(v, values, True, False)
                        )
                        for k, v in value.items()
                    ]
                )
                + "}"
            )
        if value.__class__ is list:
            return (
                "["
                + ", ".join(
                    [
                        int.__repr__(v) if v.__class__ is int else values.get(v) or self.word(v, values, True, False)
                        for v in value
                    ]
                )
                + "]"
            )
        return self.scalar(value, False)

    def word(self, value: object, spellings: dict[object, str], flow: bool, key: bool) -> str:
        """The spelling of a scalar not in `spellings` yet, which keeps it if it is a string (an integer, a float or
        a boolean may equal another type's value: those stay with `scalar`)."""
        spelled = self.scalar(value, flow, key)
        if value.__class__ is str:
            spellings[value] = spelled
        return spelled

    def scalar(self, value: object, flow: bool, key: bool = False) -> str:
        if value.__class__ is float:  # -0.0 equals 0.0 (and hashes alike) yet is written "-0.0": never cached
            return self.spell(value, flow, key)
        cache_key = (type(value), value, flow, key)
        spelled = self.spelled.get(cache_key)
        if spelled is None:
            spelled = self.spelled[cache_key] = self.spell(value, flow, key)
        return spelled

    def spell(self, value: object, flow: bool, key: bool) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            return str(value)
        if value is None:
            return "null"
        if isinstance(value, str) and _SAFE_PLAIN.fullmatch(value) and (not key or len(value) < 128):
            # a word that reads back as a string is written plain, any other (a GUID '0x02c9', '12', 'yes', 'null')
            # in single quotes, as PyYAML does in every context: it holds nothing to escape
            plain = _always_str(value) or self.loader.resolve(yaml.ScalarNode, value, (True, False)) == _STR_TAG
            return value if plain else f"'{value}'"
        # PyYAML's own spelling, in the same context: a flow mapping's key or value, a block mapping's key or value
        doc: object
        if key:
            doc, start, end = {value: 0}, "{" if flow else "", ": 0}\n" if flow else ": 0\n"
        else:
            doc, start, end = ([value], "[", "]\n") if flow else ({"k": value}, "k: ", "\n")
        text: str = yaml.dump(doc, Dumper=_Dumper, default_flow_style=flow, **_YAML_STYLE)
        spelled = text[len(start) : len(text) - len(end)]
        if not text.startswith(start) or not text.endswith(end) or "\n" in spelled:
            raise _Unusual
        return spelled


class _DuplicateKey(Exception):
    pass


class _Unusual(Exception):
    """YAML that ffplan never writes (anchors into keys, merge keys, tagged collections, several documents)."""


class _Refused(Exception):
    """A plan that cannot be read: too large once aliases are expanded, nested too deep, or a tagged scalar that does
    not fit its tag. Located at the YAML node (0-based libyaml mark)."""

    def __init__(self, mark: Any, message: str, hint: str):
        super().__init__(message)
        self.position = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        self.message, self.hint = message, hint


class _PlanLoader(_Loader):
    """libyaml, refusing a mapping with a repeated key: YAML keeps the last one, so a reviewer reading the first
    would approve a value ffplan never uses. Located afterwards by the position-tracking reader (FF002)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        keys = [key.value for key, _ in node.value if isinstance(key, yaml.ScalarNode)]
        if len(set(keys)) != len(keys):
            raise _DuplicateKey
        return super().construct_mapping(node, deep)

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        if isinstance(node, yaml.ScalarNode):  # an unknown or unfitting tag: refused, located, as from the events
            return _scalar_value(node)
        return super().construct_object(node, deep)


_STR_TAG = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"


def _scalar_value(node: yaml.ScalarNode) -> Any:
    try:
        return construct_scalar(node)
    except BadTaggedValue:
        tag = node.tag.removeprefix("tag:yaml.org,2002:")
        shown = f"!!{tag}" if tag != node.tag else f"the unknown tag {tag}"
        raise _Refused(
            node.start_mark,
            f"{node.value[:60]!r} is not a valid {shown}" if tag != node.tag else f"{node.value[:60]!r} has {shown}",
            "remove the tag; ffplan writes none",
        ) from None


def _read_yaml(text: str) -> object:
    """What `yaml.load(text, Loader=_PlanLoader)` returns: read by _CanonicalReader if the text is exactly what ffplan
    writes, else built straight from libyaml's events.

    Composing libyaml's node tree (a Python object and two marks per scalar) is what makes a plan slow to
    read: the events skip it, and a plain scalar is resolved once per distinct value (a plan repeats its
    port numbers, zones and cable types thousands of times). The same pass bounds what the plan may cost
    (MAX_PLAN_NODES after alias expansion, MAX_PLAN_DEPTH), so no reader, validator or renderer ever sees
    an alias bomb or a nesting deep enough to exhaust the stack. YAML that ffplan never writes is then left
    to the full loader, so a hand-edited plan reads exactly as before.
    """
    data = _CanonicalReader().read(text)
    if data is not None:
        return data
    data, unusual = _build_from_events(text)
    return yaml.load(text, Loader=_PlanLoader) if unusual else data


class _NotCanonical(Exception):
    """Bytes _PlanWriter never writes: the plan is read from libyaml's events instead."""


# The scalars of a canonical plan: a plain word libyaml reads as it is written (no indicator first, no ': ', ' #' or
# trailing space; in a flow collection no ',', ':', brackets or braces at all), or a single-quoted string of printable
# ASCII. Anything else (double quotes, tags, anchors, aliases, comments) is not canonical.
_FIRST = r"(?:[A-Za-z0-9_/(+=;~]|[-.][A-Za-z0-9_.])"
_FLOW_LAST = r"\x21\x22\x24-\x2b\x2d-\x39\x3b-\x5a\x5c\x5e-\x7a\x7c\x7e"  # printable ASCII but # , : [ ] { }
_FLOW_PLAIN = re.compile(rf"{_FIRST}(?:(?:[ {_FLOW_LAST}]|(?<! )#)*(?:[{_FLOW_LAST}]|(?<! )#))?")
_BLOCK_LAST = _FLOW_LAST + r",\[\]{}"
_BLOCK_PLAIN = re.compile(rf"{_FIRST}(?:(?:[ {_BLOCK_LAST}]|(?<! )#|:(?! ))*(?:[{_BLOCK_LAST}]|(?<! )#))?")
_QUOTED = re.compile(r"'(?:[\x20-\x26\x28-\x7e]|'')*'")
_FLOW_WORD = rf"(?:{_QUOTED.pattern}|{_FLOW_PLAIN.pattern})"
_FLOW_PAIR = re.compile(rf"({_FLOW_WORD}): ({_FLOW_WORD})(?:, (?=.)|$)")
_FLOW_ITEM = re.compile(rf"({_FLOW_WORD})(?:, (?=.)|$)")


class _CanonicalReader:
    """The data of a plan exactly as _PlanWriter writes it (ffplan's header, block collections indented by two, a
    sequence in a mapping not indented, flat collections in flow style on one line, the words above), read a line
    at a time with str methods: libyaml's event loop was 5 s of a 16,384-endpoint plan's load, a Python step per
    event. A run of mapping items like the one before it (one line per key, the same keys: the cables) is read a key
    at a time over the whole run, each column of values by list operations. Anything else returns None and the plan is read from libyaml's events, which also refuse what must be
    refused (duplicate keys, alias bombs, depth, bad tags) with its position: so this reader gives libyaml's data or
    nothing (tests/plan/test_plan_yaml.py compares them on generated plans and on mutations of them)."""

    def __init__(self) -> None:
        self.loader = _PlanLoader("")  # its resolver: a plain word's value, as the events give it
        # first characters some implicit resolver matches (PyYAML picks resolvers by it): any other word is a string
        self.resolved_first = frozenset(self.loader.yaml_implicit_resolvers)
        # the first characters of a plain word of _safe_chars that is a string whatever follows (no resolver's)
        self.string_first = frozenset(string.ascii_letters + "_/") - self.resolved_first
        self.flow_words: dict[str, object] = {}  # a word's text -> its value, in a flow collection
        self.block_words: dict[str, object] = {}  # in a block mapping or sequence
        self.nodes = 0  # the document's, as _build_from_events counts them (a canonical plan has no aliases)
        self.flow_scalars = 0  # in the flow collections read so far, each a node
        # flow mappings that are sequence items, by their first key: (the sequence, the item's index, its text)
        self.flow_items: dict[str, list[tuple[list, int, str]]] = {}

    def read(self, text: str) -> object:
        lines = text.split("\n")
        if lines[0] != HEADER[:-1] or lines.pop() != "" or len(lines) < 2:
            return None
        try:
            return self.document(lines)
        except _NotCanonical:
            return None

    def document(self, lines: list[str]) -> dict:
        root: dict = {}
        stack: list[tuple[Any, int]] = []  # the open collections but the innermost, with their indents
        top: Any = root  # the innermost open collection
        top_indent = 0  # its indent; a sequence in a mapping has its key's
        pending: tuple[dict, object, int] | None = None  # a key waiting for its block value: (mapping, key, indent)
        words, word, flow, block_value = self.block_words, self.word, self.flow, self.block_value
        missing, plain = _MISSING, _BLOCK_PLAIN
        limit = MAX_PLAN_NODES
        nodes = 1
        last_item: dict | None = None  # the mapping item begun last, and its first line
        item_line = 0
        at, stop = 1, len(lines)
        while at < stop:
            line = lines[at]
            at += 1
            content = line.lstrip(" ")
            indent = len(line) - len(content)
            if indent == top_indent and pending is None and top.__class__ is dict and content[:2] != "- ":
                pass  # the next key of the open mapping: most lines
            elif pending is not None:  # a block collection starts: a sequence at the key's indent, a mapping deeper
                owner, key, key_indent = pending
                pending = None
                item = content[:2] == "- "
                if item and indent == key_indent:
                    value: Any = []
                elif not item and indent == key_indent + 2:
                    value = {}
                else:
                    raise _NotCanonical
                owner[key] = value
                nodes += 1
                stack.append((top, top_indent))
                top, top_indent = value, indent
            else:
                item = content[:2] == "- "
                while top_indent > indent:
                    top, top_indent = stack.pop()
                if not item and top_indent == indent and top.__class__ is list:  # a key after its sequence
                    top, top_indent = stack.pop()
                if top_indent != indent or (top.__class__ is list) is not item:
                    raise _NotCanonical
            if top.__class__ is list:  # an item
                content = content[2:]
                if content[:1] == "{" and len(content) < _LONG:  # read with the others of its first key, at the end
                    self.flow_items.setdefault(content.partition(":")[0], []).append((top, len(top), content))
                    top.append(None)
                    nodes += 1
                    continue
                if content[:1] in ("{", "["):
                    top.append(flow(content))
                    nodes += 1
                    continue
                if ": " not in content and content[-1:] != ":" or _QUOTED.fullmatch(content):
                    value = words.get(content, missing)
                    top.append(word(content, plain, words) if value is missing else value)
                    nodes += 1
                    continue
                stack.append((top, top_indent))
                if last_item is not None and top and top[-1] is last_item:  # the items like the one before, at once
                    size = at - 1 - item_line  # the lines of the item before
                    items, item_nodes = self.items_like(lines, at - 1, top[-1], size, indent, len(stack))
                    if items:
                        top.extend(items)
                        last_item, item_line = items[-1], at - 1 + size * (len(items) - 1)
                        at += size * len(items) - 1
                        top, top_indent = items[-1], indent + 2  # open, as after its last line
                        if size > len(top):  # and so is its last key's block sequence
                            stack.append((top, top_indent))
                            top = top[next(reversed(top))]
                        nodes += item_nodes
                        if nodes + self.flow_scalars > limit:
                            raise _NotCanonical
                        continue
                mapping: dict = {}  # a mapping item: its first key on the item's line, the others 2 deeper
                top.append(mapping)
                last_item, item_line = mapping, at - 1
                nodes += 1
                top, top_indent = mapping, indent + 2
            if content[:1] == "'":  # a quoted key may hold ': '
                quoted = _QUOTED.match(content)
                end = quoted.end() if quoted else 0
                key_text, colon, value_text = content[:end], content[end : end + 2], content[end + 2 :]
                if content[end:] == ":":
                    colon = ""
                elif colon != ": ":
                    raise _NotCanonical
            else:
                key_text, colon, value_text = content.partition(": ")
                if not colon:
                    if content[-1:] != ":":
                        raise _NotCanonical
                    key_text = content[:-1]
            key = words.get(key_text, missing)
            if key is missing:
                key = word(key_text, plain, words)
            if key in top:
                raise _NotCanonical  # a duplicate key: refused by the events, located
            if not colon:
                pending = (top, key, top_indent)
                if len(stack) >= MAX_PLAN_DEPTH - 2:  # the events refuse a plan nested too deep, located
                    raise _NotCanonical
                nodes += 1
            else:
                value = words.get(value_text, missing)
                top[key] = block_value(value_text) if value is missing else value
                nodes += 2
            if nodes + self.flow_scalars > limit:  # the events refuse the plan, located
                raise _NotCanonical
        if pending is not None:
            raise _NotCanonical  # a key with no value: null, which the writer spells
        self.read_flow_items()
        if nodes + self.flow_scalars > limit:
            raise _NotCanonical
        self.nodes = nodes + self.flow_scalars
        return root

    def read_flow_items(self) -> None:
        """The flow mappings that are sequence items (a node's ports, the switches), read a key at a time over all
        of those with one first key: 16,384 node ports one by one were a third of a 16,384-endpoint plan's nodes."""
        for places in self.flow_items.values():
            texts = list(map(itemgetter(2), places))
            mappings = self.flows_like(texts)
            for (sequence, index, _), mapping in zip(places, mappings or map(self.flow, texts)):
                sequence[index] = mapping

    def items_like(
        self, lines: list[str], start: int, previous: dict, size: int, indent: int, depth: int
    ) -> tuple[list, int]:
        """The mapping items from lines[start] on with the keys of `previous`, the item before them, each on its line
        as there, when `previous` is one line per key but perhaps the last, a block sequence of as many flow mappings
        (a node's ports): read a key at a time over all of them (the 49,152 cables and 4,096 nodes of a
        16,384-endpoint plan). (the items, their nodes but those in flow collections)"""
        keys = list(previous)
        listed = size - len(keys)  # the items of the last key's block sequence, if it has one
        flat = len(keys) - (listed > 0)  # the keys on one line
        first = lines[start - size : start]
        item_prefix = " " * (indent + 2) + "- "
        if listed and not (
            listed > 0
            and flat > 0
            and previous[keys[-1]].__class__ is list
            and len(previous[keys[-1]]) == listed
            and first[flat].endswith(":")
            and all(map(str.startswith, first[flat + 1 :], repeat(item_prefix + "{")))
            and depth < MAX_PLAN_DEPTH - 2  # else refused by the events, located
        ):
            return [], 0
        prefixes = []  # each line's indent, "- " or "  ", key and ": "
        for line in first[:flat]:
            colon = line.find(": ", indent + 2)
            if colon < 0 or line[indent + 2] == "'":  # a quoted key may hold ': '
                return [], 0
            prefixes.append(line[: colon + 2])
        count = len(list(takewhile(methodcaller("startswith", prefixes[0]), islice(lines, start, None, size))))
        count -= start + count * size > len(lines)  # the last item must end in the document
        columns: list[list] = []  # the value texts of each key, item by item, then their values
        repeated: dict[int, dict[str, object]] = {}  # of a column of few lines (a cable's kind): line -> value
        for j, prefix in enumerate(prefixes):
            column = lines[start + j : start + count * size : size]
            distinct = list(set(column)) if _repeats(column) else column
            if len(distinct) * 2 <= len(column) and all(map(str.startswith, distinct, repeat(prefix))):
                texts = _after(prefix, distinct)
                if not any(text[:1] in ("{", "[") for text in texts):  # (each flow collection an object of its own)
                    repeated[j] = dict(zip(distinct, self.values(texts, self.block_words, self.block_value)))
                    columns.append(column)
                    continue
            texts = _after(prefix, column)
            count = min(count, len(texts))  # an item not like the others: it and the rest are read a line at a time
            columns.append(texts)
        listed_columns: list[list[str]] = []  # the texts of the sequences' first items, of their second items, ...
        if listed:
            same = list(map(first[flat].__eq__, lines[start + flat : start + count * size : size]))
            count = min(count, same.index(False) if False in same else count)
            for k in range(listed):
                texts = _after(item_prefix, lines[start + flat + 1 + k : start + count * size : size])
                count = min(count, len(texts))
                listed_columns.append(texts)
        if not count:
            return [], 0
        if listed:  # before the other columns, which count their flow scalars: all of them are read, or none
            mappings = self.flows_like([text for texts in listed_columns for text in texts[:count]])
            if mappings is None:
                return [], 0
            columns.append(list(map(list, zip(*[mappings[k * count : (k + 1) * count] for k in range(listed)]))))
        for j, texts in enumerate(columns[:flat]):
            del texts[count:]
            if j in repeated:
                columns[j] = list(map(repeated[j].__getitem__, texts))
                continue
            values = self.flows_like(texts) if texts[0][:1] == "{" else None
            columns[j] = values if values is not None else self.values(texts, self.block_words, self.block_value)
        return _mappings(keys, columns), count * (1 + 2 * size - listed)

    def flows_like(self, texts: list[str]) -> list[dict] | None:
        """Flow mappings with the keys of the first, written as there ({device: z1-leaf001, port: 33}), read a key at a
        time over all of them; None if one is not like it (each is then read by flow())."""
        if not (all(map(str.startswith, texts, repeat("{"))) and all(map(str.endswith, texts, repeat("}")))):
            return None
        key_texts = [pair.partition(": ")[0] for pair in texts[0][1:-1].split(", ")]
        size = len(key_texts)
        # all pairs split at once: each text has the separators of the first, and "}{" is only where two texts meet
        joined = "".join(texts)
        if set(map(str.count, texts, repeat(", "))) != {size - 1} or joined.count("}{") != len(texts) - 1:
            return None
        pairs = joined[1:-1].replace("}{", ", ").split(", ")
        try:
            keys = self.values(key_texts, self.flow_words, self.flow_word)
            columns = []
            for j, key_text in enumerate(key_texts):
                values = self.flow_column(pairs[j::size], key_text + ": ")
                if values is None:
                    return None
                columns.append(values)
        except _NotCanonical:  # a quoted word holding ', ' or ': ' (flow() reads it), or a word to refuse
            return None
        if len(set(keys)) != len(keys):
            return None
        self.flow_scalars += 2 * len(keys) * len(texts)
        return _mappings(keys, columns)

    def flow_column(self, pairs: list[str], prefix: str) -> list | None:
        """The values of flow mapping pairs that all start with `prefix` (a key and ': '), else None; read once per
        distinct pair when they repeat (a cable end's device, a port's leaf)."""
        count = len(pairs)
        distinct = list(set(pairs)) if _repeats(pairs) else pairs
        if len(distinct) * 2 > count:
            words = _after(prefix, pairs)  # (cut at the first pair without the prefix)
            return self.values(words, self.flow_words, self.flow_word) if len(words) == count else None
        if not all(map(str.startswith, distinct, repeat(prefix))):
            return None
        words = _after(prefix, distinct)
        by_pair = dict(zip(distinct, self.values(words, self.flow_words, self.flow_word)))
        return list(map(by_pair.__getitem__, pairs))

    def values(self, texts: list[str], words: dict[str, object], read: Callable[[str], object]) -> list:
        """The values of words, each not in `words` yet by `read` (which keeps it there), or all of them at once when
        they are of one kind (read_alike)."""
        values = list(map(words.get, texts, repeat(_MISSING)))
        if _MISSING in values:
            new = set(texts).difference(words)
            read_all = self.read_alike(new)
            if read_all is not None:
                if len(new) == len(texts):  # each one of a kind (the cables' labels, the ports' LIDs): not kept
                    return read_all(texts)
                words.update(zip(new, read_all(new)))
                return list(map(words.__getitem__, texts))
            for i, value in enumerate(values):
                if value is _MISSING:
                    value = words.get(texts[i], _MISSING)  # read since
                    values[i] = read(texts[i]) if value is _MISSING else value
        return values

    def read_alike(self, texts: Collection[str]) -> Callable[[Iterable[str]], list] | None:
        """What reads each of `texts` as word() does, if all are names (plain), names in quotes (GUIDs) or decimal
        integers (LIDs), checked on their joined bytes at once: the 49,152 cable labels of a 16,384-endpoint plan, its
        node ports' GUIDs, LIDs and cables, read one by one, were a third of its cables' and nodes' reading. None for
        anything else (each is then read by word())."""
        if "" in texts:
            return None
        joined = "\n".join(texts)
        if not joined.isascii():
            return None
        raw = joined.encode("ascii")
        firsts = set(map(itemgetter(0), texts))
        if firsts <= self.string_first and not raw.translate(None, _SAFE_CHARS + b"\n"):
            return list
        if (
            firsts == {"'"}
            and min(map(len, texts)) > 1
            and all(map(str.endswith, texts, repeat("'")))
            and raw.count(b"'") == 2 * len(texts)  # two each: none inside
            and not raw.translate(None, _SAFE_CHARS + b"'\n")
        ):
            return _unquoted
        if (
            firsts <= _DIGITS
            and max(map(len, texts)) <= _INT_DIGITS
            and not raw.translate(None, b"0123456789\n")
            and (b"\n" + raw).count(b"\n0") == ("0" in texts)  # YAML 1.1 reads a leading 0 as octal
        ):
            return _integers
        return None

    def block_value(self, text: str) -> object:
        """A value on its key's line that is not in block_words: a flow collection, or a word (then kept)."""
        if text[:1] in ("{", "["):
            return self.flow(text)
        return self.word(text, _BLOCK_PLAIN, self.block_words)

    def flow_word(self, text: str) -> object:
        return self.word(text, _FLOW_PLAIN, self.flow_words)

    def flow(self, text: str) -> dict | list:
        """A flow collection of words on one line (its words counted in self.flow_scalars)."""
        words, word, missing, plain = self.flow_words, self.word, _MISSING, _FLOW_PLAIN
        if text[0] == "{":
            if text[-1] != "}":
                raise _NotCanonical
            mapping: dict = {}
            if len(text) == 2:
                return mapping
            try:  # split where the writer separates words: a quoted word holding ', ' or ': ' is cut, and fails
                inner = text[1:-1]
                for pair in inner.split(", ") if len(inner) < _LONG else _split_long(inner):
                    key_text, colon, value_text = pair.partition(": ")
                    key = words.get(key_text, missing)
                    if key is missing:
                        key = word(key_text, plain, words)
                    value = words.get(value_text, missing) if len(value_text) < _LONG else missing
                    if value is missing:
                        value = word(value_text, plain, words)
                    if not colon or key in mapping:
                        raise _NotCanonical
                    mapping[key] = value
            except _NotCanonical:
                mapping = self.quoted_pairs(text[1:-1])
            self.flow_scalars += 2 * len(mapping)
            return mapping
        if text[-1] != "]":
            raise _NotCanonical
        sequence: list = []
        if len(text) > 2:
            try:
                for value_text in text[1:-1].split(", "):
                    value = words.get(value_text, missing)
                    sequence.append(word(value_text, plain, words) if value is missing else value)
            except _NotCanonical:
                sequence = [word(m[1], plain, words) for m in self.matches(_FLOW_ITEM, text[1:-1])]
        self.flow_scalars += len(sequence)
        return sequence

    def quoted_pairs(self, inner: str) -> dict:
        """A flow mapping whose quoted words hold ', ' or ': ' (a sentence in the plan's small sections)."""
        mapping: dict = {}
        for m in self.matches(_FLOW_PAIR, inner):
            key = self.word(m[1], _FLOW_PLAIN, self.flow_words)
            if key in mapping:
                raise _NotCanonical
            mapping[key] = self.word(m[2], _FLOW_PLAIN, self.flow_words)
        return mapping

    @staticmethod
    def matches(pattern: re.Pattern[str], inner: str) -> list[re.Match[str]]:
        found, at = [], 0
        while at < len(inner):
            m = pattern.match(inner, at)
            if m is None:
                raise _NotCanonical
            found.append(m)
            at = m.end()
        return found

    def word(self, text: str, plain: re.Pattern[str], cache: dict[str, object]) -> object:
        """A word's value, kept in `cache`: a single-quoted string, or a plain word resolved as libyaml's events
        resolve it. A long one (a forwarding table) is one of a kind: neither looked up nor kept."""
        if len(text) >= _LONG:
            return self.unseen_word(text, plain)
        value = cache.get(text, _MISSING)
        if value is _MISSING:
            value = cache[text] = self.unseen_word(text, plain)
        return value

    def unseen_word(self, text: str, plain: re.Pattern[str]) -> object:
        value: object
        if text[:1] == "'":
            if len(text) > 1 and text[-1] == "'" and _safe_chars(text[1:-1]):  # a GUID, a hex id: nothing to unquote
                value = text[1:-1]
            elif _QUOTED.fullmatch(text):
                value = text[1:-1].replace("''", "'")
            else:
                raise _NotCanonical
        elif text[:1] in self.string_first and _safe_chars(text):  # a name, a label: plain, and a string
            value = text
        elif not (len(text) >= _LONG and _digits_and_spaces(text) or plain.fullmatch(text)):
            raise _NotCanonical
        elif text[0] not in self.resolved_first:
            value = text
        elif text.isdigit() and text.isascii() and (text[0] != "0" or len(text) == 1) and len(text) <= _INT_DIGITS:
            value = int(text)  # a decimal integer (a LID, a port): YAML 1.1 reads a leading 0 as octal
        else:
            try:
                value = _plain_value(self.loader, text, None)
            except _Refused:
                raise _NotCanonical from None  # a timestamp that does not exist: refused by the events, located
            if value is _MERGE:
                raise _NotCanonical
        return value


def _repeats(texts: list[str]) -> bool:
    """Whether the first texts of a column repeat: a column of names or addresses (a cable's label, a port's GUID) is
    not hashed as a whole to find out."""
    head = texts[:256]
    return len(set(head)) * 2 <= len(head)


def _mappings(keys: list, columns: list[list]) -> list[dict]:
    """A mapping of `keys` per row of the columns; of two keys (a cable's end) built by a dict display, which took half
    the time of dict(zip(...)) for the 98,304 cable ends of a 16,384-endpoint plan."""
    if len(keys) == 2:
        first, second = keys
        return [{first: a, second: b} for a, b in zip(*columns)]
    return [dict(zip(keys, row)) for row in zip(*columns)]


def _split_long(inner: str) -> list[str]:
    """inner.split(", ") of a long flow mapping (a forwarding table's 53 KB line), by its commas: str.split(", ")
    looks for the space first, every other character of a table, and took 3 times as long."""
    pieces = inner.split(",")
    rest = pieces[1:]
    if all(piece[:1] == " " for piece in rest):
        return [pieces[0], *[piece[1:] for piece in rest]]
    return inner.split(", ")


def _after(prefix: str, lines: list[str]) -> list[str]:
    """What follows `prefix` on each line, up to the first line without it."""
    starts = list(map(str.startswith, lines, repeat(prefix)))
    if not all(starts):
        del lines[starts.index(False) :]
    return list(map(itemgetter(slice(len(prefix), None)), lines))


_SAFE_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./-"


def _safe_chars(text: str) -> bool:
    """Whether a text holds only A-Z a-z 0-9 _ . / - (names, labels, GUIDs): a plain word of them that starts with a
    letter no resolver takes, '_' or '/', is a string in every context, and a quoted one has nothing to unquote. A
    translate of its bytes tells it 3 times faster than _FLOW_PLAIN or _QUOTED (most of a plan's distinct words)."""
    return text.isascii() and not text.encode("ascii").translate(None, _SAFE_CHARS)


def _digits_and_spaces(text: str) -> bool:
    """Whether a word is port numbers (an LFT): plain in every context, checked 3 times faster than by
    _FLOW_PLAIN (68 MB of them in a 16,384-endpoint plan)."""
    return (
        text.isascii()
        and text[0] != " "
        and text[-1] != " "
        and not text.encode("ascii").translate(None, b"0123456789 ")
    )


_MISSING = object()
_LONG = 1000  # characters of a word or a flow collection that is a forwarding table's, not a name's
_DIGITS = frozenset(string.digits)
# a plan's integers (LIDs, ports, counts) are far shorter; a longer one is read by libyaml's constructor, whose refusal
# of what int() cannot read (over 4,300 digits) is located
_INT_DIGITS = 18


def _unquoted(texts: Iterable[str]) -> list[str]:
    return list(map(itemgetter(slice(1, -1)), texts))


def _integers(texts: Iterable[str]) -> list[int]:
    return list(map(int, texts))


def _build_from_events(text: str) -> tuple[object, bool]:
    """(the data, whether the text holds YAML that ffplan never writes, whose data is then not the plan's)."""
    loader = _PlanLoader("")  # its resolver and scalar constructors only
    plain: dict[str, object] = {}  # plain scalar text -> its value
    anchors: dict[str, object] = {}
    sizes: dict[str, int] = {}  # anchor -> nodes of its value, aliases inside expanded
    unusual = False
    no_key: Any = anchors  # a sentinel no key can equal
    root: list[object] = []
    stack: list[
        tuple[Any, Any, int, Any]
    ] = []  # (collection, pending key, nodes before it, its anchor) of each open one
    container: Any = None  # the open collection; None at the document's top
    key: Any = no_key  # in a mapping, its key waiting for a value
    nodes = 0  # nodes so far, each alias counted as the nodes it stands for
    scalar_event, map_start, seq_start = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent
    map_end, seq_end, alias_event = yaml.MappingEndEvent, yaml.SequenceEndEvent, yaml.AliasEvent
    parser = _Loader(text)
    next_event: Callable[[], Any] = parser.get_event  # libyaml's parser, one call per event (yaml.parse adds two)
    stream_end = yaml.StreamEndEvent
    try:
        while True:  # the loop runs once per scalar of the plan: kept flat (no calls, no isinstance)
            event = next_event()
            kind = event.__class__
            if kind is stream_end:
                break
            if kind is scalar_event:
                nodes += 1
                tag = event.tag
                if tag is None or tag == "!":
                    if event.implicit[0]:
                        value = plain.get(event.value, no_key)
                        if value is no_key:
                            value = _plain_value(loader, event.value, event.start_mark)
                            if value is _MERGE:
                                unusual, value = True, object()  # not cached: each merge key is unusual
                            else:
                                plain[event.value] = value
                    else:
                        value = event.value  # quoted, or tagged `!`: a string
                else:
                    value = _scalar_value(
                        yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
                    )
                if event.anchor is not None:
                    anchors[event.anchor], sizes[event.anchor] = value, 1
            elif kind is map_start or kind is seq_start:
                nodes += 1
                if event.tag is not None and event.tag != "!":
                    unusual = True
                if len(stack) >= MAX_PLAN_DEPTH:
                    raise _Refused(
                        event.start_mark,
                        f"the plan nests deeper than {MAX_PLAN_DEPTH} levels (a designed plan: 6)",
                        "the plan was edited or generated wrongly; re-run `ffplan design`",
                    )
                value = {} if kind is map_start else []
                if event.anchor is not None:
                    anchors[event.anchor] = value  # its size when it ends: an alias to it before then is a cycle
            elif kind is map_end or kind is seq_end:
                container, key, before, anchor = stack.pop()
                if anchor is not None:
                    sizes[anchor] = nodes - before + 1
                continue
            elif kind is alias_event:
                if event.anchor not in anchors:
                    unusual, value = True, None  # the full loader reports the undefined alias
                elif event.anchor not in sizes:
                    raise _Refused(
                        event.start_mark,
                        f"alias *{event.anchor} refers to a collection that contains it",
                        "a plan is a tree: remove the alias",
                    )
                else:
                    value = anchors[event.anchor]
                    nodes += sizes[event.anchor]
            else:
                if kind is yaml.DocumentStartEvent and root:
                    unusual = True  # a second document: the full loader refuses it
                continue
            if nodes > MAX_PLAN_NODES:
                raise _Refused(
                    event.start_mark,
                    f"the plan expands to more than {MAX_PLAN_NODES:,} YAML nodes"
                    f"{' at this alias' if kind is alias_event else ''} (the largest designed plan has "
                    f"{LARGEST_PLAN_NODES:,})",
                    "the plan was edited or generated wrongly; re-run `ffplan design`",
                )
            if container is None:
                root.append(value)
            elif container.__class__ is list:
                container.append(value)
            elif key is no_key:
                if value.__class__ is dict or value.__class__ is list:
                    unusual, key = True, object()  # a collection as a key
                elif value in container:
                    raise _DuplicateKey
                else:
                    key = value
            else:
                container[key] = value
                key = no_key
            if kind is map_start or kind is seq_start:
                stack.append((container, key, nodes, event.anchor))
                container, key = value, no_key
    finally:
        parser.dispose()
    return (root[0] if root else None), unusual


_MERGE = object()  # a plain `<<`: a merge key, YAML ffplan never writes


def _plain_value(loader: _PlanLoader, text: str, mark: Any) -> object:
    """A plain scalar's value (a plain `2001-02-30` is a timestamp that does not exist: refused, located)."""
    tag = loader.resolve(yaml.ScalarNode, text, (True, False))
    if tag == _MERGE_TAG:
        return _MERGE
    return text if tag == _STR_TAG else _scalar_value(yaml.ScalarNode(tag, text, mark, mark))


def load_plan(path: Path | str, needs: tuple[str, ...] = ()) -> Plan:
    """read_plan's plan."""
    return read_plan(path, needs)[0]


def read_plan(path: Path | str, needs: tuple[str, ...] = ()) -> tuple[Plan, str]:
    """Read and validate a plan, and return it with the text it was read from: its schema (every string against a safe pattern, every number in range) and
    its cross-references (ffplan.plan.check). Anything else is refused (InputError, exit 2), each problem
    with the plan's file:line:col and YAML path, so no later stage sees a plan it cannot trust.

    `needs`: the optional sections (routing, qos, hosts; absent in plans of older ffplan) the caller cannot
    do without. Plans are large (routing tables), so they are read by _read_yaml (ffplan's own form a line at a
    time, any other YAML from libyaml's events); only a refused plan is read again through the inventory
    reader's position tracking, to locate its problems.
    """
    with _no_cyclic_gc():
        text = read_text(Path(path), MAX_PLAN_BYTES, PLAN_SIZE_HINT)
        return _parse_plan(Collector(str(path)), text, needs), text


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Reading a plan builds millions of objects (a dict, list or model per YAML collection) and no reference cycle:
    the cyclic collector finds nothing, but ran again and again over the growing heap (1.1 s of a 16,384-endpoint
    plan's 2.1 s of validation). Reference counting still frees everything; the collector runs again afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _parse_plan(c: Collector, text: str, needs: tuple[str, ...]) -> Plan:
    try:
        data = _read_yaml(text)
    except _DuplicateKey:
        raise _refuse(c, text, []) from None
    except _Refused as exc:
        c.positions[()] = exc.position
        c.error(NOT_A_PLAN, (), f"plan is not valid YAML: {exc.message}", exc.hint)
        raise InputError(c.items) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            c.positions[()] = (mark.line + 1, mark.column + 1)
        problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
        c.error(
            NOT_A_PLAN,
            (),
            f"plan is not valid YAML: {problem}",
            "the plan is truncated or was edited; re-run `ffplan design`",
        )
        raise InputError(c.items) from None
    if not isinstance(data, dict) or "plan_version" not in data:
        c.error(NOT_A_PLAN, (), "not an ffplan plan (no plan_version)", "pass the plan.yaml written by `ffplan design`")
        raise InputError(c.items)
    if data["plan_version"] != PLAN_VERSION:
        c.error(
            UNSUPPORTED_PLAN_VERSION,
            ("plan_version",),
            f"plan version {data['plan_version']!r} is not supported (this ffplan reads {PLAN_VERSION})",
            "re-run `ffplan design` with this version of ffplan",
        )
        raise InputError(c.items)
    try:
        plan = Plan.model_validate(data)
    except ValidationError as exc:
        problems = _schema_problems(exc, data)
    else:
        problems = plan_problems(plan)
        problems += [
            ((name,), f"the plan has no {name} section (written by an older ffplan?)")
            for name in needs
            if getattr(plan, name) is None and not (plan.ethernet is not None and name in INFINIBAND_SECTIONS)
        ]
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
        if (
            isinstance(data, dict)
            and part in data
            or isinstance(data, list)
            and isinstance(part, int)
            and 0 <= part < len(data)
        ):
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
    _Builder(c, MAX_PLAN_NODES).build(root, ())
    for path, message in problems[:MAX_SHOWN_PROBLEMS]:
        c.error(
            PLAN_SCHEMA_MISMATCH,
            path,
            f"invalid plan: {message}",
            "the plan was edited or is damaged; re-run `ffplan design`",
        )
    if len(problems) > MAX_SHOWN_PROBLEMS:
        c.error(
            PLAN_SCHEMA_MISMATCH,
            (),
            f"invalid plan: {len(problems):,} problems, the first {MAX_SHOWN_PROBLEMS} shown",
            "",
        )
    return InputError(c.items)
