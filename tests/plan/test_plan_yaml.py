"""plan.yaml is read from libyaml's events and written by ffplan's own writer: both must agree with PyYAML exactly
(the reader on every YAML, the writer on every plan-shaped document)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ffplan.plan.io import (
    _YAML_STYLE,
    HEADER,
    _CanonicalReader,
    _Dumper,
    _DuplicateKey,
    _PlanLoader,
    _PlanWriter,
    _read_yaml,
    _Refused,
    _split_long,
    _Unusual,
)
from ffplan.plan.model import Plan

GOLDEN_PLANS = sorted((Path(__file__).resolve().parents[1] / "golden" / "expected").glob("*/plan.yaml"))

CASES = [
    "",
    "a: 1",
    "a: &x [1, 2]\nb: *x",
    "a: &x {k: 1}\nb:\n  <<: *x\n  c: 2",
    "a: !!str 12",
    "a: !!int '12'",
    "a: '12'\nb: 12\nc: 1.5\nd: null\ne: ~\nf: true\ng: 2024-01-01\nh: 0x1f\ni: ''\nj: .inf\nk: '0x0002c90003000000'",
    "- a\n- b: [1, {c: d}]",
    "a: 1\n---\nb: 2",
    "? [1]\n: 2",
    "a: *y",
    "a: !!int abc",
    "&r x",
    "a: 1\na: 2",
    "x: {a: 1, a: 2}",
    "!!map {a: 1}",
    "a: !foo x",
    "ports: '1 2 3 0 255'\nlid: 0x10",
    "a: [1, 1, 1]\nb: [yes, no, on]",
    # tags PyYAML's constructors crash on (AttributeError, IndexError): refused, located, by both readers
    "a: !!timestamp x",
    "a: !!timestamp ''",
    "a: !!int ''",
    "a: !!float ''",
    "a: !!int :1:2",
    "a: 2001-02-30",
    "a: &x [1, {b: !!int ''}]\nb: !!map {c: *x}",
]


def _outcome(read, text: str) -> tuple:
    try:
        return ("value", read(text))
    except _DuplicateKey:
        return ("duplicate key",)
    except _Refused as exc:
        return ("refused", exc.position, exc.message)
    except (yaml.YAMLError, ValueError) as exc:
        return ("error", type(exc).__name__)


@pytest.mark.parametrize("text", CASES)
def test_reads_as_pyyaml_does(text: str) -> None:
    assert _outcome(_read_yaml, text) == _outcome(lambda t: yaml.load(t, Loader=_PlanLoader), text)


@pytest.mark.parametrize("plan", GOLDEN_PLANS, ids=lambda p: p.parent.name)
def test_reads_a_designed_plan_as_pyyaml_does(plan: Path) -> None:
    text = plan.read_text()
    assert _read_yaml(text) == yaml.load(text, Loader=_PlanLoader)


def _pyyaml(data: dict) -> str:
    return yaml.dump(data, Dumper=_Dumper, default_flow_style=None, **_YAML_STYLE)


@pytest.mark.parametrize("plan", GOLDEN_PLANS, ids=lambda p: p.parent.name)
def test_writes_a_designed_plan_as_pyyaml_does(plan: Path) -> None:
    data = _read_yaml(plan.read_text())
    assert _PlanWriter().document(data) == _pyyaml(data) == plan.read_text().split("\n", 1)[1]


WORDS = st.sampled_from(
    [
        "",
        "a",
        "yes",
        "No",
        "null",
        "~",
        "0x1f",
        "12",
        "1.5",
        "-",
        "- a",
        "a: b",
        "a:b",
        "#c",
        "a #c",
        "[x]",
        "{y}",
        "a, b",
        "'q'",
        '"q"',
        "é",
        "tab\there",
        "line\nbreak",
        " lead",
        "trail ",
        "2024-01-01",
        "z1-leaf01",
        "0 1 2 255",
        "DAC 2m",
        "0000:41:00.0",
        "*ref",
        "&anchor",
        "!tag",
        "%p",
        "@at",
        "x" * 130,
        # plain-safe words that read back as no string (quoted by PyYAML): YAML 1.1 ints, floats, bools, nulls
        "0x0002c90101000001",
        "1_000",
        "0b101",
        "0o17",
        "017",
        "1e3",
        "1.0e+3",
        "On",
        "OFF",
        "NULL",
        "Null",
        "TRUE",
        "2024-01-01 10:00:00",
    ]
)
SCALARS = st.one_of(
    WORDS, st.text(max_size=8), st.integers(-(10**12), 10**12), st.floats(allow_nan=False), st.booleans(), st.none()
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.one_of(WORDS, st.text(max_size=6)), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.one_of(WORDS, st.text(min_size=1, max_size=6)), VALUES, min_size=1, max_size=5))
@example({"": None, "a": {"": 0.0, "a": -0.0}})  # found by Hypothesis: -0.0 took 0.0's cached spelling
def test_writes_any_plan_shaped_document_as_pyyaml_does(data: dict) -> None:
    try:
        written = _PlanWriter().document(data)
    except _Unusual:
        return  # dump_plan leaves it to PyYAML
    assert written == _pyyaml(data)


@pytest.mark.parametrize(
    "word",
    [
        "10.1.0.59/31",
        "10.0.0.1",
        "1.2.3",
        "1.5e3.2",
        "1:2:3.4.5",
        "2001-01-01 01:01:01.5.5",
        ".inf.",
        ".nan/",
        "/",
        "a/b",
        "0x1.2.3",
        "1_000.0.1",
        "yes/no",
        "null/",
        "~/x",
        "=/",
    ],
)
def test_words_the_writer_never_resolves_read_back_as_strings(word):
    """The writer's shortcut (a '/' or two dots: always a string) agrees with PyYAML's own resolver."""
    from ffplan.plan.io import _PlanLoader, _always_str

    assert _always_str(word)
    assert _PlanLoader("").resolve(yaml.ScalarNode, word, (True, False)) == "tag:yaml.org,2002:str"


# ---------------------------------------------------------------- the canonical reader (ffplan.plan.io)


def _typed(data: object) -> object:
    """The data with every scalar's type beside it: 1, 1.0 and True are equal in Python, not in a plan."""
    if isinstance(data, dict):
        return [(_typed(k), _typed(v)) for k, v in data.items()]
    if isinstance(data, list):
        return [_typed(v) for v in data]
    return (type(data).__name__, data)


