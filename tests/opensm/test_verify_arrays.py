"""verify's table checks on arrays (ffplan/verify/arrays.py) give the figures of the hop-by-hop walk and the
entry-by-entry comparison, intact and with a missing entry, a wrong port and a forwarding loop."""

from __future__ import annotations

import pytest

from ffplan.render import opensm as R
from ffplan.verify.arrays import table_checks
from ffplan.verify.expect import compare_tables, fabric_topo, planned_tables
from ffplan.verify.walk import walk, walk_switch_lids


def dump_fts(tables: dict[str, dict[int, int]]) -> str:
    """The tables as `dump_fts -n` prints them."""
    out = []
    for guid, table in tables.items():
        out.append(f"Unicast lids [0x0-0x{max(table, default=0):x}] of switch Lid 1 guid {guid} (x):")
        out += [f"0x{lid:04x} {port:03d} : (Switch portguid {guid}: 'x')" for lid, port in sorted(table.items())]
        out.append(f"{len(table)} valid lids dumped")
    return "\n".join(out) + "\n"


def expected(fab, topo, tables) -> dict[str, tuple[bool, str]]:
    """The checks as the walk and compare_tables compute them."""
    diffs, _ = compare_tables(fab, planned_tables(fab), tables, "installed")
    ca, sw = walk(topo, tables, count_loads=False), walk_switch_lids(topo, tables)
    hops = ", ".join(f"{n} switch{'es' if n > 1 else ''}: {c}" for n, c in sorted(ca.hops.items()))
    return {"LFTs installed == plan": (diffs == 0, f"{sum(len(t) for t in tables.values())} entries on "
                                       f"{len(tables)} switches; {diffs} differences"),
            "every CA pair reachable": (ca.broken == 0, f"{ca.reachable}/{ca.pairs} pairs by walking the installed "
                                        f"tables per destination ({hops})"),
            "every switch LID reachable": (sw.broken == 0, f"{sw.reachable}/{sw.pairs} (source, switch LID) pairs "
                                           "from every other switch and every CA port")}


def arrays(fab, topo, tables) -> dict[str, tuple[bool, str]]:
    # the first part of each detail: the failures listed after it name switches, checked separately
    return {name: (ok, detail.split(" (")[0] if name == "LFTs installed == plan" else detail.split("; ")[0])
            for name, ok, detail in table_checks(fab, topo, dump_fts(tables))}


@pytest.mark.parametrize("case", ["intact", "missing entry", "wrong port", "loop"])
def test_array_checks_equal_the_walk(lab_plan, case):
    fab = R.build_fabric(lab_plan)
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
    want = expected(fab, topo, tables)
    got = {name: detail for name, detail in arrays(fab, topo, tables).items() if name in want}
    want_short = {name: (ok, detail.split(" (")[0] if name == "LFTs installed == plan" else detail)
                  for name, (ok, detail) in want.items()}
    assert got == want_short
    assert all(ok for ok, _ in got.values()) == (case == "intact")
    if case != "intact":
        checks = {name: detail for name, _ok, detail in table_checks(fab, topo, dump_fts(tables))}
        assert "installed port" in checks["LFTs installed == plan"] and "dropped at" in checks["every CA pair reachable"]
