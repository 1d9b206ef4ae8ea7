"""Network namespaces that exist only while this process (or a process inside them) holds them, and the processes
started inside them.

Nothing is named: each namespace is created by this process entering a new one for an instant (unshare) and keeping
a file descriptor to it, so two runs never collide, nothing is written to /run/netns, and the kernel frees a
namespace (and the veth ends in it, and so the pairs) once the descriptor is closed and no process lives in it. That
happens on every exit of ffplan, SIGKILL included, provided no process outlives it inside: every child gets
PR_SET_PDEATHSIG, but FRR's daemons change their user to `frr`, which clears it (prctl(2)), so each child also
reports its PID to a reaper (reaper.py) before it executes; the reaper kills them when ffplan's end of its pipe
closes, however ffplan ended.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO, Callable, Sequence

from ffplan.verify.lifetime import die_with_parent, kill_process

CLONE_NEWNET = 0x40000000
_LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
REAPER = Path(__file__).with_name("reaper.py")
DONE = b"done\n"  # the reaper's last line after a clean end
# IPv4's neighbour (ARP) table is one for the whole kernel: its size limits, settable only from the first namespace,
# count the entries of every namespace, and beyond gc_thresh3 a new entry is refused (`neighbor table overflow!`)
NEIGH_SYSCTL = Path("/proc/sys/net/ipv4/neigh/default")
ARP_STAT = Path("/proc/net/stat/arp_cache")
NEIGH_MARGIN = 1024  # entries left for everything else on the machine


class NamespaceError(Exception):
    """A namespace could not be created or entered (needs root: CAP_SYS_ADMIN)."""


def arp_stat() -> tuple[int, int]:
    """(entries now, times the table was full) of the kernel's ARP table, from its statistics: a header line, then
    one line of hexadecimal counters per CPU; `entries` is global (each line repeats it), `table_fulls` per CPU."""
    header, *cpus = [line.split() for line in ARP_STAT.read_text().splitlines() if line.strip()]
    entries, fulls = header.index("entries"), header.index("table_fulls")
    return (int(cpus[0][entries], 16) if cpus else 0), sum(int(cpu[fulls], 16) for cpu in cpus)


def make_room_for_neighbours(needed: int) -> str:
    """Raise the kernel's ARP table limits when `needed` more entries would not fit below gc_thresh2 next to those
    present: a fabric of 4,096 veth pairs resolves about 8,192 neighbours, the default gc_thresh3 is 1,024, and
    beyond it ARP fails at random (sessions stuck in Connect, pings lost). Between gc_thresh2 and gc_thresh3 the
    kernel drops entries older than 5 s every 5 s, so gc_thresh2 gets the room (and a margin), gc_thresh3 twice
    that. Never lowered: another run may rely on it; a small fabric leaves the defaults alone.
    Returns what was done, for the report."""
    present, _ = arp_stat()
    names = ("gc_thresh3", "gc_thresh2")  # gc_thresh3 first: it stays the larger one
    have = {name: int((NEIGH_SYSCTL / name).read_text()) for name in names}
    limits = f"net.ipv4.neigh.default.gc_thresh2/gc_thresh3 {have['gc_thresh2']:,}/{have['gc_thresh3']:,}"
    if present + needed <= have["gc_thresh2"] and present + needed < have["gc_thresh3"]:
        return f"{needed:,} entries needed, {present:,} present: {limits} suffice"
    room = present + needed + NEIGH_MARGIN
    want = {"gc_thresh3": max(have["gc_thresh3"], 2 * room), "gc_thresh2": max(have["gc_thresh2"], room)}
    for name in names:
        if want[name] != have[name]:
            (NEIGH_SYSCTL / name).write_text(f"{want[name]}\n")
    raised = ", ".join(f"{name} {have[name]:,} -> {want[name]:,}" for name in names if want[name] != have[name])
    return f"{needed:,} entries needed, {present:,} present: raised {raised} (net.ipv4.neigh.default; global, kept)"


class Namespaces:
    """Anonymous network namespaces by key (a switch or host name) and the processes run in them. `close()` stops
    every process started and releases every namespace; it is idempotent."""

    def __init__(self, workdir: Path, remove_workdir: bool):
        self.fds: dict[str, int] = {}
        self.daemons: list[subprocess.Popen] = []
        self._home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        # the reaper lives in its own session (a Ctrl-C on the terminal is ffplan's to handle) and without a
        # parent-death signal: it must outlive ffplan to clean up after a SIGKILL
        argv = [sys.executable, "-I", "-S", str(REAPER)] + ([str(workdir)] if remove_workdir else [])
        self.reaper = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        assert self.reaper.stdin is not None
        self._report_fd = self.reaper.stdin.fileno()

    # ------------------------------------------------------------------ namespaces
    def create(self, key: str) -> None:
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
        try:  # an interrupt between entering and leaving would leave this process in the new namespace
            if _LIBC.unshare(CLONE_NEWNET) != 0:
                raise NamespaceError(f"unshare(CLONE_NEWNET): {os.strerror(ctypes.get_errno())} (needs root)")
            try:
                self.fds[key] = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
            finally:
                if _LIBC.setns(self._home, CLONE_NEWNET) != 0:  # pragma: no cover - the original namespace is ours
                    raise NamespaceError(f"setns back: {os.strerror(ctypes.get_errno())}")
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def path(self, key: str) -> str:
        """The namespace as a path other processes can open (`ip link ... netns PATH`)."""
        return f"/proc/{os.getpid()}/fd/{self.fds[key]}"

    def inode(self, key: str) -> int:
        return os.fstat(self.fds[key]).st_ino

    # ------------------------------------------------------------------ processes
    def _enter(self, key: str) -> Callable[[], None] | None:
        fd, report = self.fds[key], self._report_fd
        setns = _LIBC.setns

        def enter() -> None:
            os.write(report, b"%d\n" % os.getpid())  # before exec: a daemon is known before it can drop privileges
            if setns(fd, CLONE_NEWNET) != 0:
                os._exit(126)

        return die_with_parent(enter)

    def run(
        self,
        key: str,
        argv: list[str],
        *,
        stdin: str | None = None,
        timeout: float = 60.0,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run a command inside namespace `key` and wait for it (killed after `timeout` seconds)."""
        return self.run_many([(key, argv, stdin)], timeout=timeout, env=env)[0]

    def run_many(
        self,
        jobs: Sequence[tuple[str, list[str], str | None]],
        *,
        timeout: float = 60.0,
        env: dict[str, str] | None = None,
        at_once: int = 16,
    ) -> list[subprocess.CompletedProcess[str]]:
        """(namespace, argv, stdin) jobs, `at_once` at a time (forking is most of their cost); results in order."""
        results = []
        for first in range(0, len(jobs), at_once):
            started = []
            try:
                for key, argv, stdin in jobs[first : first + at_once]:
                    started.append(
                        (
                            argv,
                            stdin,
                            subprocess.Popen(
                                argv,
                                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE,
                                text=True,
                                env=env,
                                preexec_fn=self._enter(key),
                                start_new_session=True,
                            ),
                        )
                    )
                for argv, stdin, proc in started:
                    try:
                        out, err = proc.communicate(stdin, timeout=timeout)
                    except subprocess.TimeoutExpired:
                        kill_process(proc)
                        out, err = proc.communicate()
                        err += f"\n(killed after {timeout:g} s)"
                    results.append(subprocess.CompletedProcess(argv, proc.returncode, out, err))
            finally:
                for _, _, proc in started:
                    kill_process(proc)  # an interrupt: none of them outlives the call
        return results

    def start(self, key: str, argv: list[str], log: IO[bytes] | int) -> subprocess.Popen:
        """Start a command inside namespace `key` without waiting (stdout and stderr to `log`); `close()` stops it
        unless it is removed from `daemons` first."""
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=self._enter(key),
            start_new_session=True,
        )
        self.daemons.append(proc)
        return proc

    # ------------------------------------------------------------------ the end
    def close(self) -> None:
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
        try:  # a second Ctrl-C must not cut the cleanup short
            for proc in self.daemons:  # SIGKILL: nothing of a test fabric's state is worth a graceful stop
                kill_process(proc)
            self.daemons.clear()
            for fd in self.fds.values():
                os.close(fd)
            self.fds.clear()
            if self.reaper.stdin is not None and not self.reaper.stdin.closed:
                self.reaper.stdin.write(DONE)  # a clean end: nothing to kill, the work folder is ffplan's to remove
                self.reaper.stdin.close()
                try:
                    self.reaper.wait(timeout=30)
                except subprocess.TimeoutExpired:  # it finishes on its own, in its own session
                    pass
            if self._home >= 0:
                os.close(self._home)
                self._home = -1
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
