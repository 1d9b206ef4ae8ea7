"""Write an output folder all at once: every file or none, with a manifest of checksums.

Files are staged in a sibling temporary folder, then swapped in by rename, so a failure half way never
leaves a half-written folder. A folder ffplan did not write (no manifest of ours) is not replaced unless
forced: it may hold someone's work.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from ffplan.diagnostics import Collector, InputError

MANIFEST = "manifest.json"
MARKER = "ffplan-output"


def _refuse(path: Path, message: str, hint: str) -> InputError:
    c = Collector(str(path))
    c.error("FF904", (), message, hint)
    return InputError(c.items)


def manifest_text(files: dict[str, bytes], kind: str) -> str:
    entries = [
        {"path": name, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        for name, data in sorted(files.items())
    ]
    return json.dumps({"format": MARKER, "kind": kind, "files": entries}, indent=1, sort_keys=True) + "\n"


def is_ffplan_output(path: Path) -> bool:
    try:
        return json.loads((path / MANIFEST).read_text()).get("format") == MARKER
    except (OSError, ValueError, AttributeError):
        return False


def write_folder(path: Path, files: dict[str, str | bytes], kind: str, force: bool = False) -> None:
    """Replace `path` with exactly `files` (relative names) plus manifest.json."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise _refuse(path, f"{path} exists and is not a folder", "choose another output folder with -o")
    if path.is_dir() and any(path.iterdir()) and not is_ffplan_output(path) and not force:
        raise _refuse(path, f"{path} is not empty and was not written by ffplan", "choose another folder, or pass --force to replace it")
    data = {name: (body.encode("utf-8") if isinstance(body, str) else body) for name, body in files.items()}
    data[MANIFEST] = manifest_text(data, kind).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.new-", dir=path.parent))
    try:
        for name, body in data.items():
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(body)
            if name.endswith(".sh"):
                target.chmod(0o755)
        old = None
        if path.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-", dir=path.parent))
            os.rename(path, old / "prev")
        os.rename(staging, path)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
