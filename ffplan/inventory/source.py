"""Read a YAML file into plain data plus a map from YAML path to (line, col).

PyYAML's constructor silently keeps the last of two equal keys and expands aliases without limit, so we
compose the node graph ourselves: duplicate keys become diagnostics, and a document that expands past a
node budget (a "billion laughs" bomb) or a file past a size limit is refused before it is built.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import yaml

from ffplan.codes.inventory import BAD_VALUE, DUPLICATE_KEY, UNREADABLE_INPUT, YAML_SYNTAX
from ffplan.diagnostics import NO_POSITION, Collector, InputError, YamlPath

try:  # libyaml's parser is ~10x faster; the pure-Python one gives identical nodes.
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

FastLoader = _Loader  # for other readers of YAML text (lint's comment and top-level-key scans)
MAX_FILE_BYTES = 8 * 1024 * 1024
STDIN_NAME = "<stdin>"  # how findings name standard input
MAX_NODES = 2_000_000
MAX_DEPTH = 64  # an inventory needs about eight levels; deeper nesting only exhausts the stack


@dataclass
class Source:
    """A loaded YAML document: its data, where each path sits in the file, and load-time findings."""

    file: str
    data: Any
    positions: dict[YamlPath, tuple[int, int]]
    text: str
    collector: Collector


def _refuse(file: str, message: str, hint: str, line: int = 0, col: int = 0) -> InputError:
    """An unreadable file; without a line (missing, too large) the finding is about the whole file."""
    c = Collector(file)
    c.positions[()] = (line, col)
    c.error(UNREADABLE_INPUT, (), message, hint)
    return InputError(c.items)


SIZE_HINT = "an inventory this large is almost certainly not one; split generated host lists into groups with count and hostname patterns"


def read_text(path: Path, limit: int = MAX_FILE_BYTES, hint: str = SIZE_HINT) -> str:
    """The file's text, refusing anything but a regular file and reading at most `limit` bytes: a FIFO
    would block, and /dev/zero (or a file growing while read) would never end."""
    shown = str(path)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; it changes nothing for a regular file.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise _refuse(shown, f"no such file: {shown}", "check the path") from None
    except OSError as exc:
        raise _refuse(shown, f"cannot read {shown}: {exc.strerror}", "check the path and its permissions") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise _refuse(
                shown,
                f"{shown} is a folder",
                "name a YAML file, e.g. an inventory in it (a design folder's plan.yaml is read by render, report, analyze, verify)",
            )
        if not stat.S_ISREG(info.st_mode):
            raise _refuse(
                shown, f"{shown} is not a regular file", "point ffplan at a plain file (not a FIFO, device or socket)"
            )
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read(limit + 1)
    except OSError as exc:
        raise _refuse(shown, f"cannot read {shown}: {exc.strerror}", "check the path and its permissions") from None
    finally:
        os.close(fd)
    if len(raw) > limit:
        raise _refuse(
            shown,
            f"file is {max(info.st_size, len(raw)):,} bytes, over the {limit:,}-byte limit",
            hint,
        )
    return _decode(raw, shown)


def read_stream(stream: BinaryIO, shown: str = STDIN_NAME, limit: int = MAX_FILE_BYTES) -> str:
    """Standard input (`ffplan lint -`), with the same size limit and encoding as a file."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise _refuse(
            shown, f"input is over the {limit:,}-byte limit", "an inventory this large is almost certainly not one"
        )
    return _decode(data, shown)


