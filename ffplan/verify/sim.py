"""Run the simulated fabric: ibsim on a net file, the real OpenSM through libumad2sim, and infiniband-diags.

Every process is started in its own session (a Ctrl-C on the terminal reaches only ffplan, which then stops
them in order) and stopped by PID: OpenSM first (SIGTERM, then SIGKILL: OpenSM ignores SIGTERM once the
simulator is gone), then ibsim. libumad2sim leaves `sys-<pid>` folders in the working folder after a kill;
they are removed. Sockets are abstract unix sockets named after a private IBSIM_SOCKNAME, so two runs never
meet and nothing is left on disk.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO, Any, NoReturn

from ffplan.verify.lifetime import ToolsMissing, die_with_parent, kill_process, stop_process

DEBIAN_PACKAGES = "opensm ibsim-utils infiniband-diags"
UMAD2SIM_CANDIDATES = (
    "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so",
    "/usr/lib/aarch64-linux-gnu/umad2sim/libumad2sim.so",
    "/usr/lib64/umad2sim/libumad2sim.so",
    "/usr/lib/umad2sim/libumad2sim.so",
    "/usr/local/lib/umad2sim/libumad2sim.so",
)
TOOLS = ("ibsim", "opensm", "ibnetdiscover", "dump_fts", "smpquery", "saquery")

# ibsim's compiled-in defaults (ibsim 0.10); larger fabrics need -N/-S/-P.
IBSIM_MAX_NODES, IBSIM_MAX_SWITCHES, IBSIM_MAX_PORTS = 2048, 256, 13312


class SimError(Exception):
    """The simulation could not be brought up (the message says which step and shows the log's tail)."""


class Interrupted(BaseException):
    """SIGTERM/SIGINT/SIGHUP during a run; processes are stopped before this propagates."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


def find_tools() -> dict[str, str]:
    found: dict[str, str] = {}
    missing: list[str] = []
    path = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin:/sbin:/usr/local/sbin"
    for tool in TOOLS:
        exe = shutil.which(tool, path=path)
        if exe:
            found[tool] = exe
        else:
            missing.append(tool)
    so = os.environ.get("FFPLAN_UMAD2SIM") or next((c for c in UMAD2SIM_CANDIDATES if os.path.exists(c)), None)
    if so and os.path.exists(so):
        found["libumad2sim"] = so
    else:
        missing.append("libumad2sim.so (ibsim-utils)")
    if missing:
        raise ToolsMissing(
            missing,
            f"ffplan verify needs OpenSM, ibsim and infiniband-diags (Debian/Ubuntu: apt-get install {DEBIAN_PACKAGES})",
        )
    return found


def ibsim_limits(nodes: int, switches: int, ports: int) -> list[str]:
    """-N/-S/-P arguments when the fabric exceeds ibsim's defaults (with headroom)."""
    args: list[str] = []
    if nodes > IBSIM_MAX_NODES:
        args += ["-N", str(2 * nodes)]
    if switches > IBSIM_MAX_SWITCHES:
        args += ["-S", str(2 * switches)]
    if ports > IBSIM_MAX_PORTS:
        args += ["-P", str(2 * ports)]
    return args


def _tail(path: Path, lines: int = 8) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


@dataclass
class Simulation:
    """One ibsim + one OpenSM in a private work folder. Use as a context manager; `stop()` is idempotent."""

    workdir: Path
    tools: dict[str, str]
    sm_host: str
    sockname: str = field(default_factory=lambda: f"ffplan-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    ibsim: subprocess.Popen | None = None
    opensm: subprocess.Popen | None = None
    children: list[subprocess.Popen] = field(default_factory=list)
    pids: list[int] = field(default_factory=list)  # every PID started, for the leftovers check

    # ------------------------------------------------------------------ environment
    def env(self, preload: bool) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "SIM_HOST", "IBSIM_SOCKNAME")}
        env["IBSIM_SOCKNAME"] = self.sockname
        env["LC_ALL"] = "C"
        if preload:
            env["LD_PRELOAD"] = self.tools["libumad2sim"]
            env["SIM_HOST"] = self.sm_host
        return env

    def _spawn(
        self,
        argv: list[str],
        stdout: IO[bytes],
        preload: bool,
        extra_env: dict[str, str] | None = None,
        stdin: int = subprocess.DEVNULL,
    ) -> subprocess.Popen:
        env = self.env(preload)
        env.update(extra_env or {})
        proc = subprocess.Popen(
            argv,
            cwd=self.workdir,
            env=env,
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=die_with_parent(),
        )
        self.pids.append(proc.pid)
        return proc

    # ------------------------------------------------------------------ ibsim
    def start_ibsim(self, netfile: Path, extra: list[str], timeout: float, console: bool = False) -> float:
        """With `console`, ibsim reads console commands (`Unlink "node"[port]`, `Link ...`) from `self.console`."""
        log = self.workdir / "ibsim.log"
        started = time.monotonic()
        with open(log, "wb") as fh:
            argv = [self.tools["ibsim"], "-s", *([] if console else ["-n"]), *extra, str(netfile)]
            self.ibsim = self._spawn(argv, fh, preload=False, stdin=subprocess.PIPE if console else subprocess.DEVNULL)
        while True:
            text = log.read_text(errors="replace")
            if "Network simulator ready" in text:
                return time.monotonic() - started
            if self.ibsim.poll() is not None:
                raise SimError(
                    f"ibsim exited with code {self.ibsim.returncode} before 'Network simulator ready':\n" + _tail(log)
                )
            if time.monotonic() - started > timeout:
                raise SimError(f"ibsim not ready after {timeout:g} s:\n" + _tail(log))
            time.sleep(0.05)

    def console(self, command: str) -> None:
        """One ibsim console command, e.g. `Unlink "z1-spine05"` (every port) or `Unlink "z1-leaf05"[21]`."""
        assert self.ibsim is not None and self.ibsim.stdin is not None, "start_ibsim(console=True) first"
        self.ibsim.stdin.write(command.encode() + b"\n")
        self.ibsim.stdin.flush()

    # ------------------------------------------------------------------ OpenSM
    def start_opensm(self, conf: Path, cache: Path, extra: list[str]) -> None:
        dump = self.workdir / "dump"
        dump.mkdir(exist_ok=True)
        argv = [
            self.tools["opensm"],
            "-F",
            str(conf),
            "-d",
            "2",
            "-e",
            "-f",
            str(self.workdir / "osm.log"),
            "--dump_files_dir",
            str(dump),
            *extra,
        ]
        with open(self.workdir / "opensm.out", "wb") as fh:
            self.opensm = self._spawn(
                argv, fh, preload=True, extra_env={"OSM_CACHE_DIR": str(cache), "OSM_TMP_DIR": str(dump)}
            )

    # Lines after which OpenSM will not come up on its own with no_fallback (fail fast instead of waiting).
    FATAL = ("No routing engine able to successfully configure", "cannot find or setup routing engine")

    def wait_subnet_up(self, timeout: float) -> float:
        log = self.workdir / "osm.log"
        started = time.monotonic()
        assert self.opensm is not None
        while True:
            text = log.read_text(errors="replace") if log.exists() else ""
            if "SUBNET UP" in text:
                return time.monotonic() - started
            fatal = next((line for line in text.splitlines() if any(f in line for f in self.FATAL)), None)
            if fatal:
                raise SimError(
                    "OpenSM cannot route the fabric: "
                    + " ".join(fatal.split("-> ", 1)[-1].split())
                    + "\n"
                    + _relevant(text)
                )
            if self.opensm.poll() is not None:
                raise SimError(
                    f"OpenSM exited with code {self.opensm.returncode} before SUBNET UP:\n"
                    + _tail(self.workdir / "opensm.out")
                    + "\n"
                    + _tail(log)
                )
            if self.ibsim is not None and self.ibsim.poll() is not None:
                raise SimError("ibsim exited while OpenSM was sweeping:\n" + _tail(self.workdir / "ibsim.log"))
            if time.monotonic() - started > timeout:
                raise SimError(
                    f"no SUBNET UP after {timeout:g} s (raise --timeout for large fabrics):\n" + _relevant(text)
                )
            time.sleep(0.05)

    def log_count(self, text: str) -> int:
        log = self.workdir / "osm.log"
        return log.read_text(errors="replace").count(text) if log.exists() else 0

    def wait_log_count(self, text: str, count: int, timeout: float) -> float:
        """Wait until OpenSM's log holds `text` `count` times (e.g. the SUBNET UP of a heavy sweep after a SIGHUP)."""
        started = time.monotonic()
        while self.log_count(text) < count:
            assert self.opensm is not None
            if self.opensm.poll() is not None:
                raise SimError(
                    f"OpenSM exited with code {self.opensm.returncode}:\n" + _tail(self.workdir / "opensm.out")
                )
            if time.monotonic() - started > timeout:
                raise SimError(
                    f"OpenSM's log has {text!r} {self.log_count(text)} times, not {count}, after {timeout:g} s"
                )
            time.sleep(0.05)
        return time.monotonic() - started

    # ------------------------------------------------------------------ diags
    def diag(self, argv: list[str], timeout: float = 120.0) -> str:
        """Run one infiniband-diags command attached to the SM's node; its output as text."""
        exe = self.tools.get(argv[0], argv[0])
        out = self.workdir / f"diag-{len(self.pids)}.out"
        with open(out, "wb") as fh:
            proc = self._spawn([exe, *argv[1:]], fh, preload=True)
            self.children.append(proc)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                kill_process(proc)
                raise SimError(f"{' '.join(argv)} did not finish in {timeout:g} s") from None
            finally:
                self.children.remove(proc)
        text = out.read_text(errors="replace")
        out.unlink()
        if proc.returncode != 0:
            raise SimError(f"{' '.join(argv)} failed with code {proc.returncode}:\n{text[-2000:]}")
        return text

    # ------------------------------------------------------------------ stop
    def stop(self) -> None:
        blocked = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
        old = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)  # a second Ctrl-C must not cut the cleanup short
        try:
            self._stop_all()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def _stop_all(self) -> None:
        for proc in list(self.children):
            kill_process(proc)
        self.children.clear()
        if self.opensm is not None:
            stop_process(self.opensm, grace=5.0)
        if self.ibsim is not None:
            if self.ibsim.stdin is not None:
                self.ibsim.stdin.close()
            stop_process(self.ibsim, grace=3.0)
        for leftover in self.workdir.glob("sys-*"):
            if leftover.is_dir() and re.fullmatch(r"sys-\d+", leftover.name):
                shutil.rmtree(leftover, ignore_errors=True)

    def __enter__(self) -> "Simulation":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _relevant(log_text: str, n: int = 6) -> str:
    lines = [ln for ln in log_text.splitlines() if " 0x01 -> " in ln or "ERR " in ln]
    return "\n".join(lines[-n:])


class signals_raise:
    """Turn SIGTERM (and SIGINT, SIGHUP) into `Interrupted` for the duration, so `finally` blocks stop the run."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

    def __enter__(self) -> signals_raise:
        self.saved: dict[int, Any] = {}
        try:
            for sig in self.SIGNALS:
                self.saved[sig] = signal.signal(sig, self._handler)
        except ValueError:  # not the main thread: leave the handlers alone
            self.saved = {}
        return self

    @staticmethod
    def _handler(signum: int, frame: FrameType | None) -> NoReturn:
        raise Interrupted(signum)

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)
