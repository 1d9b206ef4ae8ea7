"""`run.py`'s stages of one inventory on two checkouts of ffplan, run interleaved so that both share the machine's
load: the least CPU time (user + sys) of the repeats and the largest peak RSS of each stage, per checkout, and
whether the two designed plan.yaml are byte-identical. Each checkout runs its own code (`python -m ffplan` with the
checkout as working folder and PYTHONPATH) in this interpreter. Usage:
python benchmarks/compare.py BASE_CHECKOUT [--repeat N] [--inventory inventories/fire-flyer-2.yaml]
(`git worktree add --detach /tmp/base COMMIT` makes a checkout of an older commit.)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import ROOT, stages  # noqa: E402


def run_once(cmd: list[str], checkout: Path) -> tuple[float, float, int]:
    """(CPU s, peak RSS MiB, exit code) of `cmd` run with `checkout`'s ffplan."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    proc = subprocess.Popen(cmd, cwd=checkout, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("base", type=Path, help="the other checkout (compared with this one)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--inventory", default="inventories/fire-flyer-2.yaml", help="relative to each checkout")
    args = parser.parse_args()
    checkouts = {"base": args.base.resolve(), "this": ROOT}
    with tempfile.TemporaryDirectory(prefix="ffplan-compare-") as tmp:
        plans = {}
        for name, checkout in checkouts.items():
            (Path(tmp) / name).mkdir()
            plans[name] = stages(checkout / args.inventory, Path(tmp) / name)
        print(f"{'stage':<8} {'base CPU s':>10} {'MiB':>7} {'this CPU s':>10} {'MiB':>7}  exit")
        for index, (stage, _) in enumerate(plans["this"]):
            cpus: dict[str, list[float]] = {name: [] for name in checkouts}
            peaks = dict.fromkeys(checkouts, 0.0)
            codes: dict[str, set[int]] = {name: set() for name in checkouts}
            for _ in range(args.repeat):
                for name, checkout in checkouts.items():  # interleaved: both versions see the same load
                    cmd = plans[name][index][1]
                    cpu, peak, code = run_once(cmd() if callable(cmd) else cmd, checkout)
                    cpus[name].append(cpu)
                    peaks[name] = max(peaks[name], peak)
                    codes[name].add(code)
            print(
                f"{stage:<8} {min(cpus['base']):>10.2f} {peaks['base']:>7.1f} {min(cpus['this']):>10.2f}"
                f" {peaks['this']:>7.1f}  {sorted(codes['base'])}/{sorted(codes['this'])}",
                flush=True,
            )
        stem = Path(args.inventory).stem
        same = all(
            (Path(tmp) / name / f"{stem}-plan" / "plan.yaml").read_bytes()
            == (Path(tmp) / "this" / f"{stem}-plan" / "plan.yaml").read_bytes()
            for name in checkouts
        )
        print(f"plan.yaml byte-identical: {same}")


if __name__ == "__main__":
    main()
