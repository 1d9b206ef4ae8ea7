"""SHARP Aggregation Nodes in the real OpenSM on ibsim: a Quantum switch's Aggregation Node is a CA on the switch's
extra port that OpenSM gives a LID at run time. The plan's file has no route to it (the plan cannot know its GUID
or LID); `ffplan reroute --fabric` reads it from ibnetdiscover and routes it, and OpenSM installs those routes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ffplan.cli.main import app
from ffplan.fabric.discovery import AGGREGATION_NODE, parse_topology
from ffplan.fabric.lft import parse_lfts
from ffplan.opensm import DEFAULT_PREFIX, build_fabric
from ffplan.opensm.files import opensm_files, simulator_topology
from ffplan.opensm.layout import CONF, GUID2LID, LFTS
from ffplan.plan.io import dump_plan
from ffplan.verify.boot import rewrite_paths
from ffplan.verify.sim import Simulation
from ffplan.verify.walk import walk_ca_pairs
from tests.support.ibsim import installed_when
from tests.support.plans import designed

pytestmark = pytest.mark.integration

LEAF = "za-leaf01"
AN_GUID = 0x0002C9AAAA000001


def _with_aggregation_node(net: str, radix: int) -> str:
    header = f'Switch\t{radix} "{LEAF}"'
    assert header in net
    net = net.replace(header, f'Switch\t{radix + 1} "{LEAF}"', 1)
    block_end = net.index("\n\n", net.index(f'Switch\t{radix + 1} "{LEAF}"'))
    net = net[:block_end] + f'\n[{radix + 1}]\t"{AGGREGATION_NODE}"[1]' + net[block_end:]
    return net + (
        f"\nvendid=0x2c9\ndevid=0xcf09\nsysimgguid=0x{AN_GUID:x}\ncaguid=0x{AN_GUID - 1:x}\n"
        f'Ca\t1 "{AGGREGATION_NODE}"\n[1]({AN_GUID:x}) \t"{LEAF}"[{radix + 1}]\n'
    )


def test_reroute_routes_the_aggregation_node_opensm_found(tmp_path: Path, sim_tools, no_leftovers):
    plan = designed("lab")
    files = opensm_files(plan, DEFAULT_PREFIX)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "run.conf").write_text(rewrite_paths(files[CONF], tmp_path))
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / GUID2LID).write_text(files[GUID2LID])
    (tmp_path / "plan.yaml").write_text(dump_plan(plan))
    fab = build_fabric(plan)
    radix = next(s.ports for s in plan.switches if s.name == LEAF)
    (tmp_path / "ibsim.net").write_text(_with_aggregation_node(simulator_topology(fab), radix))
    sim = Simulation(workdir=tmp_path, tools=sim_tools, sm_host=fab.sm_ca().id)
    sim.start_ibsim(tmp_path / "ibsim.net", [], 60, console=True)
    with sim:
        sim.start_opensm(tmp_path / "run.conf", tmp_path / "cache", [])
        sim.wait_subnet_up(120)
        topo = parse_topology(sim.diag(["ibnetdiscover"]))
        an = next(g for g, d in topo.desc.items() if d == AGGREGATION_NODE)
        an_lid = topo.port_lid[(an, 1)]
        # the plan's own file: OpenSM gave the node a LID, and no switch forwards it
        tables = parse_lfts(sim.diag(["dump_fts", "-n"])).tables
        assert all(an_lid not in t for t in tables.values())
        assert walk_ca_pairs(topo, tables).broken > 0
        (tmp_path / "now.txt").write_text(sim.diag(["ibnetdiscover"]))
        sweeps = sim.log_count("SUBNET UP")
        res = CliRunner().invoke(
            app,
            [
                "reroute",
                str(tmp_path / "plan.yaml"),
                "--fabric",
                str(tmp_path / "now.txt"),
                "-o",
                str(tmp_path / LFTS),
                "--hup",
                str(sim.opensm.pid),
                "--format",
                "json",
            ],
        )
        assert res.exit_code == 0, res.output
        assert json.loads(res.stdout)["unreachable"]["ca_pairs"] == 0
        sim.wait_log_count("SUBNET UP", sweeps + 1, 60)
        topo, tables = installed_when(sim, parse_lfts((tmp_path / LFTS).read_text()).tables, 60)
        leaf_guid = next(s.node_guid for s in plan.switches if s.name == LEAF)
        assert tables[leaf_guid][an_lid] == radix + 1
        assert all(an_lid in t for t in tables.values())
        walked = walk_ca_pairs(topo, tables)
        assert walked.broken == 0 and walked.pairs == (len(fab.cas) + 1) * len(fab.cas)
