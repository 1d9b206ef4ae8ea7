import pathlib
import subprocess

import pytest

from ffplan.design import design
from ffplan.inventory import load_inventory

ROOT = pathlib.Path(__file__).resolve().parents[2]
SMALL = ROOT / "tests" / "lint" / "roce-base.yaml"  # one zone: 2 leaves, 1 spine, 8 single-NIC nodes


@pytest.fixture(scope="session")
def small_plan():
    return design(load_inventory(SMALL))


@pytest.fixture(scope="session")
def dual_plane_plan():
    return design(load_inventory(ROOT / "inventories" / "roce-dual-plane.yaml"))


# mlnx_qos's report as MLNX_OFED prints it (the lines the script reads), from state files the test owns.
FAKE_MLNX_QOS = r"""#!/usr/bin/env bash
set -euo pipefail
[ "$1" = -i ] && [ "$2" = rnic0 ] || exit 1
if [ "$#" -eq 4 ]; then
  case "$3" in
    --trust) printf '%s\n' "$4" > "$FAKE_QOS/trust" ;;
    --pfc) printf '%s\n' "$4" > "$FAKE_QOS/pfc" ;;
    *) exit 1 ;;
  esac
  exit 0
fi
printf 'DCBX mode: OS controlled\nPriority trust state: %s\n' "$(cat "$FAKE_QOS/trust")"
printf 'PFC configuration:\n\tpriority    0   1   2   3   4   5   6   7\n\tenabled     %s   \n' \
  "$(tr ',' ' ' < "$FAKE_QOS/pfc" | sed 's/ /   /g')"
printf 'tc: 0 ratelimit: unlimited, tsa: vendor\n'
"""
FAKE_IBV_DEVINFO = """#!/usr/bin/env bash
printf 'hca_id:\\t%s\\n\\tmax_cqe:\\t\\t\\t4194303\\n' "$4"
"""


@pytest.fixture
def roce_host(tmp_path):
    """A host the test makes, for a rendered host script: one NIC (mlx5_0 at 0000:21:00.0, netdev rnic0, 400G, MTU
    9000, its 4 interrupts on NUMA node 0) at driver defaults (trust pcp, no PFC, ToS 0, ECN off, CNP priority 0)
    with one drifted DCQCN value (rpg_min_dec_fac 30), and mlnx_qos / ibv_devinfo stand-ins. Returns
    (root, run(script_text, *args, path=...))."""
    from ffplan.ethernet.qos import DCQCN_DEFAULTS

    sys = tmp_path / "sys"
    (sys / "class/infiniband/mlx5_0/device/net/rnic0").mkdir(parents=True)
    values = {
        "roce_np/enable/3": 0,
        "roce_rp/enable/3": 0,
        "roce_np/enable/0": 0,
        "roce_np/cnp_dscp": 48,
        "roce_np/cnp_802p_prio": 0,
    } | {f"roce_rp/{name}": value for name, value in DCQCN_DEFAULTS}
    values["roce_rp/rpg_min_dec_fac"] = 30
    values = {f"class/net/rnic0/ecn/{k}": v for k, v in values.items()} | {
        "class/net/rnic0/operstate": "up",
        "class/net/rnic0/speed": 400000,
        "class/net/rnic0/mtu": 9000,
        "devices/system/node/node0/cpumap": "00000000,ffffffff,00000000,ffffffff",
        "devices/system/node/node1/cpumap": "ffffffff,00000000,ffffffff,00000000",
        "module/nvidia_peermem/refcnt": 1,
    }
    pci = {"0000:01:00.0": ("0x030200", "0x10de", "0x20f1"), "0000:21:00.0": ("0x020000", "0x15b3", "0x101b")}
    for bdf, (cls, vendor, device) in pci.items():
        values |= {
            f"bus/pci/devices/{bdf}/{k}": v
            for k, v in {
                "class": cls,
                "vendor": vendor,
                "device": device,
                "current_link_speed": "16.0 GT/s PCIe",
                "max_link_speed": "16.0 GT/s PCIe",
                "current_link_width": 16,
                "numa_node": 0,
            }.items()
        }
    for rel, value in values.items():
        (sys / rel).parent.mkdir(parents=True, exist_ok=True)
        (sys / rel).write_text(f"{value}\n")
    (sys / "bus/pci/devices/0000:21:00.0/msi_irqs").mkdir()
    for irq in range(40, 44):
        (sys / f"bus/pci/devices/0000:21:00.0/msi_irqs/{irq}").write_text("msix\n")
        (tmp_path / f"proc/irq/{irq}").mkdir(parents=True)
        (tmp_path / f"proc/irq/{irq}/smp_affinity").write_text("00000000,00000001\n")
    tos = tmp_path / "cfg/rdma_cm/mlx5_0/ports/1/default_roce_tos"
    tos.parent.mkdir(parents=True)
    tos.write_text("0\n")
    qos = tmp_path / "qos"
    qos.mkdir()
    (qos / "trust").write_text("pcp\n")
    (qos / "pfc").write_text("0,0,0,0,0,0,0,0\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool, text in (("mlnx_qos", FAKE_MLNX_QOS), ("ibv_devinfo", FAKE_IBV_DEVINFO)):
        (bin_dir / tool).write_text(text)
        (bin_dir / tool).chmod(0o755)

    def run(script, *args, path=f"{bin_dir}:/usr/bin:/bin"):
        (tmp_path / "script.sh").write_text(script)
        env = {
            "PATH": path,
            "FFPLAN_SYSFS": str(sys),
            "FFPLAN_PROC": str(tmp_path / "proc"),
            "FFPLAN_CONFIGFS": str(tmp_path / "cfg"),
            "FAKE_QOS": str(qos),
        }
        return subprocess.run(
            ["bash", str(tmp_path / "script.sh"), *args], capture_output=True, text=True, env=env, timeout=60
        )

    return tmp_path, run
