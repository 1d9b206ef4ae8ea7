"""verify's table checks on arrays (ffplan/verify/arrays.py) give the figures of the hop-by-hop walk and the
entry-by-entry comparison, intact and with a missing entry, a wrong port and a forwarding loop."""

from __future__ import annotations

import numpy as np
import pytest

from ffplan.opensm import build_fabric
from ffplan.verify.arrays import table_checks
from ffplan.verify.checks import check_reachability
from ffplan.verify.expect import fabric_topo, planned_tables
from tests.support.tables import compare_tables
from ffplan.verify.report import Report


def dump_fts(tables: dict[str, dict[int, int]]) -> str:
    """The tables as `dump_fts -n` prints them."""
    out = []
    for guid, table in tables.items():
        out.append(f"Unicast lids [0x0-0x{max(table, default=0):x}] of switch Lid 1 guid {guid} (x):")
        out += [f"0x{lid:04x} {port:03d} : (Switch portguid {guid}: 'x')" for lid, port in sorted(table.items())]
        out.append(f"{len(table)} valid lids dumped")
    return "\n".join(out) + "\n"


def walked(fab, topo, tables) -> dict[str, tuple[bool, str]]:
    """The checks as the hop-by-hop walk and compare_tables compute them."""
    diffs, _ = compare_tables(fab, planned_tables(fab), tables, "installed")
    report = Report(target="", source="", view="", engine="file", excluded=[])
    check_reachability(report, fab, topo, tables, "installed tables")
    out = {c.name: (c.status == "pass", c.detail) for c in report.checks}
    out["LFTs installed == plan"] = (
        diffs == 0,
        f"{sum(len(t) for t in tables.values())} entries on {len(tables)} switches; {diffs} differences",
    )
    return out


@pytest.mark.parametrize("case", ["intact", "missing entry", "wrong port", "loop"])
def test_array_checks_equal_the_walk(lab_plan, case):
    fab = build_fabric(lab_plan)
    topo = fabric_topo(fab)
    tables = {k: dict(v) for k, v in planned_tables(fab).items()}
    leaf = next(s for s in fab.switches if s.name == "za-leaf01")
    spine = next(s for s in fab.switches if s.name == "za-spine01")
    lid = next(p.lid for ca in fab.cas for p in ca.ports if p.leaf == "za-leaf02")
    up = next(pa for a, pa, b, _pb in fab.links if a == leaf.name and b == spine.name)
    down = next(pb for a, pa, b, pb in fab.links if a == leaf.name and b == spine.name and pa == up)
    if case == "missing entry":
        del tables[leaf.node_guid][lid]
        del tables[leaf.node_guid][spine.lid]
    elif case == "wrong port":
        tables[leaf.node_guid][lid] = next(p.leaf_port for ca in fab.cas for p in ca.ports if p.leaf == leaf.name)
    elif case == "loop":
        tables[leaf.node_guid][lid], tables[spine.node_guid][lid] = up, down
    got = {name: (ok, detail) for name, ok, detail, _items in table_checks(fab, topo, dump_fts(tables))}
    assert got == walked(fab, topo, tables)
    assert all(ok for ok, _ in got.values()) == (case == "intact")
    if case != "intact":
        items = {name: items for name, _ok, _detail, items in table_checks(fab, topo, dump_fts(tables))}
        assert "installed port" in items["LFTs installed == plan"][0]
        assert "dropped at" in items["every CA pair reachable"][0]


@pytest.mark.parametrize("view", ["intact", "degraded"])
def test_channels_of_the_subnet_are_those_of_its_topology_read_back(lab_plan, view):
    """Channels.of_subnet (reroute's walk) gives the channels Channels.discovered finds in the planned fabric read
    back as ibnetdiscover would (fabric_topo), with a SHARP Aggregation Node on a switch's extra port."""
    from ffplan.fabric.arrays import Channels
    from ffplan.opensm import View

    cable = next(c.label for c in lab_plan.cables if c.kind == "leaf-spine")
    ca = lab_plan.nodes[0].ports[0].cable
    dropped = View(drop_cables=frozenset({cable, ca}), drop_switches=frozenset({"zb-spine02"}))
    fab = build_fabric(lab_plan, dropped if view == "degraded" else View())
    switch = fab.switches[-1]
    lid, port, node = max(fab.lid_owner) + 1, switch.ports + 1, "0x00000000000a0001"
    topo = fabric_topo(fab)
    topo.kind[node], topo.nports[node], topo.port_lid[(node, 1)] = "Ca", 1, lid
    topo.links.add(((node, 1), (switch.node_guid, port)))
    read_back = Channels.discovered(topo, [s.node_guid for s in fab.switches])
    got = Channels.of_subnet(fab, [(lid, switch.name, port)])
    assert got.switches == read_back.switches and got.ends == read_back.ends
    for name in ("next", "chan", "peer_of", "src_of", "port_of", "alive", "dest_switch", "dest_port", "sources"):
        assert np.array_equal(getattr(got, name), getattr(read_back, name)), name
