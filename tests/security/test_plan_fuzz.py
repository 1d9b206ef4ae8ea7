"""Fuzz target over plans: the lab plan mutated the way tests/lint/test_lint_properties.py mutates inventories
(hostile strings, numbers out of range, references removed), then rendered.

Every run either is refused at load (exit 2, every finding located at plan.yaml:line:col) or renders, and
then no rendered file carries a payload where its consumer would act on it (a line of its own, shell
outside single quotes, markup), and nothing is written outside the output folder.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tampering import lab_data
from typer.testing import CliRunner

from ffplan.cli.main import app

try:
    from yaml import CSafeDumper as Dumper
except ImportError:  # pragma: no cover
    from yaml import SafeDumper as Dumper  # type: ignore[assignment]

BASE = lab_data()
MARK = "PWNED"
PAYLOADS = [
    f"\ntouch {MARK} #",
    f"$(touch {MARK})",
    f"`touch {MARK}`",
    f"'; touch {MARK}; '",
    f'"; touch {MARK}; "',
    f"</cpu><evil>{MARK}</evil>",
    f"../../../../{MARK}",
    f"/../../{MARK}",
    f"x\0{MARK}",
    f"\r\nNCCL_NET_PLUGIN=/x/{MARK}.so",
    f"{MARK}\n",
    "..",
    f".{MARK}",
    f"a b {MARK}",
    f"${{IFS}}{MARK}",
    f"&amp;{MARK}",
]
NUMBERS = [-1, 0, 15, 16, 99, 255, 256, 0xBFFF, 0xC000, 70000, 10**7, 2**63, math.nan, math.inf, -math.inf, 1e308, 0.5]
# Lines a payload would add if it escaped its field: a command, an NCCL setting, an XML element.
INJECTED_LINE = re.compile(rf"^\s*(touch {MARK}|NCCL_NET_PLUGIN|<evil)", re.M)
FINDING = re.compile(r"^\S+plan\.yaml(:\d+:\d+)?: error FF\d{3} \S")  # no position: the plan_version check
FUZZ_SETTINGS = settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)


def _paths(node, prefix=()):
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, value in items:
        yield prefix + (key,), value
        yield from _paths(value, prefix + (key,))


ALL = list(_paths(BASE))
STRINGS = [p for p, v in ALL if isinstance(v, str)]
NUMERIC = [p for p, v in ALL if isinstance(v, (int, float)) and not isinstance(v, bool)]
CONTAINED = [p for p, _ in ALL]


def _apply(data: dict, path: tuple, action) -> None:
    parent = data
    for key in path[:-1]:
        try:
            parent = parent[key]
        except (KeyError, IndexError, TypeError):
            return
    try:
        if action is _apply:  # delete
            del parent[path[-1]]
        else:
            parent[path[-1]] = action(parent[path[-1]])
    except (KeyError, IndexError, TypeError):
        pass


def _in_shell_code(line: str, start: int) -> bool:
    """Whether position `start` of a shell line is where bash would expand or run it: outside single quotes
    and outside a comment (ffplan quotes every shell word with shlex.quote, i.e. single quotes)."""
    single = double = False
    i = 0
    while i < start:
        c = line[i]
        if single:
            single = c != "'"
        elif c == "\\":
            i += 1
        elif c == "'" and not double:
            single = True
        elif c == '"':
            double = not double
        elif c == "#" and not double and (i == 0 or line[i - 1] in " \t;(|&"):
            return False
        i += 1
    return not single


def _check_render(out: Path, sandbox: Path, plan_dir: Path) -> None:
    lock = out.parent / f".{out.name}.lock"  # the output-folder writer's lock, beside the folder it guards
    strays = [
        p
        for p in sandbox.rglob("*")
        if p.is_file() and p != lock and plan_dir not in p.parents and out not in p.parents
    ]
    assert not strays, f"written outside the output folder: {strays}"
    for f in out.rglob("*"):
        if not f.is_file():
            continue
        text = f.read_text(encoding="utf-8")
        name = str(f.relative_to(out))
        assert "\0" not in text and "\r" not in text, name
        if name == "plan.yaml" or MARK not in text:
            continue
        assert not INJECTED_LINE.search(text), name
        if name.endswith((".xml", ".svg")):
            root = ET.fromstring(text)
            assert all(e.tag != "evil" for e in root.iter()), name
        if name.endswith((".sh", ".env")):
            for line in text.splitlines():
                for m in re.finditer(MARK, line):
                    assert not _in_shell_code(line, m.start()), (name, line)


def _render(data: dict, sandbox: Path) -> None:
    plan_dir = sandbox / "plan"
    plan_dir.mkdir(parents=True)
    (plan_dir / "plan.yaml").write_text(
        yaml.dump(data, Dumper=Dumper, sort_keys=False, width=1 << 16), encoding="utf-8"
    )
    out = sandbox / "a" / "b" / "c" / "d" / "e" / "out"  # deep, so escaping paths still land in the sandbox
    result = CliRunner().invoke(app, ["render", str(plan_dir), "-o", str(out), "-q"])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 2), result.output
    if result.exit_code == 2:
        lines = [line for line in result.output.splitlines() if not line.startswith("    hint: ")]
        assert lines and all(FINDING.match(line) for line in lines), result.output
        assert not out.exists()
    else:
        _check_render(out, sandbox, plan_dir)


@FUZZ_SETTINGS
@given(st.lists(st.tuples(st.sampled_from(STRINGS), st.sampled_from(PAYLOADS), st.booleans()), min_size=1, max_size=3))
def test_hostile_strings(tmp_path_factory, swaps):
    data = lab_data()
    for path, payload, append in swaps:
        _apply(data, path, lambda old, p=payload, a=append: old + p if a else p)
    _render(data, tmp_path_factory.mktemp("fuzz"))


@FUZZ_SETTINGS
@given(st.lists(st.tuples(st.sampled_from(NUMERIC), st.sampled_from(NUMBERS)), min_size=1, max_size=3))
def test_numbers_out_of_range(tmp_path_factory, swaps):
    data = lab_data()
    for path, number in swaps:
        _apply(data, path, lambda old, n=number: n)
    _render(data, tmp_path_factory.mktemp("fuzz"))


@FUZZ_SETTINGS
@given(st.lists(st.sampled_from(CONTAINED), min_size=1, max_size=3))
def test_references_removed(tmp_path_factory, paths):
    data = lab_data()
    for path in paths:
        _apply(data, path, _apply)
    _render(data, tmp_path_factory.mktemp("fuzz"))


def test_a_payload_in_a_comment_renders_inert(tmp_path):
    """The fuzz target's other branch, pinned: a one-line comment may carry `$(...)`; it renders as a comment."""
    data = lab_data()
    sl = next(i for i, s in enumerate(data["hosts"][0]["sls"]) if s["software"] == "HFReduce")
    data["hosts"][0]["sls"][sl]["comment"] = f"$(touch {MARK}) `touch {MARK}`"
    _render(data, tmp_path)
    env = (tmp_path / "a/b/c/d/e/out/hosts/gpu-node/hfreduce.env").read_text()
    assert f"# $(touch {MARK}) `touch {MARK}`\n" in env


