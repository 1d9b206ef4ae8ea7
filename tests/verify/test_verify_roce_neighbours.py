"""The kernel's ARP table is one for every namespace: verify makes room for a fabric's neighbours before it boots
(the default gc_thresh3 of 1,024 refused entries of roce-dual-plane's plane-a, 4,096 veth pairs, and left BGP
sessions in Connect), and reports refusals during the run. Stand-in /proc files here; the real ones in
test_verify_roce.py."""

from __future__ import annotations

import pytest

from ffplan.verify_ethernet import netns

# /proc/net/stat/arp_cache of a 2-CPU machine after an overflow (as read here): hexadecimal, one line per CPU
STAT = """entries  allocs   destroys hash_grows lookups  hits     res_failed rcv_probes_mcast rcv_probes_ucast \
periodic_gc_runs forced_gc_runs unresolved_discards table_fulls
00000190 000018b7 00000b1d 00000003   00001c51 000009b5 00000147   00000000         00000000         00000000 \
        001c9395       00000000            001c9250
00000190 00001905 0000269d 00000005   00001fce 00000871 00000131   00000000         00000000         0000058a \
        001bce89       00000000            001bcd59
"""


@pytest.fixture
def proc(tmp_path, monkeypatch):
    stat = tmp_path / "arp_cache"
    stat.write_text(STAT)
    sysctl = tmp_path / "neigh"
    sysctl.mkdir()
    monkeypatch.setattr(netns, "ARP_STAT", stat)
    monkeypatch.setattr(netns, "NEIGH_SYSCTL", sysctl)

    def limits(thresh2: int, thresh3: int) -> None:
        (sysctl / "gc_thresh2").write_text(f"{thresh2}\n")
        (sysctl / "gc_thresh3").write_text(f"{thresh3}\n")

    def read() -> tuple[int, int]:
        return int((sysctl / "gc_thresh2").read_text()), int((sysctl / "gc_thresh3").read_text())

    return limits, read


def test_entries_are_global_and_refusals_summed_over_cpus(proc):
    assert netns.arp_stat() == (0x190, 0x1C9250 + 0x1BCD59)


def test_the_defaults_are_raised_for_a_plane_of_roce_dual_plane(proc):
    limits, read = proc
    limits(512, 1024)
    said = netns.make_room_for_neighbours(8192)
    # what is there (400), the fabric's 8,192 and a margin of 1,024 below gc_thresh2, gc_thresh3 twice that
    assert read() == (9616, 19232)
    assert said == (
        "8,192 entries needed, 400 present: raised gc_thresh3 1,024 -> 19,232, gc_thresh2 512 -> 9,616 "
        "(net.ipv4.neigh.default; global, kept)"
    )


def test_a_small_fabric_leaves_the_defaults_alone(proc):
    limits, read = proc
    limits(512, 1024)
    said = netns.make_room_for_neighbours(48)
    assert read() == (512, 1024)
    assert said == "48 entries needed, 400 present: net.ipv4.neigh.default.gc_thresh2/gc_thresh3 512/1,024 suffice"


def test_limits_large_enough_are_left_alone(proc):
    limits, read = proc
    limits(100_000, 200_000)
    said = netns.make_room_for_neighbours(48)
    assert read() == (100_000, 200_000)
    assert said.endswith("gc_thresh2/gc_thresh3 100,000/200,000 suffice")


def test_a_limit_is_never_lowered(proc):
    limits, read = proc
    limits(512, 50_000)
    netns.make_room_for_neighbours(8192)
    assert read() == (9616, 50_000)
