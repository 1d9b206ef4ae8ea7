"""FRR in network namespaces, for the RoCE verify tests (a plugin of tests/conftest.py): the small dual-plane
fabric (tests/verify/inventories/roce-mini.yaml) designed and rendered once, and the means to find what an
`ffplan verify` run started: its descendant processes and the network namespaces they live in. Skipped, with the
reason shown, when not root or FRR is missing."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MINI = ROOT / "tests" / "verify" / "inventories" / "roce-mini.yaml"


@pytest.fixture(scope="session")
def frr_tools():
    from ffplan.verify_ethernet.boot import ToolsMissing, find_tools

    try:
        return find_tools()
    except ToolsMissing as exc:
        pytest.skip(f"needs root and FRR: {exc}")


@pytest.fixture(scope="session")
def mini_files(tmp_path_factory) -> Path:
    """A rendered folder (plan.yaml, sonic/, hosts/) of roce-mini.yaml."""
    from typer.testing import CliRunner

    from ffplan.cli.main import app

    base = tmp_path_factory.mktemp("roce-mini")
    runner = CliRunner()
    result = runner.invoke(app, ["design", str(MINI), "-o", str(base / "plan"), "-q"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["render", str(base / "plan"), "-o", str(base / "files"), "-q"])
    assert result.exit_code == 0, result.output
    return base / "files"


@pytest.fixture
def edited(mini_files, tmp_path):
    """A copy of the rendered folder with one file edited: edited(path, old, new) -> folder."""

    def edit(path: str, old: str, new: str) -> Path:
        folder = tmp_path / "files"
        if not folder.exists():
            shutil.copytree(mini_files, folder)
        target = folder / path
        text = target.read_text()
        assert old in text, (path, old)
        target.write_text(text.replace(old, new, 1))
        return folder

    return edit


def children(pid: int) -> list[int]:
    """Every descendant of `pid` (from /proc/PID/stat's parent field)."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [pid]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        found += kids
        frontier += kids
    return found


def comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def netns_of(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return ""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def processes_in(namespaces: set[str]) -> list[int]:
    """PIDs of the processes living in any of `namespaces` (net:[inode] strings)."""
    return [int(e) for e in os.listdir("/proc") if e.isdigit() and netns_of(int(e)) in namespaces]


def root_links() -> set[str]:
    return set(os.listdir("/sys/class/net"))
