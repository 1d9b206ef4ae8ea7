"""Parsers of OpenSM/infiniband-diags output and the LFT walker, on captured samples (no simulator needed)."""

from __future__ import annotations

from ffplan.opensm import build_fabric
from ffplan.fabric.discovery import parse_topology
from ffplan.fabric.lft import parse_lfts
from ffplan.verify import parse as P
from ffplan.verify.expect import fabric_topo, planned_tables
from ffplan.verify.walk import walk_ca_pairs, walk_switch_lids

IBNETDISCOVER = """\
#
# Topology file: generated on Sun Nov 29 09:28:20 2026
#
vendid=0x0
devid=0x0
sysimgguid=0x2c90202000004
switchguid=0x2c90202000004(2c90202000004)
Switch	8 "S-0002c90202000004"		# "zb-leaf04" enhanced port 0 lid 12 lmc 0
[1]	"H-0002c90003000100"[1](2c90003000101) 		# "gpu17 mlx5_0" lid 37 4xHDR
[5]	"S-0002c90201000001"[7]		# "zb-spine01" lid 7 4xHDR

vendid=0x0
devid=0x0
sysimgguid=0x2c90201000001
switchguid=0x2c90201000001(2c90201000001)
Switch	8 "S-0002c90201000001"		# "zb-spine01" enhanced port 0 lid 7 lmc 0
[7]	"S-0002c90202000004"[5]		# "zb-leaf04" lid 12 4xHDR

vendid=0x0
devid=0x0
sysimgguid=0x2c90003000100
caguid=0x2c90003000100
Ca	1 "H-0002c90003000100"		# "gpu17 mlx5_0"
[1](2c90003000101) 	"S-0002c90202000004"[1]		# lid 37 lmc 0 "zb-leaf04" lid 12 4xHDR
"""

DUMP_FTS = """\
Unicast lids [0x0-0x28] of switch DR path slid 0; dlid 0; 0,1,5 guid 0x0002c90202000004 (zb-leaf04):
  Lid  Out   Destination
       Port     Info 
0x0007 005 : (Switch portguid 0x0002c90201000001: 'zb-spine01')
0x000c 000 : (Switch portguid 0x0002c90202000004: 'zb-leaf04')
0x0025 001 : (Channel Adapter portguid 0x0002c90003000101: 'gpu17 mlx5_0')
3 valid lids dumped 
Unicast lids [0x0-0x28] of switch DR path slid 0; dlid 0; 0,1,5,7 guid 0x0002c90201000001 (zb-spine01):
0x0007 000 : (Switch portguid 0x0002c90201000001: 'zb-spine01')
0x000c 007 : (Switch portguid 0x0002c90202000004: 'zb-leaf04')
0x0025 007 : (Channel Adapter portguid 0x0002c90003000101: 'gpu17 mlx5_0')
3 valid lids dumped 
"""


def test_parse_ibnetdiscover():
    topo = parse_topology(IBNETDISCOVER)
    leaf, spine, ca = "0x0002c90202000004", "0x0002c90201000001", "0x0002c90003000100"
    assert topo.kind == {leaf: "Switch", spine: "Switch", ca: "Ca"}
    assert topo.links == {((ca, 1), (leaf, 1)), ((spine, 7), (leaf, 5))}
    assert topo.port_lid == {(leaf, 0): 12, (spine, 0): 7, (ca, 1): 37}
    assert topo.port_guid[(ca, 1)] == "0x0002c90003000101"
    assert topo.desc[leaf] == "zb-leaf04"


def test_parse_dump_fts_and_walk():
    lfts = parse_lfts(DUMP_FTS)
    assert lfts.tables["0x0002c90202000004"] == {7: 5, 12: 0, 37: 1}
    assert lfts.portguids["0x0002c90201000001"][37] == "0x0002c90003000101"
    assert lfts.junk == [] and lfts.duplicates == []
    topo = parse_topology(IBNETDISCOVER)
    res = walk_ca_pairs(topo, lfts.tables)
    assert res.pairs == 0  # one CA: no pairs
    # a loop: the spine sends the leaf's CA back down and the leaf sends it up
    tables = {k: dict(v) for k, v in lfts.tables.items()}
    tables["0x0002c90202000004"][37] = 5
    topo.port_lid[("0x0002c90003000999", 1)] = 99  # a second CA (unattached) makes no pair either
    assert walk_ca_pairs(topo, tables).pairs == 0


def test_walk_on_the_lab_plan_finds_every_pair_and_breaks(lab_plan):
    fab = build_fabric(lab_plan)
    topo = fabric_topo(fab)
    tables = planned_tables(fab)
    res = walk_ca_pairs(topo, tables)
    n = sum(len(ca.ports) for ca in fab.cas)
    assert res.pairs == n * (n - 1) and res.broken == 0
    leaf = next(s for s in fab.switches if s.name == "za-leaf01")
    lid = next(p.lid for ca in fab.cas for p in ca.ports if p.leaf == "za-leaf02")
    broken = {k: dict(v) for k, v in tables.items()}
    del broken[leaf.node_guid][lid]
    res = walk_ca_pairs(topo, broken)
    assert res.broken > 0 and any("no entry at za-leaf01" in f for f in res.failures)
    # a forwarding loop between a leaf and a spine
    spine = next(s for s in fab.switches if s.name == "za-spine01")
    up = next(pa for a, pa, b, pb in fab.links if a == "za-leaf01" and b == "za-spine01")
    down = next(pb for a, pa, b, pb in fab.links if a == "za-leaf01" and b == "za-spine01" and pa == up)
    looped = {k: dict(v) for k, v in tables.items()}
    looped[leaf.node_guid][lid] = up
    looped[spine.node_guid][lid] = down
    res = walk_ca_pairs(topo, looped)
    assert any("loop" in f for f in res.failures)


