"""The rendered topology.conf read by the real slurmctld (Debian's slurmctld, topology/tree): every compute node
under exactly one leaf (no "Multiple leaf switches contain nodes"), no topology error, and a top switch per zone
that reaches every node, for zones (lab), planes (planes-lab: the first plane stands for all) and a rail-optimized
three-layer tree (three-lab: leaves, spines per pod, cores)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from ffplan.render.exports import topology_conf
from tests.support.hostlist import expand_hostlist
from tests.support.plans import design_file, designed

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
INVENTORIES = ROOT / "tests" / "golden" / "inventories"


def _slurmctld() -> str:
    exe = shutil.which("slurmctld") or shutil.which("slurmctld", path="/usr/sbin:/sbin")
    if not exe:
        pytest.skip("slurmctld not installed: run `make test` as root, or apt-get install slurmctld")
    return exe


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_by_slurmctld(folder: Path, topology: str, nodes: list[str]) -> str:
    """Start slurmctld in the foreground on `topology`, return its log once it has built its switch table."""
    exe = _slurmctld()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "state").mkdir(exist_ok=True)
    (folder / "topology.conf").write_text(topology)
    (folder / "slurm.conf").write_text(
        "\n".join(
            [
                "ClusterName=ffplan",
                f"SlurmctldHost={socket.gethostname()}",
                f"SlurmctldPort={_free_port()}",
                f"SlurmUser={os.environ.get('USER') or 'root'}",
                f"StateSaveLocation={folder / 'state'}",
                f"SlurmctldPidFile={folder / 'slurmctld.pid'}",
                "TopologyPlugin=topology/tree",
                "SelectType=select/cons_tres",
                f"NodeName={','.join(nodes)} CPUs=8 State=UNKNOWN",
                "PartitionName=all Nodes=ALL Default=YES",
                "",
            ]
        )
    )
    log = folder / "slurmctld.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            [exe, "-D", "-i", "-vvvv", "-f", str(folder / "slurm.conf")],
            stdout=fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 30
        while "switches_dist" not in log.read_text(errors="replace") and proc.poll() is None:
            assert time.monotonic() < deadline, "slurmctld did not read topology.conf in 30 s"
            time.sleep(0.1)
        time.sleep(0.3)  # the warnings about the switch table follow it
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    return log.read_text(errors="replace")


def _switches(log: str) -> list[tuple[int, str, list[str]]]:
    return [
        (int(m[1]), m[2], expand_hostlist(m[3]))
        for m in re.finditer(r"Switch level:(\d+) name:(\S+) nodes:(\S+) switches:", log)
    ]


@pytest.mark.parametrize("case", ["lab", "planes-lab", "three-lab", "roce"])
def test_slurmctld_reads_one_leaf_per_node(case, tmp_path):
    """roce: an Ethernet plan's topology.conf (tests/lint/roce-base.yaml) is the same tree of leaves and spines."""
    _slurmctld()
    plan = (
        designed("lab")
        if case == "lab"
        else design_file(ROOT / "tests" / "lint" / "roce-base.yaml" if case == "roce" else INVENTORIES / f"{case}.yaml")
    )
    compute = sorted(n.hostname for n in plan.nodes if n.role == "compute")
    log = read_by_slurmctld(tmp_path, topology_conf(plan), compute)
    assert "Multiple leaf switches" not in log
    assert not re.search(r"error: .*(topolog|switch)", log, re.I), log
    switches = _switches(log)
    leaves = [nodes for level, _name, nodes in switches if level == 0]
    assert sorted(n for nodes in leaves for n in nodes) == compute  # each node under one leaf, every node once
    tops = {name: nodes for level, name, nodes in switches if name in {z.name for z in plan.zones}}
    covered = sorted(n for nodes in tops.values() for n in nodes)
    assert covered == compute
    if case == "three-lab":
        assert max(level for level, _n, _s in switches) == 3  # leaf, spine, core, zone top
