"""`ffplan render`: the whole folder through write_folder, byte-identical for identical plans, no
timestamps, refusal of foreign folders."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from typer.testing import CliRunner

from tests.support.plans import design_file
from ffplan.cli.main import app
from ffplan.plan import dump_plan
from ffplan.render import render_plan, render_plan_chunked

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
DATE = re.compile(r"\b(19|20)\d\d-[01]\d-[0-3]\d\b|\b[0-2]\d:[0-5]\d:[0-5]\d\b")


def _write_plan(tmp_path: Path, plan, name: str = "plan") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "plan.yaml").write_text(dump_plan(plan))
    return folder


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_render_writes_every_file_with_a_manifest(tmp_path, lab_plan):
    plan_dir = _write_plan(tmp_path, lab_plan)
    out = tmp_path / "out"
    r = runner.invoke(app, ["render", str(plan_dir), "-o", str(out), "--prefix", "/srv/opensm", "-q"])
    assert r.exit_code == 0, r.output
    tree = _tree(out)
    manifest = json.loads(tree.pop("manifest.json"))
    assert manifest["format"] == "ffplan-output" and manifest["kind"] == "render"
    listed = {e["path"]: e["sha256"] for e in manifest["files"]}
    assert listed == {name: hashlib.sha256(data).hexdigest() for name, data in tree.items()}
    assert {name.split("/")[0] for name in tree} == {"hosts", "exports", "opensm", "plan.yaml"}
    assert tree["plan.yaml"] == (plan_dir / "plan.yaml").read_bytes()  # the plan these files came from
    for name in (
        "hosts/manifest.csv",
        "hosts/gpu-node/topo.xml",
        "hosts/gpu-node/nccl.conf",
        "hosts/storage-node/host-check.sh",
        "exports/topology.conf",
        "exports/ansible-inventory.yaml",
        "exports/netbox/cables.csv",
        "exports/bom.csv",
        "exports/diagram-za.svg",
        "exports/diagram-zb.svg",
    ):
        assert name in tree, name
    assert (out / "hosts/gpu-node/host-check.sh").stat().st_mode & 0o111
    for name, data in tree.items():
        assert not DATE.search(data.decode()), f"{name} carries a date or time"


def test_the_folder_is_render_plan_byte_for_byte_with_the_lft_file_streamed(tmp_path, lab_plan):
    # the CLI writes the LFT file from chunks made while it is written; the bytes are render_plan's text
    assert not isinstance(render_plan_chunked(lab_plan)["opensm/lfts.dump"], str)
    out = tmp_path / "out"
    r = runner.invoke(app, ["render", str(_write_plan(tmp_path, lab_plan)), "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    tree = _tree(out)
    tree.pop("manifest.json")
    assert tree == {name: text.encode() for name, text in render_plan(lab_plan).items()}


def test_identical_plans_render_byte_identical_folders(tmp_path, lab_plan):
    # two independent designs of the same inventory, rendered into two folders
    again = design_file(ROOT / "inventories" / "lab.yaml")
    assert dump_plan(again) == dump_plan(lab_plan)
    assert render_plan(again) == render_plan(lab_plan)
    first, second = tmp_path / "a", tmp_path / "b"
    for plan, out in ((lab_plan, first), (again, second)):
        r = runner.invoke(
            app, ["render", str(_write_plan(tmp_path, plan, f"plan-{out.name}") / "plan.yaml"), "-o", str(out), "-q"]
        )
        assert r.exit_code == 0, r.output
    assert _tree(first) == _tree(second)
    # and re-rendering over an ffplan folder replaces it with the same bytes
    r = runner.invoke(app, ["render", str(tmp_path / "plan-a"), "-o", str(first), "-q"])
    assert r.exit_code == 0, r.output
    assert _tree(first) == _tree(second)


def test_render_refuses_a_folder_ffplan_did_not_write(tmp_path, lab_plan):
    plan_dir = _write_plan(tmp_path, lab_plan)
    out = tmp_path / "precious"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    r = runner.invoke(app, ["render", str(plan_dir), "-o", str(out), "-q"])
    assert r.exit_code == 2
    assert "FF904" in r.output and (out / "notes.txt").read_text() == "mine\n"
    # --force replaces only what ffplan wrote, which is nothing here (tests/security/test_outdir.py)
    r = runner.invoke(app, ["render", str(plan_dir), "-o", str(out), "-q", "--force"])
    assert r.exit_code == 2
    assert (out / "notes.txt").read_text() == "mine\n" and not (out / "manifest.json").exists()


def test_render_reports_an_unreadable_plan(tmp_path):
    r = runner.invoke(app, ["render", str(tmp_path / "missing.yaml"), "-o", str(tmp_path / "out")])
    assert r.exit_code == 2
    assert not (tmp_path / "out").exists()


def test_render_writes_the_plan_it_read_as_it_is(tmp_path, lab_plan):
    """plan.yaml in the output is the validated input file, not the plan written again (a reviewer's comment in it
    stays; a 16k-GPU plan is not serialized a second time)."""
    from ffplan.plan import load_plan

    plan_dir = _write_plan(tmp_path, lab_plan)
    text = "# reviewed by the network team\n" + (plan_dir / "plan.yaml").read_text()
    (plan_dir / "plan.yaml").write_text(text)
    r = runner.invoke(app, ["render", str(plan_dir), "-o", str(tmp_path / "out"), "-q"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "out" / "plan.yaml").read_text() == text
    assert load_plan(tmp_path / "out" / "plan.yaml") == lab_plan
