"""Write an output folder all at once: every file or none, with a manifest of checksums.

Files are staged in a sibling folder `.NAME.new-*`, then exchanged with the old folder in one step (Linux
renameat2 RENAME_EXCHANGE), so the folder is at every moment either the old or the new one. Where the
exchange is not available, the old folder is renamed to `.NAME.old-*` first; a crash between the two
renames is recovered by the next run, which puts the old folder back. Writers of one folder are serialised
by an flock on `.NAME.lock` beside it, which only its owner can open (anyone who can open a file can flock it, and
would block every writer); the lock file also lists the `.NAME.new-*` and `.NAME.old-*` folders a writer made, so
the next writer recovers or removes exactly those and never a user's folder that happens to be named alike.

What is in the folder already is checked first. A folder that ffplan did not write (no manifest) is never
replaced unless empty. Without force, an ffplan folder with files or folders that ffplan did not write (not in
its manifest; an empty folder counts), files changed since (checksum), or written by another command is refused
with the list, and so is one with a folder ffplan cannot read (even with force: what it holds is unknown). With
force, ffplan replaces what it wrote, edits included, and carries every other file over into the new
folder: force never deletes a user's file or folder. No folder that holds the current directory or an
input is replaced (an input the command has read in full, such as `design --previous`, only with force), and an
output path that is a symbolic link is refused rather than silently replaced. A single output file (`lint -o`,
`report cost -o`, `audit --write-guids`) is written by `write_file`: replaced atomically, never a FIFO or device.
Every file name is a relative path that stays inside the folder. A file's body is text, bytes or an iterable of
text chunks (a file too large to hold, such as the LFT file of a large subnet, written as it is generated); the
manifest's checksums are computed while the files are written and the manifest is written last.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import functools
import hashlib
import json
import os
import re
import secrets
import shutil
import stat
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Collection, Iterable, Iterator, Mapping, Union

from ffplan.codes.render import OUTPUT_FOLDER_REFUSED
from ffplan.diagnostics import Collector, InputError

MANIFEST = "manifest.json"
MARKER = "ffplan-output"
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
SHOWN = 20  # files listed in a refusal; the rest are counted

FileBody = Union[str, bytes, Iterable[bytes | memoryview]]  # an iterable of chunks is read once, as it is written

_LEFTOVER = re.compile(r"\..+\.(new|old)-[A-Za-z0-9_]+")
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _refuse(path: Path, message: str, hint: str) -> InputError:
    c = Collector(str(path))
    c.error(OUTPUT_FOLDER_REFUSED, (), message, hint)
    return InputError(c.items)


def _byte_chunks(body: FileBody) -> Iterable[bytes | memoryview]:
    if isinstance(body, bytes):
        return (body,)
    if isinstance(body, str):
        return (body.encode("utf-8"),)
    return body


def _manifest_text(entries: list[dict[str, object]], kind: str) -> str:
    """`entries`: path, sha256 and bytes of every file, sorted by path."""
    return json.dumps({"format": MARKER, "kind": kind, "files": entries}, indent=1, sort_keys=True) + "\n"


@dataclass(frozen=True)
class Manifest:
    kind: str
    sha256: dict[str, str]  # relative path -> checksum of every file ffplan wrote


def read_manifest(folder: Path) -> Manifest | None:
    """The folder's manifest when ffplan wrote it, else None (missing, foreign, unreadable or malformed)."""
    try:
        fd = os.open(folder / MANIFEST, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            data = json.loads(fh.read(MAX_MANIFEST_BYTES + 1)[:MAX_MANIFEST_BYTES])
        if data.get("format") != MARKER:
            return None
        return Manifest(str(data.get("kind", "")), {str(e["path"]): str(e["sha256"]) for e in data["files"]})
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return None


def is_ffplan_output(path: Path) -> bool:
    return read_manifest(path) is not None


def is_leftover(name: str) -> bool:
    """A staging or old folder of an interrupted write (`.files.new-1a2b…`, `.files.old-…`)."""
    return _LEFTOVER.fullmatch(name) is not None


def write_folder(
    path: Path,
    files: Mapping[str, FileBody],
    kind: str,
    force: bool = False,
    inputs: Iterable[Path] = (),
    read_inputs: Iterable[tuple[str, Path]] = (),
) -> None:
    """Replace `path` with exactly `files` (relative names) plus manifest.json; see the module docstring.
    `read_inputs`: (option, path) of inputs read in full before writing, which `path` may replace with force only."""
    path = Path(path)
    data: dict[str, FileBody] = {_relative_name(path, name): body for name, body in files.items()}
    _refuse_dangerous_target(path, inputs)
    if not force:
        _refuse_replacing_inputs(path, read_inputs)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path) as journal:
            _recover(path, journal)
            carried = _check_existing(path, set(data) | {MANIFEST}, kind, force)
            staging = _stage(path, data, kind, carried, journal)
            try:
                _swap(staging, path, journal)
            finally:
                shutil.rmtree(staging, ignore_errors=True)  # the old folder after an exchange, or a failed staging
            journal.clear()
    except OSError as exc:  # permissions, a full disk, a mount point: the old folder is still in place
        raise _refuse(
            path, f"cannot write {path}: {exc.strerror or exc}", "check the folder, its permissions and the free space"
        ) from None