def test_parse_smpquery_and_saquery():
    sl2vl = P.parse_sl2vl("""# SL2VL table: Lid 3
#                 SL: | 0| 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14|15|
ports: in  0, out  1: | 0| 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14| 7|
ports: in  1, out  1: | 0| 1| 2| 3| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0|
""")
    assert sl2vl[(0, 1)][15] == 7 and sl2vl[(1, 1)] == [0, 1, 2, 3] + [0] * 12
    arb = P.parse_vlarb("""# VLArbitration tables: Lid 13 port 1 LowCap 8 HighCap 8
# Low priority VL Arbitration Table:
VL    : |0x0 |0x1 |0x2 |0x3 |0x4 |0x5 |0x6 |0x7 |
WEIGHT: |0x0 |0x4 |0x4 |0x4 |0x4 |0x4 |0x4 |0x4 |
# High priority VL Arbitration Table:
VL    : |0x0 |0x1 |0x2 |0x3 |0x4 |0x5 |0x6 |0x7 |
WEIGHT: |0x4 |0x0 |0x0 |0x0 |0x0 |0x0 |0x0 |0x0 |
""")
    assert arb["low"][:2] == [(0, 0), (1, 4)] and arb["high"][0] == (0, 4) and len(arb["high"]) == 8
    assert P.parse_path_sl("\t\tqos_class...............0x0\n\t\tsl......................0x3\n") == 3


def test_lint_messages_and_log_time():
    out = ' Unrecognized token: "bogus_option"\n-E- Parsing error in field sweep_interval, expected numeric input received: abc\nok\n'
    assert len(P.lint_messages(out)) == 2
    assert P.log_time("Nov 29 09:28:20 020944 [7BDC66C0] 0x02 -> x") == 9 * 3600 + 28 * 60 + 20.020944


def test_lft_file_parser_reports_junk_and_duplicates():
    text = (
        "Unicast lids [0x0-0x2] of switch Lid 1 guid 0x0000000000000001 (a):\n0x0001 000 : x\n0x00zz 1\n"
        "Unicast lids [0x0-0x2] of switch Lid 1 guid 0x0000000000000001 (a):\n"
    )
    parsed = parse_lfts(text)
    assert [no for no, _ in parsed.junk] == [3] and [no for no, _ in parsed.duplicates] == [4]


def test_walk_switch_lids_counts_every_switch_and_ca_source(lab_plan):
    fab = build_fabric(lab_plan)
    topo = fabric_topo(fab)
    tables = planned_tables(fab)
    n_sw, n_ca = len(fab.switches), sum(len(ca.ports) for ca in fab.cas)
    res = walk_switch_lids(topo, tables)
    # every switch LID from every other switch and from every CA port
    assert res.pairs == n_sw * (n_sw - 1) + n_sw * n_ca and res.broken == 0
    # a leaf (without inter-zone links) that lost its entry for a spine's LID: it and its CA ports lose that spine
    leaf = next(s for s in fab.switches if s.name == "za-leaf02")
    spine = next(s for s in fab.switches if s.name == "za-spine01")
    on_leaf = sum(1 for ca in fab.cas for p in ca.ports if p.leaf == leaf.name)
    broken = {k: dict(v) for k, v in tables.items()}
    del broken[leaf.node_guid][spine.lid]
    res = walk_switch_lids(topo, broken)
    # the switches whose route to za-spine01 passes za-leaf02: the leaf itself, and za-spine02 when za-leaf02 is
    # its transit leaf (the router's choice); every CA port on the leaf is counted, not listed
    sources = [f.split(" -> ")[0] for f in res.failures]
    assert "za-leaf02" in sources and set(sources) <= {"za-leaf02", "za-spine02"}
    assert res.failures == [f"{src} -> LID {spine.lid} (za-spine01): no entry at za-leaf02" for src in sources]
    assert res.broken == len(sources) + on_leaf
    # the CA-pair walk does not see it: CA destinations are untouched
    assert walk_ca_pairs(topo, broken).broken == 0


def test_lft_dump_numbers_are_bounded():
    """A 5000-digit port or GUID made int() raise in analyze's reader (a traceback): now the line is junk."""
    text = (
        "Unicast lids [0x0-0x2] of switch Lid 1 guid 0x0000000000000001 (a):\n0x0001 " + "9" * 5000 + "\n"
        "0x0002 300\nUnicast lids [0x0-0x2] of switch Lid 1 guid 0x" + "f" * 5000 + " (b):\n0x0002 001\n"
    )
    parsed = parse_lfts(text)
    # the block whose header does not parse owns no entry: its lines are junk, not the block before's
    assert parsed.tables == {"0x0000000000000001": {}} and [no for no, _ in parsed.junk] == [2, 3, 4, 5]