def _decode(data: bytes, shown: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = data.count(b"\n", 0, exc.start) + 1, exc.start - data.rfind(b"\n", 0, exc.start)
        raise _refuse(
            shown, f"file is not UTF-8 text (byte {exc.start})", "save the inventory as UTF-8", line, col
        ) from None


class _Builder:
    def __init__(self, collector: Collector, max_nodes: int = MAX_NODES):
        self.collector = collector
        self.positions = collector.positions
        self.visited = 0
        self.max_nodes = max_nodes

    def build(self, node: yaml.Node, path: YamlPath) -> Any:
        self.visited += 1
        if self.visited > self.max_nodes:
            raise _refuse(
                self.collector.file,
                f"document expands to more than {self.max_nodes:,} nodes (alias expansion bomb?)",
                "remove deeply nested aliases",
                node.start_mark.line + 1,
                node.start_mark.column + 1,
            )
        self.positions.setdefault(path, (node.start_mark.line + 1, node.start_mark.column + 1))
        if isinstance(node, yaml.MappingNode):
            if node.tag not in _MAPPING_TAGS:
                return self._bad_tag(node, path)
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            if node.tag != "tag:yaml.org,2002:seq":
                return self._bad_tag(node, path)
            return [self.build(child, path + (i,)) for i, child in enumerate(node.value)]
        assert isinstance(node, yaml.ScalarNode), "the composer makes mapping, sequence and scalar nodes only"
        return self._scalar(node, path)

    def _scalar(self, node: yaml.ScalarNode, path: YamlPath) -> Any:
        # Plain scalars carry the tag the resolver gave them; only an explicit tag can be unknown or a
        # collection's (`!!omap x`, whose constructor is a generator).
        if node.tag not in _SCALAR_TAGS:
            return self._bad_tag(node, path)
        try:
            return construct_scalar(node)
        except BadTaggedValue:
            return self._bad_tag(node, path)

    def _bad_tag(self, node: yaml.Node, path: YamlPath) -> Any:
        """A finding at the node's place; the text itself stands in, so the rest of the file is still checked."""
        tag = node.tag.removeprefix("tag:yaml.org,2002:")
        shown = (
            f"'{node.value}'"
            if isinstance(node, yaml.ScalarNode)
            else "this " + ("mapping" if isinstance(node, yaml.MappingNode) else "list")
        )
        self.positions.setdefault(path, (node.start_mark.line + 1, node.start_mark.column + 1))
        self.collector.error(
            BAD_VALUE,
            path,
            f"{shown} is not a valid !!{tag}" if tag != node.tag else f"{shown} has the unknown tag {tag}",
            f"remove the {'!!' + tag if tag != node.tag else tag} tag"
            + (f" or write a valid {tag}" if tag != node.tag else ""),
        )
        return node.value if isinstance(node, yaml.ScalarNode) else None

    def _mapping(self, node: yaml.MappingNode, path: YamlPath) -> dict:
        out: dict = {}
        seen: dict = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                merged = self.build(value_node, path)
                if not all(isinstance(part, dict) for part in (merged if isinstance(merged, list) else [merged])):
                    self.positions.setdefault(
                        path + ("<<",), (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
                    )
                    self.collector.error(
                        BAD_VALUE,
                        path + ("<<",),
                        "'<<' merges a mapping or a list of mappings",
                        "merge an alias of a mapping: <<: *defaults",
                    )
                for part in merged if isinstance(merged, list) else [merged]:
                    if isinstance(part, dict):
                        for k, v in part.items():
                            out.setdefault(k, v)
                continue
            if not isinstance(key_node, yaml.ScalarNode):  # `? [a, b]`: no inventory key is a list or mapping
                self.positions[path] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
                self.collector.error(BAD_VALUE, path, "a key here is a list or mapping", "write a plain key: value")
                continue
            key = self._scalar(key_node, path + (str(key_node.value),))
            if not isinstance(key, (str, int)):
                key = str(key)
            key_line, key_col = key_node.start_mark.line + 1, key_node.start_mark.column + 1
            if key in seen:
                first_line = seen[key]
                self.positions[path + (key,)] = (key_line, key_col)
                self.collector.error(
                    DUPLICATE_KEY,
                    path + (key,),
                    f"duplicate key '{key}' (first defined on line {first_line}); YAML would silently keep only the last one",
                    "remove or rename one of the two keys",
                )
            seen[key] = key_line
            self.positions[path + (key,)] = (key_line, key_col)
            out[key] = self.build(value_node, path + (key,))
            self.positions[path + (key,)] = (key_line, key_col)
        return out


_SCALAR_LOADER = yaml.SafeLoader("")
# What PyYAML's scalar constructors raise on text that does not fit an explicit tag: `!!int abc` (ValueError),
# `!!timestamp x` (AttributeError: no regex match), `!!int ''` and `!!float ''` (IndexError), `!!bool 2` (KeyError).
_CONSTRUCTOR_ERRORS = (ValueError, KeyError, TypeError, OverflowError, AttributeError, IndexError, yaml.YAMLError)


class BadTaggedValue(ValueError):
    """A scalar whose explicit tag its text does not fit, or a tag no scalar can have."""


def construct_scalar(node: yaml.ScalarNode) -> Any:
    """The value of a scalar of a known scalar tag (as the resolver tags plain scalars, or written explicitly)."""
    constructor = yaml.SafeLoader.yaml_constructors.get(node.tag) if node.tag in _SCALAR_TAGS else None
    if constructor is None:
        raise BadTaggedValue(node.tag)
    try:
        return constructor(_SCALAR_LOADER, node)
    except _CONSTRUCTOR_ERRORS:
        raise BadTaggedValue(node.tag) from None


_MAPPING_TAGS = {"tag:yaml.org,2002:map", "tag:yaml.org,2002:set"}  # a set is a mapping of keys to null
_SCALAR_TAGS = {f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float", "binary", "timestamp", "str")}


def _measure(node: yaml.Node, depth: int, memo: dict, file: str) -> tuple[int, int]:
    """(nodes, height) of `node` with aliases expanded, memoized per node: a bomb is measured in the
    time its text takes, not its expansion. Refuses cycles and nesting past MAX_DEPTH."""

    def refuse(message: str, hint: str) -> InputError:
        return _refuse(file, message, hint, node.start_mark.line + 1, node.start_mark.column + 1)

    key = id(node)
    if key in memo and memo[key] is None:
        raise refuse(
            "an alias refers to a node that contains it (a self-referencing structure)", "remove the recursive alias"
        )
    if key not in memo:
        if depth > MAX_DEPTH:
            raise refuse(
                f"document nests deeper than {MAX_DEPTH} levels",
                "an inventory needs only a few levels; look for runaway brackets",
            )
        memo[key] = None  # in progress
        if isinstance(node, yaml.MappingNode):
            children = [child for pair in node.value for child in pair]
        else:
            children = node.value if isinstance(node, yaml.SequenceNode) else []
        measured = [_measure(child, depth + 1, memo, file) for child in children]
        memo[key] = (1 + sum(n for n, _ in measured), 1 + max((h for _, h in measured), default=0))
    nodes, height = memo[key]
    if depth + height > MAX_DEPTH:
        raise refuse(
            f"document nests deeper than {MAX_DEPTH} levels",
            "an inventory needs only a few levels; look for runaway brackets",
        )
    if nodes > MAX_NODES:
        raise refuse(
            f"document expands to more than {MAX_NODES:,} nodes (alias expansion bomb?)", "remove deeply nested aliases"
        )
    return nodes, height


def load_source(path: Path | str, text: str | None = None) -> Source:
    """Parse a YAML file (or `text` read from elsewhere, named `path` in findings). Raises InputError (exit 2)
    when the file cannot be read or parsed at all."""
    path = Path(path)
    shown = str(path)
    if text is None:
        text = read_text(path)
    collector = Collector(shown)
    try:
        loader = _Loader(text)
        try:
            root = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else NO_POSITION
        collector.positions[()] = (line, col)
        collector.error(
            YAML_SYNTAX,
            (),
            f"YAML syntax error: {exc.problem or exc.context}",
            "check indentation and quoting around this position",
        )
        raise InputError(collector.items) from None
    except yaml.reader.ReaderError as exc:  # a control character: located by its offset in the text
        line = text.count("\n", 0, exc.position) + 1
        col = exc.position - text.rfind("\n", 0, exc.position)
        raise _refuse(
            shown,
            f"character #x{exc.character:04x} is not allowed in YAML",
            "remove control characters from the file",
            line,
            col,
        ) from None
    except yaml.YAMLError as exc:
        raise _refuse(shown, f"YAML error: {' '.join(str(exc).split())}", "check the file is a YAML mapping") from None
    if root is None:
        data: Any = None
    else:
        _measure(root, 0, {}, shown)
        data = _Builder(collector).build(root, ())
    return Source(file=shown, data=data, positions=collector.positions, text=text, collector=collector)
