"""Storage bandwidth per GPU: the plan's target (the inventory's, else the guide's 1 GiB/s, labelled), and what the
storage-read pattern delivers over the planned routes, which agrees with lint's NIC-port bound when the storage
servers' ports are the bottleneck (FF113)."""

import json

import pytest
from typer.testing import CliRunner

from ffplan.analyze import analyze
from ffplan.cli.main import app
from ffplan.design import design
from ffplan.design.storage import GUIDE_SOURCE, gbps_to_gib_s, storage_ports
from ffplan.inventory import load_inventory
from tests.support.plans import write_plan
from tests.conftest import ROOT

LAB = ROOT / "inventories" / "lab.yaml"


@pytest.fixture(scope="module")
def lab():
    loaded = load_inventory(LAB)
    return loaded, design(loaded)


def test_the_plan_carries_the_default_target_labelled(lab):
    _, plan = lab
    assert plan.storage_target.gib_s_per_gpu == 1.0 and plan.storage_target.source == GUIDE_SOURCE
    assert "GPU-server hardware guide" in GUIDE_SOURCE


def test_storage_read_delivers_what_the_busiest_port_allows(lab):
    loaded, plan = lab
    r = analyze(plan, ["storage-read"])[0]
    # 4 storage servers x 2 HDR ports send to 18 compute nodes: the busiest storage port sends 9 flows
    assert (r.flows, r.max_load, r.ca_max_inject, r.ca_max_eject) == (72, 3, 9, 4)
    assert r.storage_gib_s_per_gpu == pytest.approx(gbps_to_gib_s(200) / 9 * 72 / 72)
    ports, gbps, gpus = storage_ports(loaded)
    assert (ports, gbps, gpus) == (8, 1600, 72)
    assert r.storage_gib_s_per_gpu == pytest.approx(gbps_to_gib_s(gbps) / gpus)  # the ports are the bottleneck
    assert all(x.storage_gib_s_per_gpu is None for x in analyze(plan, ["all-to-all"]))


def test_analyze_prints_and_writes_it_against_the_target(lab, tmp_path):
    _, plan = lab
    write_plan(plan, tmp_path / "plan.yaml")
    text = CliRunner().invoke(app, ["analyze", str(tmp_path), "-p", "storage-read"], env={"COLUMNS": "300"}).output
    assert (
        "storage read: 2.59 GiB/s per GPU, meets the target 1 GiB/s per GPU (default: the GPU-server hardware "
        "guide's about 1 GiB/s of storage throughput per GPU)" in text
    )
    data = json.loads(CliRunner().invoke(app, ["analyze", str(tmp_path), "-p", "storage-read", "-f", "json"]).output)
    assert data["patterns"][0]["storage_gib_s_per_gpu"] == pytest.approx(2.587, abs=1e-3)
    assert data["storage_target"] == {"gib_s_per_gpu": 1.0, "source": GUIDE_SOURCE}
    high = plan.model_copy(
        update={
            "storage_target": plan.storage_target.model_copy(
                update={"gib_s_per_gpu": 3.0, "source": "inventory storage.gib_s_per_gpu"}
            )
        }
    )
    write_plan(high, tmp_path / "plan.yaml")
    text = CliRunner().invoke(app, ["analyze", str(tmp_path), "-p", "storage-read"], env={"COLUMNS": "300"}).output
    assert (
        "storage read: 2.59 GiB/s per GPU, UNDER the target 3 GiB/s per GPU (inventory storage.gib_s_per_gpu)" in text
    )
