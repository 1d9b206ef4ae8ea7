"""Items 6 and 7 of issue 14, and writes confined to the output folder: the folder is always the old or the
new one (SIGKILL during staging and at the swap, two writers at once), leftovers are recovered or removed
and never linted, and no run loses a file ffplan did not write."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from harden_fixtures import ROOT, lab_design_cache, lab_design_dir, run_cli  # noqa: F401  (fixtures)

from ffplan.diagnostics import InputError
from ffplan.outdir import read_manifest, write_folder

# A child running `ffplan render PLAN -o TARGET --prefix /srv/VERSION`, paused (MODE) at a chosen point so
# that the test can kill it there. The prefix in opensm.conf tells the old render from the new one.
CHILD = r"""
import os, sys, time
from pathlib import Path
from ffplan import outdir
from ffplan.cli.main import run
mode, plan, target, marker, version = sys.argv[1:6]
def pause(seconds=60):
    Path(marker).write_text("here")
    time.sleep(seconds)
swap = outdir._swap
if mode == "staged":
    outdir._swap = lambda *a: (pause(), swap(*a))
elif mode == "exchanged":
    outdir._swap = lambda *a: (swap(*a), pause())
elif mode == "slow":
    outdir._swap = lambda *a: (pause(0.5), swap(*a))
elif mode == "between-renames":
    outdir._exchange = lambda a, b: False
    rename, calls = os.rename, []
    def paused_rename(a, b):
        calls.append(a)
        if len(calls) == 2:
            pause()
        rename(a, b)
    os.rename = paused_rename
