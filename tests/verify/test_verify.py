"""`ffplan verify` against the real OpenSM in ibsim: the planned fabric passes, and each kind of damage is
caught with a message that names the file, line, switch or key."""

from __future__ import annotations

import json
import re
import shutil
import time

import pytest
from typer.testing import CliRunner

from ffplan.cli.main import app
from ffplan.verify.run import verify
from tests.support.ibsim import sys_dirs
from tests.support.plans import designed

pytestmark = pytest.mark.integration


def _check(report, name):
    return next(c for c in report.checks if c.name == name)


def _failed(report) -> dict:
    return {c.name: c for c in report.checks if c.status == "fail"}


def test_lab_passes(lab_out, no_leftovers):
    report = verify(lab_out)
    assert report.ok, [(c.name, c.detail, c.items) for c in report.checks if c.status == "fail"]
    names = [c.name for c in report.checks if c.status == "pass"]
    for expected in (
        "config accepted (opensm.conf)",
        "config effective (opensm.conf)",
        "LFT file (lfts.dump)",
        "LID pinning (guid2lid)",
        "SUBNET UP",
        "cabling",
        "LIDs",
        "LFTs installed == plan",
        "every CA pair reachable",
        "every switch LID reachable",
        "SL2VL per port class",
        "VLArb per port class",
        "path SLs per traffic class",
        "OpenSM log: no errors",
        "OpenSM log: no fallback",
        "OpenSM log: routing engine",
    ):
        assert expected in names, expected
    assert "0 differences" in _check(report, "LFTs installed == plan").detail
    assert "not checkable in ibsim" in _check(report, "VLHighLimit").detail


