"""The real OpenSM in ibsim, for verify, audit and reroute tests (a plugin of tests/conftest.py). Skipped, with
the reason shown, when the Debian packages are missing (`make test` installs them when it runs as root with apt)."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from ffplan.fabric.discovery import parse_topology
from ffplan.fabric.lft import parse_lfts
from ffplan.plan.io import dump_plan
from ffplan.render.opensm import render_opensm
from ffplan.verify.sim import DEBIAN_PACKAGES, Simulation, ToolsMissing, find_tools
from tests.support.plans import designed


@pytest.fixture(scope="session")
def sim_tools() -> dict[str, str]:
    try:
        return find_tools()
    except ToolsMissing as exc:
        pytest.skip(f"{exc} -- run `make test` as root, or apt-get install {DEBIAN_PACKAGES}")


def write_rendered(folder: Path, plan) -> Path:
    """A render folder as `ffplan render` writes it: plan.yaml beside opensm/."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plan.yaml").write_text(dump_plan(plan))
    for name, text in render_opensm(plan).items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return folder


@pytest.fixture(scope="session")
def lab_out(tmp_path_factory, sim_tools) -> Path:
    return write_rendered(tmp_path_factory.mktemp("lab"), designed("lab"))


@pytest.fixture(scope="session")
def ff2_out(tmp_path_factory, sim_tools) -> Path:
    return write_rendered(tmp_path_factory.mktemp("ff2"), designed("fire-flyer-2"))


def leftovers(tag: str) -> list[str]:
    """Processes whose environment names an ibsim socket starting with `tag`, and such sockets still bound."""
    found = []
    for env in Path("/proc").glob("[0-9]*/environ"):
        try:
            data = env.read_bytes()
        except OSError:
            continue
        if f"IBSIM_SOCKNAME={tag}".encode() in data:
            pid = env.parent.name
            try:
                state = re.search(r"^State:\s+(\S)", (env.parent / "status").read_text(), re.M).group(1)
            except (OSError, AttributeError):
                continue
            found.append(f"process {pid} state {state}: {(env.parent / 'cmdline').read_bytes()[:80]!r}")
    try:
        for line in Path("/proc/net/unix").read_text().splitlines():
            if f"@{tag}" in line:
                found.append(f"socket {line.split()[-1]}")
    except OSError:
        pass
    return found


def sys_dirs(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("sys-*") if p.is_dir()]


@pytest.fixture
def no_leftovers():
    tag = f"ffplan-{os.getpid()}-"
    assert leftovers(tag) == [], "a previous test left processes behind"
    yield tag
    assert leftovers(tag) == []


def installed(sim: Simulation):
    """The fabric and the tables the running OpenSM installed, read back with ibnetdiscover and dump_fts."""
    topo = parse_topology(sim.diag(["ibnetdiscover"]))
    return topo, parse_lfts(sim.diag(["dump_fts", "-n"])).tables


def installed_when(sim: Simulation, written: dict, timeout: float):
    """The installed tables once they hold every table of `written`, or as they are after `timeout` seconds.
    OpenSM takes a SIGHUP only between its 10 s main-loop waits, so the next SUBNET UP may be a sweep of before."""
    deadline = time.monotonic() + timeout
    while True:
        topo, tables = installed(sim)
        if {sw: t for sw, t in tables.items() if sw in written} == written or time.monotonic() > deadline:
            return topo, tables
        time.sleep(1)
