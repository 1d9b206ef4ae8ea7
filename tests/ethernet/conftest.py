import pathlib

import pytest

from ffplan.design import design
from ffplan.inventory import load_inventory

ROOT = pathlib.Path(__file__).resolve().parents[2]
SMALL = ROOT / "tests" / "lint" / "roce-base.yaml"  # one zone: 2 leaves, 1 spine, 8 single-NIC nodes


@pytest.fixture(scope="session")
def small_plan():
    return design(load_inventory(SMALL))


@pytest.fixture(scope="session")
def dual_plane_plan():
    return design(load_inventory(ROOT / "inventories" / "roce-dual-plane.yaml"))
