"""A designed lab plan folder shared by the CLI tests (written once per session)."""

import pytest

from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.plan import dump_plan
from tests.conftest import ROOT


@pytest.fixture(scope="session")
def lab_plan_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lab-plan")
    (folder / "plan.yaml").write_text(
        dump_plan(design(load_inventory(ROOT / "inventories" / "lab.yaml"))), encoding="utf-8"
    )
    return folder
