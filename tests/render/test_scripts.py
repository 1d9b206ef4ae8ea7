"""The rendered shell scripts: syntax (bash -n, shellcheck when installed), and behaviour against a fake
sysfs tree and fake setpci/mlxconfig/mstconfig, so the pass/fail logic is exercised without hardware."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from pcie_variants import HGX
from renderfix import design_file

from ffplan.render.hosts import render_hosts

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="bash not installed")

FAKE_SETPCI = r"""#!/usr/bin/env bash
# fake setpci: the Device Control word lives in $FAKE_STATE/devctl-<bdf>; ACS is absent
set -eu
printf '%s\n' "$*" >> "$FAKE_STATE/setpci.log"
bdf="$2"; reg="$3"
case "$reg" in
  CAP_EXP+8.w) cat "$FAKE_STATE/devctl-$bdf" ;;
  CAP_EXP+8.w=*)
    spec="${reg#CAP_EXP+8.w=}"; value="${spec%%:*}"; mask="${spec##*:}"
    old="$(cat "$FAKE_STATE/devctl-$bdf")"
    printf '%04x\n' $(( (16#$old & ~16#$mask) | (16#$value & 16#$mask) )) > "$FAKE_STATE/devctl-$bdf" ;;
  *) exit 1 ;;
esac
"""
# fake mlxconfig (NVIDIA MFT) and mstconfig (mstflint): same arguments and output; each logs to <its name>.log
FAKE_FW_CONFIG = r"""#!/usr/bin/env bash
set -eu
printf '%s\n' "$*" >> "$FAKE_STATE/$(basename "$0").log"
case "$*" in
  *query*) printf 'Configurations:\n         PCI_WR_ORDERING                     %s\n' "$(cat "$FAKE_STATE/wr")" ;;
  *set*) printf 'per_mkey(0)\n' > "$FAKE_STATE/wr" ;;
