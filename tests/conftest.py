import pathlib

import pytest

from tests.support.plans import design_file, designed

ROOT = pathlib.Path(__file__).resolve().parent.parent

# The real OpenSM in ibsim (sim_tools, lab_out, ff2_out, no_leftovers), for verify, audit and reroute alike; FRR in
# network namespaces (frr_tools, mini_files, edited) for the RoCE verify.
pytest_plugins = ["tests.support.ibsim", "tests.support.frr"]


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files instead of comparing")


@pytest.fixture
def update_golden(request) -> bool:
    return request.config.getoption("--update-golden")


@pytest.fixture
def root() -> pathlib.Path:
    return ROOT


@pytest.fixture(scope="session")
def lab_plan():
    return designed("lab")


@pytest.fixture(scope="session")
def ff2_plan():
    return designed("fire-flyer-2")


@pytest.fixture(scope="session")
def roce_plan():
    """The smallest RoCE plan: one zone of 8-port 400G Ethernet switches, eight single-NIC nodes."""
    return design_file(ROOT / "tests" / "lint" / "roce-base.yaml")
