"""The failure sweep (`ffplan analyze --sweep`): every single cable and spine, random multi-cable cases."""

from __future__ import annotations

import json
import os
import re
import socket

import pytest
from typer.testing import CliRunner

from ffplan.analyze.sweep import SweepState, run_sweep, sweep_cases
from ffplan.cli.main import app
from ffplan.plan.topology import build_topology


def test_cases_cover_every_cable_and_spine_and_random_is_seeded(lab_plan):
    topo = build_topology(lab_plan)
    cases = sweep_cases(topo, random_cases=4, cables_per_case=2, seed=7)
    cables = [c for c in cases if c[0].startswith("cable")]
    assert len(cables) == sum(1 for kind, _, _ in topo.by_label.values() if kind == "leaf-spine")
    assert [c for c in cases if c[0].startswith("spine")] == [
        (f"spine {s}", [s]) for z in topo.zones for s in topo.spines[z]
    ]
    # the links between zones fail too (the old sweep had no such case)
    inter_zone = sorted(label for label, (kind, _, _) in topo.by_label.items() if kind == "inter-zone")
    assert len(inter_zone) == 2 and [c for c in cases if c[0].startswith("inter-zone")] == [
        (f"inter-zone {c}", [c]) for c in inter_zone
    ]
    randoms = [c for c in cases if c[0].startswith("random")]
    assert len(randoms) == 4 and all(len(f) == 2 for _, f in randoms)
    assert randoms == [c for c in sweep_cases(topo, 4, 2, 7) if c[0].startswith("random")]  # same seed, same cases


def test_lab_sweep_keeps_everything_reachable_and_deadlock_free(lab_plan):
    result = run_sweep(lab_plan, random_cases=2, cables_per_case=2, seed=1)
    assert result.intact.routes_changed == 0 and result.intact.patterns["B"].unroutable == 0
    for case in result.cases:
        assert case.deadlock_free and case.routes_changed > 0, case.case
        if case.case.startswith("spine zb"):
            # the later zone's last spine is homed at one linked leaf: the other linked leaf cannot reach its 9 ports
            # without a down-then-up turn that would close a cycle through both zones (docs/routing.md, section 3)
            assert case.unreachable_ca_pairs == 9, case.case
            continue
        assert case.unreachable_ca_pairs == 0 and case.unreachable_switch_lids == 0, case.case
        assert all(p.unroutable == 0 and p.max_load >= p.bound for p in case.patterns.values()), case.case
    summary = result.summary()
    assert set(summary) == {"cable", "inter-zone", "spine", "random"} and summary["spine"]["cases"] == 4
    assert summary["inter-zone"]["cases"] == 2 and summary["inter-zone"]["cases_with_unreachable"] == 0


def test_sweep_cli_json(tmp_path, lab_plan):
    from tests.support.plans import write_plan

    write_plan(lab_plan, tmp_path / "plan.yaml")
    res = CliRunner().invoke(app, ["analyze", str(tmp_path), "--sweep", "--random", "1", "-q", "-f", "json", "-j", "1"])
    data = json.loads(res.output)
    assert set(data["patterns"]) == {"A", "B", "C", "X"} and data["summary"]["random"]["cases"] == 1
    assert data["cases"][0]["case"].startswith("cable ") and "ratio" in data["cases"][0]["patterns"]["A"]
    # seed 0 takes both uplinks of zb-leaf03 (a lab leaf has two): its ports are cut off from their zone's spines,
    # which the sweep reports, with exit code 1
    lost = data["cases"][-1]
    assert lost["failed"] == ["za-leaf01-p07", "zb-leaf03-p05", "zb-leaf03-p07"] and lost["unreachable_ca_pairs"] > 0
    assert res.exit_code == 1 and all(c["deadlock_free"] for c in data["cases"])


def test_sweep_refuses_options_it_does_not_use(tmp_path, lab_plan):
    from tests.support.plans import write_plan

    write_plan(lab_plan, tmp_path / "plan.yaml")
    res = CliRunner().invoke(app, ["analyze", str(tmp_path), "--sweep", "--pattern", "ring"])
    assert res.exit_code == 2 and "--sweep" in res.output


def _sweep_cli(plan_dir, *extra):
    return CliRunner().invoke(
        app,
        [
            "analyze",
            str(plan_dir),
            "--sweep",
            "--random",
            "3",
            "--cables",
            "2",
            "--seed",
            "5",
            "-q",
            "-f",
            "json",
            *extra,
        ],
    )


@pytest.fixture
def lab_dir(tmp_path, lab_plan):
    from tests.support.plans import write_plan

    write_plan(lab_plan, tmp_path / "plan" / "plan.yaml")
    return tmp_path / "plan"


def test_a_local_dask_cluster_gives_the_single_process_sweep_byte_for_byte(lab_dir, tmp_path):
    """Two worker processes of a LocalCluster finish chunks in any order; the report is the same bytes, and the
    results file holds every case once."""
    one = _sweep_cli(lab_dir, "-j", "1", "--html", str(tmp_path / "one.html"))
    two = _sweep_cli(
        lab_dir, "-j", "2", "--results", str(tmp_path / "results.jsonl"), "--html", str(tmp_path / "two.html")
    )
    assert one.exit_code == two.exit_code == 1  # the lab's seed-5 random cases cut a leaf off (see above)
    assert two.stdout == one.stdout
    assert (tmp_path / "two.html").read_bytes() == (tmp_path / "one.html").read_bytes()
    lines = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    cases = json.loads(one.stdout)["cases"]
    assert lines[0]["plan_sha256"] and len(lines) == 1 + 1 + len(cases)  # header, intact, cases
    assert sorted(r["case"] for r in lines[1:]) == sorted(["intact"] + [c["case"] for c in cases])


