"""The opensm binary for the OpenSM tests (the lab and Fire-Flyer 2 plans come from tests/conftest.py)."""

from __future__ import annotations

import shutil

import pytest

PACKAGES = "opensm ibsim-utils infiniband-diags"


@pytest.fixture(scope="session")
def opensm_bin() -> str:
    exe = shutil.which("opensm") or shutil.which("opensm", path="/usr/sbin:/sbin")
    if not exe:
        pytest.skip(f"opensm not installed: run `make test` as root, or apt-get install {PACKAGES}")
    return exe