sys.argv = ["ffplan", "render", plan, "-o", target, "--prefix", f"/srv/{version}", "-q"]
run()
"""


@pytest.fixture
def render_child(lab_design_cache, tmp_path):
    def start(mode: str, target: Path, version: str, marker: Path | None = None) -> subprocess.Popen:
        marker = marker or tmp_path / "marker"
        return subprocess.Popen(
            [sys.executable, "-c", CHILD, mode, str(lab_design_cache), str(target), str(marker), version],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    return start


def _version(folder: Path) -> str:
    """Which render the folder holds, after checking it is one whole render: every file of its manifest there
    with its checksum."""
    manifest = read_manifest(folder)
    assert manifest is not None and manifest.kind == "render" and len(manifest.sha256) > 30
    for name, sha in manifest.sha256.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == sha, name
    conf = (folder / "opensm" / "opensm.conf").read_text()
    return next(line.split()[1].split("/")[2] for line in conf.splitlines() if line.startswith("lfts_file "))


def _leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".new-" in p.name or ".old-" in p.name)


def _kill_at(start, mode: str, target: Path, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    marker.unlink(missing_ok=True)
    proc = start(mode, target, "new", marker)
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()


@pytest.fixture
def old_render(render_child, tmp_path) -> Path:
    target = tmp_path / "out" / "files"
    proc = render_child("plain", target, "old")
    assert proc.wait() == 0, proc.communicate()
    return target


@pytest.mark.parametrize("mode, expected", [("staged", "old"), ("exchanged", "new")])
def test_sigkill_leaves_the_old_or_the_new_folder(render_child, old_render, tmp_path, mode, expected):
    _kill_at(render_child, mode, old_render, tmp_path)
    assert _version(old_render) == expected
    assert _leftovers(old_render.parent)  # what the killed render left ...
    proc = render_child("plain", old_render, "next")
    assert proc.wait() == 0, proc.communicate()
    assert _version(old_render) == "next"
    assert _leftovers(old_render.parent) == []  # ... the next one removes


def test_sigkill_between_the_fallback_renames_is_recovered(render_child, old_render, tmp_path):
    # Without renameat2 the old folder is moved aside first; a kill before the new one moves in leaves no
    # folder, and the next writer puts the old one back before anything else (here: before refusing to
    # replace it with a folder of another kind).
    target = old_render
    _kill_at(render_child, "between-renames", target, tmp_path)
    assert not target.exists() and _leftovers(target.parent)
    with pytest.raises(InputError, match="a render folder, not a plan folder"):
        write_folder(target, {"f.txt": "x\n"}, kind="plan")
    assert _version(target) == "old"
    assert _leftovers(target.parent) == []


def test_two_renders_at_once_are_serialised(render_child, old_render, tmp_path):
    target = old_render
    procs = [render_child("slow", target, v, tmp_path / f"marker-{v}") for v in ("a", "b")]
    results = [(p.wait(timeout=60), p.communicate()) for p in procs]
    assert [code for code, _ in results] == [0, 0], results
    assert _version(target) in ("a", "b")
    assert _leftovers(target.parent) == []


def test_lint_ignores_output_folders_and_leftovers(tmp_path):
    (tmp_path / "inv.yaml").write_text((ROOT / "tests" / "lint" / "base.yaml").read_text())
    write_folder(tmp_path / "out", {"plan.yaml": "not: an inventory\n"}, kind="plan")
    (tmp_path / ".files.new-1a2b3c").mkdir()
    (tmp_path / ".files.new-1a2b3c" / "plan.yaml").write_text("half: written\n")
    result = run_cli("lint", tmp_path, "--format", "json")
    assert result.exit_code == 0, result.output
    assert "no findings in 1 file" in result.output


# ------------------------------------------------------------------------------------------ data loss


def _render(plan_dir: Path, out: Path, *extra: str):
    return run_cli("render", plan_dir, "-o", out, "-q", *extra)


@pytest.fixture
def rendered(lab_design_dir, tmp_path) -> Path:
    out = tmp_path / "files"
    assert _render(lab_design_dir, out).exit_code == 0
    return out


def test_files_a_user_added_are_listed_and_kept(lab_design_dir, rendered):
    (rendered / "notes.txt").write_text("mine\n")
    (rendered / "mine").mkdir()
    (rendered / "mine" / "keep.txt").write_text("keep\n")
    result = _render(lab_design_dir, rendered)
    assert result.exit_code == 2
    assert "files not written by ffplan: mine/keep.txt, notes.txt" in result.output
    assert (rendered / "notes.txt").read_text() == "mine\n" and (rendered / "mine" / "keep.txt").read_text() == "keep\n"
    # --force replaces what ffplan wrote and carries every other file over
    result = _render(lab_design_dir, rendered, "--force")
    assert result.exit_code == 0, result.output
    assert (rendered / "notes.txt").read_text() == "mine\n" and (rendered / "mine" / "keep.txt").read_text() == "keep\n"
    assert "notes.txt" not in read_manifest(rendered).sha256


def test_hand_edits_are_listed_and_replaced_only_with_force(lab_design_dir, rendered):
    conf = rendered / "opensm" / "opensm.conf"
    original = conf.read_text()
    conf.write_text(original + "# tuned by hand\n")
    result = _render(lab_design_dir, rendered)
    assert result.exit_code == 2 and "files changed since ffplan wrote them: opensm/opensm.conf" in result.output
    assert conf.read_text().endswith("# tuned by hand\n")
    assert _render(lab_design_dir, rendered, "--force").exit_code == 0
    assert conf.read_text() == original


def test_a_folder_of_another_kind_is_refused(lab_design_cache, lab_design_dir):
    result = _render(lab_design_cache, lab_design_dir)
    assert result.exit_code == 2 and "a plan folder, not a render folder" in result.output
    assert read_manifest(lab_design_dir).kind == "plan"
    result = _render(lab_design_dir, lab_design_dir, "--force")  # and never the folder the plan is read from
    assert result.exit_code == 2 and "contains the input" in result.output


def test_a_folder_ffplan_did_not_write_is_refused_even_with_force(lab_design_dir, tmp_path):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id").write_text("secret\n")
    for extra in ((), ("--force",)):
        result = _render(lab_design_dir, home, *extra)
        assert result.exit_code == 2 and "not written by ffplan" in result.output and ".ssh/id" in result.output
        assert (home / ".ssh" / "id").read_text() == "secret\n" and sorted(p.name for p in home.iterdir()) == [".ssh"]


def test_force_never_overwrites_a_user_file(lab_design_dir, rendered):
    (rendered / "plan.yaml").unlink()  # ffplan's, replaced by the user's own
    (rendered / "plan.yaml").mkdir()
    (rendered / "plan.yaml" / "mine.txt").write_text("my own\n")
    result = _render(lab_design_dir, rendered, "--force")
    assert result.exit_code == 2 and "would be overwritten: plan.yaml/mine.txt" in result.output
    assert (rendered / "plan.yaml" / "mine.txt").read_text() == "my own\n"


def test_a_folder_holding_the_input_is_never_replaced(tmp_path):
    inventories = tmp_path / "inventories"
    inventories.mkdir()
    inventory = inventories / "lab.yaml"
    inventory.write_text((ROOT / "inventories" / "lab.yaml").read_text())
    for extra in ((), ("--force",)):
        result = run_cli("design", inventory, "-o", inventories, "-q", *extra)
        assert result.exit_code == 2 and "contains the input" in result.output
        assert inventory.read_text() == (ROOT / "inventories" / "lab.yaml").read_text()


def test_the_current_directory_is_never_replaced(lab_design_dir, tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    for target in (".", str(tmp_path)):
        result = _render(lab_design_dir, Path(target), "--force")
        assert result.exit_code == 2, result.output
        assert "contains the current directory" in result.output and "Traceback" not in result.output
    assert work.is_dir() and list(work.iterdir()) == []


def test_an_output_symlink_is_refused(lab_design_dir, rendered, tmp_path):
    link = tmp_path / "link"
    link.symlink_to(rendered)
    before = read_manifest(rendered)
    result = _render(lab_design_dir, link, "--force")
    assert result.exit_code == 2 and "is a symbolic link" in result.output
    assert link.is_symlink() and read_manifest(rendered) == before


def test_the_new_folder_has_the_usual_permissions(lab_design_dir, tmp_path):
    out = tmp_path / "fresh"
    assert _render(lab_design_dir, out).exit_code == 0
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o777 & ~umask
    os.chmod(out, 0o750)  # a re-render keeps what the user set
    assert _render(lab_design_dir, out).exit_code == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o750


# ------------------------------------------------------------------------------------------ confinement


@pytest.mark.parametrize(
    "name",
    [
        "../escape",
        "../../escape1/host-check.sh",
        "/tmp/abs",
        "a/../../b",
        "a//b",
        "",
        "./a",
        "manifest.json",
        "a\\..\\b",
    ],
)
def test_no_write_leaves_the_output_folder(tmp_path, name):
    out = tmp_path / "deep" / "out"
    with pytest.raises(InputError, match="not a plain relative path"):
        write_folder(out, {"ok.txt": "x", name: "#!/bin/sh\n"}, kind="render")
    assert list(tmp_path.iterdir()) == []  # refused before anything is created


def test_a_kept_symlink_cannot_redirect_a_write(tmp_path):
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_folder(out, {"opensm/a.conf": "a"}, kind="render")
    (out / "opensm" / "a.conf").unlink()
    os.rmdir(out / "opensm")
    (out / "opensm").symlink_to(elsewhere)
    with pytest.raises(InputError, match="would be overwritten: opensm"):
        write_folder(out, {"opensm/a.conf": "a"}, kind="render", force=True)
    assert list(elsewhere.iterdir()) == []


def test_manifest_lists_every_file(tmp_path):
    write_folder(tmp_path / "out", {"a.txt": "a", "b/c.sh": "#!/bin/sh\n"}, kind="plan")
    data = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert [e["path"] for e in data["files"]] == ["a.txt", "b/c.sh"] and data["kind"] == "plan"
    assert os.access(tmp_path / "out" / "b" / "c.sh", os.X_OK)


def test_a_folder_that_cannot_be_written_is_a_located_error(lab_design_dir):
    # root ignores permissions, so the test writes where no one can: below /proc
    result = _render(lab_design_dir, Path("/proc/ffplan-no-such-folder/out"))
    assert result.exit_code == 2 and "FF904 cannot write" in result.output and "Traceback" not in result.output


def test_a_file_given_as_chunks_is_written_and_hashed_as_it_streams(tmp_path):
    text = "Unicast lids\n0x0001 001 : (Channel Adapter portguid 0x1: 'é')\n"
    chunks = iter([line.encode() for line in text.splitlines(keepends=True)])  # read once
    write_folder(tmp_path / "out", {"opensm/lfts.dump": chunks, "a.txt": "a"}, kind="render")
    data = (tmp_path / "out" / "opensm" / "lfts.dump").read_bytes()
    assert data == text.encode()
    entry = {e["path"]: e for e in json.loads((tmp_path / "out" / "manifest.json").read_text())["files"]}[
        "opensm/lfts.dump"
    ]
    assert entry["sha256"] == hashlib.sha256(data).hexdigest() and entry["bytes"] == len(data)
    assert read_manifest(tmp_path / "out").sha256["a.txt"] == hashlib.sha256(b"a").hexdigest()


def test_a_stream_that_fails_midway_leaves_the_old_folder(tmp_path):
    out = tmp_path / "out"
    write_folder(out, {"opensm/lfts.dump": "old\n"}, kind="render")

    def failing():
        yield b"new\n"
        raise InputError([])

    with pytest.raises(InputError):
        write_folder(out, {"opensm/lfts.dump": failing()}, kind="render")
    assert (out / "opensm" / "lfts.dump").read_text() == "old\n" and read_manifest(out) is not None
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.lock", "out"]


# ------------------------------------------------------------------ issue 26 item 4: user data around output folders


def _plan_folder(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    write_folder(out, {"plan.yaml": "a: 1\n", "sub/b.txt": "b\n"}, kind="plan")
    return out


def test_an_empty_user_folder_inside_an_output_folder_is_kept(tmp_path):
    out = _plan_folder(tmp_path)
    (out / "notes" / "empty").mkdir(parents=True)
    with pytest.raises(InputError, match=r"not written by ffplan: notes/empty/"):
        write_folder(out, {"plan.yaml": "a: 2\n"}, kind="plan")
    write_folder(out, {"plan.yaml": "a: 2\n"}, kind="plan", force=True)  # --force keeps it
    assert (out / "notes" / "empty").is_dir() and (out / "plan.yaml").read_text() == "a: 2\n"


def test_a_folder_ffplan_cannot_read_is_refused_even_with_force(tmp_path, monkeypatch):
    # the tests run as root, who reads every folder: the walk is told it cannot, as for another user's 0700 folder
    out = _plan_folder(tmp_path)
    (out / "private").mkdir()
    (out / "private" / "thesis.tex").write_text("x")
    real_scandir = os.scandir

    def scandir(path="."):
        if Path(path).name == "private":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    for force in (False, True):
        with pytest.raises(InputError, match=r"cannot read .*private \(Permission denied\)"):
            write_folder(out, {"plan.yaml": "a: 2\n"}, kind="plan", force=force)
    monkeypatch.undo()
    assert (out / "private" / "thesis.tex").read_text() == "x"


@pytest.mark.parametrize("name", [".out.old-backup", ".out.old-0123456789ab", ".out.new-0123456789ab"])
@pytest.mark.parametrize("output_exists", [True, False])
def test_user_folders_named_like_leftovers_are_left_alone(tmp_path, name, output_exists):
    if output_exists:
        _plan_folder(tmp_path)
    mine = tmp_path / name
    (mine / "prev").mkdir(parents=True)
    (mine / "prev" / "data.txt").write_text("mine")
    write_folder(tmp_path / "out", {"plan.yaml": "a: 3\n"}, kind="plan")
    assert (mine / "prev" / "data.txt").read_text() == "mine"
    assert (tmp_path / "out" / "plan.yaml").read_text() == "a: 3\n"


def test_design_refuses_to_replace_its_previous_plan_without_force(tmp_path, lab_design_dir):
    inventory = ROOT / "inventories" / "lab.yaml"
    before = (lab_design_dir / "plan.yaml").read_text()
    result = run_cli("design", inventory, "-o", lab_design_dir, "--previous", lab_design_dir, "-q")
    assert result.exit_code == 2 and "holds the input of --previous" in result.output, result.output
    assert (lab_design_dir / "plan.yaml").read_text() == before
    result = run_cli("design", inventory, "-o", lab_design_dir, "--previous", lab_design_dir, "-q", "--force")
    assert result.exit_code == 0, result.output


@pytest.fixture
def decoy_lock_holder():
    """A process this test starts that holds an flock on a file, as another user's process could."""
    procs = []

    def hold(lock: Path) -> subprocess.Popen:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import fcntl, os, sys, time\n"
                f"fd = os.open({str(lock)!r}, os.O_RDONLY)\nfcntl.flock(fd, fcntl.LOCK_EX)\n"
                "print('held', flush=True)\ntime.sleep(120)\n",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None and proc.stdout.readline() == "held\n"
        procs.append(proc)
        return proc

    yield hold
    for proc in procs:
        proc.kill()
        proc.wait()


