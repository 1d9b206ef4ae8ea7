"""Live re-routing against the real OpenSM in ibsim (zone z1 of Fire-Flyer 2, the file routing engine):
a cable and a spine die in the running fabric, `ffplan reroute` reads the fabric back with ibnetdiscover, replaces
the LFT file and sends SIGHUP; the heavy sweep loads it and nothing is black-holed. And a cold OpenSM start with
the highest-LID leaves down does not crash, neither on the file reroute writes nor on the rendered intact file
(the SM hosts' ports hold the top LID block; with LIDs in plan order the intact file aborted OpenSM 3.3.23)."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ffplan.cli.main import app
from ffplan.plan.io import dump_plan
from ffplan.opensm import DEFAULT_PREFIX, View, build_fabric
from ffplan.opensm.files import lfts_text, opensm_files, simulator_topology
from ffplan.opensm.layout import CONF, GUID2LID, LFTS
from ffplan.fabric.lft import parse_lfts
from ffplan.verify.boot import rewrite_paths
from benchmarks.sidebyside import pattern_loads
from ffplan.verify.sim import Simulation
from ffplan.verify.walk import walk_ca_pairs, walk_switch_lids
from tests.support.ibsim import installed, installed_when
from tests.support.plans import designed

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # a Fire-Flyer 2 zone in ibsim

ZONE = "z1"
CONFIGURED = "file tables configured"


def _start(tmp_path: Path, sim_tools) -> tuple[Simulation, Path, Path]:
    """ibsim (with its console) on zone z1 and the paths of plan.yaml and of the LFT file OpenSM reads."""
    plan = designed("fire-flyer-2")
    view = View(zone=ZONE)
    files = opensm_files(plan, DEFAULT_PREFIX, view)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "run.conf").write_text(rewrite_paths(files[CONF], tmp_path))
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "guid2lid").write_text(files[GUID2LID])
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text(dump_plan(plan))
    fab = build_fabric(plan, view)
    netfile = tmp_path / "ibsim.net"  # ibsim's copy: its CA node GUIDs follow the simulator's rule
    netfile.write_text(simulator_topology(fab))
    sim = Simulation(workdir=tmp_path, tools=sim_tools, sm_host=fab.sm_ca().id)
    sim.start_ibsim(netfile, [], 60, console=True)
    return sim, plan_file, tmp_path / LFTS


def _reroute(sim: Simulation, plan_file: Path, lfts: Path, hup: bool) -> dict:
    now = sim.workdir / "ibnetdiscover.txt"
    now.write_text(sim.diag(["ibnetdiscover"]))
    args = ["reroute", str(plan_file), "--fabric", str(now), "-o", str(lfts), "--format", "json"]
    result = CliRunner().invoke(app, args + (["--hup", str(sim.opensm.pid)] if hup else []))
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def _balance(topo, tables) -> str:
    loads = pattern_loads(topo, tables, build_fabric(designed("fire-flyer-2"), View(zone=ZONE)))
    assert all(load.unreachable == 0 for load in loads.values())
    return ", ".join(f"{name} {load.max} ({load.ratio:.2f})" for name, load in loads.items())


def test_unlink_a_cable_and_a_spine_then_reroute_live(tmp_path, sim_tools, no_leftovers):
    sim, plan_file, lfts = _start(tmp_path, sim_tools)
    with sim:
        sim.start_opensm(tmp_path / "run.conf", tmp_path / "cache", [])
        sim.wait_subnet_up(120)
        leaf_end = next(c for c in designed("fire-flyer-2").cables if c.label == "z1-leaf05-p21").a
        sim.console(f'Unlink "{leaf_end.device}"[{leaf_end.port}]')
        sim.console('Unlink "z1-spine05"')
        # OpenSM's own sweep after the trap re-reads the old file: routes through the dead links stay
        topo, tables = installed(sim)
        assert walk_ca_pairs(topo, tables).broken > 0
        sweeps = sim.log_count("SUBNET UP")
        started = time.monotonic()
        summary = _reroute(sim, plan_file, lfts, hup=True)
        assert {"z1-leaf05-p21", "z1-spine05"} <= set(summary["failed"])
        assert summary["missing"]["cables"] == ["z1-leaf05-p21"] and summary["unreachable"]["ca_pairs"] == 0
        sim.wait_log_count("SUBNET UP", sweeps + 1, 60)
        # that SUBNET UP may be the unlink trap's own sweep: OpenSM takes a SIGHUP only between its 10 s main-loop
        # waits, so wait until the heavy sweep it starts has installed the file reroute wrote
        written = parse_lfts(lfts.read_text()).tables
        topo, tables = installed_when(sim, written, 60)
        print(f"\nreroute + heavy sweep: {time.monotonic() - started:.1f} s; {summary['routes_changed']}")
        res = walk_ca_pairs(topo, tables)
        assert res.pairs == 613872 and res.broken == 0  # every CA pair of the zone (no CA port was lost)
        # the installed tables are the ones reroute wrote, and its count of unreachable switch LIDs is the truth
        assert {sw: t for sw, t in tables.items() if sw in written} == written
        assert walk_switch_lids(topo, tables).broken == summary["unreachable"]["switch_lid_pairs"]
        assert sim.opensm.poll() is None
        print("balance of the installed tables (max flows on a link, max/bound): " + _balance(topo, tables))


def test_fail_over_during_an_outage_installs_the_rerouted_file(tmp_path, sim_tools, no_leftovers):
    """Master and standby SM on two management nodes, reading the same lfts_file; a spine and the highest-LID
    leaves die, reroute replaces the file, the master dies: the standby takes over on the new file."""
    sim, plan_file, lfts = _start(tmp_path, sim_tools)
    fab = build_fabric(designed("fire-flyer-2"), View(zone=ZONE))
    first, second = fab.sm_ca().id, fab.standby_sm_cas()[0].id  # both in the top LID block
    fast_poll = "sminfo_polling_timeout 1000\npolling_retry_number 2\n"  # take over after ~2 s, not 40 s
    conf = (tmp_path / "run.conf").read_text()
    (tmp_path / "run.conf").write_text(conf + fast_poll + "sm_priority 10\n")
    standby_dir = tmp_path / "standby"
    (standby_dir / "cache").mkdir(parents=True)
    (standby_dir / "cache" / "guid2lid").write_text((tmp_path / "cache" / "guid2lid").read_text())
    (standby_dir / "run.conf").write_text(conf + fast_poll + "sm_priority 5\n")
    assert sim.sm_host == first
    standby = Simulation(workdir=standby_dir, tools=sim_tools, sm_host=second, sockname=sim.sockname)
    with sim, standby:
        sim.start_opensm(tmp_path / "run.conf", tmp_path / "cache", [])
        sim.wait_subnet_up(120)
        standby.start_opensm(standby_dir / "run.conf", standby_dir / "cache", [])
        standby.wait_log_count("Entering STANDBY state", 1, 60)
        for node in ("z1-spine05", "z1-leaf39", "z1-leaf40"):
            sim.console(f'Unlink "{node}"')
        summary = _reroute(sim, plan_file, lfts, hup=True)
        assert {"z1-spine05", "z1-leaf39", "z1-leaf40"} <= set(summary["failed"])
        os.kill(sim.opensm.pid, signal.SIGKILL)
        sim.opensm.wait()
        standby.wait_log_count("SUBNET UP", 1, 60)
        sweeps = standby.log_count(CONFIGURED)
        os.kill(standby.opensm.pid, signal.SIGHUP)
        standby.wait_log_count(CONFIGURED, sweeps + 1, 60)
        written = parse_lfts(lfts.read_text()).tables
        topo, tables = installed_when(standby, written, 60)
        assert walk_ca_pairs(topo, tables).broken == 0
        assert {sw: t for sw, t in tables.items() if sw in written} == written
        assert standby.opensm.poll() is None


def test_cold_start_with_the_highest_lid_leaves_down_does_not_crash(tmp_path, sim_tools, no_leftovers):
    sim, plan_file, lfts = _start(tmp_path, sim_tools)
    with sim:
        for leaf in ("z1-leaf39", "z1-leaf40"):  # the highest switch LIDs of the zone, and the CA ports on them
            sim.console(f'Unlink "{leaf}"')
        summary = _reroute(sim, plan_file, lfts, hup=False)  # before OpenSM starts: ibnetdiscover needs no SM
        assert {"z1-leaf39", "z1-leaf40"} <= set(summary["failed"])
        _cold_start_and_heavy_sweep(sim)


def test_cold_start_on_the_intact_file_with_the_highest_lid_leaves_down_does_not_crash(
    tmp_path, sim_tools, no_leftovers
):
    """The rendered intact lfts.dump, no reroute: the SM's port holds the top 64-LID block, so the tables OpenSM
    sizes from the highest LID present cover every entry of the file (with LIDs in plan order it aborted)."""
    sim, _, lfts = _start(tmp_path, sim_tools)
    fab = build_fabric(designed("fire-flyer-2"), View(zone=ZONE))
    assert lfts.read_text() == lfts_text(fab) and max(fab.lid_owner) // 64 == fab.sm_ca().ports[0].lid // 64
    with sim:
        for leaf in ("z1-leaf39", "z1-leaf40"):  # the highest LIDs of the zone after the SM hosts'
            sim.console(f'Unlink "{leaf}"')
        _cold_start_and_heavy_sweep(sim)


def _cold_start_and_heavy_sweep(sim: Simulation) -> None:
    """Start OpenSM on the degraded fabric, then force a heavy sweep: it survives both and nothing is black-holed."""
    sim.start_opensm(sim.workdir / "run.conf", sim.workdir / "cache", [])
    sim.wait_subnet_up(120)
    # a heavy sweep reallocates the tables: where a file entry had overflowed them, OpenSM aborts here
    sweeps = sim.log_count(CONFIGURED)
    os.kill(sim.opensm.pid, signal.SIGHUP)
    sim.wait_log_count(CONFIGURED, sweeps + 1, 60)
    time.sleep(1)
    assert sim.opensm.poll() is None
    topo, tables = installed(sim)
    assert walk_ca_pairs(topo, tables).broken == 0
