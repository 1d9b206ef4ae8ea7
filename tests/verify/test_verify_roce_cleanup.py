"""Nothing an Ethernet verify run starts outlives it: no process (FRR daemons, the reaper, commands), no network
namespace (so no veth), no work folder, after success, a failed check, a timeout, SIGINT, SIGTERM and SIGKILL of
ffplan. Each test starts `ffplan verify` as a subprocess it owns, finds the run's processes among its descendants
and their namespaces through /proc, and signals only that subprocess."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.support.frr import ROOT, alive, children, comm, netns_of, processes_in, root_links

pytestmark = pytest.mark.slow
WATCH_S = 600  # at most, for one run


def start(folder: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from ffplan.cli.main import run; run()",
            "verify",
            str(folder),
            "--plane",
            "pa",
            "-q",
            *args,
        ],
        cwd=ROOT,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def watch(proc: subprocess.Popen, until_daemons: bool) -> tuple[dict[int, str], set[str]]:
    """The run's descendants (PID -> name) and their namespaces, seen while it runs (until FRR runs on the 5
    switches of plane pa, or until it exits)."""
    pids: dict[int, str] = {}
    namespaces: set[str] = set()
    home = netns_of(os.getpid())
    # generous: on a loaded 2-core machine a run can take minutes before its first child (seen: none in 120 s)
    deadline = time.monotonic() + WATCH_S
    while proc.poll() is None and time.monotonic() < deadline:
        kids = children(proc.pid)
        # named again each round: a child first seen between fork and exec still bears ffplan's name
        pids.update((k, name) for k in kids if (name := comm(k)))
        namespaces.update(n for n in map(netns_of, kids) if n and n != home)
        if until_daemons and sum(comm(k) in ("zebra", "bgpd") for k in kids) >= 10:
            return pids, namespaces
        time.sleep(0.05)
    assert not until_daemons, "FRR never ran"
    return pids, namespaces


def assert_nothing_left(proc: subprocess.Popen, pids: dict[int, str], namespaces: set[str], links: set[str]) -> None:
    assert {"zebra", "bgpd"} <= set(pids.values()) and len(namespaces) >= 5  # FRR ran, in the run's namespaces
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if not [p for p in pids if alive(p)] and not processes_in(namespaces):
            break
        time.sleep(0.1)
    assert [(p, comm(p)) for p in pids if alive(p)] == []
    assert processes_in(namespaces) == []  # no process holds a namespace of the run, and ffplan (its holder) is gone
    assert root_links() == links  # veths were only ever created inside the run's namespaces
    assert list(Path(tempfile.gettempdir()).glob(f"ffplan-verify-{proc.pid}-*")) == []


def run_to_end(folder: Path, *args: str) -> tuple[subprocess.Popen, dict[int, str], set[str], bytes]:
    proc = start(folder, *args)
    try:
        pids, namespaces = watch(proc, until_daemons=False)
        out, err = proc.communicate(timeout=WATCH_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc, pids, namespaces, out + err


def test_success_leaves_nothing(frr_tools, mini_files):
    links = root_links()
    proc, pids, namespaces, out = run_to_end(mini_files)
    assert proc.returncode == 0, out
    assert_nothing_left(proc, pids, namespaces, links)


def test_a_failed_check_leaves_nothing(frr_tools, edited):
    folder = edited("sonic/pa-spine01/config_db.json", '"mtu": "9216"', '"mtu": "1500"')
    links = root_links()
    proc, pids, namespaces, out = run_to_end(folder)
    assert proc.returncode == 1, out
    assert b"MTU == plan" in out
    assert_nothing_left(proc, pids, namespaces, links)


def test_a_timeout_leaves_nothing(frr_tools, edited):
    folder = edited("sonic/pa-leaf01/frr.conf", "router bgp 4200000100", "router bgp 4200000199")
    links = root_links()
    proc, pids, namespaces, out = run_to_end(folder, "--timeout", "1")
    assert proc.returncode == 1, out
    assert b"not all Established after 1 s" in out
    assert_nothing_left(proc, pids, namespaces, links)


@pytest.mark.parametrize(
    "sig,code",
    [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGKILL, -9)],
    ids=["SIGINT", "SIGTERM", "SIGKILL"],
)
def test_a_signal_leaves_nothing(frr_tools, mini_files, sig, code):
    links = root_links()
    proc = start(mini_files)
    try:
        pids, namespaces = watch(proc, until_daemons=True)
        os.kill(proc.pid, sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, (out, err)
    if sig != signal.SIGKILL:
        assert b"every process started was stopped, every namespace released" in err
    assert_nothing_left(proc, pids, namespaces, links)
