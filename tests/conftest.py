import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files instead of comparing")


@pytest.fixture
def update_golden(request) -> bool:
    return request.config.getoption("--update-golden")


@pytest.fixture
def root() -> pathlib.Path:
    return ROOT