# ------------------------------------------------------------------ issue 26: YAML tags, aliases and depth
TEXT = yaml.dump(BASE, Dumper=Dumper, sort_keys=False, width=1 << 16)
SCALAR_LINES = [
    i for i, line in enumerate(TEXT.split("\n")) if re.match(r"^\s*(- )?[A-Za-z_][\w-]*: [^\s\[{&*!|>]", line)
]
TAGS = [
    "!!timestamp",
    "!!int",
    "!!float",
    "!!bool",
    "!!binary",
    "!!null",
    "!!str",
    "!!map",
    "!!seq",
    "!!omap",
    "!!set",
    "!custom",
    "!!python/object/apply:os.system",
    "!",
]
TAG_VALUES = [None, "''", "x", ":1:2", "2001-02-30", "-", "1e999", "[1, 2]", "{a: 1}"]


def _render_text(text: str, sandbox: Path) -> None:
    plan_dir = sandbox / "plan"
    plan_dir.mkdir(parents=True)
    (plan_dir / "plan.yaml").write_text(text, encoding="utf-8")
    out = sandbox / "out"
    result = CliRunner().invoke(app, ["render", str(plan_dir), "-o", str(out), "-q"])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 2), result.output
    assert len(result.output) < 100_000  # no message the size of an expanded bomb
    if result.exit_code == 2:
        lines = [line for line in result.output.splitlines() if not line.startswith("    hint: ")]
        assert lines and all(FINDING.match(line) for line in lines), result.output[:3000]
        assert not out.exists()
    else:
        _check_render(out, sandbox, plan_dir)


def _set_line(index: int, value: str) -> str:
    lines = TEXT.split("\n")
    key = lines[index].partition(": ")[0]
    lines[index] = f"{key}: {value}"
    return "\n".join(lines)


@FUZZ_SETTINGS
@given(
    st.lists(
        st.tuples(st.sampled_from(SCALAR_LINES), st.sampled_from(TAGS), st.sampled_from(TAG_VALUES)),
        min_size=1,
        max_size=3,
    )
)
def test_explicit_tags(tmp_path_factory, tagged):
    lines = TEXT.split("\n")
    for index, tag, value in tagged:
        key, _, old = lines[index].partition(": ")
        lines[index] = f"{key}: {tag} {old if value is None else value}"
    _render_text("\n".join(lines), tmp_path_factory.mktemp("fuzz"))


@FUZZ_SETTINGS
@given(st.sampled_from(SCALAR_LINES), st.integers(1, 12), st.integers(1, 12))
def test_aliases(tmp_path_factory, index, levels, width):
    bomb = [f"  - &a0 [{', '.join(['lol'] * width)}]"]
    bomb += [f"  - &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    _render_text(
        "bomb:\n" + "\n".join(bomb) + "\n" + _set_line(index, f"*a{levels - 1}"), tmp_path_factory.mktemp("fuzz")
    )


@FUZZ_SETTINGS
@given(st.sampled_from(SCALAR_LINES), st.integers(1, 1200), st.sampled_from(["[", "{a: "]))
def test_nesting_depth(tmp_path_factory, index, depth, opener):
    closer = "]" if opener == "[" else "}"
    _render_text(_set_line(index, opener * depth + "1" + closer * depth), tmp_path_factory.mktemp("fuzz"))
