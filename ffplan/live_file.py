"""Replacing one file that a running daemon reads (OpenSM's LFT file), safely when run as root.

The folder may be writable by someone else (a misconfigured /etc/opensm, a shared mount), so nothing in it is
trusted: the target must be a regular file or absent (never written through a symlink, never a device or FIFO
replaced), the new content is written to an unnamed file (O_TMPFILE) so a killed run leaves nothing behind, and
every name is opened relative to the folder's descriptor without following symlinks. A reader sees the old file
or the new one, never a mix: fsync, rename over, fsync of the folder. The old file's mode and owner are kept.

The content goes to the disk with O_DIRECT where the file system takes it: the file (0.88 GB on 16,384 endpoints)
is fsynced anyway, and a buffered write first fills the page cache with fresh pages, which costs 0.2-2.8 s of
system time on a VM that hands free memory back to its host, against 0.4 s written direct (docs/performance.md).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import mmap
import os
import re
import secrets
import signal
import stat
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

_KINDS = (
    (stat.S_ISLNK, "a symlink"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)
NEW_FILE_MODE = 0o644


class UnsafeTarget(Exception):
    """The target is not a regular file (or absent) in a folder: nothing was written."""


@dataclass(frozen=True)
class Target:
    folder: Path  # resolved: the folder's own path components are the caller's choice, not the folder's content
    name: str

    @property
    def path(self) -> Path:
        return self.folder / self.name

    def others_can_write_folder(self) -> bool:
        """Group- or world-writable and not sticky: someone else could swap the file between two runs."""
        mode = os.stat(self.folder).st_mode
        return bool(mode & (stat.S_IWGRP | stat.S_IWOTH)) and not mode & stat.S_ISVTX


def _kind(mode: int) -> str | None:
    return next((name for test, name in _KINDS if test(mode)), None) if not stat.S_ISREG(mode) else None


def check_target(path: Path) -> Target:
    """The file to replace, refused unless it is a regular file or does not exist yet."""
    folder = Path(os.path.realpath(path.parent))
    if not folder.is_dir():
        raise UnsafeTarget(f"{path.parent} is not a folder")
    target = Target(folder, path.name)
    try:
        kind = _kind(os.lstat(target.path).st_mode)
    except FileNotFoundError:
        return target
    if kind is not None:
        raise UnsafeTarget(
            f"{path} is {kind}, not a regular file: reroute replaces only a regular file "
            "(never writes through a symlink, never replaces a device or FIFO)"
        )
    return target


def _leftover_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"^\.{re.escape(name)}\.ffplan-(\d+)-[0-9a-f]{{16}}\.tmp$")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_leftovers(dfd: int, name: str) -> None:
    """Named temporary files of runs that were killed between link and rename (or on a file system without
    O_TMPFILE): unlinking a name never follows it."""
    pattern = _leftover_pattern(name)
    for entry in os.listdir(dfd):
        m = pattern.match(entry)
        if m and not _alive(int(m[1])):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry, dir_fd=dfd)


@contextlib.contextmanager
def _terminated_as_exit() -> Iterator[None]:
    """SIGTERM/SIGHUP during the write unwind like Ctrl-C does, so the temporary name is removed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def leave(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    saved = {sig: signal.signal(sig, leave) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def _open_unnamed(dfd: int) -> int | None:
    try:
        return os.open(".", os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o600, dir_fd=dfd)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
            return None  # file system without O_TMPFILE: a named temporary file instead
        raise


def replace_file(target: Target, chunks: bytes | Iterable[bytes | memoryview]) -> None:
    """Atomically replace `target` with `chunks` (see the module's docstring). Raises UnsafeTarget when the
    target became a symlink, device, FIFO or folder since `check_target`; OSError when the write fails."""
    with replacing(target, chunks):
        pass


@contextlib.contextmanager
def replacing(target: Target, chunks: bytes | Iterable[bytes | memoryview]) -> Iterator[None]:
    """replace_file, with the body run while a thread writes the content (the 16k tree's 0.88 GB waits on the disk
    while reroute checks its routes): the file is replaced when the body ends, and stays as it was when the body
    raises (the write stops, the unnamed file goes). The errors of replace_file come at the end of the body."""
    dfd = os.open(target.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _remove_leftovers(dfd, target.name)
        with _terminated_as_exit(), _replacing_in(dfd, target, [chunks] if isinstance(chunks, bytes) else chunks):
            yield
        os.fsync(dfd)
    finally:
        os.close(dfd)


class _Stopped(Exception):
    """The body around the write raised: the content is not wanted."""


@contextlib.contextmanager
def _replacing_in(dfd: int, target: Target, chunks: Iterable[bytes | memoryview]) -> Iterator[None]:
    temp = f".{target.name}.ffplan-{os.getpid()}-{secrets.token_hex(8)}.tmp"
    fd = _open_unnamed(dfd)
    named = fd is None
    if fd is None:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dfd)
    try:
        stop = threading.Event()
        with ThreadPoolExecutor(max_workers=1) as writer:
            written = writer.submit(_write_chunks, fd, chunks, stop)
            try:
                yield
            except BaseException:
                stop.set()
                raise
        written.result()
        os.fsync(fd)
        _copy_ownership(dfd, target, fd)
        if not named:
            # linkat(2) of an O_TMPFILE through /proc needs no privilege; link() fails if the name exists
            os.link(f"/proc/self/fd/{fd}", temp, dst_dir_fd=dfd, follow_symlinks=True)
            named = True
        os.rename(temp, target.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        named = False
    finally:
        os.close(fd)
        if named:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=dfd)


_DIRECT_BLOCK = 4096  # O_DIRECT's offsets, lengths and buffer address: a multiple of the logical block size
_STAGING_BYTES = 4 << 20


def _write_chunks(fd: int, chunks: Iterable[bytes | memoryview], stop: threading.Event) -> None:
    """The chunks written in order through two page-aligned staging buffers: one is filled while a thread writes the
    other (a direct write waits for the disk, not the CPU); whole blocks with O_DIRECT while the file system takes
    them, the tail (and everything, where O_DIRECT is refused) buffered."""
    file = _DirectFile(fd)
    buffers = [memoryview(mmap.mmap(-1, _STAGING_BYTES)) for _ in range(2)]  # unmapped when their last view goes
    current, filled = 0, 0
    with ThreadPoolExecutor(max_workers=1) as writer:
        in_flight: Future[None] | None = None
        for chunk in chunks:
            if stop.is_set():
                raise _Stopped
            view = memoryview(chunk).cast("B")
            while view:
                n = min(len(view), _STAGING_BYTES - filled)
                buffers[current][filled : filled + n] = view[:n]
                filled, view = filled + n, view[n:]
                if filled == _STAGING_BYTES:
                    if in_flight is not None:
                        in_flight.result()  # the other buffer is on the disk: it can be filled
                    in_flight = writer.submit(file.write, buffers[current])
                    current, filled = 1 - current, 0
        if in_flight is not None:
            in_flight.result()
    whole = filled - filled % _DIRECT_BLOCK
    file.write(buffers[current][:whole])
    file.finish(buffers[current][whole:filled])


class _DirectFile:
    """Writes to `fd` with O_DIRECT while the file system and device take it, buffered from the first refusal on."""

    def __init__(self, fd: int):
        self.fd = fd
        self.direct = self._set_direct(True)

    def _set_direct(self, on: bool) -> bool:
        """O_DIRECT on or off; False when the file system refuses it (tmpfs before Linux 6.6, some network ones)."""
        flags = fcntl.fcntl(self.fd, fcntl.F_GETFL)
        try:
            fcntl.fcntl(self.fd, fcntl.F_SETFL, flags | os.O_DIRECT if on else flags & ~os.O_DIRECT)
        except OSError as exc:
            if exc.errno != errno.EINVAL:
                raise
            return False
        return on

    def write(self, view: memoryview) -> None:
        """The whole view (whole _DIRECT_BLOCKs of a page-aligned buffer); a device whose logical block is larger
        refuses a direct write with EINVAL, having written nothing: then buffered from there on."""
        while view:
            try:
                view = view[os.write(self.fd, view) :]
            except OSError as exc:
                if not self.direct or exc.errno != errno.EINVAL:
                    raise
                self.direct = self._set_direct(False)

    def finish(self, tail: memoryview) -> None:
        """The last bytes, of any length: buffered."""
        if self.direct:
            self.direct = self._set_direct(False)
        self.write(tail)


def _copy_ownership(dfd: int, target: Target, fd: int) -> None:
    """The old file's mode and owner (the new file is ours, 0600, until now); a new file gets 0644."""
    try:
        old = os.stat(target.name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        os.fchmod(fd, NEW_FILE_MODE)
        return
    kind = _kind(old.st_mode)
    if kind is not None:
        raise UnsafeTarget(f"{target.path} became {kind} while reroute ran: nothing was written")
    if os.geteuid() == 0 and (old.st_uid, old.st_gid) != (os.fstat(fd).st_uid, os.fstat(fd).st_gid):
        os.fchown(fd, old.st_uid, old.st_gid)
    os.fchmod(fd, stat.S_IMODE(old.st_mode))
