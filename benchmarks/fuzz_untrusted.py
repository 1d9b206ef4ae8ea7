"""A fresh adversarial run over what ffplan reads and writes (issue 26): hostile plans and inventories (explicit
YAML tags, alias bombs, deep nesting, merge and repeated keys, node floods) through every reader, and user files
in and beside output folders through render and design. Each case runs in a forked child, so a crash, a hang or
memory cannot hide: the parent records its exit, its peak memory (wait4) and whether it printed a traceback.

Usage: python benchmarks/fuzz_untrusted.py [--cases N] [--folders M] [--seed S]
Prints one line per failing case and a summary: tracebacks, runs over 2 GB, runs over the time limit, lost user files.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ffplan.cli.main import run as ffplan_main  # noqa: E402  (imported before forking: each child starts warm)
from ffplan.design import design  # noqa: E402
from ffplan.inventory import load_inventory  # noqa: E402
from ffplan.plan import dump_plan  # noqa: E402

LIMIT_BYTES = 2 * 1024**3
TIME_LIMIT_S = 120
TAGS = [
    "!!timestamp",
    "!!int",
    "!!float",
    "!!bool",
    "!!binary",
    "!!null",
    "!!str",
    "!!map",
    "!!seq",
    "!!omap",
    "!!set",
    "!custom",
    "!!python/object/apply:os.system",
    "!",
]
TAG_VALUES = [None, "''", "x", ":1:2", "2001-02-30", "-", "0x", "1e999", "[1, 2]", "{a: 1}"]


def run_child(argv: list[str], cwd: Path, log: Path) -> tuple[int, float, float]:
    """(exit status, peak MiB, seconds) of `ffplan ARGV` in a forked child, its output in `log`."""
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: ffplan's own entry point, output to the log
        try:
            fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.chdir(cwd)
            signal.alarm(TIME_LIMIT_S)
            sys.argv = ["ffplan", *argv]
            ffplan_main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:  # noqa: BLE001  (what the parent counts as a traceback)
            import traceback

            traceback.print_exc()
            code = 70
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    _, status, usage = os.wait4(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return code, usage.ru_maxrss / 1024, time.monotonic() - start


# ---------------------------------------------------------------------------------------------- hostile YAML


def _bomb(levels: int, width: int, indent: str) -> str:
    rows = [f"{indent}- &a0 [" + ", ".join(["lol"] * width) + "]"]
    rows += [f"{indent}- &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(rows)


def mutate(text: str, rng: random.Random) -> tuple[str, str]:
    """One hostile change of a YAML document's text: (new text, what was done)."""
    lines = text.split("\n")
    scalars = [i for i, line in enumerate(lines) if re.match(r"^\s*(- )?[A-Za-z_][\w-]*: [^\s\[{&*!|>]", line)]
    kind = rng.choice(["tag", "tag", "tag", "alias-bomb", "depth", "merge", "duplicate", "flood", "anchor-cycle"])
    i = rng.choice(scalars)
    key, _, value = lines[i].partition(": ")
    if kind == "tag":
        tag, new = rng.choice(TAGS), rng.choice(TAG_VALUES)
        lines[i] = f"{key}: {tag} {value if new is None else new}"
        return "\n".join(lines), f"tag line {i + 1}: {lines[i].strip()[:60]}"
    if kind == "alias-bomb":
        levels = rng.randint(3, 12)
        lines[i] = f"{key}: *a{levels - 1}"
        return f"bomb:\n{_bomb(levels, 10, '  ')}\n" + "\n".join(lines), f"alias bomb 10^{levels} at line {i + 1}"
    if kind == "depth":
        depth = rng.choice([8, 31, 33, 100, 492, 999, 5000])
        lines[i] = f"{key}: " + "[" * depth + "1" + "]" * depth
        return "\n".join(lines), f"nesting {depth} at line {i + 1}"
    if kind == "merge":
        lines[i] = f"{key}: {{<<: {rng.choice(['5', '[1]', '*nosuch', '{a: 1}'])}, x: 1}}"
        return "\n".join(lines), f"merge key at line {i + 1}"
    if kind == "duplicate":
        lines.insert(i + 1, lines[i])
        return "\n".join(lines), f"duplicate key at line {i + 1}"
    if kind == "anchor-cycle":
        lines[i] = f"{key}: &c [1, *c]"
        return "\n".join(lines), f"self-referencing alias at line {i + 1}"
    entries = rng.choice([10_000, 1_000_000, 4_500_000])
    return text + "\nflood:\n" + "- 1\n" * entries, f"flood of {entries:,} scalars"


def hostile_yaml(cases: int, rng: random.Random, work: Path, plan_text: str, inventory_text: str) -> list[dict]:
    results = []
    plan_commands = [
        ["render", "PLAN", "-o", "OUT", "-q"],
        ["analyze", "PLAN"],
        ["diff", "PLAN", "PLAN"],
        ["report", "cost", "PLAN/plan.yaml"],
        ["audit", "PLAN", "FABRIC"],
    ]
    inventory_commands = [
        ["lint", "INV"],
        ["design", "INV", "-o", "OUT", "-q"],
        ["report", "cost", "INV"],
        ["lint", "INV", "--config", "CONFIG"],
        ["report", "cost", "GOOD", "--catalog", "INV"],
    ]
    for n in range(cases):
        case = work / f"y{n}"
        case.mkdir()
        on_plan = rng.random() < 0.6
        text, what = mutate(plan_text if on_plan else inventory_text, rng)
        plan_dir = case / "plan"
        plan_dir.mkdir()
        (plan_dir / "plan.yaml").write_text(text)
        (case / "inv.yaml").write_text(text)
        (case / "fabric.txt").write_text("")
        (case / "good.yaml").write_text(inventory_text)
        argv = rng.choice(plan_commands if on_plan else inventory_commands)
        places = {
            "PLAN": "plan",
            "PLAN/plan.yaml": "plan/plan.yaml",
            "OUT": "out",
            "FABRIC": "fabric.txt",
            "INV": "inv.yaml",
            "CONFIG": "inv.yaml",
            "GOOD": "good.yaml",
        }
        argv = [places.get(a, a) for a in argv]
        code, peak, seconds = run_child(argv, case, case / "log.txt")
        log = (case / "log.txt").read_text(errors="replace")
        results.append(
            {
                "case": f"y{n}",
                "what": what,
                "argv": " ".join(argv),
                "code": code,
                "peak": peak,
                "s": seconds,
                "traceback": "Traceback" in log or code == 70,
                "half": code == 2 and (case / "out").exists(),
            }
        )
        shutil.rmtree(case)
    return results


