"""Golden pairs for the transformation: inventory -> plan.yaml, cables.csv, bom.csv."""

from pathlib import Path

import pytest

from tests.goldens import assert_golden_folder

from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.plan import dump_plan
from ffplan.plan.exports import bom_csv, cables_csv

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
CASES = {
    "lab": ROOT / "inventories" / "lab.yaml",
    "one-zone-36": HERE / "inventories" / "one-zone-36.yaml",
    "hgx-h800": HERE / "inventories" / "hgx-h800.yaml",
    "three-layer-8": HERE / "inventories" / "three-layer-8.yaml",
}


def outputs(inventory: Path) -> dict[str, str]:
    plan = design(load_inventory(inventory))
    return {"plan.yaml": dump_plan(plan), "cables.csv": cables_csv(plan), "bom.csv": bom_csv(plan)}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_outputs(case, update_golden):
    # The plan names the inventory file and its hash; both are stable because the inventory is in the repo.
    assert_golden_folder(HERE / "expected" / case, outputs(CASES[case]), update_golden, f"{case} design outputs")
