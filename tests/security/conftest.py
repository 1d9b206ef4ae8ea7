import pytest

from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.plan.model import Plan
from tampering import ROOT


@pytest.fixture(scope="session")
def ff2_plan() -> Plan:
    return design(load_inventory(ROOT / "inventories" / "fire-flyer-2.yaml"))
