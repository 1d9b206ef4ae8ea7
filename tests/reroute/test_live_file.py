"""reroute runs as root beside OpenSM: replacing the LFT file must never write through a symlink, never replace a
device or FIFO, never follow a planted temporary name, keep the old file's mode, and leave nothing behind when
killed. Every special file here is made by the test in its own folder."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ffplan.live_file import UnsafeTarget, check_target, replace_file

ROOT = Path(__file__).resolve().parents[2]


def test_replaces_and_keeps_mode(tmp_path):
    target = tmp_path / "lfts.dump"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    replace_file(check_target(target), [b"new", b"\n"])
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lfts.dump"]


def test_a_new_file_is_0644(tmp_path):
    replace_file(check_target(tmp_path / "lfts.dump"), b"x\n")
    assert stat.S_IMODE((tmp_path / "lfts.dump").stat().st_mode) == 0o644


def test_a_planted_temporary_name_is_never_followed(tmp_path):
    """The old writer used `.lfts.dump.<pid>.tmp` and followed it: a symlink there made root overwrite the file it
    pointed at and change its mode. Plant that name, and every name of the new pattern it could guess."""
    victim = tmp_path / "root-only"
    victim.write_text("secret\n")
    os.chmod(victim, 0o600)
    folder = tmp_path / "opensm"
    folder.mkdir()
    (folder / f".lfts.dump.{os.getpid()}.tmp").symlink_to(victim)
    replace_file(check_target(folder / "lfts.dump"), b"tables\n")
    assert victim.read_text() == "secret\n" and stat.S_IMODE(victim.stat().st_mode) == 0o600
    assert (folder / "lfts.dump").read_text() == "tables\n"


@pytest.mark.parametrize("kind", ["symlink", "fifo", "device", "socket"])
def test_special_targets_are_refused_and_left_alone(tmp_path, kind):
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    target = tmp_path / "lfts.dump"
    if kind == "symlink":
        target.symlink_to(victim)
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "device":
        if os.geteuid() != 0:
            pytest.skip("mknod of a character device needs root")
        os.mknod(target, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # a null device of the test's own
    else:
        import socket

        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(target))
        sock.close()
    before = os.lstat(target)
    with pytest.raises(UnsafeTarget, match="not a regular file"):
        check_target(target)
    after = os.lstat(target)
    assert (before.st_ino, before.st_mode) == (after.st_ino, after.st_mode)
    assert victim.read_text() == "keep\n"


def test_a_target_swapped_for_a_symlink_after_the_check_is_not_written_through(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    target = tmp_path / "lfts.dump"
    target.write_text("old\n")
    checked = check_target(target)
    target.unlink()
    target.symlink_to(victim)
    with pytest.raises(UnsafeTarget, match="became a symlink"):
        replace_file(checked, b"new\n")
    assert victim.read_text() == "keep\n" and target.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lfts.dump", "victim"]


_KILLED_WRITER = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from ffplan.live_file import check_target, replace_file
    def chunks():
        yield b"half of the tables\\n" * 1000
        os.kill(os.getpid(), getattr(signal, sys.argv[2]))
        yield b"never\\n"
    replace_file(check_target(Path(sys.argv[1])), chunks())
""")


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGTERM"])
def test_a_killed_run_leaves_the_old_file_and_no_temporary_file(tmp_path, sig):
    target = tmp_path / "lfts.dump"
    target.write_text("old\n")
    proc = subprocess.run([sys.executable, "-c", _KILLED_WRITER, str(target), sig], cwd=ROOT, capture_output=True)
    assert proc.returncode in (-signal.SIGKILL, 128 + signal.SIGTERM), proc.stderr
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lfts.dump"]


def test_leftovers_of_dead_runs_are_removed_but_not_of_live_ones(tmp_path):
    target = tmp_path / "lfts.dump"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".lfts.dump.ffplan-{int(dead.stdout)}-{'0' * 16}.tmp"
    live = tmp_path / f".lfts.dump.ffplan-{os.getpid()}-{'1' * 16}.tmp"
    stale.write_text("x")
    live.write_text("y")
    replace_file(check_target(target), b"new\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["lfts.dump", live.name])


def test_group_writable_folder_is_noticed(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chmod(folder, 0o775)
    assert check_target(folder / "lfts.dump").others_can_write_folder()
    os.chmod(folder, 0o755)
    assert not check_target(folder / "lfts.dump").others_can_write_folder()


def _pieces(total: int, seed: int) -> list[bytes]:
    """Content of `total` bytes in pieces of uneven sizes, some larger than the staging buffer."""
    import random

    rng = random.Random(seed)
    data = rng.randbytes(total)
    cuts = sorted(rng.sample(range(1, total), 40))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, total])]