def _libyaml(text: str) -> object:
    return _typed(yaml.load(text, Loader=_PlanLoader))


def _events(text: str) -> int:
    """The nodes the events reader counts against MAX_PLAN_NODES (no aliases here)."""
    kinds = (yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent)
    return sum(isinstance(e, kinds) for e in yaml.parse(text, Loader=_PlanLoader))


@pytest.mark.parametrize("plan", GOLDEN_PLANS, ids=lambda p: p.parent.name)
def test_the_canonical_reader_reads_a_designed_plan_as_libyaml_does(plan: Path) -> None:
    text = plan.read_text()
    reader = _CanonicalReader()
    data = reader.read(text)
    assert data is not None, "a designed plan is canonical: the fast reader must not fall back"
    assert _typed(data) == _libyaml(text)
    assert reader.nodes == _events(text)


CANONICAL_WORDS = st.sampled_from(
    [
        "a",
        "z1-leaf001",
        "z1-leaf001-p01",
        "mlx5_0",
        "DAC 2m",
        "0 1 2 255",
        "255 " * 300 + "0",  # an LFT long enough for the digits-and-spaces shortcut
        "1 2  3",
        "switch's port",
        "default: the guide's 1 GiB/s",
        "a, b",
        "x: y, z",
        "0-15,64-79",
        "0000:41:00.0",
        "10.1.0.59/31",
        "list-price (USD)",
        "channel dependency graph",
        "every route from a CA port (to every LID); VL15",
        "a#b",
        "a=b",
        "~/x",
        "-1x",
        ".a",
        "(x)",
        "x]",
        "it's",
        "''",
        "'",
        '"x"',
    ]
)


