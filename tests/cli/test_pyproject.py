"""Packaging metadata that build tools and users read: no deprecated license table, a capped typer."""

import tomllib

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
