"""Golden pairs for the transformation: inventory -> plan.yaml, cables.csv, bom.csv.

A mismatch shows a unified diff; `pytest --update-golden` rewrites the expected files (review the diff).
"""

import difflib
from pathlib import Path

import pytest

from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.plan import dump_plan
from ffplan.plan.exports import bom_csv, cables_csv

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
CASES = {
    "lab": ROOT / "inventories" / "lab.yaml",
    "one-zone-36": HERE / "inventories" / "one-zone-36.yaml",
}


def outputs(inventory: Path) -> dict[str, str]:
    plan = design(load_inventory(inventory))
    return {"plan.yaml": dump_plan(plan), "cables.csv": cables_csv(plan), "bom.csv": bom_csv(plan)}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_outputs(case, update_golden):
    folder = HERE / "expected" / case
    for name, text in outputs(CASES[case]).items():
        # The plan names the inventory file and its hash; both are stable because the inventory is in the repo.
        path = folder / name
        if update_golden:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        assert path.exists(), f"missing {path}: run pytest --update-golden and review it"
        expected = path.read_text()
        if text != expected:
            diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True), str(path), "actual", n=2))
            pytest.fail(f"{case}/{name} differs from the golden file (pytest --update-golden to accept):\n{diff[:6000]}")
