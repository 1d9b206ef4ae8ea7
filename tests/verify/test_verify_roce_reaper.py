"""The reaper of an Ethernet verify run (no root needed): when ffplan's pipe closes it kills every process that
reported itself and removes the work folder, unless ffplan wrote `done` (a normal end). The processes here are
decoys this test starts."""

from __future__ import annotations

import subprocess
import sys

from ffplan.verify_ethernet.netns import DONE, REAPER


def reap(workdir, lines: bytes) -> subprocess.Popen:
    decoy = subprocess.Popen(["sleep", "60"])
    reaper = subprocess.Popen([sys.executable, "-I", "-S", str(REAPER), str(workdir)], stdin=subprocess.PIPE)
    assert reaper.stdin is not None
    reaper.stdin.write(b"%d\n" % decoy.pid + lines)
    reaper.stdin.close()
    assert reaper.wait(timeout=30) == 0
    return decoy


def test_the_end_of_the_pipe_kills_and_cleans(tmp_path):
    (tmp_path / "work").mkdir()
    decoy = reap(tmp_path / "work", b"")
    assert decoy.wait(timeout=10) == -9
    assert not (tmp_path / "work").exists()


def test_a_clean_end_leaves_the_folder_to_ffplan(tmp_path):
    (tmp_path / "work").mkdir()
    decoy = reap(tmp_path / "work", b"not a pid\n" + DONE)
    assert decoy.wait(timeout=10) == -9  # anything still running is killed all the same
    assert (tmp_path / "work").is_dir()