def test_lab_from_plan_and_cli_json(lab_out, tmp_path, no_leftovers):
    result = CliRunner().invoke(
        app, ["verify", str(lab_out / "plan.yaml"), "--format", "json", "--keep", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["ok"] is True and "rendered to a temporary folder" in data["source"]
    assert data["timings"]["SUBNET UP s"] > 0
    assert sys_dirs(tmp_path) == []  # libumad2sim's sys-<pid> folders are cleaned even when the work folder is kept


@pytest.mark.parametrize("keep", ["new/sub", "rel"])
def test_keep_missing_or_relative_folder(lab_out, tmp_path, monkeypatch, keep, no_leftovers):
    """--keep DIR is created when missing (was a FileNotFoundError traceback) and may be relative to the current
    folder (the simulator, started in the work folder, could not find a relative ibsim.net: SUBNET UP failed)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rel").mkdir()
    result = CliRunner().invoke(app, ["verify", str(lab_out), "-q", "--keep", keep])
    assert result.exit_code == 0, result.output
    kept = list((tmp_path / keep).glob("ffplan-verify-*"))
    assert len(kept) == 1 and (kept[0] / "file" / "ibsim.net").is_file()


def test_keep_naming_a_file_is_a_usage_error(lab_out, tmp_path):
    (tmp_path / "f").write_text("")
    result = CliRunner().invoke(app, ["verify", str(lab_out), "-q", "--keep", str(tmp_path / "f")])
    assert result.exit_code == 2 and "--keep" in result.output and "Traceback" not in result.output


@pytest.mark.slow
def test_one_ff2_zone_passes(ff2_out, no_leftovers):
    started = time.monotonic()
    report = verify(ff2_out, zone="z1")
    elapsed = time.monotonic() - started
    assert report.ok, [(c.name, c.detail, c.items) for c in report.checks if c.status == "fail"]
    assert any("inter-zone" in line for line in report.excluded)
    ca_ports = sum(1 for n in designed("fire-flyer-2").nodes for p in n.ports if p.zone == "z1")
    pairs = ca_ports * (ca_ports - 1)  # ordered pairs of the zone's CA ports, each walked through the LFTs
    assert pairs == 784 * 783 and f"{pairs}/{pairs} pairs" in _check(report, "every CA pair reachable").detail
    print(f"\nverify FF2 zone z1: {elapsed:.1f} s; timings {report.timings}")


@pytest.mark.slow
def test_whole_ff2_under_60_s(ff2_out, no_leftovers):
    started = time.monotonic()
    report = verify(ff2_out)
    elapsed = time.monotonic() - started
    assert report.ok, [(c.name, c.detail, c.items) for c in report.checks if c.status == "fail"]
    print(f"\nverify FF2 (both zones): {elapsed:.1f} s; timings {report.timings}")
    assert elapsed < 60


# ------------------------------------------------------------------------------------------ damage


@pytest.fixture
def damaged(lab_out, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(lab_out, out)
    return out


def test_corrupted_lft_entry_is_caught(damaged, no_leftovers):
    lfts = damaged / "opensm" / "lfts.dump"
    lines = lfts.read_text().splitlines()
    # za-leaf01's entry for gpu03's LID: move it to another uplink (still a valid port).
    i = next(i for i, ln in enumerate(lines) if ln.startswith("Unicast lids") and "(za-leaf01)" in ln)
    gpu03 = next(p.lid for n in designed("lab").nodes if n.hostname == "gpu03" for p in n.ports if p.nic == "mlx5_0")
    j = next(k for k in range(i + 1, len(lines)) if lines[k].startswith(f"0x{gpu03:04x} "))
    lid, port = lines[j].split()[:2]
    new_port = 7 if int(port) != 7 else 8
    lines[j] = f"{lid} {new_port:03d}" + lines[j][len(lid) + 4 :]
    lfts.write_text("\n".join(lines) + "\n")
    report = verify(damaged)
    failed = _failed(report)
    assert set(failed) >= {"LFT file (lfts.dump)", "LFTs installed == plan"}, failed
    msg = f"za-leaf01 LID {int(lid, 16)} (gpu03 mlx5_0): plan port {int(port)}, "
    assert any(msg + f"lfts.dump port {new_port}" in item for item in failed["LFT file (lfts.dump)"].items)
    assert failed["LFTs installed == plan"].items == [msg + f"installed port {new_port}"]
    assert "1 differences" in failed["LFTs installed == plan"].detail


def test_invalid_port_fails_fast_with_the_line(damaged, no_leftovers):
    lfts = damaged / "opensm" / "lfts.dump"
    text = lfts.read_text()
    m = re.search(r"^(0x000d) (\d{3}) ", text, re.M)
    lfts.write_text(text[: m.start()] + "0x000d 045 " + text[m.end() :])
    started = time.monotonic()
    report = verify(damaged, timeout=30)
    assert time.monotonic() - started < 20, "no_fallback must be detected without waiting for the timeout"
    failed = _failed(report)
    assert any("port 45 > 8 ports" in item for item in failed["LFT file (lfts.dump)"].items)
    assert "OpenSM cannot route the fabric" in failed["SUBNET UP"].detail


def test_missing_switch_block_is_caught(damaged, no_leftovers):
    lfts = damaged / "opensm" / "lfts.dump"
    blocks = lfts.read_text().split("\n\n")
    kept = [b for b in blocks if "(za-leaf02):" not in b]
    assert len(kept) == len(blocks) - 1
    lfts.write_text("\n\n".join(kept))
    report = verify(damaged)
    failed = _failed(report)
    assert (
        "no block for switch za-leaf02 (guid 0x0002c90102000002): OpenSM would leave its LFT empty"
        in failed["LFT file (lfts.dump)"].items
    )
    assert any(
        item.startswith("za-leaf02: EMPTY table in installed") for item in failed["LFTs installed == plan"].items
    )
    assert "every CA pair reachable" in failed


def test_unknown_config_key_is_caught(damaged, no_leftovers):
    conf = damaged / "opensm" / "opensm.conf"
    text = conf.read_text()
    conf.write_text(text + "bogus_key 1\n")
    line = len(text.splitlines()) + 1
    report = verify(damaged)
    failed = _failed(report)
    assert list(failed) == ["config accepted (opensm.conf)"], failed
    assert failed["config accepted (opensm.conf)"].items == [
        f'opensm.conf line {line}: Unrecognized token: "bogus_key"'
    ]


def test_qos_true_spelling_is_caught(damaged, no_leftovers):
    conf = damaged / "opensm" / "opensm.conf"
    conf.write_text(conf.read_text().replace("qos TRUE", "qos true"))
    report = verify(damaged)
    failed = _failed(report)
    assert "qos: plan 'TRUE', effective 'FALSE'" in failed["config effective (opensm.conf)"].items


def test_cli_exit_codes(damaged, no_leftovers):
    conf = damaged / "opensm" / "opensm.conf"
    conf.write_text(conf.read_text() + "bogus_key 1\n")
    result = CliRunner().invoke(app, ["verify", str(damaged), "-q"])
    assert result.exit_code == 1
    assert "FAIL" in result.stdout and "bogus_key" in result.stdout


def _distinct_qos_plan():
    """The lab plan with a different SL2VL/VLArb set per port class, so a mix-up between classes shows."""
    from ffplan.plan.model import PortClassQos, VlArbEntry
    from tests.support.plans import designed

    plan = designed("lab")

    def pc(sl2vl, hi, lo):
        return PortClassQos(
            max_vls=8,
            high_limit=0,
            sl2vl=sl2vl,
            vlarb_high=[VlArbEntry(vl=v, weight=w) for v, w in hi],
            vlarb_low=[VlArbEntry(vl=v, weight=w) for v, w in lo],
        )

    classes = {
        "default": pc([0] * 16, [(0, 0)], [(0, 64)]),
        "ca": pc([0, 1, 2, 3] + [0] * 12, [(1, 32)], [(0, 64), (2, 192), (3, 128)]),
        "swe": pc([0, 1, 2, 3] + [1] * 12, [(2, 32)], [(0, 32), (1, 64), (3, 128)]),
        "sw0": pc([0, 0, 0, 0] + [2] * 12, [(3, 16)], [(0, 16)]),
    }
    return plan.model_copy(update={"qos": plan.qos.model_copy(update={"port_classes": classes})})


def test_qos_sets_per_port_class_are_told_apart(tmp_path, sim_tools, no_leftovers):
    from tests.support.ibsim import write_rendered

    out = write_rendered(tmp_path / "out", _distinct_qos_plan())
    report = verify(out)
    assert report.ok, [(c.name, c.detail, c.items) for c in report.checks if c.status == "fail"]
    conf = out / "opensm" / "opensm.conf"
    conf.write_text(conf.read_text().replace("qos_swe_sl2vl 0,1,2,3,1,", "qos_swe_sl2vl 0,1,2,3,2,"))
    failed = _failed(verify(out))
    assert (
        "qos_swe_sl2vl: plan '0,1,2,3,1,1,1,1,1,1,1,1,1,1,1,1', effective '0,1,2,3,2,1,1,1,1,1,1,1,1,1,1,1'"
        in failed["config effective (opensm.conf)"].items
    )
    items = failed["SL2VL per port class"].items
    assert items and all(item.startswith("swe ") for item in items)
    assert "VLArb per port class" not in failed


def test_design_render_verify_through_the_cli(tmp_path, sim_tools, no_leftovers):
    """The engineer's path: a plan folder, `ffplan render`, then `ffplan verify OUT` (the render carries its plan)."""
    from ffplan.plan.io import dump_plan
    from tests.support.plans import designed

    plan_dir = tmp_path / "plan"
    plan_dir.mkdir()
    (plan_dir / "plan.yaml").write_text(dump_plan(designed("lab")))
    runner = CliRunner()
    result = runner.invoke(app, ["render", str(plan_dir), "-o", str(tmp_path / "render"), "-q"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["verify", str(tmp_path / "render"), "-q"])
    assert result.exit_code == 0, result.output
    (tmp_path / "render" / "plan.yaml").unlink()
    result = runner.invoke(app, ["verify", str(tmp_path / "render"), "-q"])
    assert result.exit_code == 2 and "--plan" in result.stderr
    result = runner.invoke(app, ["verify", str(tmp_path / "render"), "--plan", str(plan_dir), "-q"])
    assert result.exit_code == 0, result.output
    assert "verify: all checks pass" in result.stdout
