"""Golden files: the host and export files rendered from inventories/lab.yaml, compared whole.

Regenerate with `pytest tests/render --update-golden` (or `make golden`) after a deliberate change, and
review the diff. The OpenSM files are golden-tested with the OpenSM renderer.
"""

from __future__ import annotations

from pathlib import Path

from pcie_variants import HGX
from tests.support.plans import design_file

from ffplan.render.exports import render_exports
from ffplan.render.hosts import render_hosts
from tests.goldens import assert_golden_folder

GOLDEN = Path(__file__).resolve().parent / "golden" / "lab"


def _rendered(plan) -> dict[str, str]:
    return {**render_hosts(plan), **render_exports(plan)}


def test_lab_files_match_golden(lab_plan, update_golden):
    assert_golden_folder(GOLDEN, _rendered(lab_plan), update_golden, "rendered files")


def test_hgx_host_files_match_golden(update_golden):
    """Host files of an 8-GPU/8-NIC node behind PCIe switches (tests/golden/inventories/hgx-h800.yaml)."""
    plan = design_file(HGX)
    assert_golden_folder(GOLDEN.parent / "hgx-h800", render_hosts(plan), update_golden, "rendered host files")
