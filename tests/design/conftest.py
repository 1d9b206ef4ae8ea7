import pytest

from ffplan.design import design
from ffplan.inventory import load_inventory


@pytest.fixture(scope="session")
def lab_plan(root=None):
    from tests.conftest import ROOT

    return design(load_inventory(ROOT / "inventories" / "lab.yaml"))


@pytest.fixture(scope="session")
def ff2_plan():
    from tests.conftest import ROOT

    return design(load_inventory(ROOT / "inventories" / "fire-flyer-2.yaml"))