def write_file(path: Path, text: str) -> None:
    """Write one output file atomically (a reader sees the old or the new text). Anything but a regular file at
    `path` is refused: writing to a FIFO would wait for a reader forever, and a device is no output."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise _refuse(path, f"cannot write {path}: {exc.strerror}", "check the path and its permissions") from None
    if mode is not None and not stat.S_ISREG(mode):
        raise _refuse(
            path,
            f"refusing to write {path}: it is not a regular file (a FIFO, device, socket or folder)",
            "write the output to a plain file, or leave out the option to print it",
        )
    target = path.resolve()  # through a symbolic link to a file, as writing it in place would
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
            os.chmod(tmp, stat.S_IMODE(mode) if mode is not None else 0o666 & ~_umask())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise _refuse(
            path, f"cannot write {path}: {exc.strerror or exc}", "check the path and its permissions"
        ) from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ------------------------------------------------------------------------------------------ checks


def _relative_name(folder: Path, name: str) -> str:
    parts = name.split("/")
    if (
        not name
        or name.startswith("/")
        or "\\" in name
        or "\0" in name
        or any(p in ("", ".", "..") for p in parts)
        or name == MANIFEST
    ):
        raise _refuse(
            folder,
            f"refusing to write {name!r}: not a plain relative path inside the output folder",
            "a name in the plan is not a path component; re-run `ffplan design`",
        )
    return name


def _refuse_dangerous_target(path: Path, inputs: Iterable[Path]) -> None:
    if path.is_symlink():
        raise _refuse(
            path,
            f"{path} is a symbolic link; ffplan replaces folders, not what a link points to",
            f"write to the folder itself: -o {path.resolve()}",
        )
    if path.exists() and not path.is_dir():
        raise _refuse(path, f"{path} exists and is not a folder", "choose another output folder with -o")
    target = path.resolve()
    guarded = [("the current directory", Path.cwd())] + [(f"the input {p}", Path(p)) for p in inputs]
    for what, guarded_path in guarded:
        inside = guarded_path.resolve()
        if inside == target or target in inside.parents:
            raise _refuse(
                path,
                f"{path} contains {what}: replacing the folder would delete it (even with --force)",
                "write to a folder of its own, e.g. -o out/NAME",
            )


def _refuse_replacing_inputs(path: Path, read_inputs: Iterable[tuple[str, Path]]) -> None:
    target = path.resolve()
    for option, input_path in read_inputs:
        inside = Path(input_path).resolve()
        if inside == target or target in inside.parents:
            raise _refuse(
                path,
                f"{path} holds the input of {option} {input_path}: writing there replaces it",
                f"write to another folder, or pass --force to replace the input of {option}",
            )


def _tree(folder: Path) -> dict[str, str]:
    """Every entry below `folder` but folders that hold something: relative path -> 'file', 'symlink', 'special' or
    'folder' (an empty one: a user's, ffplan writes none). A folder that cannot be read is refused: its files
    would be lost unseen."""

    def unreadable(exc: OSError) -> None:
        shown = Path(exc.filename or folder)
        raise _refuse(
            folder,
            f"refusing to replace {folder}: cannot read {shown} ({exc.strerror}), so what it holds "
            "is unknown (even with --force)",
            "make it readable, or move it away",
        )

    found = {}
    for root, dirs, names in os.walk(folder, onerror=unreadable):
        base = Path(root).relative_to(folder)
        if not dirs and not names and root != str(folder):
            found[base.as_posix() + "/"] = "folder"  # shown as a folder
        for name in dirs + names:
            mode = os.lstat(Path(root) / name).st_mode
            if stat.S_ISDIR(mode):
                continue
            kind = "file" if stat.S_ISREG(mode) else "symlink" if stat.S_ISLNK(mode) else "special"
            found[(base / name).as_posix()] = kind
    return found


def _sha256(path: Path) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _listing(names: list[str]) -> str:
    shown = ", ".join(names[:SHOWN])
    return shown + (f" and {len(names) - SHOWN:,} more" if len(names) > SHOWN else "")


def _check_existing(path: Path, names: Collection[str], kind: str, force: bool) -> list[str]:
    """Refuse what would lose data; with force, the files ffplan did not write, to carry over."""
    if not path.is_dir():
        return []
    present = _tree(path)
    manifest = read_manifest(path)
    written = manifest.sha256 if manifest else {}
    foreign = sorted(p for p in present if p not in written and not (manifest and p == MANIFEST))
    if manifest is None and present:  # ffplan wrote nothing here, so even --force has nothing to replace
        raise _refuse(
            path,
            f"refusing to replace {path}: it was not written by ffplan ({len(present):,} files: "
            f"{_listing(sorted(present))})",
            "choose another folder (--force replaces only folders ffplan wrote)",
        )
    if manifest is None:
        return []  # an empty folder
    if not force:  # edits are refused only without --force (which replaces them): only then is every file read
        changed = sorted(
            p for p in written if p in present and (present[p] != "file" or _sha256(path / p) != written[p])
        )
        problems = []
        if manifest.kind != kind:
            problems.append(f"it holds the output of another command (a {manifest.kind} folder, not a {kind} folder)")
        if foreign:
            problems.append(f"files not written by ffplan: {_listing(foreign)}")
        if changed:
            problems.append(f"files changed since ffplan wrote them: {_listing(changed)}")
        if problems:
            raise _refuse(
                path,
                f"refusing to replace {path}: " + "; ".join(problems),
                "move those files away or choose another folder; --force replaces ffplan's own files "
                "(edits included) and keeps every other file",
            )
        return []
    special = [p for p in foreign if present[p] == "special"]
    new_dirs = {"/".join(name.split("/")[:i]) for name in names for i in range(1, name.count("/") + 1)}
    clashes = [
        p
        for p in foreign
        if p in names or p in new_dirs or any("/".join(p.split("/")[:i]) in names for i in range(1, p.count("/") + 1))
    ]
    if special or clashes:
        raise _refuse(
            path,
            f"refusing to replace {path} even with --force: "
            + "; ".join(
                ([f"files ffplan did not write would be overwritten: {_listing(clashes)}"] if clashes else [])
                + ([f"special files (FIFOs, sockets, devices): {_listing(special)}"] if special else [])
            ),
            "move those files away, or choose another folder",
        )
    return foreign


# ------------------------------------------------------------------------------------------ writing


class _Journal:
    """The `.NAME.new-*` and `.NAME.old-*` folders this writer made, listed in the lock file (which only its owner
    can open) as each is made: the next writer recovers or removes those, and no folder it did not make."""

    def __init__(self, fd: int):
        self.fd = fd

    def add(self, folder: Path) -> None:
        os.lseek(self.fd, 0, os.SEEK_END)
        os.write(self.fd, os.fsencode(folder.name) + b"\n")

    def names(self) -> list[str]:
        os.lseek(self.fd, 0, os.SEEK_SET)
        data = b""
        while chunk := os.read(self.fd, 1 << 16):
            data += chunk
        return [os.fsdecode(name) for name in data.split(b"\n") if name]

    def clear(self) -> None:
        os.ftruncate(self.fd, 0)


def _leftovers(path: Path, journal: _Journal) -> list[Path]:
    own = re.compile(re.escape(f".{path.name}.") + r"(new|old)-[0-9a-f]{12}")  # not those of a folder NAME.x
    return sorted(
        path.parent / name
        for name in set(journal.names())
        if own.fullmatch(name) and os.path.lexists(path.parent / name)
    )


def _recover(path: Path, journal: _Journal) -> None:
    """Undo what a killed writer left: put the old folder back if it never got the new one, drop the rest."""
    leftovers = _leftovers(path, journal)
    if not path.exists():
        old = [p for p in leftovers if ".old-" in p.name and p.is_dir() and not p.is_symlink()]
        if old:
            prev = old[-1] / "prev"  # the layout of earlier versions: .NAME.old-*/prev
            os.rename(prev if prev.is_dir() and not (old[-1] / MANIFEST).exists() else old[-1], path)
    for leftover in leftovers:
        if leftover.is_symlink() or not leftover.is_dir():
            leftover.unlink(missing_ok=True)
        else:
            shutil.rmtree(leftover, ignore_errors=True)
    journal.clear()


def _sibling(path: Path, state: str, journal: _Journal, mode: int = 0o777) -> Path:
    while True:
        candidate = path.parent / f".{path.name}.{state}-{secrets.token_hex(6)}"
        try:
            os.mkdir(candidate, mode)  # the umask applies, unlike mkdtemp's 0700
        except FileExistsError:
            continue
        journal.add(candidate)  # after mkdir: a name taken by someone else is never listed
        return candidate


def _write_file(target: Path, body: FileBody) -> dict[str, object]:
    """Write one new file, hashing it on the way (a chunked body is never held whole); its manifest entry."""
    digest, size = hashlib.sha256(), 0
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
    with os.fdopen(fd, "wb") as fh:
        for chunk in _byte_chunks(body):
            digest.update(chunk)
            size += len(chunk)
            fh.write(chunk)
    return {"sha256": digest.hexdigest(), "bytes": size}


def _stage(path: Path, data: Mapping[str, FileBody], kind: str, carried: list[str], journal: _Journal) -> Path:
    staging = _sibling(path, "new", journal)
    try:
        root = staging.resolve()
        entries: list[dict[str, object]] = []
        inside: set[Path] = (
            set()
        )  # folders made and found to resolve inside the staging folder (once each, not per file)
        for name, body in sorted(data.items()):
            target = staging / name
            if target.parent not in inside:
                target.parent.mkdir(parents=True, exist_ok=True)
                resolved = target.parent.resolve()
                if resolved != root and root not in resolved.parents:
                    raise _refuse(
                        path,
                        f"refusing to write {name!r}: it resolves outside the output folder",
                        "re-run `ffplan design`",
                    )
                inside.add(target.parent)
            entries.append({"path": name, **_write_file(target, body)})
            if name.endswith(".sh"):
                target.chmod(0o755)
        _write_file(staging / MANIFEST, _manifest_text(entries, kind))
        # The user's files, after ffplan's: a carried symlink can never redirect one of ffplan's writes.
        for name in carried:
            source, target = path / name, staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_symlink():
                os.symlink(os.readlink(source), target)
            elif source.is_dir():  # an empty folder of the user's
                target.mkdir(exist_ok=True)
            else:
                try:
                    os.link(source, target, follow_symlinks=False)
                except OSError:
                    shutil.copy2(source, target, follow_symlinks=False)
        if path.is_dir():
            os.chmod(staging, stat.S_IMODE(os.stat(path).st_mode))  # keep the folder's permissions
        _fsync_folder(staging)
        return staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@functools.cache
def _renameat2() -> Callable[..., int] | None:
    """libc's renameat2, from the symbols already loaded (ctypes.util.find_library would run `ldconfig -p`)."""
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # not Linux, or a libc before glibc 2.28
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return function


def _exchange(a: Path, b: Path) -> bool:
    """Swap two folders in one step; False where the system or the file system cannot."""
    renameat2 = _renameat2()
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _swap(staging: Path, path: Path, journal: _Journal) -> None:
    """Put `staging` at `path`; afterwards `staging` holds the old folder (or nothing) to be removed."""
    if not os.path.lexists(path):
        os.rename(staging, path)
    elif not _exchange(staging, path):
        old = _sibling(path, "old", journal)
        os.rename(path, old / "prev")  # a crash here leaves .NAME.old-*/prev, which the next run restores
        try:
            os.rename(staging, path)
        except OSError:
            os.rename(old / "prev", path)
            raise
        os.rename(old, staging)
    _fsync_folder(path.parent)


@contextmanager
def _locked(path: Path) -> Iterator[_Journal]:
    """One writer per folder at a time: an flock on `.NAME.lock` beside it (kept; removing it would race). Anyone who
    can open a file can flock it, so the lock file is the writer's own, mode 0600: a lock file of another user (or
    one others could open) would let them block every writer for as long as they like."""
    lock = path.parent / f".{path.name}.lock"
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
    except PermissionError:
        raise _refuse(
            path,
            f"cannot open the lock file {lock}: it belongs to another user",
            f"if no ffplan of theirs is writing {path}, remove {lock}",
        ) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refuse(path, f"the lock file {lock} is not a regular file", f"remove {lock}")
        if info.st_uid != os.geteuid():
            raise _refuse(
                path,
                f"the lock file {lock} belongs to another user (uid {info.st_uid}): they could hold it "
                "and block every writer",
                f"if no ffplan of theirs is writing {path}, remove {lock}",
            )
        if stat.S_IMODE(info.st_mode) & 0o077:
            os.fchmod(fd, 0o600)  # written by an earlier ffplan (0666 less the umask): others could open and hold it
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield _Journal(fd)
    finally:
        os.close(fd)
