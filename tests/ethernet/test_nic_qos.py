"""hosts/<node model>/roce-qos.sh: the NICs' half of the lossless QoS. shellcheck-clean, and run against a sysfs and
configfs tree and an mlnx_qos stand-in the test makes (conftest's roce_host): read-only it fails and changes nothing, --apply sets what
differs, then it passes with nothing left to set."""

import shutil
import subprocess

import pytest

from ffplan.ethernet.qos import DCQCN_DEFAULTS
from ffplan.render import render_plan


@pytest.fixture(scope="module")
def script(small_plan):
    files = render_plan(small_plan)
    assert [p for p in files if p.endswith("roce-qos.sh")] == ["hosts/gpu-node/roce-qos.sh"]
    return files["hosts/gpu-node/roce-qos.sh"]


def test_plan_values(small_plan):
    q = small_plan.ethernet.nic_qos
    assert (q.trust, q.pfc, q.roce_tos.value, q.ecn_priority) == ("dscp", "0,0,0,1,0,0,0,0", 26 << 2 | 2, 3)
    assert [(s.name, s.value) for s in q.notification_point] == [("cnp_dscp", 48), ("cnp_802p_prio", 6)]
    assert [(s.name, s.value) for s in q.reaction_point] == list(DCQCN_DEFAULTS)
    assert all(s.source.startswith("NVIDIA default") for s in q.reaction_point)
    assert small_plan.ethernet.host_profiles[0].nics == ["mlx5_0"]


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="needs shellcheck")
def test_shellcheck(script):
    r = subprocess.run(["shellcheck", "-s", "bash", "-"], input=script, text=True, capture_output=True)
    assert r.returncode == 0, r.stdout


@pytest.fixture
def host(roce_host, script):
    root, run = roce_host
    return root, lambda *args, **kw: run(script, *args, **kw)


def test_read_only_reports_and_changes_nothing(host):
    root, run = host
    r = run()
    assert r.returncode == 1, r.stdout + r.stderr
    failed = {line.split("  ")[1].strip() for line in r.stdout.splitlines() if line.startswith("FAIL")}
    assert failed == {
        "mlx5_0 trust (rnic0)",
        "mlx5_0 PFC (rnic0)",
        "mlx5_0 RDMA-CM default ToS",
        "mlx5_0 ECN notification point prio 3",
        "mlx5_0 ECN reaction point prio 3",
        "mlx5_0 roce_np cnp_802p_prio",
        "mlx5_0 roce_rp rpg_min_dec_fac",
    }
    assert (root / "qos/trust").read_text() == "pcp\n"
    assert (root / "sys/class/net/rnic0/ecn/roce_rp/rpg_min_dec_fac").read_text() == "30\n"


def test_apply_sets_what_differs_then_passes(host):
    root, run = host
    applied = run("--apply")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert applied.stdout.count("SET ") == 7 and "FAIL" not in applied.stdout
    ecn = root / "sys/class/net/rnic0/ecn"
    assert (root / "qos/trust").read_text() == "dscp\n"
    assert (root / "qos/pfc").read_text() == "0,0,0,1,0,0,0,0\n"
    assert (root / "cfg/rdma_cm/mlx5_0/ports/1/default_roce_tos").read_text() == "106\n"
    assert [(ecn / f"{p}/enable/3").read_text() for p in ("roce_np", "roce_rp")] == ["1\n", "1\n"]
    assert (ecn / "roce_np/enable/0").read_text() == "0\n"  # only the RoCE priority
    assert (ecn / "roce_rp/rpg_min_dec_fac").read_text() == "50\n"
    again = run("--apply")
    assert again.returncode == 0 and "SET " not in again.stdout
    after = run()
    assert after.returncode == 0 and after.stdout.count("PASS") == 2 + 1 + 2 + 2 + len(DCQCN_DEFAULTS)


def test_without_mlnx_qos_the_rest_is_still_checked(host):
    _, run = host
    r = run(path="/usr/bin:/bin")
    assert "SKIP  mlx5_0 trust / PFC" in r.stdout and "FAIL  mlx5_0 RDMA-CM default ToS" in r.stdout


def test_a_bad_argument_is_a_usage_error(host):
    _, run = host
    r = run("--bogus")
    assert r.returncode == 2 and "usage" in r.stderr
