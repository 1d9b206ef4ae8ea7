"""Every rendered NCCL topology XML follows NCCL's parser rules and matches its node model."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from ffplan.design.hosts import numa_nodes
from ffplan.inventory import load_inventory
from ffplan.render.hosts import render_hosts
from ncclxml import check_lexical, check_tree, parse

ROOT = Path(__file__).resolve().parents[2]


def _topos(plan):
    files = render_hosts(plan)
    return {p.name: files[f"hosts/{p.name}/topo.xml"] for p in plan.hosts if p.topo_file}


@pytest.mark.parametrize("name", ["lab", "fire-flyer-2"])
def test_topology_files_follow_nccl_rules_and_the_node_model(name, lab_plan, ff2_plan):
    plan = lab_plan if name == "lab" else ff2_plan
    inv = load_inventory(ROOT / "inventories" / f"{name}.yaml").inventory
    topos = _topos(plan)
    assert topos, "no topology file rendered"
    for profile in plan.hosts:
        model = inv.models.nodes[profile.node_model]
        has_gpus = any(d.kind == "gpu" for d in model.devices)
        assert (profile.name in topos) == has_gpus, f"{profile.name}: topology XML exactly when the model has GPUs"
        if not has_gpus:
            continue
        text = topos[profile.name]
        assert check_lexical(text) == [], profile.name
        root = parse(text)
        assert check_tree(root) == [], profile.name
        # one <cpu> per NUMA node, with the node's cpumap
        cpus = root.findall("cpu")
        expected = numa_nodes(model)
        assert [int(c.get("numaid")) for c in cpus] == [n.id for n in expected]
        assert [c.get("affinity") for c in cpus] == [n.affinity for n in expected]
        # every GPU and NIC of the model, once, under the <cpu> of its root port's NUMA node
        numa_of_port = {rp.name: rp.numa for rp in model.root_ports}
        placed = {}
        for cpu in cpus:
            for pci in cpu.findall("pci"):
                placed[pci.get("busid")] = (int(cpu.get("numaid")), pci)
        bus_ids = [pci.get("busid") for pci in root.iter("pci")]
        assert len(bus_ids) == len(set(bus_ids)), "bus ids unique"
        assert len(bus_ids) == len(model.devices)
        per_numa = Counter()
        for d in model.devices:
            bus = d.bus_id if d.kind == "gpu" else d.bus_id[:-1] + "0"
            numa, pci = placed[bus]
            assert numa == numa_of_port[d.root_port], f"{d.name} under the wrong NUMA node"
            spec = inv.models.gpus[d.model] if d.kind == "gpu" else inv.models.nics[d.model]
            assert f"{pci.get('vendor')}:{pci.get('device')}" == spec.pci_id
            assert pci.get("class") == ("0x030200" if d.kind == "gpu" else "0x020700")
            if d.kind == "nic":
                assert pci.find("nic/net").get("name") == d.name
            per_numa[(numa, d.kind)] += 1
        # NCCL pairs GPUs with the NIC of their NUMA node: the file must show the same per-node mix as the model
        model_mix = Counter((numa_of_port[d.root_port], d.kind) for d in model.devices)
        assert per_numa == model_mix


def test_fire_flyer_2_compute_topology(ff2_plan):
    """The FF2 node: 8 A100 on Gen4 x16 root ports, the NIC on NUMA node 0 with gpu0-3; gpu4-7 on node 1."""
    text = _topos(ff2_plan)["ff2-compute"]
    root = parse(text)
    cpu0, cpu1 = root.findall("cpu")
    assert cpu0.get("affinity") == "00000000,ffffffff,00000000,ffffffff"
    assert cpu1.get("affinity") == "ffffffff,00000000,ffffffff,00000000"
    assert cpu0.get("familyid") == "143" and cpu0.get("modelid") == "49"
    assert [p.get("busid") for p in cpu0.findall("pci")] == [
        "0000:01:00.0",
        "0000:21:00.0",
        "0000:41:00.0",
        "0000:61:00.0",
        "0000:71:00.0",
    ]
    assert cpu0.find("pci/nic/net").get("name") == "mlx5_0"
    assert cpu1.find("pci/nic") is None
    assert {p.get("link_speed") for p in root.iter("pci")} == {"16.0 GT/s PCIe"}
    assert {p.get("link_width") for p in root.iter("pci")} == {"16"}


@pytest.mark.parametrize(
    "bad, message",
    [
        ('<?xml version="1.0"?>\n<system version="1">\n</system>\n', "XML declaration"),
        (
            '<system version="1">\n\t<cpu numaid="0" affinity="ff" arch="x86_64" vendor="AuthenticAMD">\n\t</cpu>\n</system>\n',
            "tab",
        ),
        ('<system version="1">\n  <cpu numaid="0"\n       affinity="ff">\n  </cpu>\n</system>\n', "start or end tag"),
        ("<system version='1'>\n</system>\n", "single quotes"),
    ],
)
def test_checker_catches_what_nccl_rejects(bad, message):
    assert any(message in e for e in check_lexical(bad)), check_lexical(bad)


def test_checker_catches_wrong_busid_and_speed():
    text = (
        '<system version="1">\n  <cpu numaid="0" affinity="ff" arch="x86_64" vendor="AuthenticAMD">\n'
        '    <pci busid="0000:0A:00.0" class="0x030200" link_speed="16.0 GT/s" link_width="16"/>\n  </cpu>\n</system>\n'
    )
    errors = check_tree(parse(text))
    assert any("lowercase" in e for e in errors) and any("dictionary" in e for e in errors)


def test_checker_catches_a_misplaced_or_empty_bridge():
    cpu = '<system version="1">\n  <cpu numaid="0" affinity="ff" arch="x86_64" vendor="AuthenticAMD">\n{}  </cpu>\n</system>\n'
    empty = '    <pci busid="0000:15:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16"/>\n'
    under_gpu = (
        '    <pci busid="0000:18:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">\n'
        '      <pci busid="0000:19:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"/>\n    </pci>\n'
    )
    assert any("without devices" in e for e in check_tree(parse(cpu.format(empty))))
    assert any("not a bridge" in e for e in check_tree(parse(cpu.format(under_gpu))))
