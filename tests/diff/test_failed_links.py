"""An excluded link is said out loud: by `ffplan design --exclude-link` and by `ffplan diff`, whose routing
count is the number of entries `--verbose` lists."""

import re

import pytest
from typer.testing import CliRunner

from ffplan.cli.main import app

runner = CliRunner()
CABLE = "za-leaf01-p05"


@pytest.fixture(scope="module")
def plans(tmp_path_factory, request):
    """(base folder, folder designed with --exclude-link CABLE, that design's stdout)."""
    inventory = request.config.rootpath / "inventories" / "lab.yaml"
    base, failed = tmp_path_factory.mktemp("base"), tmp_path_factory.mktemp("failed")
    assert runner.invoke(app, ["design", str(inventory), "-o", str(base), "-q"]).exit_code == 0
    result = runner.invoke(app, ["design", str(inventory), "-o", str(failed), "--exclude-link", CABLE])
    assert result.exit_code == 0, result.output
    return base, failed, result.stdout


def test_design_says_the_excluded_cable_is_now_failed(plans):
    lines = plans[2].splitlines()
    at = lines.index("failed links, routed around (1):")
    assert lines[at + 1] == (
        f"  {CABLE}: cable za-leaf01:5 <-> za-spine01:1 (leaf-spine) [now failed by --exclude-link; "
        "add it to fabric.failed_links to keep it failed in later designs]"
    )


def test_diff_reports_failed_links_added_and_removed(plans):
    base, failed, _ = plans
    added = runner.invoke(app, ["diff", str(base), str(failed)])
    assert added.exit_code == 1
    assert f"failed links added (routed around) (1):\n  {CABLE}: cable za-leaf01:5 <-> za-spine01:1" in added.stdout
    removed = runner.invoke(app, ["diff", str(failed), str(base), "--format", "json"])
    assert '"failed_removed": [\n    "za-leaf01-p05"\n  ]' in removed.stdout


def test_diff_routing_count_is_what_verbose_lists(plans):
    base, failed, _ = plans
    verbose = runner.invoke(app, ["diff", str(base), str(failed), "--verbose"]).stdout
    header = re.search(r"^routing \((\d[\d,]*) entr(?:y|ies) on (\d+) switch(?:es)?\):$", verbose, re.M)
    assert header, verbose
    listed = re.findall(r"^      lid \d+: port \d+ -> \d+$", verbose, re.M)
    switches = re.findall(r"^  \S+: \d+ entr(?:y|ies) changed$", verbose, re.M)
    assert int(header[1].replace(",", "")) == len(listed) > 0 and int(header[2]) == len(switches)
