"""The IPoIB broadcast group as the real OpenSM creates it from the rendered partitions.conf, read back with
`saquery -g` in ibsim: rate and MTU are the plan's (OpenSM's default rate 3 = 10 Gb/s applied before)."""

from __future__ import annotations

import re
import shutil

import pytest

from ffplan.opensm import View, build_fabric
from ffplan.opensm.files import IB_RATE_CODE
from ffplan.opensm.layout import CONF, GUID2LID, TOPOLOGY
from ffplan.render.opensm import render_opensm
from ffplan.verify.boot import rewrite_paths
from ffplan.verify.sim import Simulation, ToolsMissing, find_tools

IPOIB_BROADCAST_MGID = "ff12:401b:ffff::ffff:ffff"


def test_partitions_conf_sets_the_broadcast_rate_of_the_fabric_speed(lab_plan, ff2_plan):
    for plan in (lab_plan, ff2_plan):  # both HDR: 4x HDR = 200 Gb/s = rate code 17 (IB rate enum)
        text = render_opensm(plan)["opensm/partitions.conf"]
        assert "Default=0x7fff, ipoib, rate=17, mtu=4, defmember=full : ALL=full ;" in text.splitlines()
    assert IB_RATE_CODE == {"EDR": (100, 16), "HDR": (200, 17), "NDR": (400, 21), "XDR": (800, 23)}


def _broadcast_group(saquery_g: str) -> dict[str, str]:
    """The MCMemberRecord of the IPoIB broadcast group in `saquery -g` output (`Field....value` lines)."""
    for record in saquery_g.split("MCMemberRecord group dump:")[1:]:
        fields = dict(re.findall(r"^\s*(\w+)\.*(\S+)\s*$", record, re.M))
        if fields.get("MGID") == IPOIB_BROADCAST_MGID:
            return fields
    raise AssertionError(f"no IPoIB broadcast group {IPOIB_BROADCAST_MGID} in:\n{saquery_g}")


@pytest.mark.integration
def test_opensm_creates_the_broadcast_group_with_the_planned_rate(lab_plan, tmp_path):
    try:
        tools = find_tools()
    except ToolsMissing as exc:
        pytest.skip(str(exc))
    files = {name.split("/", 1)[1]: text for name, text in render_opensm(lab_plan).items()}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "run.conf").write_text(rewrite_paths(files[CONF], tmp_path))
    cache = tmp_path / "cache"
    cache.mkdir()
    shutil.copyfile(tmp_path / GUID2LID, cache / "guid2lid")
    fab = build_fabric(lab_plan, View())
    with Simulation(workdir=tmp_path, tools=tools, sm_host=fab.sm_ca().id) as sim:
        sim.start_ibsim(tmp_path / TOPOLOGY, [], 60)
        sim.start_opensm(tmp_path / "run.conf", cache, [])
        sim.wait_subnet_up(60)
        group = _broadcast_group(sim.diag(["saquery", "-g"]))
    log = (tmp_path / "osm.log").read_text()
    assert "PARSE" not in log and " ERR " not in log, log[-2000:]
    # The low 6 bits are the value (17: 200 Gb/s; 4: 2048 bytes), the top 2 the selector (2: exactly).
    assert int(group["Rate"], 16) & 0x3F == 17 and int(group["Mtu"], 16) & 0x3F == 4, group