def _documents(words: st.SearchStrategy, keys: st.SearchStrategy) -> st.SearchStrategy:
    scalars = st.one_of(words, st.integers(-(10**12), 10**12), st.floats(allow_nan=False), st.booleans(), st.none())
    values = st.recursive(
        scalars,
        lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
        max_leaves=16,
    )
    # a plan's top level holds collections of collections (the writer leaves a flat document to PyYAML)
    return st.tuples(st.dictionaries(keys, values, max_size=5), values).map(
        lambda t: {**t[0], "switches": [{"name": "s1", "value": t[1]}]}
    )


def _runs(words: st.SearchStrategy, keys: st.SearchStrategy) -> st.SearchStrategy:
    """Documents with sequences of mappings of one key set (a plan's cables, racks and tables, which the reader
    reads a key at a time), each value a scalar, or a flow mapping of one key set too (a cable's end); now and then an
    item with a key less, one more, or one in another place, or a block value."""
    scalars = st.one_of(words, st.integers(-(10**6), 10**6), st.floats(allow_nan=False), st.booleans(), st.none())

    @st.composite
    def run(draw: st.DrawFn) -> list:
        item_keys = draw(st.lists(keys, min_size=1, max_size=4, unique=True))
        end_keys = draw(st.lists(keys, min_size=1, max_size=3, unique=True))
        value = st.one_of(scalars, st.tuples(*[scalars] * len(end_keys)).map(lambda v: dict(zip(end_keys, v))))
        items = draw(st.lists(st.tuples(*[value] * len(item_keys)).map(lambda v: dict(zip(item_keys, v))), min_size=2))
        for item in draw(st.lists(st.sampled_from(items), max_size=2)) if draw(st.booleans()) else ():
            item[draw(keys)] = draw(st.one_of(value, st.lists(scalars, max_size=2), st.just({"k": [1, {"x": 2}]})))
            if draw(st.booleans()):
                del item[next(iter(item))]
        return items

    return st.dictionaries(keys, run(), min_size=1, max_size=2)


def _listed_runs(words: st.SearchStrategy, keys: st.SearchStrategy) -> st.SearchStrategy:
    """Documents with sequences of mappings whose last key holds a block sequence of flow mappings (a plan's nodes and
    their ports), which the reader reads a key at a time over the items; now and then an item with a port more or
    less, one not a flow mapping, or a key after the sequence."""
    scalars = st.one_of(words, st.integers(-(10**6), 10**6), st.booleans(), st.none())

    @st.composite
    def run(draw: st.DrawFn) -> list:
        item_keys = draw(st.lists(keys, min_size=2, max_size=4, unique=True))
        port_keys = draw(st.lists(keys, min_size=1, max_size=3, unique=True))
        port = st.tuples(*[scalars] * len(port_keys)).map(lambda v: dict(zip(port_keys, v)))
        ports = draw(st.integers(1, 3))
        items = [
            {**dict(zip(item_keys[:-1], draw(st.tuples(*[scalars] * (len(item_keys) - 1))))), item_keys[-1]: value}
            for value in draw(st.lists(st.lists(port, min_size=ports, max_size=ports), min_size=2))
        ]
        for item in draw(st.lists(st.sampled_from(items), max_size=2)) if draw(st.booleans()) else ():
            edit, listed = draw(st.sampled_from(["more", "fewer", "scalar", "key after"])), item[item_keys[-1]]
            if edit == "more":
                listed.append(draw(port))
            elif edit == "fewer" and len(listed) > 1:
                listed.pop()
            elif edit == "scalar":
                listed.append(draw(scalars))
            elif edit == "key after":
                key = draw(keys)
                if key not in item:
                    item[key] = draw(scalars)
        return items

    return st.dictionaries(keys, run(), min_size=1, max_size=2)


