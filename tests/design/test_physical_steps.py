"""The physical design steps on their own (sizing, placement, cabling): rail-optimized placement as
ffplan.design.placement describes it and three-layer cabling as ffplan.design.sizing describes the trees.

Three-layer trees are not routed yet (FF605), so these run the steps before routing rather than `design`."""

from collections import Counter
from pathlib import Path

import pytest

from ffplan.design import DesignOptions, design
from ffplan.design.cabling import Cabling, cable
from ffplan.design.floor import floor
from ffplan.design.placement import Placement, place
from ffplan.design.sizing import SizedFabric, ThreeLayerTree, size_fabric
from ffplan.inventory import load_inventory
from tests.conftest import ROOT

THREE_RAIL = Path(__file__).parent / "inventories" / "three-rail.yaml"  # 8 nodes x 4 NICs, 8-port switches
LAB = ROOT / "inventories" / "lab.yaml"
RAIL = ("  ports_per_zone: 16\n", "  ports_per_zone: 16\n  placement: rail-optimized\n")  # lab.yaml, rail-optimized


def physical(path: Path) -> tuple[SizedFabric, Placement, Cabling]:
    loaded = load_inventory(path)
    assert not loaded.collector.has_errors, loaded.collector.items
    sized, cable_floor = size_fabric(loaded), floor(loaded)
    placement = place(loaded, sized, cable_floor)
    return sized, placement, cable(loaded, sized, placement, cable_floor)


def variant(tmp_path: Path, source: Path, *edits: tuple[str, str]) -> Path:
    text = source.read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / source.name
    path.write_text(text)
    return path


def three_layer_tree(tmp_path: Path, ports: int) -> tuple[SizedFabric, Placement, Cabling]:
    """8-port switches: 32 ports are 2 pods (1 core per group, 4 cables to it), 64 are 4 pods (2 cores, 2 cables
    each), 128 are 8 pods (4 cores, 1 cable each)."""
    return physical(variant(tmp_path, THREE_RAIL, ("ports_per_zone: 32", f"ports_per_zone: {ports}")))


def planes_of_one_rail(tmp_path: Path) -> tuple[SizedFabric, Placement, Cabling]:
    """Four planes, NIC i of each node in plane i: one rail per plane."""
    return physical(
        variant(
            tmp_path,
            THREE_RAIL,
            ("  topology: three-layer-fat-tree\n", ""),
            (
                "  zones:\n    - {name: z1, leaf_racks: [net1], spine_racks: [net2], core_racks: [net2]}",
                "  planes:\n"
                + "".join(f"    - {{name: p{i}, leaf_racks: [net1], spine_racks: [net2]}}\n" for i in range(4)).rstrip(
                    "\n"
                ),
            ),
            ("ports_per_zone: 32", "ports_per_zone: 16"),
        )
    )


def zones_with_inter_zone_links(tmp_path: Path) -> tuple[SizedFabric, Placement, Cabling]:
    """Two zones joined by inter-zone cables, whose ends take leaves' highest down-ports; one rail per zone."""
    return physical(variant(tmp_path, LAB, RAIL, ("count: 18", "count: 10")))


FABRICS = {
    "three-layer-2-pods": lambda tmp_path: three_layer_tree(tmp_path, 32),
    "three-layer-4-pods": lambda tmp_path: three_layer_tree(tmp_path, 64),
    "three-layer-8-pods": lambda tmp_path: three_layer_tree(tmp_path, 128),
    "planes": planes_of_one_rail,
    "zones-with-inter-zone-links": zones_with_inter_zone_links,
}


@pytest.fixture(params=[name for name in FABRICS if name.startswith("three-layer")])
def three_layer(request, tmp_path):
    return FABRICS[request.param](tmp_path)


@pytest.fixture(params=list(FABRICS))
def any_fabric(request, tmp_path):
    return FABRICS[request.param](tmp_path)


def nic_ports(placement: Placement) -> dict[tuple[str, str], tuple[str, int, int]]:
    """(host, NIC) -> (zone, 0-based leaf index, leaf port)."""
    return {(slot.host.hostname, slot.nic): (z, leaf.index - 1, port) for z, leaf, port, slot in placement.ports}


