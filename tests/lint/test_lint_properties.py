"""Property-based: malformed and mutated inventories never crash ffplan lint. Every run ends with exit 0,
1 or 2 (never a traceback), and every finding is located at file:line:col."""

import pathlib
import re
import tempfile

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ffplan.cli.main import app

BASE_TEXT = (pathlib.Path(__file__).parent / "base.yaml").read_text()
BASE = yaml.safe_load(BASE_TEXT)
FINDING = re.compile(
    r"^\S.*?(:\d+:\d+)?: (error|warning) FF\d{3} \S"
)  # no position for a whole-file finding (empty file)
PROPERTY_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _paths(node, prefix=()):
    """Every path to a value in the base inventory."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, value in items:
        yield prefix + (key,)
        yield from _paths(value, prefix + (key,))


PATHS = sorted(_paths(BASE), key=repr)
OTHER_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 300),
    st.text(max_size=12),
    st.lists(st.integers(0, 3), max_size=2),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


def _lint_text(data: bytes):
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "mutated.yaml"
        path.write_bytes(data)
        result = CliRunner().invoke(app, ["lint", "--quiet", str(path)])
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert result.exit_code in (0, 1, 2)
    lines = result.stdout.splitlines()
    if result.exit_code:
        assert lines, "a failing run must say why"
    for line in lines:
        assert FINDING.match(line) or line.startswith("    hint: "), line
    return result


def _mutate(data, path, action):
    """Apply `action` (delete, or replace with a value) at `path` of a deep copy; None if the path is gone."""
    data = yaml.safe_load(yaml.safe_dump(data))
    parent = data
    for key in path[:-1]:
        try:
            parent = parent[key]
        except (KeyError, IndexError, TypeError):
            return data
    try:
        if action == "delete":
            del parent[path[-1]]
        else:
            parent[path[-1]] = action[1]
    except (KeyError, IndexError, TypeError):
        pass
    return data


@PROPERTY_SETTINGS
@given(st.lists(st.sampled_from(PATHS), min_size=1, max_size=3))
def test_key_deletions(paths):
    data = BASE
    for path in paths:
        data = _mutate(data, path, "delete")
    _lint_text(yaml.safe_dump(data, sort_keys=False).encode())


@PROPERTY_SETTINGS
@given(st.lists(st.tuples(st.sampled_from(PATHS), OTHER_VALUES), min_size=1, max_size=3))
def test_type_swaps(swaps):
    data = BASE
    for path, value in swaps:
        data = _mutate(data, path, ("set", value))
    _lint_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True).encode())


@PROPERTY_SETTINGS
@given(st.binary(max_size=400))
def test_random_bytes(data):
    assert _lint_text(data).exit_code in (1, 2)


@PROPERTY_SETTINGS
@given(st.integers(0, len(BASE_TEXT) - 2))
def test_truncation(cut):
    _lint_text(BASE_TEXT[:cut].encode())


@PROPERTY_SETTINGS
@given(st.integers(0, len(BASE_TEXT) - 1), st.binary(min_size=1, max_size=8))
def test_bytes_spliced_into_a_valid_inventory(offset, junk):
    raw = BASE_TEXT.encode()
    _lint_text(raw[:offset] + junk + raw[offset:])
