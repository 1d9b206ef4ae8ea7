import pytest

from ffplan.design import design
from ffplan.inventory import load_inventory
from tests.conftest import ROOT


@pytest.fixture(scope="session")
def lab_routed():
    return design(load_inventory(ROOT / "inventories" / "lab.yaml"))


@pytest.fixture(scope="session")
def ff2_routed():
    return design(load_inventory(ROOT / "inventories" / "fire-flyer-2.yaml"))


@pytest.fixture(scope="session")
def ff2_loaded():
    return load_inventory(ROOT / "inventories" / "fire-flyer-2.yaml")