def test_a_resumed_sweep_measures_only_the_cases_left(lab_dir, tmp_path, monkeypatch):
    """A sweep stopped mid-way (its results file cut inside a line) and run again measures only the cases that are
    not in the file, and reports what an uninterrupted sweep does."""
    results = tmp_path / "results.jsonl"
    full = _sweep_cli(lab_dir, "-j", "1", "--results", str(results))
    lines = results.read_bytes().splitlines(keepends=True)
    results.write_bytes(b"".join(lines[:8]) + lines[8][:30])  # header, 7 cases and a line cut short
    measured: list[str] = []
    measure = SweepState.measure
    monkeypatch.setattr(
        SweepState, "measure", lambda self, cases: measured.extend(n for n, _ in cases) or measure(self, cases)
    )
    again = _sweep_cli(lab_dir, "-j", "1", "--results", str(results))
    assert again.stdout == full.stdout and again.exit_code == full.exit_code
    assert len(measured) == len(lines) - 8 and not {json.loads(line)["case"] for line in lines[1:8]} & set(measured)
    assert sorted(results.read_bytes().splitlines()) == sorted(b"".join(lines).splitlines())  # each case once
    measured.clear()
    assert _sweep_cli(lab_dir, "-j", "1", "--results", str(results)).stdout == full.stdout and measured == []


def test_a_results_file_of_another_plan_or_damaged_is_refused_at_its_line(lab_dir, tmp_path):
    results = tmp_path / "results.jsonl"
    _sweep_cli(lab_dir, "-j", "1", "--only-random", "--results", str(results))
    text = results.read_text().splitlines()
    results.write_text("\n".join([text[0], text[1], "{not json", *text[2:]]) + "\n")
    res = _sweep_cli(lab_dir, "-j", "1", "--results", str(results))
    assert res.exit_code == 2 and f"{results}:3:1: error FF905 damaged results line" in res.stderr
    results.write_text(text[0].replace('"plan_sha256":"', '"plan_sha256":"0') + "\n")
    res = _sweep_cli(lab_dir, "-j", "1", "--results", str(results))
    assert (
        res.exit_code == 2 and "FF905 these results are of another plan" in res.stderr and "Traceback" not in res.output
    )
    # results of another build of ffplan (a changed router): the old header reused them; now they are refused
    results.write_text(text[0].replace('"code_sha256":"', '"code_sha256":"0') + "\n")
    res = _sweep_cli(lab_dir, "-j", "1", "--results", str(results))
    assert res.exit_code == 2 and "FF905 these results were measured by another build" in res.stderr
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    res = _sweep_cli(lab_dir, "-j", "1", "--results", str(fifo))
    assert res.exit_code == 2 and "FF003" in res.stderr and "not a regular file" in res.stderr


def test_an_unreachable_scheduler_is_a_located_error(lab_dir, monkeypatch):
    from ffplan.analyze import sweep_cluster

    monkeypatch.setattr(sweep_cluster, "CONNECT_TIMEOUT", "1s")
    with socket.socket() as s:  # a port of this machine that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    res = _sweep_cli(lab_dir, "--scheduler", f"tcp://127.0.0.1:{port}")
    assert (
        res.exit_code == 2 and "FF905 cannot reach the Dask scheduler" in res.stderr and "[--scheduler]" in res.stderr
    )


def test_the_sweeps_html_report_shows_the_distribution_and_the_worst_cases(lab_dir, tmp_path):
    page = tmp_path / "reports" / "sweep.html"
    res = _sweep_cli(lab_dir, "-j", "1", "--html", str(page))
    data = json.loads(res.stdout)
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and f"wrote {page}" in res.stderr
    assert html.count("<svg") == 1 and 'id="chart-sweep"' in html
    for name in "ABCX":  # a panel per pattern, with the intact ratio it is measured against
        intact = data["intact"]["patterns"][name]["ratio"]
        assert f"{name}: busiest link / lower bound (intact {intact:.2f})" in html
    rows = re.findall(r"<tr><td>([ABCX])</td><td>([^<]*)</td><td class=\"num\">(\d+)</td>", html)
    assert len(rows) == 4 * 10
    worst_a = max(data["cases"], key=lambda c: c["patterns"]["A"]["ratio"])["patterns"]["A"]
    assert rows[0][0] == "A" and int(rows[0][2]) == worst_a["max"]
    assert (page.stat().st_mode & 0o777) == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_local_workers_keep_glibcs_malloc_thresholds(monkeypatch):
    """Dask's default MALLOC_TRIM_THRESHOLD_ fixes glibc's mmap threshold too, so a worker maps and unmaps every
    numpy array over 128 KiB afresh (Fire-Flyer 2's sweep: 1.3-1.5 x the wall of one process); the sweep's own
    cluster leaves glibc's dynamic thresholds alone."""
    from ffplan.analyze.sweep_cluster import local_cluster

    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    with local_cluster(1) as client:
        seen = client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_"))
    assert list(seen.values()) == [None]
