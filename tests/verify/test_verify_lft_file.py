"""verify's static check of the rendered LFT file (read in one pass into arrays): each kind of problem is
reported with its file line, and the rendered file passes."""

from __future__ import annotations

from ffplan.opensm import build_fabric
from ffplan.opensm.files import opensm_files
from ffplan.opensm import layout as L
from ffplan.verify.report import Report
from ffplan.verify.static import check_lft_file


def _check(fab, text: str):
    report = Report(target="", source="", view="", engine="file", excluded=[])
    check_lft_file(report, fab, text)
    return report.checks[0]


def _line(lines: list[str], prefix: str, after: int = 0) -> int:
    """Index of the first line starting with `prefix` after index `after`."""
    return next(i for i, ln in enumerate(lines) if i >= after and ln.startswith(prefix))


def test_rendered_lft_file_passes_and_each_problem_names_its_line(lab_plan):
    fab = build_fabric(lab_plan)
    text = opensm_files(lab_plan)[L.LFTS]
    ok = _check(fab, text)
    entries = sum(1 for ln in text.splitlines() if ln.startswith("0x"))
    assert ok.status == "pass" and ok.detail == f"12/12 switch blocks, {entries} entries, 0 differ from the plan"

    lines = text.splitlines()
    head = _line(lines, "Unicast lids")
    next_head = _line(lines, "Unicast lids", head + 1)
    dup = lines[head:next_head]  # za-spine01's block again, unchanged
    foreign = [lines[head].replace("0x0002c90101000001", "0x00000000deadbeef")] + lines[head + 5 : head + 7]
    planned = next(lft.ports[1] for lft in lab_plan.routing.lfts if lft.switch == "za-spine02")
    wrong = 1 if planned != 1 else 2
    lines[next_head + 1] = f"0x0001 {wrong:03d} : (Switch portguid 0x0002c90101000001: 'za-spine01')"  # a difference
    second = head + 2  # LID 2 names another switch's port GUID, no portguid on LID 3
    lines[second] = lines[second].replace("0x0002c90101000002", "0x0002c90102000001")
    lines[head + 3] = lines[head + 3].split(" portguid ")[0]
    lines[head + 4] = "0xzz 001"  # junk
    lines += [""] + dup + [""] + foreign
    check = _check(fab, "\n".join(lines) + "\n")
    assert check.status == "fail"
    items = check.items
    assert (
        f"{L.LFTS} line {len(lines) - len(foreign) - len(dup)}: second block for the same switch: "
        f"{dup[0][:80]}" in items
    )
    assert f"{L.LFTS} line {head + 5}: not an entry OpenSM can read: '0xzz 001'" in items
    assert (
        f"{L.LFTS} line {len(lines) - 2}: switch guid 0x00000000deadbeef is not in the fabric (OpenSM skips it)"
        in items
    )
    assert any(
        i.startswith(
            f"{L.LFTS} line {second + 1}: LID 2 names portguid 0x0002c90102000001, the plan gives it to za-spine02"
        )
        for i in items
    )
    assert "1 entries carry no 'portguid 0x...' (OpenSM cannot remap them if a LID moves)" in items
    assert f"za-spine02 LID 1 (za-spine01): plan port {planned}, lfts.dump port {wrong}" in items
    assert check.detail.startswith("13/12 switch blocks")
    assert "1 differ from the plan" in check.detail


def test_missing_block_and_port_beyond_the_radix(lab_plan):
    fab = build_fabric(lab_plan)
    lines = opensm_files(lab_plan)[L.LFTS].splitlines()
    head = _line(lines, "Unicast lids")
    next_head = _line(lines, "Unicast lids", head + 1)
    lines[next_head + 1] = "0x0001 045 : (Switch portguid 0x0002c90101000001: 'za-spine01')"
    del lines[head:next_head]
    items = _check(fab, "\n".join(lines) + "\n").items
    assert "no block for switch za-spine01 (guid 0x0002c90101000001): OpenSM would leave its LFT empty" in items
    assert any(
        f"line {next_head + 2 - (next_head - head)}: za-spine02 LID 1 (za-spine01) port 45 > " in i for i in items
    )
    assert not any(i.startswith("za-spine01 LID") for i in items)  # a missing block is named once, not per entry