def _writes_traced(monkeypatch, folder: Path, refuse_direct_write: bool = False) -> list[bool]:
    """Record, per write(2) to a file in `folder`, whether O_DIRECT was on; optionally answer a direct write with
    EINVAL as a device with logical blocks larger than 4 KiB does."""
    import errno
    import fcntl

    from ffplan import live_file

    traced: list[bool] = []
    real_write = os.write

    def write(fd: int, data) -> int:
        if not os.readlink(f"/proc/self/fd/{fd}").startswith(str(folder)):
            return real_write(fd, data)
        direct = bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT)
        traced.append(direct)
        if direct and refuse_direct_write:
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_write(fd, data)

    monkeypatch.setattr(live_file.os, "write", write)
    return traced


def _takes_direct(folder: Path) -> bool:
    try:
        os.close(os.open(folder / "probe", os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o600))
    except OSError:
        return False
    finally:
        (folder / "probe").unlink(missing_ok=True)
    return True


@pytest.mark.parametrize("total", [1, 4095, 4096, (4 << 20) - 1, (4 << 20) + 1, (9 << 20) + 12345])
def test_content_is_exact_across_staging_and_block_edges(tmp_path, monkeypatch, total):
    """Whole blocks go with O_DIRECT where the file system takes it, the unaligned tail buffered; the bytes are
    the chunks' bytes in order whatever the sizes."""
    traced = _writes_traced(monkeypatch, tmp_path)
    pieces = _pieces(total, total) if total > 1 else [b"x"]
    target = tmp_path / "lfts.dump"
    replace_file(check_target(target), pieces)
    assert target.read_bytes() == b"".join(pieces)
    if _takes_direct(tmp_path) and total >= 4096:
        assert traced[0], "the first whole block was not written with O_DIRECT"
    assert not traced[-1] or total % 4096 == 0


def test_a_device_refusing_direct_writes_gets_them_buffered(tmp_path, monkeypatch):
    traced = _writes_traced(monkeypatch, tmp_path, refuse_direct_write=True)
    pieces = _pieces((9 << 20) + 77, 7)
    target = tmp_path / "lfts.dump"
    replace_file(check_target(target), pieces)
    assert target.read_bytes() == b"".join(pieces)
    assert traced.count(True) <= 1, "kept trying O_DIRECT after the device refused it"


def test_a_file_system_refusing_direct_gets_buffered_writes(tmp_path, monkeypatch):
    """tmpfs before Linux 6.6 and some network file systems refuse O_DIRECT at fcntl."""
    import errno
    import fcntl

    from ffplan import live_file

    real_fcntl = fcntl.fcntl

    def no_direct(fd: int, cmd: int, arg: int = 0) -> int:
        if cmd == fcntl.F_SETFL and arg & os.O_DIRECT:
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_fcntl(fd, cmd, arg)

    monkeypatch.setattr(live_file.fcntl, "fcntl", no_direct)
    traced = _writes_traced(monkeypatch, tmp_path)
    pieces = _pieces((5 << 20) + 3, 5)
    target = tmp_path / "lfts.dump"
    replace_file(check_target(target), pieces)
    assert target.read_bytes() == b"".join(pieces)
    assert traced and not any(traced)


def test_a_failed_write_leaves_the_old_file_and_nothing_else(tmp_path, monkeypatch):
    """A write that fails in the writer thread (here the disk is full at the second buffer) reaches the caller; the
    old file stays whole and no temporary name is left."""
    import errno

    from ffplan import live_file

    target = tmp_path / "lfts.dump"
    target.write_bytes(b"old tables\n")
    real_write = os.write
    calls = []

    def full_disk(fd: int, data) -> int:
        if os.readlink(f"/proc/self/fd/{fd}").startswith(str(tmp_path)):
            calls.append(len(data))
            if len(calls) == 2:
                raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(live_file.os, "write", full_disk)
    with pytest.raises(OSError, match="No space left"):
        replace_file(check_target(target), _pieces((13 << 20) + 5, 13))
    assert target.read_bytes() == b"old tables\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lfts.dump"]


def test_replacing_commits_when_the_body_ends_and_drops_the_write_when_it_raises(tmp_path):
    """reroute checks its routes while a thread writes the file: the file changes only when the body has ended, and a
    body that raises (SIGTERM, a bug) leaves the old file and no temporary name, the write stopped mid-way."""
    from ffplan.live_file import replacing

    target = tmp_path / "lfts.dump"
    target.write_bytes(b"old tables\n")
    made = []

    def endless():
        while True:
            made.append(1)
            yield b"x" * 65536

    with pytest.raises(RuntimeError, match="checks failed"):
        with replacing(check_target(target), endless()):
            deadline = time.monotonic() + 60
            while len(made) < 200 and time.monotonic() < deadline:  # the thread is writing
                pass
            assert len(made) >= 200, "the writer thread did not start"
            raise RuntimeError("checks failed")
    assert target.read_bytes() == b"old tables\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lfts.dump"]
    pieces = _pieces((6 << 20) + 9, 6)
    with replacing(check_target(target), pieces):
        assert target.read_bytes() == b"old tables\n"  # not yet: the body has not ended
    assert target.read_bytes() == b"".join(pieces)