# ---------------------------------------------------------------------------------------------- user files


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def user_files(cases: int, rng: random.Random, work: Path, plan_dir: Path) -> list[dict]:
    results = []
    for n in range(cases):
        case = work / f"u{n}"
        case.mkdir()
        out = case / "out"
        code, _, _ = run_child(["render", str(plan_dir), "-o", str(out), "-q"], case, case / "first.txt")
        assert code == 0, (case / "first.txt").read_text()
        mine: dict[Path, str | None] = {}  # user paths -> content digest (None: a folder)
        for k in range(rng.randint(1, 6)):
            where = rng.choice(["inside", "nested", "empty-folder", "sibling-old", "sibling-new", "sibling-odd"])
            token = "".join(rng.choice("0123456789abcdef") for _ in range(12))
            path = {
                "inside": out / f"note{k}.txt",
                "nested": out / "opensm" / f"mine{k}.txt",
                "empty-folder": out / f"keep{k}" / "empty",
                "sibling-old": case / f".out.old-{token}" / "prev" / "x.txt",
                "sibling-new": case / f".out.new-{token}" / "y.txt",
                "sibling-odd": case / f".out.old-backup{k}" / "z.txt",
            }[where]
            if where == "empty-folder":
                path.mkdir(parents=True, exist_ok=True)
                mine[path] = None
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"user data {n} {k}\n")
                mine[path] = _digest(path)
        if (
            rng.random() < 0.3
        ):  # the output folder gone (a kill between renames): recovery must not take a user's folder
            shutil.rmtree(out)
            mine = {p: d for p, d in mine.items() if out not in p.parents}  # removed by this test, not by ffplan
        argv = ["render", str(plan_dir), "-o", str(out), "-q"] + (["--force"] if rng.random() < 0.5 else [])
        code, peak, seconds = run_child(argv, case, case / "log.txt")
        lost = [
            str(p.relative_to(case))
            for p, digest in mine.items()
            if (not p.is_dir() if digest is None else not p.is_file() or _digest(p) != digest)
        ]
        log = (case / "log.txt").read_text(errors="replace")
        results.append(
            {
                "case": f"u{n}",
                "what": f"{len(mine)} user paths",
                "argv": " ".join(argv[:1] + argv[3:]),
                "code": code,
                "peak": peak,
                "s": seconds,
                "traceback": "Traceback" in log or code == 70,
                "lost": lost,
                "half": False,
            }
        )
        shutil.rmtree(case)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--folders", type=int, default=60)
    parser.add_argument("--seed", type=int, default=26)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="ffplan-fuzz-") as tmp:
        work = Path(tmp)
        plan_dir = work / "lab-plan"
        plan_dir.mkdir()
        plan_text = dump_plan(design(load_inventory(ROOT / "inventories" / "lab.yaml")))
        (plan_dir / "plan.yaml").write_text(plan_text)
        inventory_text = (ROOT / "inventories" / "lab.yaml").read_text()
        results = hostile_yaml(args.cases, rng, work, plan_text, inventory_text)
        results += user_files(args.folders, rng, work, plan_dir)
    bad = 0
    for r in results:
        problems = [
            p
            for p, hit in (
                ("traceback", r["traceback"]),
                ("over 2 GB", r["peak"] * 2**20 > LIMIT_BYTES),
                (f"over {TIME_LIMIT_S} s", r["s"] > TIME_LIMIT_S),
                ("half-written output", r["half"]),
                ("lost user files", bool(r.get("lost"))),
            )
            if hit
        ]
        if problems:
            bad += 1
            print(
                f"{r['case']}: {', '.join(problems)}: {r['what']} | ffplan {r['argv']} -> exit {r['code']} "
                f"{r['peak']:.0f} MiB {r['s']:.1f} s {r.get('lost', '')}"
            )
    yaml_cases = [r for r in results if r["case"].startswith("y")]
    print(
        f"{len(yaml_cases)} hostile YAML cases, {len(results) - len(yaml_cases)} output-folder cases (seed {args.seed}): "
        f"{sum(r['traceback'] for r in results)} tracebacks, "
        f"{sum(r['peak'] * 2**20 > LIMIT_BYTES for r in results)} runs over 2 GB "
        f"(largest {max(r['peak'] for r in results):.0f} MiB), "
        f"{sum(r['s'] > TIME_LIMIT_S for r in results)} over {TIME_LIMIT_S} s (longest {max(r['s'] for r in results):.1f} s), "
        f"{sum(len(r.get('lost', [])) for r in results)} lost user files, {sum(r['half'] for r in results)} half-written outputs; "
        f"exit codes {sorted({r['code'] for r in results})}"
    )
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
