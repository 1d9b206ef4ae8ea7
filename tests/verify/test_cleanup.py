"""No process, socket or sys-<pid> folder is left behind: after a run, after a timeout, and after an interrupt
(SIGINT as from Ctrl-C, and SIGTERM) that arrives while OpenSM is sweeping."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ffplan.verify import sim as S
from ffplan.verify.run import verify
from tests.support.ibsim import leftovers, sys_dirs

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_timeout_stops_everything(ff2_out, tmp_path, no_leftovers):
    started = time.monotonic()
    report = verify(ff2_out, zone="z1", timeout=1.0, keep=tmp_path)
    assert time.monotonic() - started < 30
    up = next(c for c in report.checks if c.name == "SUBNET UP")
    assert up.status == "fail" and "1 s" in up.detail
    assert sys_dirs(tmp_path) == []


def test_processes_are_stopped_by_pid(lab_out, tmp_path, monkeypatch, no_leftovers):
    started: list[S.Simulation] = []
    original = S.Simulation.stop

    def spy(self):
        started.append(self)
        original(self)

    monkeypatch.setattr(S.Simulation, "stop", spy)
    assert verify(lab_out, keep=tmp_path).ok
    assert started and all(len(sim.pids) >= 3 for sim in started)
    for sim in started:
        for pid in sim.pids:
            assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/status").read_text(), pid
    assert sys_dirs(tmp_path) == []


def _children_with(tag: str) -> list[str]:
    return [x for x in leftovers(tag) if x.startswith("process")]


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_stops_everything(ff2_out, tmp_path, sig, code):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from ffplan.cli.main import run; run()",
            "verify",
            str(ff2_out),
            "--zone",
            "z1",
            "-q",
            "--keep",
            str(tmp_path),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    tag = f"ffplan-{proc.pid}-"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # wait until OpenSM runs (it is started after ibsim)
            if any("opensm" in x for x in _children_with(tag)):
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        else:
            pytest.fail("OpenSM never started")
        time.sleep(0.3)
        os.kill(proc.pid, sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, (out, err)
    assert b"every process started was stopped" in err
    assert leftovers(tag) == []
    assert sys_dirs(tmp_path) == []
