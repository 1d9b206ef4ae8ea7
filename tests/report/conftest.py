import pytest

from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.report.catalog import resolve_catalog
from ffplan.report.cost import build_report


@pytest.fixture(scope="session")
def ff2_loaded(request):
    return load_inventory(request.config.rootpath / "inventories" / "fire-flyer-2.yaml")


@pytest.fixture(scope="session")
def ff2_plan(ff2_loaded):
    return design(ff2_loaded)


@pytest.fixture(scope="session")
def ff2_report(ff2_plan):
    """The shipped Fire-Flyer 2 inventory, designed for real, priced with the `paper` preset (from the plan alone)."""
    return build_report(ff2_plan, resolve_catalog(ff2_plan, "paper"))
