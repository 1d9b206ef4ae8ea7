"""The rendered shell scripts: syntax (bash -n, shellcheck when installed), and behaviour against a fake
sysfs tree and fake setpci/mlxconfig/mstconfig, so the pass/fail logic is exercised without hardware."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from pcie_variants import HGX
from tests.support.plans import design_file

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
# fake ibv_devinfo (rdma-core): the port's active MTU lives in $FAKE_STATE/mtu-<device>, 4096 when absent
FAKE_IBV_DEVINFO = r"""#!/usr/bin/env bash
set -eu
dev="$2"
mtu="$(cat "$FAKE_STATE/mtu-$dev" 2>/dev/null || printf 4096)"
printf 'hca_id:\t%s\n\ttransport:\t\t\tInfiniBand (0)\n\t\tport:\t%s\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n' "$dev" "$4"
printf '\t\t\tmax_mtu:\t\t4096 (5)\n\t\t\tactive_mtu:\t\t%s (%s)\n' "$mtu" 5
"""
MTU_CODE = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
# what the host reports for each version the plan checks: the declared minimum (CUDA's file carries a patch level)
HOST_VERSION = {"nvidia-driver": lambda v: v, "cuda": lambda v: v + ".1", "ofed": lambda v: v}


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


def _fake_host(
    tmp_path: Path, plan, files: dict[str, str], hostname: str, fw_tool: str = "mlxconfig"
) -> dict[str, str]:
    """A sysfs tree, firmware setting and installed files that match the plan for `hostname`, with `fw_tool`
    (mlxconfig or mstconfig) as the only firmware tool on PATH; returns the script environment."""
    profile = next(p for p in plan.hosts if hostname in p.hosts)
    node = next(n for n in plan.nodes if n.hostname == hostname)
    sysfs, root, state, bin_ = tmp_path / "sys", tmp_path / "root", tmp_path / "state", tmp_path / "bin"
    proc = tmp_path / "proc"
    state.mkdir()
    (sysfs / "bus/pci/devices").mkdir(parents=True)
    # as in real sysfs: bus/pci/devices/<bdf> links to the device under its root port, or under a downstream
    # port of its switch, whose upstream port sits under the root port or the switch above
    where: dict[str, Path] = {}
    for i, sw in enumerate(profile.pcie_switches):
        above = (
            where[sw.parent] / f"0000:fe:{i:02x}.0"
            if sw.parent
            else sysfs / "devices/pci0000:00" / f"0000:00:{0x40 + i:02x}.1"
        )
        where[sw.name] = above / sw.bus_id
        where[sw.name].mkdir(parents=True)
        (sysfs / "bus/pci/devices" / sw.bus_id).symlink_to(where[sw.name])
        _write(where[sw.name] / "class", sw.pci_class + "\n")
        _write(where[sw.name] / "numa_node", f"{sw.numa}\n")
    for i, d in enumerate(profile.devices):
        above = (
            where[d.pcie_switch] / f"0000:ff:{i:02x}.0"
            if d.pcie_switch
            else sysfs / "devices/pci0000:00" / f"0000:00:{i + 1:02x}.1"
        )
        dev = above / d.bus_id
        dev.mkdir(parents=True)
        (sysfs / "bus/pci/devices" / d.bus_id).symlink_to(dev)
        for key, value in (
            ("class", d.pci_class),
            ("vendor", d.vendor),
            ("device", d.device),
            ("current_link_speed", d.link_speed),
            ("max_link_speed", d.link_speed),
            ("current_link_width", str(d.link_width)),
            ("numa_node", str(d.numa)),
        ):
            _write(dev / key, value + "\n")
        if d.kind == "nic":
            ib = sysfs / "class/infiniband" / d.name
            ib.mkdir(parents=True)
            (ib / "device").symlink_to(dev)
            (state / f"devctl-{d.bus_id}").write_text("2930\n")  # RlxdOrd+, MaxReadReq 512 B
            affinity = next(n.affinity for n in profile.numa_nodes if n.id == d.numa)
            for irq in (100 + 2 * i, 101 + 2 * i):  # two MSI-X vectors per NIC, pinned to its NUMA node
                _write(dev / "msi_irqs" / str(irq), "msix\n")
                _write(proc / "irq" / str(irq) / "smp_affinity", affinity + "\n")
    rate = {d.name: d.ib_rate for d in profile.devices}
    for pt in node.ports:
        port = sysfs / "class/infiniband" / pt.nic / "ports" / str(pt.port)
        g = pt.port_guid[2:]
        _write(port / "state", "4: ACTIVE\n")
        _write(port / "rate", f"{RATE_GBPS[rate[pt.nic]]} Gb/sec ({rate[pt.nic]})\n")
        _write(port / "gids/0", "fe80:0000:0000:0000:" + ":".join(g[i : i + 4] for i in range(0, 16, 4)) + "\n")
        _write(port / "lid", f"{pt.lid:#x}\n")
    for n in profile.numa_nodes:
        _write(sysfs / f"devices/system/node/node{n.id}/cpumap", n.affinity + "\n")
    for f in profile.files:
        if f.install_path:
            _write(root / f.install_path.lstrip("/"), files[f"hosts/{profile.name}/{f.name}"])
    if profile.checks.peer_memory:
        (sysfs / "module/nvidia_peermem").mkdir(parents=True)
    where_version = {"nvidia-driver": sysfs / "module/nvidia/version", "ofed": sysfs / "module/mlx5_core/version"}
    for v in profile.checks.versions:
        have = HOST_VERSION[v.name](v.minimum)
        if v.name == "cuda":
            _write(
                root / "usr/local/cuda/version.json",
                f'{{\n   "cuda" : {{\n      "name" : "CUDA SDK",\n      "version" : "{have}"\n   }},\n'
                f'   "cuda_cudart" : {{\n      "name" : "CUDA Runtime (cudart)",\n      "version" : "{have}"\n   }}\n}}\n',
            )
        else:
            _write(where_version[v.name], have + "\n")
    _write(bin_ / "ibv_devinfo", FAKE_IBV_DEVINFO, 0o755)
    _write(bin_ / "setpci", FAKE_SETPCI, 0o755)
    _write(bin_ / fw_tool, FAKE_FW_CONFIG, 0o755)
    ro = profile.relaxed_ordering
    (state / "wr").write_text(f"{ro.pci_wr_ordering_name}({ro.pci_wr_ordering})\n")
    for name, text in files.items():
        if name.startswith(f"hosts/{profile.name}/") and name.endswith(".sh"):
            _write(tmp_path / name.split("/")[-1], text, stat.S_IRWXU)
    system_path = os.environ["PATH"]
    assert not shutil.which("mlxconfig", path=system_path) and not shutil.which("mstconfig", path=system_path)
    return {
        "PATH": f"{bin_}:{system_path}",
        "FFPLAN_SYSFS": str(sysfs),
        "FFPLAN_ROOT": str(root),
        "FFPLAN_PROC": str(proc),
        "FAKE_STATE": str(state),
        "LC_ALL": "C",
    }


def _run(tmp_path: Path, script: str, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([BASH, str(tmp_path / script), *args], env=env, text=True, capture_output=True, timeout=60)


# the checks of issue 27 on lab's gpu01 (one NIC mlx5_0 at 0000:21:00.0, GPUs, versions declared)
NEW_CHECKS = (
    "GPUDirect RDMA peer memory",
    "MaxReadReqSize of 0000:21:00.0",
    "mlx5_0 IRQ affinity",
    "mlx5_0/1 active MTU",
    "nvidia-driver version",
    "cuda version",
    "ofed version",
)


@pytest.mark.skipif(os.geteuid() != 0, reason="the RO checks read config space only as root")
def test_host_check_passes_on_a_host_that_matches_the_plan(tmp_path, lab_plan, lab_files):
    env = _fake_host(tmp_path, lab_plan, lab_files, "gpu01")
    r = _run(tmp_path, "host-check.sh", env, "--host", "gpu01")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert not [line for line in lines if line.startswith("FAIL")]
    for expected in (
        "mlx5_0/1 state",
        "mlx5_0/1 rate",
        "mlx5_0/1 port GUID",
        "mlx5_0/1 LID",
        "gpu3 NUMA node",
        "gpu0 link width",
        "NUMA node 1 cpumap",
        "RO bit of 0000:21:00.0",
        "file /etc/nccl.conf",
        "file /etc/nccl/topo.xml",
        "mlx5_0 PCI address",
        "PCI_WR_ORDERING of 0000:21:00.0",
        *NEW_CHECKS,
    ):
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
    for expected in (
        "mlx5_1 NUMA node",
        "mlx5_0 link width",
        "mlx5_1/1 state",
        "mlx5_0/1 rate",
        "file /etc/ucx/ucx.conf",
        "RO bit of 0000:41:00.0",
        "3FS sl",
        "PCI_WR_ORDERING of 0000:41:00.0",
    ):
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


def _fails(r: subprocess.CompletedProcess) -> list[str]:
    return [line for line in r.stdout.splitlines() if line.startswith("FAIL")]


@pytest.mark.skipif(os.geteuid() != 0, reason="the MaxReadReqSize check reads config space only as root")
@pytest.mark.parametrize("check", NEW_CHECKS)
def test_each_new_check_fails_on_its_own_drift(tmp_path, lab_plan, lab_files, check):
    """One drift at a time on a host that otherwise matches: exactly that check fails, with what it saw."""
    env = _fake_host(tmp_path, lab_plan, lab_files, "gpu01")
    sysfs, proc, state, root = (Path(env[k]) for k in ("FFPLAN_SYSFS", "FFPLAN_PROC", "FAKE_STATE", "FFPLAN_ROOT"))
    last_irq = sorted(os.listdir(sysfs / "bus/pci/devices/0000:21:00.0/msi_irqs"))[-1]
    seen = {
        "GPUDirect RDMA peer memory": lambda: (sysfs / "module/nvidia_peermem").rmdir() or "not loaded",
        "MaxReadReqSize of 0000:21:00.0": lambda: (state / "devctl-0000:21:00.0").write_text("0930\n") and "128",
        "mlx5_0 IRQ affinity": lambda: (
            (proc / "irq" / last_irq / "smp_affinity").write_text("00000000,ff00ff00\n")
            and f"1 of 2 IRQs outside ({last_irq})"
        ),
        "mlx5_0/1 active MTU": lambda: (state / "mtu-mlx5_0").write_text("2048") and "2048",
        "nvidia-driver version": lambda: (sysfs / "module/nvidia/version").write_text("575.57.08\n") and "575.57.08",
        "cuda version": lambda: (
            (root / "usr/local/cuda/version.json").write_text('{"cuda": {"version": "12.9.1"}}\n') and "12.9.1"
        ),
        "ofed version": lambda: (sysfs / "module/mlx5_core/version").unlink() or "not found",
    }[check]()
    r = _run(tmp_path, "host-check.sh", env, "--host", "gpu01")
    assert r.returncode == 1, r.stdout
    fails = _fails(r)
    assert len(fails) == 1 and check in fails[0] and seen in fails[0], (check, fails)


def test_new_checks_skip_without_root_or_ibv_devinfo(tmp_path, lab_plan, lab_files):
    """Not root: MaxReadReqSize (config space) SKIPs; without ibv_devinfo the MTU SKIPs; the rest still run."""
    env = _fake_host(tmp_path, lab_plan, lab_files, "gpu01")
    tools = tmp_path / "tools"  # the commands the script runs, and an `id` that says uid 1000; no ibv_devinfo
    tools.mkdir()
    for tool in ("bash", "sed", "sort", "head", "readlink", "basename", "sha256sum", "hostname", "uname", "cat"):
        found = shutil.which(tool)
        if found:
            (tools / tool).symlink_to(found)
    _write(tools / "id", "#!/bin/sh\necho 1000\n", 0o755)
    env["PATH"] = str(tools)
    r = _run(tmp_path, "host-check.sh", env, "--host", "gpu01")
    lines = r.stdout.splitlines()
    assert not _fails(r), r.stdout
    assert r.returncode == 0, r.stdout + r.stderr
    for expected in ("MaxReadReqSize of 0000:21:00.0", "mlx5_0/1 active MTU"):
        assert any(line.startswith("SKIP") and expected in line for line in lines), (expected, r.stdout)
    for expected in ("GPUDirect RDMA peer memory", "mlx5_0 IRQ affinity", "nvidia-driver version"):
        assert any(line.startswith("PASS") and expected in line for line in lines), (expected, r.stdout)


def test_the_checks_explain_documents_are_the_ones_the_script_runs(lab_files):
    from ffplan.design.host_checks import HOST_CHECKS

    script = lab_files["hosts/gpu-node/host-check.sh"]
    for _, label, _, _, _ in HOST_CHECKS:
        words = re.sub(r"<[^>]*>", " ", label).replace("/", " ").split()
        assert words and all(w in script for w in words), label


def test_the_version_mask_and_subset_helpers(lab_files):
    """The script's own helpers, run by bash: sort -V order, and cpumaps of different widths."""
    script = lab_files["hosts/gpu-node/host-check.sh"]
    helpers = re.search(r"hexmask\(\) \{.*?\n\}\nmask_within.*?\n\}\nversion_at_least.*?\n\}\n", script, re.S).group(0)
    cases = [
        ("version_at_least 580.82.07 580.65.06", 0),
        ("version_at_least 580.9 580.10", 1),
        ("version_at_least 13.0.1 13.0", 0),
        ("version_at_least 24.10-1.1.4 24.10-1.1.4", 0),
        ("mask_within 00000000,000000ff 00ff00ff", 0),
        ("mask_within ff00 00ff00ff", 1),
        ("mask_within 1,00000000 ffffffff", 1),
        ("mask_within 0f 0,0000000f", 0),
    ]
    for call, status in cases:
        r = subprocess.run([BASH, "-c", helpers + call], capture_output=True, text=True)
        assert r.returncode == status, (call, r.stderr)


def test_explain_documents_each_host_check():
    from typer.testing import CliRunner

    from ffplan.cli.main import app
    from ffplan.design.host_checks import HOST_CHECKS

    everything = CliRunner().invoke(app, ["explain", "host-check"])
    assert everything.exit_code == 0
    for name, label, *_ in HOST_CHECKS:
        one = CliRunner().invoke(app, ["explain", name])
        assert one.exit_code == 0 and one.stdout.startswith(f'host-check.sh: {name} (reported as "{label}")')
        assert "reads: " in one.stdout and "why: " in one.stdout and "SKIP: " in one.stdout
        assert one.stdout.strip() in everything.stdout
