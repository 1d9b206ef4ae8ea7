"""The installed tool, not the checkout: build the wheel, install it into a fresh venv outside the repository
and run design, render, the cost report in every format and verify from another folder (issue 12: a wheel
without templates failed with TemplateNotFound)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

import pytest

from ffplan.verify.sim import ToolsMissing, find_tools

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.packaging, pytest.mark.slow]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """Built from a clean copy of the sources: setuptools would pick up a stale build/ or *.egg-info of the
    checkout."""
    source, dist = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("dist")
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for name in ("ffplan", "templates"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dist), str(source)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0 and re.search(
        r"No matching distribution found for setuptools|Could not find a version", proc.stderr
    ):
        pytest.skip(f"cannot fetch the build requirements (offline?): {proc.stderr.strip().splitlines()[-1]}")
    assert proc.returncode == 0, proc.stderr
    print(f"wheel built in {time.perf_counter() - started:.1f} s")
    (built,) = dist.glob("ffplan-*.whl")
    return built


def test_wheel_carries_every_module_template_and_data_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "ffplan").rglob("*")
        if p.is_file() and p.suffix in (".py", ".yaml", ".md") and "__pycache__" not in p.parts
    }
    wanted |= {
        "ffplan/_templates/" + p.relative_to(ROOT / "templates").as_posix()
        for p in (ROOT / "templates").rglob("*")
        if p.is_file()
    }
    assert wanted - names == set()


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv with only the wheel installed by pip; the dependencies are shared from the test venv's
    site-packages through a .pth line (offline and fast), which does not make the checkout importable."""
    venv = tmp_path_factory.mktemp("venv")
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "test-venv-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
    )
    print(f"wheel installed in {time.perf_counter() - started:.1f} s")
    return venv


def _installed(venv: Path, cwd: Path, program: str, *args: str) -> subprocess.CompletedProcess:
    """Run a program of the fresh venv; without PYTHONPATH, which could point it back at a checkout."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([str(venv / "bin" / program), *args], cwd=cwd, env=env, capture_output=True, text=True)


def _ffplan(venv: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return _installed(venv, cwd, "ffplan", *args)


@pytest.fixture(scope="module")
def workdir(installed, tmp_path_factory) -> Path:
    """Another folder, with the lab inventory designed into plan/ and Fire-Flyer 2 (which has prices in the
    built-in catalog) into ff2/ by the installed tool."""
    work = tmp_path_factory.mktemp("elsewhere")
    for inventory, folder in (("lab", "plan"), ("fire-flyer-2", "ff2")):
        shutil.copy(ROOT / "inventories" / f"{inventory}.yaml", work / f"{inventory}.yaml")
        proc = _ffplan(installed, work, "design", f"{inventory}.yaml", "-o", folder)
        assert proc.returncode == 0, proc.stderr
    return work


def test_installed_tool_is_the_wheel_not_the_checkout(installed, workdir):
    proc = _installed(installed, workdir, "python", "-c", "import ffplan.resources as r; print(r.templates_dir())")
    assert proc.returncode == 0, proc.stderr
    where = Path(proc.stdout.strip())
    assert where.is_relative_to(installed) and where.name == "_templates", where


def test_installed_render_matches_the_checkout(installed, workdir, tmp_path):
    proc = _ffplan(installed, workdir, "render", "plan", "-o", "files")
    assert proc.returncode == 0, proc.stderr
    from ffplan.plan.io import load_plan
    from ffplan.render import render_plan

    expected = render_plan(load_plan(workdir / "plan" / "plan.yaml"))
    rendered = {
        p.relative_to(workdir / "files").as_posix(): p.read_text()
        for p in (workdir / "files").rglob("*")
        if p.is_file()
    }
    assert {name: rendered.get(name) for name in expected} == expected


@pytest.mark.parametrize("fmt", ["html", "markdown", "table", "json", "csv"])
def test_installed_cost_report_in_every_format(installed, workdir, fmt):
    args = ["report", "cost", "ff2/plan.yaml", "--format", fmt, "-o"]
    proc = _ffplan(installed, workdir, *args, f"installed.{fmt}")
    assert proc.returncode == 0, proc.stderr
    checkout = subprocess.run(
        [sys.executable, "-m", "ffplan", *args, f"checkout.{fmt}"], cwd=workdir, capture_output=True, text=True
    )
    assert checkout.returncode == 0, checkout.stderr
    assert (workdir / f"installed.{fmt}").read_text() == (workdir / f"checkout.{fmt}").read_text()


def test_installed_verify(installed, workdir):
    try:
        find_tools()
    except ToolsMissing as exc:
        pytest.skip(str(exc))
    proc = _ffplan(installed, workdir, "render", "plan", "-o", "verify-files")
    assert proc.returncode == 0, proc.stderr
    proc = _ffplan(installed, workdir, "verify", "verify-files")
    assert proc.returncode == 0, proc.stdout + proc.stderr
