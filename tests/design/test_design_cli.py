"""`ffplan design` end to end: outputs, determinism, infeasible inventories (exit 3)."""

from pathlib import Path

from typer.testing import CliRunner

from ffplan.cli.main import app

runner = CliRunner()


def _design(inventory: Path, out: Path, *extra: str):
    return runner.invoke(app, ["design", str(inventory), "-o", str(out), "-q", *extra])


def test_design_writes_plan_cables_and_bom(root, tmp_path):
    result = _design(root / "inventories" / "lab.yaml", tmp_path / "lab")
    assert result.exit_code == 0, result.output
    files = sorted(p.name for p in (tmp_path / "lab").iterdir())
    assert files == ["bom.csv", "cables.csv", "manifest.json", "plan.yaml"]
    header = (tmp_path / "lab" / "cables.csv").read_text().splitlines()[0]
    assert header == (
        "side_a_site,side_a_device,side_a_type,side_a_name,side_b_site,side_b_device,side_b_type,side_b_name,"
        "type,status,label,length,length_unit,description"
    )  # NetBox's cable import columns only


def test_two_runs_are_byte_identical(root, tmp_path):
    for name in ("a", "b"):
        assert _design(root / "inventories" / "fire-flyer-2.yaml", tmp_path / name).exit_code == 0
    for f in ("plan.yaml", "cables.csv", "bom.csv", "manifest.json"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f


def test_unbalanceable_role_exits_3_with_location(root, tmp_path):
    inv = root / "tests" / "design" / "inventories" / "unbalanced.yaml"
    result = _design(inv, tmp_path / "u")
    assert result.exit_code == 3
    assert f"{inv}:74:5: error FF152 role 'compute' cannot be spread within one per leaf" in result.output
    assert not (tmp_path / "u").exists()
    assert _design(inv, tmp_path / "u", "--allow-imbalance").exit_code == 0


def test_zone_too_large_for_radix_exits_3(root, tmp_path):
    text = (root / "inventories" / "lab.yaml").read_text().replace("ports_per_zone: 16", "ports_per_zone: 40")
    inv = tmp_path / "big.yaml"
    inv.write_text(text)
    result = _design(inv, tmp_path / "o")
    assert result.exit_code == 3
    line = next(i for i, text_line in enumerate(text.splitlines(), 1) if "ports_per_zone: 40" in text_line)
    assert (
        "FF102" in result.output and "at most 8 leaves (32 ports)" in result.output and f":{line}:3:" in result.output
    )


def test_foreign_output_folder_is_not_overwritten(root, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    result = _design(root / "inventories" / "lab.yaml", out)
    assert result.exit_code == 2 and "was not written by ffplan" in result.output
    assert (out / "notes.txt").read_text() == "keep me"


def test_paper_numbers_exit_3_naming_the_port_budget(root, tmp_path):
    result = _design(root / "examples" / "fire-flyer-2-as-described.yaml", tmp_path / "o")
    assert result.exit_code == 3
    assert "error FF101" in result.output and "10 over" in result.output


def test_switches_that_do_not_fit_their_rack_exit_3(root, tmp_path):
    text = (
        (root / "inventories" / "lab.yaml")
        .read_text()
        .replace("  - {name: net1, row: 1, slot: 1,", "  - {name: net1, row: 1, slot: 1, units: 5,")
    )
    inv = tmp_path / "small-rack.yaml"
    inv.write_text(text)
    result = _design(inv, tmp_path / "o")
    assert result.exit_code == 3
    assert "error FF153 rack 'net1' has no room left for za-leaf04 (1 U)" in result.output


def test_a_rail_optimized_design_prints_its_placement_rule(root, tmp_path):
    """It printed an empty balance table and "optimal, 0 variables" for a placement no solver made."""
    inventory = root / "tests" / "design" / "inventories" / "dgx-h100-1su.yaml"
    result = runner.invoke(app, ["design", str(inventory), "-o", str(tmp_path / "p")])
    assert result.exit_code == 0, result.output
    assert "role balance" not in result.output and "0 variables" not in result.output
    assert "placement rail-optimized: by rule" in result.output
    lab = runner.invoke(app, ["design", str(root / "inventories" / "lab.yaml"), "-o", str(tmp_path / "lab")])
    assert "role balance per leaf" in lab.output and "solver cbc: optimal" in lab.output


def test_a_run_beyond_the_aoc_reach_is_warned_about(root, tmp_path):
    """A 112 m run was written as a 112 m AOC without a word (the catalog lists AOCs to 100 m): FF156, exit 0."""
    text = (root / "inventories" / "lab.yaml").read_text()
    far = tmp_path / "far.yaml"
    far.write_text(text.replace("{name: r4, row: 2, slot: 1,", "{name: r4, row: 46, slot: 1,"))
    result = _design(far, tmp_path / "far")
    assert result.exit_code == 0, result.output
    assert "warning FF156 cable za-leaf01-p03 (node-leaf, AOC) runs 112 m from rack r4 to rack net1" in result.output
    assert "FF156" not in _design(root / "inventories" / "lab.yaml", tmp_path / "lab").output


def _far_h100(root: Path, tmp_path: Path, row: int) -> Path:
    """One DGX H100 unit (NDR) with its last rack of nodes `row` rows from the switches."""
    text = (root / "tests" / "design" / "inventories" / "dgx-h100-1su.yaml").read_text()
    path = tmp_path / f"far-{row}.yaml"
    path.write_text(text.replace("{name: c08, row: 1, slot: 8}", f"{{name: c08, row: {row}, slot: 8}}"))
    return path


def test_an_ndr_run_beyond_multimode_reach_takes_single_mode_optics(root, tmp_path):
    """NDR multimode twin-port optics reach 50 m: a 100 m run was listed as multimode fibre with the multimode
    transceivers (the one reach figure was the AOC's 100 m); now it is single-mode fibre and transceivers."""
    result = _design(_far_h100(root, tmp_path, 30), tmp_path / "p")  # c08's runs: about 77 m, 100 m standard
    assert result.exit_code == 0 and "FF156" not in result.output, result.output
    bom = {row.split(",")[1]: row.split(",")[2] for row in (tmp_path / "p" / "bom.csv").read_text().splitlines()[1:]}
    assert bom["fibre 100 m single-mode"] == "32"  # c08's 4 nodes x 8 NICs
    assert "fibre 100 m" not in bom
    assert bom["NDR OSFP single-mode (NIC)"] == "32" and bom["NDR OSFP (NIC)"] == "224"
    # 32 runs from c08 reach 8 rail leaves, 4 ports each: 2 cages per leaf take single-mode
    assert bom["NDR twin-port OSFP single-mode (switch)"] == "16"


def test_a_run_beyond_every_medium_of_its_speed_is_warned_about(root, tmp_path):
    """FF156 names the reach of the speed's longest medium: an NDR run of 600+ m is beyond single-mode's 500 m."""
    result = _design(_far_h100(root, tmp_path, 250), tmp_path / "p")
    assert result.exit_code == 0, result.output
    assert "beyond the 500 m a NDR single-mode run reaches (NVIDIA MMS4X00-NM" in result.output
    near = _design(_far_h100(root, tmp_path, 45), tmp_path / "near")  # 112 m: warned as beyond the AOC's 100 m before
    assert near.exit_code == 0 and "FF156" not in near.output, near.output