# any word: some the writer leaves to PyYAML
PLAN_DOCUMENTS = _documents(st.one_of(CANONICAL_WORDS, WORDS), st.one_of(CANONICAL_WORDS, WORDS))
# words a designed plan holds (an LFT is never a key: PyYAML writes a key of 128 characters or more as `? key`)
CANONICAL_KEYS = CANONICAL_WORDS.filter(lambda w: len(w) < 128)
PLAIN_KEYS = st.sampled_from(["label", "a", "b", "port", "z1-leaf001"])
CANONICAL_DOCUMENTS = st.one_of(
    _documents(CANONICAL_WORDS, CANONICAL_KEYS),
    _runs(CANONICAL_WORDS, st.one_of(PLAIN_KEYS, PLAIN_KEYS, PLAIN_KEYS, CANONICAL_KEYS)),
    _listed_runs(CANONICAL_WORDS, st.one_of(PLAIN_KEYS, PLAIN_KEYS, PLAIN_KEYS, CANONICAL_KEYS)),
)


def _written(data: dict) -> str | None:
    try:
        return HEADER + _PlanWriter().document(data)
    except _Unusual:
        return None  # dump_plan leaves it to PyYAML, whose text the reader need not know


@settings(max_examples=400, deadline=None)
@given(st.one_of(PLAN_DOCUMENTS, CANONICAL_DOCUMENTS))
def test_the_canonical_reader_reads_what_the_writer_writes_as_libyaml_does(data: dict) -> None:
    text = _written(data)
    if text is None:
        return
    reader = _CanonicalReader()
    read = reader.read(text)
    if read is None:  # only words in double quotes (a tab, a line break, not ASCII), ' #' or long keys (`? `) fall back
        assert '"' in text or " #" in text or "? " in text, text
        return
    assert _typed(read) == _libyaml(text)
    assert reader.nodes == _events(text)


MUTATIONS = st.sampled_from(
    [
        " ",
        "  ",
        "- ",
        ": ",
        ":",
        ",",
        ", ",
        "'",
        '"',
        "#",
        " #",
        "\n",
        "\n  ",
        "{",
        "}",
        "[",
        "]",
        "&a ",
        "*a",
        "!!int ",
        "!",
        "? ",
        "|",
        ">",
        "---\n",
        "...\n",
        "\t",
        "\r",
        "~",
        "",
        "a",
        "1",
        "<<: ",
        "%",
        "@",
        "`",
        "=",
        "\u2028",
        "\x85",
        "é",
        "\ufeff",
    ]
)


@settings(max_examples=600, deadline=None)
@given(CANONICAL_DOCUMENTS, st.lists(st.tuples(st.floats(0, 1), st.integers(0, 3), MUTATIONS), min_size=1, max_size=3))
def test_the_canonical_reader_gives_libyaml_data_or_falls_back(data: dict, edits: list) -> None:
    """On bytes the writer never writes (an edit anywhere), the reader returns libyaml's data or nothing: never other
    data, and nothing where libyaml refuses."""
    text = _written(data)
    if text is None:
        return
    assert _CanonicalReader().read(text) is not None
    for where, cut, insert in edits:
        at = len(HEADER) + int(where * (len(text) - len(HEADER)))
        text = text[:at] + insert + text[at + cut :]
    read = _CanonicalReader().read(text)
    try:
        expected = _libyaml(text)
    except (yaml.YAMLError, _DuplicateKey, _Refused, ValueError, TypeError):
        assert read is None
        return
    assert read is None or _typed(read) == expected