esac
"""


RATE_GBPS = {"4X EDR": 100, "4X HDR": 200, "4X NDR": 400}


def _write(path: Path, text: str, mode: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mode:
        path.chmod(mode)


@pytest.fixture
def lab_files(lab_plan):
    return render_hosts(lab_plan)


def test_scripts_parse(lab_files, ff2_plan):
    scripts = {k: v for k, v in {**lab_files, **render_hosts(ff2_plan)}.items() if k.endswith(".sh")}
    assert scripts
    for name, text in scripts.items():
        r = subprocess.run([BASH, "-n"], input=text, text=True, capture_output=True)
        assert r.returncode == 0, f"{name}: {r.stderr}"
        assert "set -euo pipefail" in text
    shellcheck = shutil.which("shellcheck")
    if shellcheck:
        for name, text in lab_files.items():
            if name.endswith(".sh"):
                r = subprocess.run([shellcheck, "-s", "bash", "-"], input=text, text=True, capture_output=True)
                assert r.returncode == 0, f"{name}:\n{r.stdout}"


def _fake_host(tmp_path: Path, plan, files: dict[str, str], hostname: str, fw_tool: str = "mlxconfig") -> dict[str, str]:
    """A sysfs tree, firmware setting and installed files that match the plan for `hostname`, with `fw_tool`
    (mlxconfig or mstconfig) as the only firmware tool on PATH; returns the script environment."""
    profile = next(p for p in plan.hosts if hostname in p.hosts)
    node = next(n for n in plan.nodes if n.hostname == hostname)
    sysfs, root, state, bin_ = tmp_path / "sys", tmp_path / "root", tmp_path / "state", tmp_path / "bin"
    state.mkdir()
    (sysfs / "bus/pci/devices").mkdir(parents=True)
    # as in real sysfs: bus/pci/devices/<bdf> links to the device under its root port, or under a downstream
    # port of its switch, whose upstream port sits under the root port or the switch above
    where: dict[str, Path] = {}
    for i, sw in enumerate(profile.pcie_switches):
        above = where[sw.parent] / f"0000:fe:{i:02x}.0" if sw.parent else sysfs / "devices/pci0000:00" / f"0000:00:{0x40 + i:02x}.1"
        where[sw.name] = above / sw.bus_id
        where[sw.name].mkdir(parents=True)
        (sysfs / "bus/pci/devices" / sw.bus_id).symlink_to(where[sw.name])
        _write(where[sw.name] / "class", sw.pci_class + "\n")
        _write(where[sw.name] / "numa_node", f"{sw.numa}\n")
    for i, d in enumerate(profile.devices):
        above = where[d.pcie_switch] / f"0000:ff:{i:02x}.0" if d.pcie_switch else sysfs / "devices/pci0000:00" / f"0000:00:{i + 1:02x}.1"
        dev = above / d.bus_id
        dev.mkdir(parents=True)
        (sysfs / "bus/pci/devices" / d.bus_id).symlink_to(dev)
        for key, value in (("class", d.pci_class), ("vendor", d.vendor), ("device", d.device),
                           ("current_link_speed", d.link_speed), ("max_link_speed", d.link_speed),
                           ("current_link_width", str(d.link_width)), ("numa_node", str(d.numa))):
            _write(dev / key, value + "\n")
        if d.kind == "nic":
            ib = sysfs / "class/infiniband" / d.name
            ib.mkdir(parents=True)
            (ib / "device").symlink_to(dev)
            (state / f"devctl-{d.bus_id}").write_text("2930\n")
    rate = {d.name: d.ib_rate for d in profile.devices}
    for pt in node.ports:
        port = sysfs / "class/infiniband" / pt.nic / "ports" / str(pt.port)
        g = pt.port_guid[2:]
        _write(port / "state", "4: ACTIVE\n")
        _write(port / "rate", f"{RATE_GBPS[rate[pt.nic]]} Gb/sec ({rate[pt.nic]})\n")
        _write(port / "gids/0", "fe80:0000:0000:0000:" + ":".join(g[i:i + 4] for i in range(0, 16, 4)) + "\n")
        _write(port / "lid", f"{pt.lid:#x}\n")
    for n in profile.numa_nodes:
        _write(sysfs / f"devices/system/node/node{n.id}/cpumap", n.affinity + "\n")
    for f in profile.files:
        if f.install_path:
            _write(root / f.install_path.lstrip("/"), files[f"hosts/{profile.name}/{f.name}"])
    _write(bin_ / "setpci", FAKE_SETPCI, 0o755)
    _write(bin_ / fw_tool, FAKE_FW_CONFIG, 0o755)
    ro = profile.relaxed_ordering
    (state / "wr").write_text(f"{ro.pci_wr_ordering_name}({ro.pci_wr_ordering})\n")
    for name, text in files.items():
        if name.startswith(f"hosts/{profile.name}/") and name.endswith(".sh"):
            _write(tmp_path / name.split("/")[-1], text, stat.S_IRWXU)
    system_path = os.environ["PATH"]
    assert not shutil.which("mlxconfig", path=system_path) and not shutil.which("mstconfig", path=system_path)
    return {"PATH": f"{bin_}:{system_path}", "FFPLAN_SYSFS": str(sysfs), "FFPLAN_ROOT": str(root),
            "FAKE_STATE": str(state), "LC_ALL": "C"}


def _run(tmp_path: Path, script: str, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([BASH, str(tmp_path / script), *args], env=env, text=True, capture_output=True, timeout=60)


@pytest.mark.skipif(os.geteuid() != 0, reason="the RO checks read config space only as root")
def test_host_check_passes_on_a_host_that_matches_the_plan(tmp_path, lab_plan, lab_files):
    env = _fake_host(tmp_path, lab_plan, lab_files, "gpu01")
    r = _run(tmp_path, "host-check.sh", env, "--host", "gpu01")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert not [line for line in lines if line.startswith("FAIL")]
    for expected in ("mlx5_0/1 state", "mlx5_0/1 rate", "mlx5_0/1 port GUID", "mlx5_0/1 LID", "gpu3 NUMA node",
                     "gpu0 link width", "NUMA node 1 cpumap", "RO bit of 0000:21:00.0", "file /etc/nccl.conf",
                     "file /etc/nccl/topo.xml", "mlx5_0 PCI address", "PCI_WR_ORDERING of 0000:21:00.0"):
        assert any(line.startswith("PASS") and expected in line for line in lines), expected
    assert any(line.startswith("SKIP") and "3FS sl" in line for line in lines)


@pytest.mark.skipif(os.geteuid() != 0, reason="the RO checks read config space only as root")
def test_host_check_fails_on_every_kind_of_drift(tmp_path, lab_plan, lab_files):
    env = _fake_host(tmp_path, lab_plan, lab_files, "stor2")
    sysfs, root = Path(env["FFPLAN_SYSFS"]), Path(env["FFPLAN_ROOT"])
    (sysfs / "bus/pci/devices/0000:c1:00.0/numa_node").write_text("1\n")
    (sysfs / "bus/pci/devices/0000:41:00.0/current_link_width").write_text("8\n")
    (sysfs / "class/infiniband/mlx5_1/ports/1/state").write_text("1: DOWN\n")
    (sysfs / "class/infiniband/mlx5_0/ports/1/rate").write_text("100 Gb/sec (4X EDR)\n")
    (root / "etc/ucx/ucx.conf").write_text("UCX_IB_SL=7\n")
    (Path(env["FAKE_STATE"]) / "devctl-0000:41:00.0").write_text("2920\n")
    (Path(env["FAKE_STATE"]) / "wr").write_text("force_relax(1)\n")
    _write(root / "opt/3fs/etc/hf3fs_fuse_main.toml", "[client.io_worker.ibsocket]\nsl = 0\n")
    r = _run(tmp_path, "host-check.sh", env, "--host", "stor2")
    assert r.returncode == 1
    fails = [line for line in r.stdout.splitlines() if line.startswith("FAIL")]
    for expected in ("mlx5_1 NUMA node", "mlx5_0 link width", "mlx5_1/1 state", "mlx5_0/1 rate", "file /etc/ucx/ucx.conf",
                     "RO bit of 0000:41:00.0", "3FS sl", "PCI_WR_ORDERING of 0000:41:00.0"):
        assert any(expected in line for line in fails), (expected, r.stdout)
    assert "failed" in r.stdout.splitlines()[-1]


def test_host_check_refuses_a_host_of_another_profile(tmp_path, lab_plan, lab_files):
    env = _fake_host(tmp_path, lab_plan, lab_files, "gpu01")
    r = _run(tmp_path, "host-check.sh", env, "--host", "stor1")
    assert r.returncode == 1
    assert any(line.startswith("FAIL") and "host in plan" in line for line in r.stdout.splitlines())
    r = _run(tmp_path, "host-check.sh", env, "--bogus")
    assert r.returncode == 2


@pytest.mark.skipif(os.geteuid() != 0, reason="relaxed-ordering.sh runs as root only")
def test_relaxed_ordering_reads_then_applies_once(tmp_path, lab_plan, lab_files):
    env = _fake_host(tmp_path, lab_plan, lab_files, "gpu01")
    state = Path(env["FAKE_STATE"])
    (state / "devctl-0000:21:00.0").write_text("2920\n")  # RlxdOrd-
    (state / "wr").write_text("force_relax(1)\n")
    r = _run(tmp_path, "relaxed-ordering.sh", env)
    assert r.returncode == 1, r.stdout + r.stderr
    assert (state / "devctl-0000:21:00.0").read_text().strip() == "2920", "read-only by default"
    assert "set" not in (state / "mlxconfig.log").read_text()
    assert "=" not in (state / "setpci.log").read_text()
    r = _run(tmp_path, "relaxed-ordering.sh", env, "--apply")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (state / "devctl-0000:21:00.0").read_text().strip() == "2930", "only bit 4 changes"
    assert [line.split()[0] for line in r.stdout.splitlines()[1:3]] == ["SET", "SET"]
    assert "set PCI_WR_ORDERING=0" in (state / "mlxconfig.log").read_text()
    writes = (state / "setpci.log").read_text().count("=")
    r = _run(tmp_path, "relaxed-ordering.sh", env, "--apply")
    assert r.returncode == 0 and "SET" not in r.stdout, r.stdout
    assert (state / "setpci.log").read_text().count("=") == writes, "idempotent: nothing written the second time"
    assert any(line.startswith("PASS") and "IOMMU" in line for line in r.stdout.splitlines())
    assert any("no ACS capability" in line for line in r.stdout.splitlines())
    assert _run(tmp_path, "relaxed-ordering.sh", env, "--apply", "x").returncode == 2


@pytest.mark.skipif(os.geteuid() != 0, reason="relaxed-ordering.sh runs as root only")
def test_stock_host_with_only_mstconfig(tmp_path, lab_plan, lab_files):
    """Debian/Ubuntu ship mstconfig (mstflint), not NVIDIA's mlxconfig: both scripts read and set through it."""
    env = _fake_host(tmp_path, lab_plan, lab_files, "gpu01", fw_tool="mstconfig")
    state = Path(env["FAKE_STATE"])
    r = _run(tmp_path, "host-check.sh", env, "--host", "gpu01")
    assert r.returncode == 0, r.stdout + r.stderr
    assert any(line.startswith("PASS") and "PCI_WR_ORDERING of 0000:21:00.0" in line for line in r.stdout.splitlines())
    (state / "wr").write_text("force_relax(1)\n")
    r = _run(tmp_path, "relaxed-ordering.sh", env)
    assert r.returncode == 1 and "force_relax(1) (--apply sets it)" in r.stdout, r.stdout
    r = _run(tmp_path, "relaxed-ordering.sh", env, "--apply")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "-y -d 0000:21:00.0 set PCI_WR_ORDERING=0" in (state / "mstconfig.log").read_text()
    r = _run(tmp_path, "relaxed-ordering.sh", env)
    assert r.returncode == 0 and "per_mkey(0) (mstconfig)" in r.stdout, r.stdout


