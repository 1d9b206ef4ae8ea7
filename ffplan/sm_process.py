"""The running OpenSM that reads the LFT file reroute writes: found, proven and signalled without races.

A process name proves nothing (any process can call itself "opensm", and a thread ID is accepted by kill(2) and
signals its whole process), so `--hup PID` is accepted only when PID is a process (not a thread) whose
executable is opensm and whose configuration makes it read exactly the file being written: `-U/--lfts_file` on
its command line, else `lfts_file` in the file of `-F/--config` (OpenSM's default /etc/opensm/opensm.conf),
relative paths from its working folder. The process is held by a pidfd from the first check to the signal, so a
PID that is reused meanwhile is never signalled.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from pathlib import Path

DEFAULT_CONFIG = "/etc/opensm/opensm.conf"
_CONFIG_OPTS = ("-F", "--config")
_LFTS_OPTS = ("-U", "--lfts_file")
_MAX_CONFIG_BYTES = 4 << 20


class NotOurOpenSM(Exception):
    """The PID is not an OpenSM reading the file written; nothing was signalled."""


@dataclass(frozen=True)
class SubnetManager:
    pid: int
    pidfd: int
    lfts_file: str  # as OpenSM's configuration names it (for messages)

    def request_heavy_sweep(self) -> None:
        """SIGHUP: OpenSM 3.3.23 answers with a heavy sweep (main.c), whose routing step re-reads lfts_file."""
        try:
            signal.pidfd_send_signal(self.pidfd, signal.SIGHUP)
        except ProcessLookupError:
            raise NotOurOpenSM(f"OpenSM (PID {self.pid}) exited before the signal") from None
        finally:
            os.close(self.pidfd)

    def release(self) -> None:
        os.close(self.pidfd)


def _option(argv: list[str], names: tuple[str, ...]) -> str | None:
    """The last value of a getopt_long option (`-U x`, `-Ux`, `--lfts_file x`, `--lfts_file=x`), as OpenSM's
    parser keeps the last one."""
    found = None
    short, long = names
    args = iter(argv[1:])
    for arg in args:
        if arg == "--":
            break
        if arg in names:
            found = next(args, None)
        elif arg.startswith(long + "="):
            found = arg[len(long) + 1 :]
        elif arg.startswith(short) and not arg.startswith("--") and len(arg) > 2:
            found = arg[2:]
    return found


def _config_value(text: str, key: str) -> str | None:
    """OpenSM's opensm.conf: `key value` lines, `#` comments; the last occurrence wins."""
    found = None
    for line in text.splitlines():
        words = line.split(None, 1)
        if len(words) == 2 and words[0] == key:
            found = words[1].strip()
    return None if found == "(null)" else found  # how `opensm -c` writes an unset path


def _in_process_view(pid: int, path: str) -> Path:
    """A path as the process sees it (its root and working folder), reachable from here through /proc."""
    base = f"/proc/{pid}/root" if path.startswith("/") else f"/proc/{pid}/cwd"
    return Path(base) / path.lstrip("/")


def _same_file(a: Path, b: Path) -> bool:
    """Same folder (device and inode) and same name: the file itself may not exist yet."""
    try:
        sa, sb = os.stat(a.parent), os.stat(b.parent)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino) and a.name == b.name


def _read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(_MAX_CONFIG_BYTES)


def subnet_manager_reading(pid: int, lfts_file: Path) -> SubnetManager:
    """The OpenSM process `pid`, proven to read `lfts_file`; raises NotOurOpenSM with the reason otherwise."""
    if pid <= 0:
        raise NotOurOpenSM(f"{pid} is not a process ID")
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        raise NotOurOpenSM(f"no process {pid}") from None
    except OSError as exc:  # EINVAL: a thread that is not its process's leader
        raise NotOurOpenSM(f"{pid} is not a process ({exc.strerror})") from None
    try:
        named = _prove(pid, lfts_file)
        signal.pidfd_send_signal(pidfd, 0)  # still the same process: what /proc showed was this one
    except ProcessLookupError:
        os.close(pidfd)
        raise NotOurOpenSM(f"process {pid} exited while it was checked") from None
    except BaseException:
        os.close(pidfd)
        raise
    return SubnetManager(pid=pid, pidfd=pidfd, lfts_file=named)


def _prove(pid: int, lfts_file: Path) -> str:
    proc = f"/proc/{pid}"
    try:
        status = _read(f"{proc}/status").decode(errors="replace")
        tgid = next((line.split()[1] for line in status.splitlines() if line.startswith("Tgid:")), "")
        if tgid != str(pid):
            raise NotOurOpenSM(f"{pid} is a thread of process {tgid}, not a process")
        exe = os.readlink(f"{proc}/exe").removesuffix(" (deleted)")
        argv = [a.decode(errors="replace") for a in _read(f"{proc}/cmdline").split(b"\0")[:-1]]
    except FileNotFoundError:
        raise NotOurOpenSM(f"no process {pid}") from None
    except PermissionError:
        raise NotOurOpenSM(f"cannot inspect process {pid}: run reroute as root (or as OpenSM's user)") from None
    if os.path.basename(exe) != "opensm":
        comm = _read(f"{proc}/comm").decode(errors="replace").strip()
        raise NotOurOpenSM(f"process {pid} runs {exe!r} (named {comm!r}), not opensm")
    named = _option(argv, _LFTS_OPTS)
    if named is None:
        config = _option(argv, _CONFIG_OPTS) or DEFAULT_CONFIG
        try:
            named = _config_value(_read(str(_in_process_view(pid, config))).decode(errors="replace"), "lfts_file")
        except OSError as exc:
            raise NotOurOpenSM(f"cannot read OpenSM {pid}'s configuration {config}: {exc.strerror}") from None
        if named is None:
            raise NotOurOpenSM(f"OpenSM {pid} reads no LFT file: no -U on its command line, no lfts_file in {config}")
    if not _same_file(_in_process_view(pid, named), lfts_file):
        raise NotOurOpenSM(f"OpenSM {pid} reads {named}, not {lfts_file}")
    return named
