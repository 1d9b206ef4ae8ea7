"""Item 8 of issue 14: SIGKILL of `ffplan verify` (which no handler can catch) must not orphan ibsim and
OpenSM, and the work folder the killed run leaves in the temp dir is removed by the next run.
tests/verify/test_cleanup.py covers SIGTERM and SIGINT."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ffplan.verify.lifetime import remove_stale_work_folders
from ffplan.verify.sim import DEBIAN_PACKAGES, ToolsMissing, find_tools
from tests.support.ibsim import leftovers, write_rendered
from tests.support.plans import designed

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def lab_render(tmp_path_factory) -> Path:
    try:
        find_tools()
    except ToolsMissing as exc:
        pytest.skip(f"{exc} -- apt-get install {DEBIAN_PACKAGES}")
    return write_rendered(tmp_path_factory.mktemp("lab-render"), designed("lab"))


def _verify(target: Path, tmpdir: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONUNBUFFERED="1", TMPDIR=str(tmpdir))
    return subprocess.Popen(
        [sys.executable, "-c", "from ffplan.cli.main import run; run()", "verify", str(target), "-q"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def _wait_for(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


@pytest.mark.integration
def test_sigkill_of_verify_takes_ibsim_and_opensm_along(lab_render, tmp_path):
    proc = _verify(lab_render, tmp_path)
    tag = f"ffplan-{proc.pid}-"
    try:
        _wait_for(lambda: any("opensm" in x for x in leftovers(tag) if x.startswith("process")), 60, "OpenSM to start")
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
        # The kernel delivers the parent-death signal at once; allow for reaping by init.
        _wait_for(
            lambda: not [x for x in leftovers(tag) if x.startswith("process") and " state Z" not in x],
            10,
            f"the children of the killed run to die: {leftovers(tag)}",
        )
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stale = sorted(tmp_path.glob(f"ffplan-verify-{proc.pid}-*"))
    assert stale, "the killed run's work folder (named after its PID) is the leftover the next run removes"

    again = _verify(lab_render, tmp_path)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, (out, err)
    assert not any(p.exists() for p in stale)
    assert list(tmp_path.glob("ffplan-verify-*")) == []


def test_only_folders_of_dead_processes_are_removed(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f"ffplan-verify-{dead.pid}-abc"
    live = tmp_path / f"ffplan-verify-{os.getpid()}-def"
    other = tmp_path / "ffplan-verify-notapid-x"
    for folder in (stale, live, other):
        (folder / "sys-1").mkdir(parents=True)
    assert remove_stale_work_folders(tmp_path) == [stale]
    assert not stale.exists() and live.exists() and other.exists()
