"""`reroute --hup PID` signals only the opensm process that reads the file written. The decoys are processes the
test starts: a copy of the shell named `opensm` (so its executable is called opensm, as a real one's is), a
process that renames itself opensm, and a thread named opensm."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ffplan.sm_process import NotOurOpenSM, subnet_manager_reading


@pytest.fixture
def fake_opensm(tmp_path):
    """A copy of /bin/sh called opensm: `opensm -c 'sleep 60; :' ARGS...` keeps ARGS in its command line. It dies of
    SIGHUP even when the test runs under nohup: a shell cannot undo a SIGHUP ignored on entry, so the child resets
    it before the exec."""
    exe = tmp_path / "bin" / "opensm"
    exe.parent.mkdir()
    shutil.copy2(shutil.which("sh") or "/bin/sh", exe)
    started: list[subprocess.Popen] = []

    def start(*args: str, cwd: Path = tmp_path) -> subprocess.Popen:
        proc = subprocess.Popen(
            [str(exe), "-c", "sleep 60; :", *args],
            cwd=cwd,
            preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL),
        )
        started.append(proc)
        time.sleep(0.05)
        return proc

    yield start
    for proc in started:
        proc.kill()
        proc.wait()


def _hupped(proc: subprocess.Popen) -> bool:
    try:
        return proc.wait(timeout=5) == -signal.SIGHUP
    except subprocess.TimeoutExpired:
        return False


def test_the_opensm_reading_the_file_by_its_config_is_signalled(tmp_path, fake_opensm):
    lfts = tmp_path / "etc" / "lfts.dump"
    lfts.parent.mkdir()
    conf = tmp_path / "etc" / "opensm.conf"
    conf.write_text(f"# comment\nlfts_file (null)\nrouting_engine file,no_fallback\nlfts_file {lfts}\n")
    proc = fake_opensm("-F", str(conf))
    sm = subnet_manager_reading(proc.pid, lfts)
    assert sm.lfts_file == str(lfts)
    sm.request_heavy_sweep()
    assert _hupped(proc)


@pytest.mark.parametrize("form", [["-U", "{f}"], ["-U{f}"], ["--lfts_file", "{f}"], ["--lfts_file={f}"]])
def test_the_command_line_lfts_file_wins_and_relative_paths_are_from_its_folder(tmp_path, fake_opensm, form):
    lfts = tmp_path / "lfts.dump"
    conf = tmp_path / "opensm.conf"
    conf.write_text("lfts_file /elsewhere/lfts.dump\n")
    proc = fake_opensm("-F", str(conf), *[a.format(f="lfts.dump") for a in form], cwd=tmp_path)
    subnet_manager_reading(proc.pid, lfts).release()


def test_an_opensm_reading_another_file_is_refused(tmp_path, fake_opensm):
    conf = tmp_path / "opensm.conf"
    conf.write_text(f"lfts_file {tmp_path / 'other' / 'lfts.dump'}\n")
    (tmp_path / "other").mkdir()
    proc = fake_opensm("--config", str(conf))
    with pytest.raises(NotOurOpenSM, match="reads .*other/lfts.dump, not"):
        subnet_manager_reading(proc.pid, tmp_path / "lfts.dump")
    assert proc.poll() is None


def test_an_opensm_without_lfts_file_is_refused(tmp_path, fake_opensm):
    conf = tmp_path / "opensm.conf"
    conf.write_text("routing_engine ftree\n")
    proc = fake_opensm("-F", str(conf))
    with pytest.raises(NotOurOpenSM, match="reads no LFT file"):
        subnet_manager_reading(proc.pid, tmp_path / "lfts.dump")


def test_a_process_that_calls_itself_opensm_is_refused(tmp_path):
    code = (
        "import ctypes, time; ctypes.CDLL(None).prctl(15, b'opensm', 0, 0, 0); print('ready', flush=True); "
        "time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        assert Path(f"/proc/{proc.pid}/comm").read_text().strip() == "opensm"
        with pytest.raises(NotOurOpenSM, match="named 'opensm'.*not opensm"):
            subnet_manager_reading(proc.pid, tmp_path / "lfts.dump")
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_a_thread_named_opensm_is_refused_and_its_process_lives(tmp_path):
    code = (
        "import ctypes, threading, time\n"
        "def run():\n"
        "    ctypes.CDLL(None).prctl(15, b'opensm', 0, 0, 0)\n"
        "    print(threading.get_native_id(), flush=True)\n"
        "    time.sleep(60)\n"
        "threading.Thread(target=run, daemon=True).start()\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        tid = int(proc.stdout.readline())
        assert tid != proc.pid
        with pytest.raises(NotOurOpenSM, match="not a process|thread of process"):
            subnet_manager_reading(tid, tmp_path / "lfts.dump")
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_no_such_process(tmp_path):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    with pytest.raises(NotOurOpenSM, match="no process"):
        subnet_manager_reading(int(gone.stdout), tmp_path / "lfts.dump")
    with pytest.raises(NotOurOpenSM, match="not a process ID"):
        subnet_manager_reading(0, tmp_path / "lfts.dump")