@pytest.fixture
def hgx(tmp_path):
    plan = design_file(HGX)
    return plan, render_hosts(plan)


@pytest.mark.skipif(os.geteuid() != 0, reason="the RO checks read config space only as root")
def test_host_check_follows_the_pcie_switches(tmp_path, hgx):
    plan, files = hgx
    r = _run(tmp_path, "host-check.sh", _fake_host(tmp_path, plan, files, "hgx1"), "--host", "hgx1")
    assert r.returncode == 0, r.stdout + r.stderr
    passed = [line for line in r.stdout.splitlines() if line.startswith("PASS")]
    for expected in ("sw0 class", "sw3 NUMA node", "gpu0 behind sw0", "mlx5_7 behind sw3", "mlx5_7/1 rate"):
        assert any(expected in line for line in passed), (expected, r.stdout)


@pytest.mark.skipif(os.geteuid() != 0, reason="the RO checks read config space only as root")
def test_host_check_fails_a_device_under_another_switch(tmp_path, hgx):
    plan, files = hgx
    env = _fake_host(tmp_path, plan, files, "hgx1")
    sysfs = Path(env["FFPLAN_SYSFS"])
    link = sysfs / "bus/pci/devices/0000:1b:00.0"  # gpu1, planned under sw0: the host has it under sw1
    moved = (sysfs / "bus/pci/devices/0000:37:00.0").resolve() / "0000:ff:99.0" / "0000:1b:00.0"
    shutil.copytree(link.resolve(), moved)
    link.unlink()
    link.symlink_to(moved)
    (sysfs / "bus/pci/devices/0000:b7:00.0/numa_node").write_text("0\n")
    r = _run(tmp_path, "host-check.sh", env, "--host", "hgx1")
    assert r.returncode == 1
    fails = [line for line in r.stdout.splitlines() if line.startswith("FAIL")]
    assert any("gpu1 behind sw0" in line for line in fails) and any("sw3 NUMA node" in line for line in fails), r.stdout


def test_hgx_scripts_parse(hgx):
    _, files = hgx
    shellcheck = shutil.which("shellcheck")
    for name, text in files.items():
        if name.endswith(".sh"):
            assert subprocess.run([BASH, "-n"], input=text, text=True, capture_output=True).returncode == 0, name
            if shellcheck:
                r = subprocess.run([shellcheck, "-s", "bash", "-"], input=text, text=True, capture_output=True)
                assert r.returncode == 0, f"{name}:\n{r.stdout}"
