"""The rendered topology files through NCCL's own loader: src/graph/xml.cc, topo.cc and paths.cc of an NCCL
source tree, compiled on the CPU with tests/render/nccl_harness (no GPU needed), once per session. NCCL must load
every file without a warning, keep its tree, and agree with each profile's path type, GPUDirect RDMA decision
and NIC.

By default NCCL's source is Debian's nvidia-nccl 2.29.7 upstream tarball and the CUDA headers come from three
pinned wheels, both fetched by `make nccl-deps` (part of `make test`) into .cache/ (nccl_sources.py).
FFPLAN_NCCL_SRC (an NCCL source tree, or a bare git repository of one) and FFPLAN_CUDA_HOME (with
include/cuda_runtime.h and include/cccl) override them. Without g++ or those files the tests skip with the
reason, and fail in CI (CI=true), so that a broken install step cannot hide. Checked with NCCL 2.29.7 and 2.30.7.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import NamedTuple, NoReturn

import pytest
from nccl_sources import CUDA_HEADERS, NCCL_ARCHIVE, NCCL_ARCHIVE_SHA256, NCCL_ARCHIVE_TOP, cuda_headers_ready, sha256
from pcie_variants import variant_plan
from tests.support.plans import designed

from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.render.hosts import render_hosts

pytestmark = pytest.mark.slow  # compiles NCCL's topology loader

HARNESS = Path(__file__).resolve().parent / "nccl_harness"
TWIN = Path(__file__).resolve().parents[1] / "design" / "inventories" / "twin-planar-1su.yaml"
GRAPH_FILES = ["xml.cc", "topo.cc"]
CXXFLAGS = ["-std=c++17", "-O0", "-ffunction-sections", "-fdata-sections", "-DNCCL_OS_LINUX=1", "-w"]
# NCCL 2.30 starts a GPU's NIC search at its CUDA index among the GPUs nearest to its NICs (before: its CUDA
# index), the rule ffplan's profile follows
CHANNEL0_RULE = (2, 30)


class Harness(NamedTuple):
    binary: Path
    version: tuple[int, int, int]


def _unavailable(reason: str) -> NoReturn:
    """A prerequisite is missing: skip on a developer's machine, fail in CI where `make test` installs it."""
    message = f"NCCL loader harness not built: {reason}"
    if os.environ.get("CI") == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def _extract(tar: tarfile.TarFile, into: Path, top: str = "") -> None:
    """The src/ and makefiles/ trees of an NCCL archive whose paths start with `top`."""
    members = []
    for member in tar.getmembers():
        if member.name.startswith(top) and member.name[len(top) :].split("/")[0] in ("src", "makefiles"):
            member.name = member.name[len(top) :]
            members.append(member)
    tar.extractall(into, members=members, filter="data")


def _source(tmp: Path) -> Path:
    given = os.environ.get("FFPLAN_NCCL_SRC")
    if not given:
        if not NCCL_ARCHIVE.is_file():
            _unavailable(f"no {NCCL_ARCHIVE} (run `make nccl-deps`, or set FFPLAN_NCCL_SRC to an NCCL source tree)")
        assert sha256(NCCL_ARCHIVE) == NCCL_ARCHIVE_SHA256, f"{NCCL_ARCHIVE} is not the pinned NCCL source"
        with tarfile.open(NCCL_ARCHIVE) as tar:
            _extract(tar, tmp / "nccl", NCCL_ARCHIVE_TOP + "/")
        return tmp / "nccl"
    path = Path(given)
    if (path / "src" / "graph" / "xml.cc").is_file():
        return path
    if (path / "objects").is_dir() and (path / "HEAD").is_file():
        archive = subprocess.run(
            ["git", f"--git-dir={path}", "archive", "HEAD", "src", "makefiles"], capture_output=True, check=False
        )
        if archive.returncode != 0:
            pytest.fail(f"git archive of FFPLAN_NCCL_SRC={path} failed: {archive.stderr.decode()[:200]}")
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            _extract(tar, tmp / "nccl")
        return tmp / "nccl"
    pytest.fail(f"FFPLAN_NCCL_SRC={given} has no src/graph/xml.cc")