def test_rail_i_of_every_node_of_a_unit_on_the_units_rail_i_leaf(three_layer):
    """4 NICs per node: units of 4 rail leaves; node j of unit u has NIC i on leaf 4u + i, port j + 1."""
    sized, placement, _ = three_layer
    got = nic_ports(placement)
    unit_nodes = sized.size.down_ports
    for k in range(8):
        unit, j = divmod(k, unit_nodes)
        for i in range(4):
            assert got[(f"gpu{k + 1:02d}", f"mlx5_{i}")] == ("z1", 4 * unit + i, j + 1)


def test_rail_placement_reports_like_the_solver(three_layer):
    """No solver runs; the plan's design.solver says so in the ILP's words ("optimal", as the CLI prints it)."""
    solution = three_layer[1].solution
    assert (solution.solver, solution.status, solution.gap, solution.variables) == ("rail-optimized", "optimal", 0.0, 0)


def test_planes_are_one_rail_each(tmp_path):
    """NIC i in plane i; in every plane node j of a unit sits on the unit's one leaf, port j + 1."""
    sized, placement, _ = planes_of_one_rail(tmp_path)
    got = nic_ports(placement)
    for k in range(8):
        unit, j = divmod(k, sized.size.down_ports)
        for i in range(4):
            assert got[(f"gpu{k + 1:02d}", f"mlx5_{i}")] == (f"p{i}", unit, j + 1)


def test_rail_units_leave_the_inter_zone_ends_their_ports(tmp_path):
    """A leaf with an inter-zone cable end has one node port less; the unit's nodes stop before it (this leaf port
    was taken twice and the zone's free ports went negative before)."""
    _, placement, cabling = zones_with_inter_zone_links(tmp_path)
    inter_zone = {(c.a.device, c.a.port) for c in cabling.cables if c.kind == "inter-zone"}
    inter_zone |= {(c.b.device, c.b.port) for c in cabling.cables if c.kind == "inter-zone"}
    assert inter_zone == {(f"{z}-leaf0{i}", 4) for z in ("za", "zb") for i in (1, 3)}
    by_leaf = Counter(leaf.name for _, leaf, _, _ in placement.ports)
    assert by_leaf["za-leaf01"] == by_leaf["za-leaf03"] == 3 and by_leaf["za-leaf02"] == by_leaf["za-leaf04"] == 4
    assert {z.name: z.used_ports["free"] for z in placement.zones} == {"za": 0, "zb": 8}


def test_one_nic_nodes_share_a_unit_place(tmp_path):
    """7 nodes of 4 NICs and 4 of one fill the tree's 32 ports: the one-NIC nodes share the 8th place, one rail
    each (each took a whole place, so 11 places were needed of 8 and the design was refused)."""
    one_nic = (
        "    hgx:\n",
        "    one-nic:\n      cpu: {sockets: 1, cores_per_socket: 8, threads_per_core: 2, nps: 1}\n"
        "      rack_units: 1\n      root_ports: [{name: rp0, numa: 0, pcie: {lanes: 16}}]\n"
        '      devices: [{name: mlx5_0, kind: nic, model: CX7, root_port: rp0, bus_id: "0000:02:00.0"}]\n'
        "    hgx:\n",
    )
    path = variant(
        tmp_path,
        THREE_RAIL,
        one_nic,
        ("count: 8,", "count: 7,"),
        (
            "first_u: 2}",
            "first_u: 2}\n  - {name: st, role: storage, model: one-nic, count: 4, "
            'hostname: "st{index}", racks: [r2], per_rack: 4, first_u: 30}',
        ),
    )
    loaded = load_inventory(path)
    assert not loaded.collector.items, loaded.collector.items
    plan = design(loaded)
    ports = {n.hostname: [(p.leaf, p.leaf_port) for p in n.ports] for n in plan.nodes if n.hostname.startswith("st")}
    assert sorted(ports.values()) == [[(f"z1-leaf0{rail}", 4)] for rail in range(5, 9)]  # unit 2, position 4


def test_floating_nodes_leave_room_for_the_nodes_a_zone_must_take(tmp_path):
    """The lab's 18 GPU nodes may go to either zone, its storage must go to both: the first 10 GPU nodes fill zone
    za up to what its storage leaves, the others go to zb (the storage used to find za full)."""
    plan = design(load_inventory(variant(tmp_path, LAB, RAIL)))
    zones = {n.hostname: {p.zone for p in n.ports} for n in plan.nodes}
    assert [h for h, z in zones.items() if z == {"za"}] == [f"gpu{i:02d}" for i in range(1, 11)]
    assert {h for h, z in zones.items() if z == {"zb"}} == {f"gpu{i:02d}" for i in range(11, 19)} | {"mgmt1", "mgmt2"}
    assert all(zones[f"stor{i}"] == {"za", "zb"} for i in range(1, 5))


