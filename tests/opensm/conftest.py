"""Fixtures for the OpenSM render tests: the lab and Fire-Flyer 2 plans, designed by planfix."""

from __future__ import annotations

import shutil

import pytest

from tests.opensm.planfix import designed

PACKAGES = "opensm ibsim-utils infiniband-diags"


@pytest.fixture(scope="session")
def lab_plan():
    return designed("lab")


@pytest.fixture(scope="session")
def ff2_plan():
    return designed("fire-flyer-2")


@pytest.fixture(scope="session")
def opensm_bin() -> str:
    exe = shutil.which("opensm") or shutil.which("opensm", path="/usr/sbin:/sbin")
    if not exe:
        pytest.skip(f"opensm not installed: run `make test` as root, or apt-get install {PACKAGES}")
    return exe
