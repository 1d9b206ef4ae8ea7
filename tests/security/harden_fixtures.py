"""Fixtures shared by the output, suppression and loader tests of tests/security (imported by name)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ffplan.cli.main import app

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(scope="session")
def lab_design_cache(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("lab") / "design"
    result = run_cli("design", ROOT / "inventories" / "lab.yaml", "-o", out, "-q")
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture
def lab_design_dir(lab_design_cache, tmp_path) -> Path:
    """A fresh copy of the lab's design folder, for tests that may change it."""
    copy = tmp_path / "lab-design"
    shutil.copytree(lab_design_cache, copy)
    return copy
