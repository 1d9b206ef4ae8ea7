"""Item 14 of issue 14: a pattern guard must match the whole string. Python's `$` also matches before a
final newline, so `re.match(r"^/[a-z/]*$", "/etc/opensm\\n")` succeeds; every guard uses `fullmatch`."""

import re

import pytest
from harden_fixtures import ROOT, lab_design_cache, lab_design_dir  # noqa: F401  (fixtures)
from pydantic import TypeAdapter, ValidationError

from typer.testing import CliRunner

from ffplan.cli.main import app
from ffplan.diagnostics import InputError, format_yaml_path
from ffplan.inventory import models
from ffplan.opensm.files import check_prefix

PATTERNS = {name: value for name, value in vars(models).items() if name.endswith("_PATTERN")}


def test_prefix_with_a_trailing_newline_is_refused():
    with pytest.raises(InputError) as exc:
        check_prefix("/etc/opensm\n")
    assert "--prefix" in exc.value.diagnostics[0].message
    assert check_prefix("/etc/opensm") == "/etc/opensm"


def test_render_cli_refuses_the_newline_prefix(tmp_path, lab_design_dir):
    result = CliRunner().invoke(
        app, ["render", str(lab_design_dir), "-o", str(tmp_path / "files"), "--prefix", "/etc/opensm\n", "-q"]
    )
    assert result.exit_code == 2, result.output
    assert "--prefix" in result.output
    assert not (tmp_path / "files").exists()


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_schema_patterns_refuse_a_trailing_newline(name):
    # The schema validates with pydantic's regex engine, where `$` is the end of the text; Python's re is
    # not, so code that reuses these constants must call fullmatch (checked below for the lint rules).
    pattern = PATTERNS[name]
    samples = {
        "NAME_PATTERN": "za",
        "HOSTNAME_PATTERN": "cn01",
        "HOSTNAME_TEMPLATE_PATTERN": "cn{index:02d}",
        "GUID_PATTERN": "0x0002c90300000001",
        "BUS_ID_PATTERN": "0000:01:00.0",
        "DEVICE_PATTERN": "mlx5_0",
        "TEXT_PATTERN": "a note",
        "PATH_PATTERN": "/etc/nccl/topo.xml",
        "IPV4_PREFIX_PATTERN": "10.1.0.0/16",
    }
    good = samples[name]
    adapter = TypeAdapter(models.Annotated[str, models.StringConstraints(pattern=pattern)])
    assert adapter.validate_python(good) == good
    with pytest.raises(ValidationError):
        adapter.validate_python(good + "\n")
    assert re.fullmatch(pattern, good) and not re.fullmatch(pattern, good + "\n")


def test_yaml_path_keys_with_a_newline_are_quoted():
    assert format_yaml_path(("fabric", "a\n")) == 'fabric["a\\n"]'


def test_an_excluded_port_with_a_trailing_newline_is_unknown(tmp_path):
    # `switch[port]` was matched with `$`, so "za-leaf01[5]\n" routed around port 5 and put the newline
    # into the plan's routing.failed.
    inventory = ROOT / "inventories" / "lab.yaml"
    result = CliRunner().invoke(
        app, ["design", str(inventory), "-o", str(tmp_path / "out"), "-q", "--exclude-link", "za-leaf01[5]\n"]
    )
    assert result.exit_code == 2 and "FF601" in result.output
    assert not (tmp_path / "out").exists()
