"""`ffplan verify` of a pinned-paths plan in the real FRR (docs/ethernet.md, "Rendering pinned paths"): roce-mini
with `path_selection: pinned`, plane pa. Intact, every switch's FIB holds each host /31 over its single pinned
next hop (the spines over their one link to the host's leaf) beside the aggregates' ECMP sets; with a cable and a
switch down it holds what ffplan.ethernet.forwarding predicts: the /31s pinned over the broken path withdrawn, the
aggregate's reduced set carrying them."""

from __future__ import annotations

import pytest
import yaml
from typer.testing import CliRunner

from ffplan.cli.main import app
from ffplan.verify_ethernet.run import verify_ethernet

from tests.support.frr import MINI

pytestmark = pytest.mark.slow


def test_pinned_host_routes_and_their_fallback_match_the_prediction(frr_tools, tmp_path):
    data = yaml.safe_load(MINI.read_text())
    data["fabric"].setdefault("roce", {})["path_selection"] = "pinned"
    inventory = tmp_path / "pinned.yaml"
    inventory.write_text(yaml.safe_dump(data, sort_keys=False))
    runner = CliRunner()
    result = runner.invoke(app, ["design", str(inventory), "-o", str(tmp_path / "plan"), "-q"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["render", str(tmp_path / "plan"), "-o", str(tmp_path / "files"), "-q"])
    assert result.exit_code == 0, result.output
    report = verify_ethernet(tmp_path / "files", plane="pa", timeout=30, failures=True)
    checks = {c.name: c for c in report.checks}
    assert report.ok, {c.name: c.items for c in report.checks if c.status == "fail"}
    # 5 switches x 4 leaf prefixes (3 host blocks, 3 loopbacks, less a leaf's own 2) = 24 ECMP routes, and the
    # pinned /31s: 4 on each leaf (the other leaves' hosts), 6 on each spine
    assert "48 (switch, prefix) routes" in checks["kernel FIB == plan's ECMP sets"].detail
    assert "24 of 24 host pairs" in checks["ping at MTU 9000 with don't-fragment"].detail
