"""Without ports_per_zone, a rail-optimized tree is sized in the whole scalable units its nodes need, as NVIDIA's
reference architecture builds it (it was the full tree: 127 DGX got 64 leaves + 32 spines, half the leaves empty)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ffplan.design import design
from ffplan.inventory import load_inventory

DGX_1SU = Path(__file__).parent / "inventories" / "dgx-h100-1su.yaml"


def _dgx(tmp_path, nodes: int):
    inv = yaml.safe_load(DGX_1SU.read_text())
    inv["racks"] = [{"name": "net1", "row": 0, "slot": 1, "units": 60}] + [
        {"name": f"c{i:02d}", "row": 1, "slot": i} for i in range(1, 33)
    ]
    group = inv["groups"][0]
    group.update(count=nodes, racks=[f"c{i:02d}" for i in range(1, 33)])
    path = tmp_path / "dgx.yaml"
    path.write_text(yaml.safe_dump(inv, sort_keys=False))
    return design(load_inventory(path))


@pytest.mark.parametrize("nodes, leaves, spines", [(32, 8, 4), (64, 16, 8), (127, 32, 16)])
def test_whole_scalable_units(tmp_path, nodes, leaves, spines):
    plan = _dgx(tmp_path, nodes)
    (zone,) = plan.zones
    assert (zone.leaves, zone.spines) == (leaves, spines)  # NVIDIA's table: 1 SU 8 + 4, 2 SUs 16 + 8, 4 SUs 32 + 16
    assert zone.endpoint_ports == leaves * 32


def dgx_with_ufm(tmp_path) -> Path:
    """NVIDIA's 4-SU build: 127 DGX H100 and two UFM appliances of one compute-fabric port each."""
    inv = yaml.safe_load(DGX_1SU.read_text())
    inv["models"]["nodes"]["ufm"] = {
        "cpu": {"sockets": 1, "cores_per_socket": 16, "nps": 1},
        "rack_units": 1,
        "root_ports": [{"name": "rp0", "numa": 0}],
        "devices": [
            {"name": "mlx5_0", "kind": "nic", "model": "CX7-NDR", "root_port": "rp0", "bus_id": "0000:01:00.0"}
        ],
    }
    inv["racks"] = [{"name": "net1", "row": 0, "slot": 1, "units": 60}] + [
        {"name": f"c{i:02d}", "row": 1, "slot": i} for i in range(1, 34)
    ]
    inv["groups"][0].update(count=127, racks=[f"c{i:02d}" for i in range(1, 33)])
    inv["groups"].append(
        {
            "name": "ufm",
            "role": "management",
            "model": "ufm",
            "count": 2,
            "hostname": "ufm{index}",
            "racks": ["c33"],
            "per_rack": 2,
            "first_u": 1,
        }
    )
    path = tmp_path / "dgx-ufm.yaml"
    path.write_text(yaml.safe_dump(inv, sort_keys=False))
    return path


def test_nodes_with_fewer_ports_than_rails_share_a_unit_place(tmp_path):
    """The appliances take two rails of the place the 128th DGX would have had (every node took a whole place:
    refused with FF110)."""
    from ffplan.lint import lint_file

    path = dgx_with_ufm(tmp_path)
    assert [d.rule for d in lint_file(path).diagnostics] == []
    plan = design(load_inventory(path))
    (zone,) = plan.zones
    assert (zone.leaves, zone.spines) == (32, 16)
    where = {n.hostname: [(p.leaf, p.leaf_port) for p in n.ports] for n in plan.nodes}
    last_leaves = [f"compute-leaf{i}" for i in range(25, 33)]  # unit 4's rail leaves
    assert where["ufm1"] == [(last_leaves[0], 32)] and where["ufm2"] == [(last_leaves[1], 32)]
    assert all(leaf_port < 32 for leaf, leaf_port in where["dgx127"])


def test_the_inventory_names_its_subnet_managers_and_design_says_why(tmp_path):
    """SM hosts were chosen implicitly (the first two GPU nodes without management nodes); UFM appliances can now
    be named, and design prints the choice and its reason."""
    from typer.testing import CliRunner

    from ffplan.cli.main import app

    inv = yaml.safe_load(DGX_1SU.read_text())
    path = tmp_path / "dgx.yaml"
    path.write_text(yaml.safe_dump(inv, sort_keys=False))
    result = CliRunner().invoke(app, ["design", str(path), "-o", str(tmp_path / "a")])
    assert "subnet managers: dgx001 (master), dgx002 (standby): no management node" in result.output
    inv["fabric"]["subnet_managers"] = ["dgx032", "dgx031"]
    path.write_text(yaml.safe_dump(inv, sort_keys=False))
    result = CliRunner().invoke(app, ["design", str(path), "-o", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    assert "subnet managers: dgx032 (master), dgx031 (standby): named by fabric.subnet_managers" in result.output
    assert design(load_inventory(path)).sm_hosts == ["dgx032", "dgx031"]


@pytest.mark.parametrize("pattern", ["ring", "double-binary-tree"])
def test_rings_and_trees_run_on_every_rail(tmp_path, pattern):
    """NCCL runs a ring (and tree) per NIC, port i of a node to port i of the next; analyze used each node's first
    port only, so 8-rail nodes carried an eighth of the flows, all on the rail-0 leaves."""
    from ffplan.analyze import analyze

    plan = _dgx(tmp_path, 64)  # 2 units: the ring crosses between them on every rail
    (result,) = analyze(plan, [pattern])
    assert result.flows == {"ring": 64, "double-binary-tree": 2 * 63 * 2}[pattern] * 8
    loaded_leaves = {t.link.split("[")[0] for t in result.top if t.flows}
    assert len(loaded_leaves) > 2  # not only the two rail-0 leaves


def test_the_rail_optimized_cost_column_equals_the_rail_optimized_plan(tmp_path):
    """The column put the appliances' ports on a storage fabric of its own: 50 switches against the plan's 48."""
    from ffplan.report import designs as d
    from ffplan.report.catalog import resolve_catalog
    from ffplan.report.cost import build_report

    plan = design(load_inventory(dgx_with_ufm(tmp_path)))
    report = build_report(plan, resolve_catalog(plan, "list-price"))
    own = next(r for r in report.designs if r.key == d.FIRE_FLYER)
    rail = next(r for r in report.designs if r.key == d.RAIL_OPTIMIZED)
    assert own.switch_total == rail.switch_total == 48
    assert (own.switches, own.switch_links) == (rail.switches, rail.switch_links)
