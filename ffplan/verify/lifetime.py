"""Children die with ffplan, and work folders of dead runs do not pile up.

SIGTERM and SIGINT are caught and every process is stopped by PID (sim.py); SIGKILL cannot be caught, so
each child asks the kernel to kill it when its parent dies (Linux prctl PR_SET_PDEATHSIG). Work folders
carry the owner's PID (`ffplan-verify-<pid>-*`): the next run removes those whose owner is gone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Callable

PR_SET_PDEATHSIG = 1
WORKDIR_PREFIX = "ffplan-verify-"


class ToolsMissing(Exception):
    """A program, user or privilege the verify run needs is not there; `needs` says what to install."""

    def __init__(self, missing: list[str], needs: str):
        self.missing = missing
        super().__init__(f"missing {', '.join(missing)}: {needs}")


def _load_prctl() -> Callable[..., int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):  # not Linux: the SIGTERM/SIGINT handlers are all there is
        return None


_PRCTL = _load_prctl()  # resolved before any fork: the child must not load libraries


def die_with_parent(then: Callable[[], None] | None = None) -> Callable[[], None] | None:
    """A `preexec_fn` that makes the child receive SIGKILL when this process dies (None off Linux), then runs
    `then` in the child before it executes (e.g. entering a network namespace)."""
    if _PRCTL is None:
        return then
    prctl = _PRCTL
    parent = os.getpid()

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died between fork and prctl: nobody will signal us
            os._exit(1)
        if then is not None:
            then()

    return preexec


def work_folder(keep: Path | None) -> Path:
    """A new work folder named after this process; in the temp dir, stale ones of dead runs are removed
    first (folders under --keep are the user's to keep; --keep is created when missing and made absolute,
    since the simulator and OpenSM run in the work folder and would read a relative path from there)."""
    if keep is None:
        remove_stale_work_folders(Path(tempfile.gettempdir()))
        return Path(tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-"))
    keep = keep.absolute()
    keep.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-", dir=keep))


def remove_stale_work_folders(folder: Path) -> list[Path]:
    """Remove this user's `ffplan-verify-<pid>-*` folders whose process no longer exists."""
    removed = []
    for path in folder.glob(f"{WORKDIR_PREFIX}*-*"):
        owner = path.name[len(WORKDIR_PREFIX) :].split("-", 1)[0]
        try:
            mine = path.is_dir() and not path.is_symlink() and path.stat().st_uid == os.getuid()
        except OSError:
            continue
        if mine and owner.isdigit() and not _alive(int(owner)):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def stop_process(proc: subprocess.Popen, grace: float) -> None:
    """SIGTERM by PID, SIGKILL after `grace` seconds; always reaped."""
    if proc.poll() is None:
        try:
            os.kill(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            kill_process(proc)
    else:
        proc.wait()


def kill_process(proc: subprocess.Popen) -> None:
    """SIGKILL by PID (unless it has exited) and reap it."""
    if proc.poll() is None:
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover - a process in D state
        pass
