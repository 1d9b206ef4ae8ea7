"""Nodes behind PCIe switches: the profile's tree, NCCL path types with the switch level, the NIC each GPU
takes, NCCL_IB_HCA and NCCL_CROSS_NIC, and the topology XML's nesting.

Path rules from NCCL's src/graph/paths.cc (ncclTopoSetPaths, 2.30.7): a hop between two PCI nodes is PXB, a
hop touching a CPU PHB, between CPUs SYS, otherwise the PCI link type PIX. Root ports are not nodes (xml.cc
ncclTopoGetXmlFromSys skips them), so two switches on one root port meet at the CPU. tests/render/
test_nccl_loader.py checks the same against NCCL's own code where it can be built.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from ncclxml import check_lexical, check_tree, parse
from pcie_variants import variant_plan

from ffplan.design.hosts import cross_nic
from ffplan.lint import lint_file
from ffplan.plan.check import plan_problems
from ffplan.render.hosts import render_hosts

FIXTURES = Path(__file__).resolve().parents[1] / "lint" / "fixtures"


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pcie")
    return {name: variant_plan(name, tmp) for name in ("hgx", "nested", "shared-root-port")}


def _gpus(plan):
    (profile,) = plan.hosts
    return {d.name: d for d in profile.devices if d.kind == "gpu"}


def test_gpu_i_takes_nic_i_under_its_switch(plans):
    gpus = _gpus(plans["hgx"])
    assert {g: (d.nearest_nic, d.nic_path, d.gdr) for g, d in gpus.items()} == {
        f"gpu{i}": (f"mlx5_{i}", "PIX", True) for i in range(8)
    }
    assert {d.pcie_switch for d in gpus.values()} == {"sw0", "sw1", "sw2", "sw3"}


def test_switch_to_switch_hop_is_pxb_and_two_switches_on_a_root_port_meet_at_the_cpu(plans):
    nested = _gpus(plans["nested"])
    # gpu1's nearest NICs are sw0's; NCCL spreads over the GPUs nearest to the first of them: gpu0 alone
    assert (nested["gpu1"].nearest_nic, nested["gpu1"].nic_path) == ("mlx5_0", "PXB")
    assert (nested["gpu0"].nearest_nic, nested["gpu0"].nic_path) == ("mlx5_0", "PIX")
    shared = _gpus(plans["shared-root-port"])
    assert [shared[g].nic_path for g in ("gpu2", "gpu3")] == ["PHB", "PHB"]
    assert shared["gpu2"].nearest_nic in {"mlx5_0", "mlx5_1"}
    # GPUDirect RDMA at the profile's level (PHB) still reaches them; across sockets it would be SYS
    assert shared["gpu2"].gdr


def test_profile_lists_switches_top_down(plans):
    (profile,) = plans["nested"].hosts
    order = [s.name for s in profile.pcie_switches]
    assert order.index("sw0") < order.index("sw4")
    sw4 = next(s for s in profile.pcie_switches if s.name == "sw4")
    assert (sw4.parent, sw4.root_port, sw4.numa, sw4.bus_id, sw4.pci_class) == (
        "sw0",
        "rp0",
        0,
        "0000:16:00.0",
        "0x060400",
    )
    assert (sw4.link_speed, sw4.link_width) == ("32.0 GT/s PCIe", 16)


def test_nccl_conf_lists_every_nic_and_chooses_cross_nic(plans):
    (profile,) = plans["hgx"].hosts
    settings = {s.name: s.value for s in profile.nccl}
    assert settings["NCCL_IB_HCA"] == "=" + ",".join(f"mlx5_{i}:1" for i in range(8))
    assert settings["NCCL_CROSS_NIC"] == "2"
    conf = render_hosts(plans["hgx"])["hosts/hgx-h800/nccl.conf"]
    assert "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1\n" in conf
    assert "NCCL_CROSS_NIC=2\n" in conf


@pytest.mark.parametrize(
    "layout, placement, nics, value",
    [
        ("planes", "balanced", 8, "0"),
        ("planes", "rail-optimized", 8, "0"),
        ("zones", "rail-optimized", 8, "0"),
        ("zones", "balanced", 8, "2"),
        ("zones", "balanced", 2, "2"),
        ("planes", "balanced", 1, None),
        ("zones", "balanced", 1, None),
    ],
)
def test_cross_nic_per_layout(layout, placement, nics, value):
    setting = cross_nic(layout, placement, nics)
    assert (setting.value if setting else None) == value
    if setting:
        assert setting.name == "NCCL_CROSS_NIC" and setting.comment.startswith(value)


def test_topology_nests_devices_in_their_switch(plans):
    plan = plans["nested"]
    text = render_hosts(plan)["hosts/hgx-h800/topo.xml"]
    assert check_lexical(text) == []
    root = parse(text)
    assert check_tree(root) == []
    cpu0 = root.findall("cpu")[0]
    sw0 = cpu0.find("pci[@busid='0000:15:00.0']")
    assert (
        sw0.get("class") == "0x060400" and sw0.get("link_speed") == "32.0 GT/s PCIe" and sw0.get("link_width") == "16"
    )
    assert [p.get("busid") for p in sw0.findall("pci")] == [
        "0000:16:00.0",
        "0000:18:00.0",
        "0000:19:00.0",
        "0000:1c:00.0",
    ]
    assert [p.get("busid") for p in sw0.findall("pci/pci")] == ["0000:1b:00.0"]  # gpu1 under sw4
    (profile,) = plan.hosts
    assert len(root.findall(".//pci")) == len(profile.devices) + len(profile.pcie_switches)


def test_plan_refuses_an_unknown_or_later_listed_switch(plans):
    plan = plans["nested"]
    (profile,) = plan.hosts
    switches = list(profile.pcie_switches)
    reordered = profile.model_copy(update={"pcie_switches": switches[::-1]})
    device = profile.devices[0].model_copy(update={"pcie_switch": "sw9"})
    broken = reordered.model_copy(update={"devices": [device, *profile.devices[1:]]})
    problems = [message for _, message in plan_problems(plan.model_copy(update={"hosts": [broken]}))]
    assert "unknown PCIe switch 'sw9'" in problems
    assert "unknown PCIe switch listed before it 'sw0'" in problems


@pytest.mark.parametrize("parent", ["pcie_switch: sw0, root_port: rp0", "model: GPU1"])
def test_a_device_sits_on_a_root_port_or_a_switch_not_both_nor_neither(tmp_path, parent):
    text = (FIXTURES / "FF308" / "pass.yaml").read_text()
    line = "{name: gpu0, kind: gpu, model: GPU1, pcie_switch: sw0,"
    assert line in text
    path = tmp_path / "inventory.yaml"
    path.write_text(
        text.replace(
            line, "{name: gpu0, kind: gpu, " + ("model: GPU1, " + parent if "switch" in parent else parent) + ","
        )
    )
    (finding,) = lint_file(path).diagnostics
    assert finding.rule == "FF012" and "exactly one of root_port or pcie_switch" in finding.message