def _cuda_include() -> Path:
    given = os.environ.get("FFPLAN_CUDA_HOME")
    if given:
        return Path(given) / "include"
    return CUDA_HEADERS / "include" if cuda_headers_ready() else Path("/usr/local/cuda/include")


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Harness:
    tmp = tmp_path_factory.mktemp("nccl-harness")
    compiler = shutil.which("g++")
    if compiler is None:
        _unavailable("no g++ (`make system-deps` installs it as root)")
    cuda = _cuda_include()
    if not (cuda / "cuda_runtime.h").is_file() or not (cuda / "cccl").is_dir():
        _unavailable(f"no CUDA headers in {cuda} (run `make nccl-deps`, or set FFPLAN_CUDA_HOME)")
    src = _source(tmp)
    version = dict(
        re.findall(r"^NCCL_(MAJOR|MINOR|PATCH)\s*:=\s*(\d+)", (src / "makefiles" / "version.mk").read_text(), re.M)
    )
    header = (src / "src" / "nccl.h.in").read_text()
    for key, value in {
        "Major": version["MAJOR"],
        "Minor": version["MINOR"],
        "Patch": version["PATCH"],
        "Suffix": "",
        "Version": f"{int(version['MAJOR'])}{int(version['MINOR']):02d}{int(version['PATCH']):02d}",
    }.items():
        header = header.replace("${nccl:" + key + "}", value)
    (tmp / "gen").mkdir()
    (tmp / "gen" / "nccl.h").write_text(header)
    includes = [
        f"-I{tmp / 'gen'}",
        f"-I{src / 'src' / 'include'}",
        f"-I{src / 'src' / 'graph'}",
        f"-I{src / 'src' / 'include' / 'plugin'}",
        f"-I{cuda}",
        f"-I{cuda / 'cccl'}",
    ]
    sources = [HARNESS / "topo_harness.cc", HARNESS / "nccl_stubs.cc", src / "src" / "misc" / "utils.cc"]
    sources += [src / "src" / "graph" / name for name in GRAPH_FILES]
    binary = tmp / "topo_harness"
    build = subprocess.run(
        [compiler, *CXXFLAGS, *includes, *map(str, sources), "-Wl,--gc-sections", "-o", str(binary)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert build.returncode == 0, f"g++ failed on the harness (NCCL source changed?): {build.stderr[-600:]}"
    return Harness(binary, (int(version["MAJOR"]), int(version["MINOR"]), int(version["PATCH"])))


def _run(harness: Harness, xml: str, tmp: Path, gdr_level: str) -> tuple[list[list[str]], str]:
    path = tmp / "topo.xml"
    path.write_text(xml)
    env = {**os.environ, "NCCL_NET_GDR_LEVEL": gdr_level}
    result = subprocess.run(
        [str(harness.binary), str(path), "90"], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stderr
    return [line.split() for line in result.stdout.splitlines()], result.stderr


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pcie")
    out = {name: variant_plan(name, tmp) for name in ("hgx", "nested", "shared-root-port")}
    out.update(
        {"lab": designed("lab"), "fire-flyer-2": designed("fire-flyer-2"), "twin-planar": design(load_inventory(TWIN))}
    )
    return out


@pytest.mark.parametrize("name", ["hgx", "nested", "shared-root-port", "lab", "fire-flyer-2", "twin-planar"])
def test_nccl_loads_the_file_and_agrees_with_the_profile(harness, plans, name, tmp_path):
    plan = plans[name]
    files = render_hosts(plan)
    for profile in plan.hosts:
        if not profile.topo_file:
            continue
        gdr_level = next(s.value for s in profile.nccl if s.name == "NCCL_NET_GDR_LEVEL")
        rows, log = _run(harness, files[f"hosts/{profile.name}/topo.xml"], tmp_path, gdr_level)
        assert "WARN" not in log and "Ignoring element" not in log, log
        # NCCL kept the file's tree: every switch, GPU and NIC, at its depth under its NUMA node's <cpu>
        loaded = {row[3]: int(row[1]) for row in rows if row[0] == "tree" and row[2] == "pci"}
        depth: dict[str, int] = {}
        for s in profile.pcie_switches:  # top-down: a switch is one level below the switch above it
            depth[s.name] = depth[s.parent] + 1 if s.parent else 2
            assert loaded[s.bus_id] == depth[s.name], s.name
        for d in profile.devices:
            assert loaded[d.topo_bus_id] == (depth[d.pcie_switch] + 1 if d.pcie_switch else 2), d.name
        counts = next(row for row in rows if row[0] == "counts")
        gpus = [d for d in profile.devices if d.kind == "gpu"]
        assert counts[1:7:2] == ["gpu", "nic", "net"]
        assert int(counts[2]) == len(gpus) and int(counts[6]) == len(profile.devices) - len(gpus)
        # and computes what the profile says: path type and GDR to the NIC the GPU takes on channel 0
        paths = {(row[1], row[2]): (row[3], row[6] == "1") for row in rows if row[0] == "path"}
        local = {row[1]: row[2:] for row in rows if row[0] == "local"}
        channel0 = {row[1]: row[2] for row in rows if row[0] == "channel0"}
        for d in gpus:
            assert paths[(d.topo_bus_id, d.nearest_nic)] == (d.nic_path, d.gdr), d.name
            assert d.nearest_nic in local[d.topo_bus_id] and channel0[d.topo_bus_id] in local[d.topo_bus_id], d.name
            if harness.version >= CHANNEL0_RULE:
                assert channel0[d.topo_bus_id] == d.nearest_nic, d.name


def test_nccl_takes_a_twin_planar_card_as_one_nic_with_a_net_per_plane(harness, plans, tmp_path):
    """Its two functions (mlx5_0 at 0000:19:00.0, mlx5_1 at .1) are one <pci> with two <net>s, as NCCL dumps such a
    card itself; a <pci> per function would be two NICs to NCCL, and no port merging."""
    (profile,) = plans["twin-planar"].hosts
    rows, log = _run(harness, render_hosts(plans["twin-planar"])[f"hosts/{profile.name}/topo.xml"], tmp_path, "PHB")
    assert "WARN" not in log, log
    counts = next(row for row in rows if row[0] == "counts")
    assert counts[1:7] == ["gpu", "8", "nic", "8", "net", "16"]


@pytest.mark.parametrize(
    "old, new",
    [
        ('<system version="1">', '<system version="2">'),  # xml.cc: "XML Topology has wrong version"
        (
            ' class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">',
            ' class="0x060400">',
        ),  # topo.cc: link_width required
        ("\n    <pci", "\n\t<pci"),  # xml.cc: only spaces and newlines between elements
    ],
)
def test_the_harness_fails_where_nccl_refuses_the_file(harness, plans, tmp_path, old, new):
    text = render_hosts(plans["hgx"])["hosts/hgx-h800/topo.xml"]
    assert old in text
    path = tmp_path / "topo.xml"
    path.write_text(text.replace(old, new))
    assert subprocess.run([str(harness.binary), str(path), "90"], capture_output=True, check=False).returncode != 0