def test_replanning_keeps_every_remaining_node_on_its_leaf_port(tmp_path):
    """Without gpu18, every other node keeps its leaf ports (the storage and management nodes after it in inventory
    order used to move up a place); with it back, it takes the free place."""
    full = variant(tmp_path, LAB, RAIL)
    first = design(load_inventory(full))
    (tmp_path / "less").mkdir()
    less = design(
        load_inventory(variant(tmp_path / "less", full, ("count: 18", "count: 17"))), DesignOptions(previous=first)
    )
    where = {n.hostname: [(p.nic, p.leaf, p.leaf_port) for p in n.ports] for n in first.nodes}
    assert {n.hostname: [(p.nic, p.leaf, p.leaf_port) for p in n.ports] for n in less.nodes} == {
        h: ports for h, ports in where.items() if h != "gpu18"
    }
    again = design(load_inventory(full), DesignOptions(previous=less))
    assert {n.hostname: [(p.nic, p.leaf, p.leaf_port) for p in n.ports] for n in again.nodes} == where


def test_three_layer_pods_cabled_as_sized(three_layer):
    """In a pod, leaf l's up-port u goes to the pod's spine u on its down-port l + 1; spine position j of every pod
    goes to the cores of group j, links_per_spine_core cables to each, pod p on core ports p*L + 1 .. (p+1)*L."""
    sized, _, cabling = three_layer
    size = sized.size
    assert isinstance(size, ThreeLayerTree)
    leaves, spines, cores = (sized.tier("z1", t) for t in ("leaf", "spine", "core"))
    assert (len(leaves), len(spines), len(cores)) == (size.leaves, size.spines, size.cores)
    leaf_spine = {(c.a.device, c.a.port): (c.b.device, c.b.port) for c in cabling.cables if c.kind == "leaf-spine"}
    assert len(leaf_spine) == size.leaves * size.up_ports
    for li, leaf in enumerate(leaves):
        pod, local = divmod(li, size.leaves_per_pod)
        assert leaf.pod == pod + 1
        for u in range(size.up_ports):
            spine = spines[pod * size.spines_per_pod + u]
            assert spine.pod == pod + 1
            assert leaf_spine[(leaf.name, size.down_ports + u + 1)] == (spine.name, local + 1)
    spine_core = [c for c in cabling.cables if c.kind == "spine-core"]
    assert len(spine_core) == size.spines * size.spine_up_ports
    links = Counter((c.a.device, c.b.device) for c in spine_core)
    core_ports: dict[tuple[str, str], set[int]] = {}
    for c in spine_core:
        assert isinstance(c.b.port, int)
        core_ports.setdefault((c.a.device, c.b.device), set()).add(c.b.port)
    L = size.links_per_spine_core
    for si, spine in enumerate(spines):
        pod, position = divmod(si, size.spines_per_pod)
        group = cores[position * size.cores_per_group : (position + 1) * size.cores_per_group]
        assert {core for (s, core) in links if s == spine.name} == {c.name for c in group}
        for core in group:
            assert links[(spine.name, core.name)] == L
            assert core_ports[(spine.name, core.name)] == set(range(pod * L + 1, (pod + 1) * L + 1))


def test_no_port_used_twice_and_every_port_within_its_radix(any_fabric):
    sized, placement, cabling = any_fabric
    radix = {sw.name: sw.ports for sw in sized.switches}
    used = Counter((end.device, end.port) for c in cabling.cables for end in (c.a, c.b))
    assert [end for end, n in used.items() if n > 1] == []
    switch_ends = [(device, port) for device, port in used if device in radix]
    assert all(isinstance(port, int) and 1 <= port <= radix[device] for device, port in switch_ends)
    if isinstance(sized.size, ThreeLayerTree):  # these trees are whole: every switch port used but the free leaf ports
        free_leaf_ports = sum(z.used_ports["free"] for z in placement.zones)
        assert len(switch_ends) == sum(radix.values()) - free_leaf_ports
