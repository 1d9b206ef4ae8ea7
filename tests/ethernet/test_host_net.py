"""hosts/<hostname>/roce-net.sh: shellcheck-clean, and run for real (iproute2 and the kernel) in a network namespace
the test makes, on a veth standing in for the NIC: read-only it fails, --apply sets everything, then it passes."""

import itertools
import os
import shutil
import subprocess

import pytest

from ffplan.render import render_plan

IP = shutil.which("ip")
_names = itertools.count()


@pytest.fixture(scope="module")
def scripts(small_plan):
    return {p: t for p, t in render_plan(small_plan).items() if p.endswith("roce-net.sh")}


def test_one_script_per_host(scripts, small_plan):
    assert set(scripts) == {f"hosts/{n.hostname}/roce-net.sh" for n in small_plan.nodes}


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="needs shellcheck")
def test_shellcheck(scripts):
    for path, text in scripts.items():
        r = subprocess.run(["shellcheck", "-s", "bash", "-"], input=text, text=True, capture_output=True)
        assert r.returncode == 0, f"{path}: {r.stdout}"


@pytest.fixture
def namespace():
    """A network namespace of this test's own, with a veth pair (rnic0 stands in for mlx5_0's netdev); removed after."""
    if IP is None or os.geteuid() != 0:
        pytest.skip("needs root and iproute2 for a network namespace")
    name = f"ffplan-test-{os.getpid()}-{next(_names)}"
    made = subprocess.run([IP, "netns", "add", name], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot make a network namespace here: {made.stderr.strip()}")
    try:
        subprocess.run([IP, "-n", name, "link", "add", "rnic0", "type", "veth", "peer", "name", "rpeer0"], check=True)
        subprocess.run([IP, "-n", name, "link", "set", "rpeer0", "up"], check=True)
        yield name
    finally:
        subprocess.run([IP, "netns", "del", name], check=True)


def test_apply_in_a_namespace(scripts, small_plan, namespace, tmp_path):
    (tmp_path / "sys" / "class" / "infiniband" / "mlx5_0" / "device" / "net" / "rnic0").mkdir(parents=True)
    script = tmp_path / "roce-net.sh"
    script.write_text(scripts["hosts/gpu1/roce-net.sh"])
    interface = next(h for h in small_plan.ethernet.hosts if h.hostname == "gpu1")

    def run(*args):
        return subprocess.run(
            [IP, "netns", "exec", namespace, "env", f"FFPLAN_SYSFS={tmp_path / 'sys'}", "bash", str(script), *args],
            capture_output=True,
            text=True,
            timeout=60,
        )

    before = run()
    assert before.returncode == 1 and "FAIL mlx5_0 address" in before.stdout
    applied = run("--apply")
    assert applied.returncode == 0 and "FAIL" not in applied.stdout, applied.stdout + applied.stderr
    after = run()
    assert after.returncode == 0 and after.stdout.count("OK ") == 8 and "(set)" not in after.stdout
    rules = subprocess.run([IP, "-n", namespace, "rule"], capture_output=True, text=True).stdout
    assert f"from {interface.address.split('/')[0]} lookup {interface.table}" in rules
    routes = subprocess.run(
        [IP, "-n", namespace, "route", "show", "table", str(interface.table)], capture_output=True, text=True
    ).stdout
    assert f"{small_plan.ethernet.host_pool} via {interface.gateway} dev rnic0" in routes
    link = subprocess.run(
        [IP, "-n", namespace, "-o", "addr", "show", "dev", "rnic0"], capture_output=True, text=True
    ).stdout
    assert f"inet {interface.address} " in link


def test_a_bad_argument_is_a_usage_error(scripts, tmp_path):
    script = tmp_path / "roce-net.sh"
    script.write_text(scripts["hosts/gpu1/roce-net.sh"])
    r = subprocess.run(["bash", str(script), "--bogus"], capture_output=True, text=True)
    assert r.returncode == 2 and "usage" in r.stderr
