"""HFReduce and 3FS are Fire-Flyer's own software: their host files are rendered only where a traffic class of the
plan carries them (a DGX SuperPOD-style plan got hfreduce.env and 3fs-client-sl.toml, and host-check.sh then
failed on files nobody installs)."""

from __future__ import annotations

from pathlib import Path

from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.render.hosts import render_hosts
from tests.support.plans import designed

DGX_1SU = Path(__file__).parents[1] / "design" / "inventories" / "dgx-h100-1su.yaml"
FIRE_FLYER_FILES = {"hfreduce.env", "3fs-client-sl.toml", "3fs-storage-sl.toml"}


def test_a_dgx_profile_gets_no_fire_flyer_files():
    plan = design(load_inventory(DGX_1SU))
    assert [c.name for c in plan.qos.classes] == ["other", "nccl"]
    (profile,) = plan.hosts
    assert not FIRE_FLYER_FILES & {f.name for f in profile.files}
    assert not any(s.software in ("HFReduce", "3FS client") for s in profile.sls)
    files = render_hosts(plan)
    assert not any(Path(name).name in FIRE_FLYER_FILES for name in files)
    check = next(text for name, text in files.items() if name.endswith("host-check.sh"))
    assert "hfreduce.env" not in check and "\ncheck_sl " not in check


def test_fire_flyer_profiles_keep_them():
    plan = designed("lab")
    gpu = next(p for p in plan.hosts if p.name == "gpu-node")
    storage = next(p for p in plan.hosts if p.name == "storage-node")
    assert {"hfreduce.env", "3fs-client-sl.toml"} <= {f.name for f in gpu.files}
    assert "3fs-storage-sl.toml" in {f.name for f in storage.files}
