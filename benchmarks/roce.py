"""Design and render of a 16,384-GPU dual-plane RoCE fabric: CPU time, wall time and peak memory of each command.

The inventory is inventories/roce-dual-plane.yaml scaled to 2,048 nodes (16,384 GPUs and NIC ports): per plane
128 leaves and 64 spines of SN5600 at 2 x 400G (the largest non-blocking two-tier Clos of 128-port switches),
8,192 NIC ports a plane. Each command is its own process (peak RSS is its own); the least CPU and fastest wall
time of the repeats are printed. Usage: python benchmarks/roce.py [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import FFPLAN, ROOT, measure  # noqa: E402

NODES = 2048


def inventory() -> dict:
    inv = yaml.safe_load((ROOT / "inventories" / "roce-dual-plane.yaml").read_text())
    inv["name"] = "roce-dual-plane-16k"
    inv["fabric"]["ports_per_zone"] = NODES * 8 // 2
    for plane, letter in zip(inv["fabric"]["planes"], "ab"):
        plane["leaf_racks"] = [f"net{letter}-{i}" for i in range(1, 17)]
        plane["spine_racks"] = [f"net{letter}-{i}" for i in range(17, 25)]
    inv["racks"] = [
        {"name": f"net{letter}-{i}", "row": row, "slot": i, "power_kw": 40, "cooling": "air"}
        for letter, row in (("a", 9), ("b", 26))
        for i in range(1, 25)
    ]
    inv["rack_blocks"] = [
        {
            "name": "r{row:02d}-{slot:02d}",
            "rows": [10, 25],
            "slots": [1, 32],
            "units": 42,
            "power_kw": 45,
            "cooling": "direct-liquid",
        }
    ]
    group = inv["groups"][0]
    group["count"] = NODES
    group["racks"] = [f"r{row:02d}-{slot:02d}" for row in range(10, 26) for slot in range(1, 33)]
    return inv


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        path = work / "roce-dual-plane-16k.yaml"
        path.write_text(yaml.safe_dump(inventory(), sort_keys=False))
        steps = [
            ("design", FFPLAN + ["design", str(path), "-o", str(work / "plan"), "-q", "--force"]),
            ("render", FFPLAN + ["render", str(work / "plan"), "-o", str(work / "out"), "-q", "--force"]),
        ]
        total_wall = 0.0
        print(f"{'stage':8} {'cpu s':>8} {'wall s':>8} {'peak MiB':>9}")
        for name, cmd in steps:
            cpu, wall, peak, code = measure(cmd, args.repeat)
            total_wall += wall
            print(f"{name:8} {cpu:8.2f} {wall:8.2f} {peak:9.0f}" + ("" if code == 0 else f"  exit {code}"))
        files = sum(1 for _ in (work / "out" / "sonic").rglob("*"))
        print(f"design + render: {total_wall:.2f} s wall; sonic/ holds {files} entries")


if __name__ == "__main__":
    main()
