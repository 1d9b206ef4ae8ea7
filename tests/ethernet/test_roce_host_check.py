"""hosts/<node model>/host-check.sh of a RoCE plan: the RDMA article's host checklist, read-only, against a host the
test makes (conftest's roce_host): shellcheck-clean; after roce-qos.sh --apply every planned item passes; a NIC at the
wrong MTU, speed, NUMA node or PFC setting fails on exactly that line; nothing on the host is changed."""

import shutil
import subprocess

import pytest

from ffplan.render import render_plan


@pytest.fixture(scope="module")
def files(small_plan):
    return render_plan(small_plan)


@pytest.fixture
def host(roce_host, files):
    root, run = roce_host
    run(files["hosts/gpu-node/roce-qos.sh"], "--apply")
    return root, lambda *args, **kw: run(files["hosts/gpu-node/host-check.sh"], *args, **kw)


def _lines(out: str, state: str) -> set[str]:
    return {line.split("  ")[1].strip() for line in out.splitlines() if line.startswith(state)}


def test_one_host_check_per_node_model(files, small_plan):
    assert [p for p in files if p.endswith("host-check.sh")] == ["hosts/gpu-node/host-check.sh"]
    checks = small_plan.ethernet.host_profiles[0].checks
    assert (checks.speed_mbps, checks.mtu.value, checks.cq_depth.value) == (400_000, 9000, 8192)
    nic = next(d for d in small_plan.ethernet.host_profiles[0].devices if d.kind == "nic")
    assert (nic.pci_class, nic.ib_rate, nic.ib_ports) == ("0x020000", "", [])  # an Ethernet controller


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="needs shellcheck")
def test_shellcheck(files):
    r = subprocess.run(
        ["shellcheck", "-s", "bash", "-"], input=files["hosts/gpu-node/host-check.sh"], text=True, capture_output=True
    )
    assert r.returncode == 0, r.stdout


def test_a_host_as_planned_passes(host):
    _, run = host
    r = run("--host", "gpu3")
    assert r.returncode == 0, r.stdout + r.stderr
    passed = _lines(r.stdout, "PASS")
    for item in (
        "host in plan",
        "mlx5_0 link (rnic0)",
        "mlx5_0 speed (rnic0)",
        "mlx5_0 MTU (rnic0)",
        "mlx5_0 class",
        "mlx5_0 link speed",
        "mlx5_0 link width",
        "mlx5_0 NUMA node",
        "gpu0 link width",
        "NUMA node 0 cpumap",
        "mlx5_0 IRQ affinity",
        "GPUDirect RDMA peer memory",
        "mlx5_0 CQ depth",
        "mlx5_0 trust (rnic0)",
        "mlx5_0 PFC (rnic0)",
        "mlx5_0 RDMA-CM default ToS",
        "mlx5_0 ECN notification point prio 3",
        "mlx5_0 ECN reaction point prio 3",
        "mlx5_0 roce_rp rpg_min_dec_fac",
    ):
        assert item in passed, r.stdout
    assert _lines(r.stdout, "FAIL") == set()


def test_drift_fails_on_its_own_line(host):
    root, run = host
    net = root / "sys/class/net/rnic0"
    (net / "mtu").write_text("1500\n")
    (net / "speed").write_text("200000\n")
    (root / "sys/bus/pci/devices/0000:21:00.0/numa_node").write_text("1\n")
    (root / "qos/pfc").write_text("0,0,0,0,0,0,0,0\n")
    (root / "proc/irq/41/smp_affinity").write_text("ffffffff,00000000\n")
    r = run("--host", "gpu3")
    assert r.returncode == 1
    assert _lines(r.stdout, "FAIL") == {
        "mlx5_0 MTU (rnic0)",
        "mlx5_0 speed (rnic0)",
        "mlx5_0 NUMA node",
        "mlx5_0 PFC (rnic0)",
        "mlx5_0 IRQ affinity",
    }
    assert (root / "qos/pfc").read_text() == "0,0,0,0,0,0,0,0\n"  # read-only: nothing set back


def test_a_host_not_in_the_plan_fails(host):
    _, run = host
    r = run("--host", "gpu99")
    assert r.returncode == 1 and "host in plan" in _lines(r.stdout, "FAIL")


def test_explain_documents_the_roce_checks_the_script_runs(files):
    import re

    from typer.testing import CliRunner

    from ffplan.cli.main import app
    from ffplan.design.host_checks import ROCE_HOST_CHECKS

    script = files["hosts/gpu-node/host-check.sh"]
    for name, label, *_ in ROCE_HOST_CHECKS:
        words = re.sub(r"<[^>]*>", " ", label).replace("/", " ").split()
        assert words and all(w in script for w in words), label
        one = CliRunner().invoke(app, ["explain", name])
        assert one.exit_code == 0 and one.stdout.startswith(f'host-check.sh: {name} (reported as "{label}")')
