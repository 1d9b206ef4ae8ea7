"""`ffplan verify` of a RoCE plan in the real FRR: the small dual-plane fabric passes; one wrong line in a rendered
file (ASN, neighbor, MTU, address) fails with the difference named."""

from __future__ import annotations

import pytest

from ffplan.verify_ethernet import netns
from ffplan.verify_ethernet.run import verify_ethernet

pytestmark = pytest.mark.slow


def failing(report) -> dict[str, list[str]]:
    return {c.name: c.items for c in report.checks if c.status == "fail"}


def test_the_whole_fabric_passes(frr_tools, mini_files, tmp_path, monkeypatch):
    # the kernel's ARP limits as a stand-in far too small for this fabric: verify raises them before it boots
    # (the real ones are global and only ever raised, so a test leaves them alone)
    monkeypatch.setattr(netns, "NEIGH_SYSCTL", tmp_path)
    for name, value in (("gc_thresh2", 8), ("gc_thresh3", 16)):
        (tmp_path / name).write_text(f"{value}\n")
    report = verify_ethernet(mini_files, timeout=30)
    assert report.ok, failing(report)
    names = {c.name: c for c in report.checks}
    # 24 cables, both ends resolve each other
    assert names["kernel ARP table never full"].detail.startswith("48 entries needed")
    assert int((tmp_path / "gc_thresh2").read_text()) >= 48 + netns.NEIGH_MARGIN
    assert int((tmp_path / "gc_thresh3").read_text()) > int((tmp_path / "gc_thresh2").read_text())
    assert "24 planned sessions Established" in names["BGP sessions == plan"].detail
    assert "48 (switch, prefix) routes" in names["kernel FIB == plan's ECMP sets"].detail
    assert "48 of 48 host pairs" in names["ping at MTU 9000 with don't-fragment"].detail
    assert report.timings["FRR PSS MiB"] > 0


def test_one_plane_passes_and_names_what_it_leaves_out(frr_tools, mini_files):
    report = verify_ethernet(mini_files, plane="pb", timeout=30)
    assert report.ok, failing(report)
    assert report.view == "plane pb"
    assert any("pa" in line for line in report.excluded)
    assert "24 of 24 host pairs" in next(c.detail for c in report.checks if c.name.startswith("ping"))


def test_a_wrong_asn_is_named(frr_tools, edited):
    folder = edited("sonic/pa-leaf01/frr.conf", "router bgp 4200000100", "router bgp 4200000199")
    report = verify_ethernet(folder, plane="pa", timeout=4)
    sessions = failing(report)["BGP sessions == plan"]
    assert "pa-leaf01: runs AS 4200000199, plan 4200000100" in sessions
    assert any(line.startswith("pa-spine01: session to pa-leaf01") for line in sessions)


def test_a_missing_neighbor_is_named(frr_tools, edited):
    folder = edited("sonic/pa-leaf01/frr.conf", " neighbor 10.1.0.3 remote-as 4200000000\n", "")
    folder = edited("sonic/pa-leaf01/frr.conf", " neighbor 10.1.0.3 description pa-spine02\n", "")
    report = verify_ethernet(folder, plane="pa", timeout=4)
    found = failing(report)
    assert "pa-leaf01: no neighbor 10.1.0.3 (pa-spine02, AS 4200000000) configured" in found["BGP sessions == plan"]
    # the others reach pa-leaf01's hosts over pa-spine01 only
    assert "pa-leaf02 10.128.0.0/30: 10.1.0.5, plan 10.1.0.5, 10.1.0.7" in found["kernel FIB == plan's ECMP sets"]


def test_an_mtu_mismatch_is_named(frr_tools, edited):
    folder = edited("sonic/pa-spine01/config_db.json", '"mtu": "9216"', '"mtu": "1500"')
    report = verify_ethernet(folder, plane="pa", timeout=10)
    found = failing(report)
    assert found["MTU == plan"] == ["pa-spine01 Ethernet0 (pa-leaf01-p03): MTU 1500, plan 9216"]
    # a jumbo frame from pa-leaf01's hosts hashed over that cable is lost, so some ping fails
    assert "BGP sessions == plan" not in found


def test_a_wrong_address_is_named(frr_tools, edited):
    folder = edited("sonic/pa-leaf01/frr.conf", " ip address 10.1.0.0/31", " ip address 10.1.0.100/31")
    report = verify_ethernet(folder, plane="pa", timeout=4)
    found = failing(report)
    assert found["addresses == plan"] == ["pa-leaf01 Ethernet16: 10.1.0.100/31, plan 10.1.0.0/31"]
    assert "pa-leaf01: session to pa-spine01 (10.1.0.1) Active, not Established" in found[
        "BGP sessions == plan"
    ] or any(line.startswith("pa-leaf01: session to pa-spine01 (10.1.0.1)") for line in found["BGP sessions == plan"])


def test_a_cable_and_a_switch_down_reconverge_to_the_prediction(frr_tools, mini_files):
    report = verify_ethernet(mini_files, plane="pa", timeout=30, failures=True)
    assert report.ok, failing(report)
    checks = {c.name: c.detail for c in report.checks}
    assert "keepalive 3 s, hold 9 s, advertisement interval 0 s, connect retry 10 s" in checks["BGP timers"]
    # pa-leaf01 loses a next hop, and pa-spine01 its only way to pa-leaf01, so the other leaves lose one for it
    assert checks["cable pa-leaf01-p03 down"].startswith(
        "4 switches' FIBs change (10 next hops fewer, 2 prefixes unreachable as predicted)"
    )
    assert checks["switch pa-spine01 down"].startswith("3 switches' FIBs change (12 next hops fewer")
    for key in (
        "cable down: FIB == prediction s",
        "cable restored: FIB == plan s",
        "switch down: FIB == prediction s",
        "switch restored: FIB == plan s",
    ):
        assert 0 < report.timings[key] < 9  # a link-down event: no timer involved
    # a hang costs the hold time: 9 s after the last keepalive (every 3 s), so 6-9 s, plus a polling round
    assert 5 < report.timings["FRR hung down: FIB == prediction s"] < 15