def test_a_lock_file_of_another_user_is_refused_not_waited_for(tmp_path, decoy_lock_holder):
    """Anyone who can open a file can flock it: a readable lock file let any local user block every writer."""
    out = _plan_folder(tmp_path)
    lock = tmp_path / ".out.lock"
    os.chown(lock, 65534, 65534)
    os.chmod(lock, 0o644)
    decoy_lock_holder(lock)
    start = time.monotonic()
    with pytest.raises(InputError, match=r"belongs to another user \(uid 65534\)"):
        write_folder(out, {"plan.yaml": "a: 2\n"}, kind="plan")
    assert time.monotonic() - start < 10


def test_the_lock_file_is_the_owners_alone(tmp_path):
    out = _plan_folder(tmp_path)
    lock = tmp_path / ".out.lock"
    os.chmod(lock, 0o644)  # as an earlier ffplan left it
    write_folder(out, {"plan.yaml": "a: 2\n"}, kind="plan")
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600


@pytest.mark.parametrize("command", ["lint", "report"])
def test_a_fifo_as_the_output_file_is_refused_without_waiting_for_a_reader(tmp_path, command):
    """Writing findings or a report into a FIFO hung lint and report cost until a reader came."""
    fifo = tmp_path / "out.txt"
    os.mkfifo(fifo)
    inventory = ROOT / "inventories" / "lab.yaml"
    args = ["lint", inventory, "-o", fifo] if command == "lint" else ["report", "cost", inventory, "-o", fifo]
    result = run_cli(*args)
    assert result.exit_code == 2 and "is not a regular file" in result.output, result.output
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