@pytest.mark.parametrize(
    "body",
    [
        "a: 1\na: 2\n",  # a duplicate key: the events refuse it, located
        "a: 1\n  b: 2\n",
        "a:\n  - 1\n",  # a sequence indented under its key
        "a:\n",  # null, which the writer spells
        "a: x # comment\n",
        "a: 'x\n",
        "a: {b: 1, b: 2}\n",
        "a: [1, [2]]\n",
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "a: 2001-02-30\n",  # a timestamp that does not exist: refused by the events, located
        "<<: {a: 1}\n",
        "a: 1\n---\nb: 2\n",
        'a: "x"\n',
        "a: x \n",
        "a: |\n  x\n",
    ],
)
def test_the_canonical_reader_leaves_what_the_writer_never_writes_to_libyaml(body: str) -> None:
    assert _CanonicalReader().read(HEADER + body) is None
    assert _CanonicalReader().read(HEADER + "plan_version: 3\n") == {"plan_version": 3}


@pytest.mark.parametrize(
    "word", ["0", "7", "10", "017", "00", "-3", "+3", "0x1f", "0o17", "0b11", "1_000", "12:30", "1e3", "1.5", "190.0"]
)
def test_a_plain_number_reads_as_libyaml_reads_it(word: str) -> None:
    """Decimal integers take a shortcut past the resolver; YAML 1.1 reads a leading zero as octal, and the rest."""
    text = f"{HEADER}a: {word}\nb: [{word}, {word}]\nc: {{k: {word}}}\n"
    read = _CanonicalReader().read(text)
    assert read is not None or ":" in word  # (a ':' in a flow collection: left to the events)
    assert read is None or _typed(read) == _libyaml(text)


@given(st.text(alphabet=", a'", max_size=24))
def test_a_long_flow_mapping_is_split_as_str_split_splits_it(inner: str) -> None:
    assert _split_long(inner) == inner.split(", ")


def test_the_canonical_reader_needs_the_header() -> None:
    assert _CanonicalReader().read("plan_version: 3\n") is None
    assert _CanonicalReader().read(HEADER + "plan_version: 3") is None  # no final line break


@pytest.mark.parametrize("enabled", [True, False])
def test_a_plan_loads_without_the_cyclic_collector(enabled: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """It found nothing in a plan's millions of objects and took half of a large plan's validation: paused while the
    plan is read and validated, then left as the caller had it."""
    import gc

    from ffplan.plan import io

    seen: list[tuple[bool, int]] = []
    parse = io._parse_plan

    def watched(*args: object) -> Plan:
        before = sum(s["collections"] for s in gc.get_stats())
        plan = parse(*args)  # type: ignore[arg-type]
        seen.append((gc.isenabled(), sum(s["collections"] for s in gc.get_stats()) - before))
        return plan

    monkeypatch.setattr(io, "_parse_plan", watched)
    thresholds = gc.get_threshold()
    gc.set_threshold(700, 10, 10)  # Python's own (the CLI's are higher): a young collection per 700 new objects
    gc.enable() if enabled else gc.disable()
    try:
        io.load_plan(GOLDEN_PLANS[-1])
        assert seen == [(False, 0)]
        assert gc.isenabled() is enabled
    finally:
        gc.set_threshold(*thresholds)
        gc.enable()


@pytest.mark.parametrize(
    "word",
    ["a", "Z", "_x", "/x/y", "/", "x-", "x.", "e1", "E1", "n/a", "y", "yes", "No", "OFF", "on", "true", "Null", "null"]
    + ["z1-leaf001-p01", "mlx5_0", "10.1.0.59/31", "'0x0002c90003000000'", "'no'", "''", "'a/b'", "'a''b'"],
)
def test_a_word_of_letters_digits_and_dots_reads_as_libyaml_reads_it(word: str) -> None:
    """Names, labels and quoted GUIDs take a shortcut past the regular expressions and the resolver: whatever a
    resolver would make of the word (a boolean, a null) it takes from libyaml, in keys and values, block and flow."""
    text = f"{HEADER}{word}: {word}\nb: [{word}, {word}]\nc: {{{word}: {word}}}\nd:\n- {word}\n"
    read = _CanonicalReader().read(text)
    assert read is not None
    assert _typed(read) == _libyaml(text)
