"""The design step's host computations: CPU masks in the kernel's format, NUMA layouts, NCCL's CPU family,
profiles per model/role/settings, and Slurm hostlists."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st
from tests.support.plans import design_file

from ffplan.design.hosts import cpulist, cpumap, nccl_family_id, numa_nodes
from ffplan.inventory.models import Cpu, NodeModel
from ffplan.render.exports import hostlist
from tests.support.hostlist import expand_hostlist

ROOT = Path(__file__).resolve().parents[2]


def test_cpumap_matches_the_kernels_format():
    # /sys/devices/system/node/node0/cpumap on a 96-CPU host with CPUs 24-47 in node 0 (reference §1.4)
    assert cpumap(list(range(24, 48)), 96) == "00000000,0000ffff,ff000000"
    # the first group only has the digits its bits need, as the kernel's %*pb prints it
    assert cpumap([0, 1, 2, 3], 12) == "00f"
    assert cpumap(list(range(16)), 32) == "0000ffff"
    assert cpumap([0], 33) == "0,00000001"
    assert cpulist([0, 1, 2, 3, 8, 10, 11]) == "0-3,8,10-11"


def test_nccl_cpu_family_convention():
    assert nccl_family_id(23) == 143  # Rome, as NCCL's own dumps show it
    assert nccl_family_id(25) == 175  # Milan
    assert nccl_family_id(6) == 6  # Intel


def test_numa_nodes_per_nps():
    def model(nps, sockets=2, cores=32, threads=2):
        return NodeModel(cpu=Cpu(sockets=sockets, cores_per_socket=cores, threads_per_core=threads, nps=nps))

    nps1 = numa_nodes(model(1))
    assert [(n.id, n.socket, n.cpus) for n in nps1] == [(0, 0, "0-31,64-95"), (1, 1, "32-63,96-127")]
    nps4 = numa_nodes(model(4))
    assert len(nps4) == 8 and [n.socket for n in nps4] == [0] * 4 + [1] * 4
    assert nps4[5].cpus == "40-47,104-111"
    nps0 = numa_nodes(model(0))
    assert len(nps0) == 1 and nps0[0].cpus == "0-127" and nps0[0].affinity == "ffffffff," * 3 + "ffffffff"
    # every CPU in exactly one node
    for nodes in (nps1, nps4, nps0):
        masks = [int(n.affinity.replace(",", ""), 16) for n in nodes]
        assert sum(masks) == (1 << 128) - 1


def test_fire_flyer_2_profiles(ff2_plan):
    by = {p.name: p for p in ff2_plan.hosts}
    assert sorted(by) == ["ff2-compute", "ff2-mgmt", "ff2-storage"]
    compute = by["ff2-compute"]
    assert len(compute.hosts) == 1200 and compute.topo_file == "/etc/nccl/topo.xml"
    gdr = {d.name: (d.nic_path, d.gdr) for d in compute.devices if d.kind == "gpu"}
    assert gdr["gpu0"] == ("PHB", True) and gdr["gpu7"] == ("SYS", False)
    assert {d.name: d.root_port_peers for d in compute.devices}["gpu5"] == ["gpu6"]
    nccl = {s.name: s.value for s in compute.nccl}
    assert nccl["NCCL_IB_HCA"] == "=mlx5_0:1" and nccl["NCCL_NET_GDR_LEVEL"] == "PHB"
    sls = {s.software: s.sl for s in compute.sls}
    qos = {c.name: c.sl for c in ff2_plan.qos.classes}
    assert sls["NCCL"] == qos["nccl"] and sls["3FS client"] == qos["storage"] and sls["HFReduce"] == qos["hfreduce"]
    storage = by["ff2-storage"]
    assert storage.topo_file is None and storage.nccl == [] and len(storage.relaxed_ordering.nic_bus_ids) == 2
    assert "3fs-storage-sl.toml" in {f.name for f in storage.files}


def test_a_host_that_overrides_a_setting_gets_its_own_profile(tmp_path):
    inv = yaml.safe_load((ROOT / "inventories" / "lab.yaml").read_text())
    inv["groups"][2]["hosts"][1]["settings"] = {"relaxed_ordering": False}
    f = tmp_path / "inv.yaml"
    f.write_text(yaml.safe_dump(inv))
    plan = design_file(f)
    by = {p.name: p for p in plan.hosts}
    assert by["mgmt-node"].hosts == ["mgmt1"] and by["mgmt-node-2"].hosts == ["mgmt2"]
    assert by["mgmt-node-2"].relaxed_ordering.devctl_value == "0000"


def test_hostlist_examples():
    assert hostlist([f"cn{i:04d}" for i in range(1, 16)]) == "cn[0001-0015]"
    assert hostlist(["gpu01", "gpu02", "gpu04", "mgmt1"]) == "gpu[01-02,04],mgmt1"
    assert hostlist(["stor9", "stor10", "stor11"]) == "stor[9,10-11]"
    assert hostlist(["a", "b1"]) == "a,b1"
    assert expand_hostlist("stor[9,10-11],x") == ["stor9", "stor10", "stor11", "x"]


@given(
    st.lists(
        st.tuples(st.sampled_from(["cn", "gpu", "a-b", "x1y"]), st.integers(0, 120), st.sampled_from([1, 2, 4])),
        max_size=40,
    )
)
def test_hostlist_round_trips(items):
    names = list(dict.fromkeys(f"{p}{n:0{w}d}" for p, n, w in items))
    assert sorted(expand_hostlist(hostlist(names))) == sorted(names)
