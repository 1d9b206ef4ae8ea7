"""Session fixtures for the render tests; the plans come from renderfix.py."""

from __future__ import annotations

import pytest
from renderfix import designed

from ffplan.plan.model import Plan


@pytest.fixture(scope="session")
def lab_plan() -> Plan:
    return designed("lab")


@pytest.fixture(scope="session")
def ff2_plan() -> Plan:
    return designed("fire-flyer-2")
