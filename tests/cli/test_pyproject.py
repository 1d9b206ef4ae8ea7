"""Packaging metadata that build tools and users read: no deprecated license table, a capped typer; what the
Makefile installs."""

import shutil
import subprocess
import tomllib

import pytest

from packaging.requirements import Requirement
from packaging.version import Version


def _pyproject(root) -> dict:
    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))


def test_license_is_an_spdx_string_with_a_setuptools_that_reads_it(root):
    meta = _pyproject(root)
    # A TOML table makes setuptools >= 77 warn once per build step ("project.license as a TOML table is deprecated").
    assert meta["project"]["license"] == "MIT"
    setuptools = next(Requirement(r) for r in meta["build-system"]["requires"] if Requirement(r).name == "setuptools")
    assert not setuptools.specifier.contains(Version("76.9")), "SPDX license strings need setuptools >= 77"


def test_typer_major_version_is_capped(root):
    typer = next(Requirement(r) for r in _pyproject(root)["project"]["dependencies"] if Requirement(r).name == "typer")
    assert typer.specifier.contains(Version("0.12"))
    assert not typer.specifier.contains(Version("1.0")), "typer's next major may break the CLI"


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("target, extras", [("run", False), ("test", True)])
def test_make_run_installs_ffplan_without_the_test_extras(root, tmp_path, target, extras):
    """`make run` installed '.[test]' (pytest, hypothesis, mypy) to run ffplan; only the test targets need them."""
    dry = subprocess.run(
        ["make", "-n", "-B", target, f"VENV={tmp_path / 'venv'}"], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    installs = [line for line in dry.splitlines() if "pip install" in line and "--upgrade pip" not in line]
    assert installs and any(line.endswith(" -e .") for line in installs)
    assert any("[test]" in line for line in installs) is extras, installs
