"""The lossless QoS arithmetic: PFC headroom per port from its cable and speed, ECN (WRED) thresholds from the switch's
buffer, and the QoS intent with the source of every value (docs/ethernet.md works an example through).

Headroom is what still arrives on a lossless priority after the port decides to send PAUSE (the worst case of IEEE
802.1Qbb): a maximum frame the port is sending when the threshold is crossed, the PAUSE frame itself, the interface
delays of both PHYs/MACs, the peer's response time (it finishes the frame it is sending), and the cable's round
trip. Bit times (BT) at the link's rate, then bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ffplan.inventory.models import Inventory, RoceQos

FRAME_OVERHEAD_BYTES = 18  # Ethernet header (14) + FCS (4) around an MTU-sized payload
FRAME_GAP_BT = 160  # preamble + SFD (64 BT) and inter-frame gap (96 BT)
PAUSE_FRAME_BT = 672  # a 64-byte PFC frame plus gap and preamble
CABLE_NS_PER_M = 5  # propagation in fibre and copper, about 5 ns/m
# Upper bounds of IEEE 802.3 in bit times at each speed (Gb/s): the interface delay of a PHY/MAC pair and the response
# delay (pause quanta x 512 BT), as the headroom literature quotes them for 25G, 100G and 400G. The other speeds are
# ffplan's assumption, each labelled: the same delay time as a quoted speed (bit times scale with the rate), or the
# quoted bit times of a faster speed where that gives more headroom.
_QUOTED = "IEEE 802.3 upper bound"
INTERFACE_DELAY_BT: dict[int, tuple[int, str]] = {
    25: (6144, _QUOTED),
    50: (12_288, "ffplan's assumption: 25G's delay time"),
    100: (122_880, _QUOTED),
    200: (245_760, "ffplan's assumption: 100G's delay time"),
    400: (491_520, "ffplan's assumption: 100G's delay time"),
    800: (983_040, "ffplan's assumption: 100G's delay time"),
}
RESPONSE_DELAY_BT: dict[int, tuple[int, str]] = {
    25: (40_960, _QUOTED),
    50: (81_920, "ffplan's assumption: 25G's delay time"),
    100: (201_728, _QUOTED),
    200: (463_360, "ffplan's assumption: 400G's bit times (twice its time)"),
    400: (463_360, _QUOTED),
    800: (926_720, "ffplan's assumption: 400G's delay time"),
}

ECN_MIN_PERCENT = 20  # the article: Kmin at 20-30 % of the port's buffer, so ECN acts before PFC
ECN_MAX_PERCENT = 50  # ffplan's choice: Kmax well below the buffer, above Kmin


@dataclass(frozen=True)
class Headroom:
    """One port's headroom per lossless priority, and its parts in bit times."""

    frames_bt: int
    pause_bt: int
    interface_bt: int
    response_bt: int
    cable_bt: int

    @property
    def bytes(self) -> int:
        return math.ceil((self.frames_bt + self.pause_bt + self.interface_bt + self.response_bt + self.cable_bt) / 8)


def headroom(gbps: int, cable_m: float, mtu: int) -> Headroom:
    frame_bt = (mtu + FRAME_OVERHEAD_BYTES) * 8 + FRAME_GAP_BT
    return Headroom(
        frames_bt=2 * frame_bt,  # the frame this port is sending when it decides, and the one the peer is sending
        pause_bt=PAUSE_FRAME_BT,
        interface_bt=INTERFACE_DELAY_BT[gbps][0],
        response_bt=RESPONSE_DELAY_BT[gbps][0],
        cable_bt=math.ceil(2 * cable_m * CABLE_NS_PER_M * gbps),  # round trip: ns x Gb/s = bits
    )


@dataclass(frozen=True)
class BufferFit:
    """What the switch's buffer must hold for lossless traffic, and whether it does."""

    buffer_bytes: int
    port_buffer_bytes: int
    ecn_min_bytes: int
    ecn_max_bytes: int
    headroom_total_bytes: int  # every port, every lossless priority
    headroom_limit_bytes: int  # headroom_share of the buffer

    @property
    def headroom_fits(self) -> bool:
        return self.headroom_total_bytes <= self.headroom_limit_bytes


def buffer_bytes(buffer_mb: float) -> int:
    return round(buffer_mb * 1_000_000)


def ecn_thresholds(qos: RoceQos, port_buffer: int) -> tuple[int, int]:
    """(Kmin, Kmax) in bytes: the inventory's, else 20 % and 50 % of the port's share of the buffer."""
    low = qos.ecn_min_kb * 1000 if qos.ecn_min_kb is not None else port_buffer * ECN_MIN_PERCENT // 100
    high = qos.ecn_max_kb * 1000 if qos.ecn_max_kb is not None else port_buffer * ECN_MAX_PERCENT // 100
    return low, high


def buffer_fit(inv: Inventory, radix: int, port_headrooms: list[int]) -> BufferFit:
    """The buffer arithmetic of one switch with `radix` ports whose headrooms (per lossless priority) are given."""
    model = inv.models.switches[inv.fabric.switch_model]
    assert model.ethernet is not None  # lint's FF709
    qos = inv.fabric.roce.qos
    total = buffer_bytes(model.ethernet.buffer_mb)
    port = total // radix
    low, high = ecn_thresholds(qos, port)
    return BufferFit(
        total,
        port,
        low,
        high,
        sum(port_headrooms) * len(set(qos.lossless_priorities)),
        total * qos.headroom_share // 100,
    )


# DCQCN on the NIC (the reaction point, ecn/roce_rp): NVIDIA's defaults for ConnectX-4 and later, as its "DCQCN CC
# Parameters" page (DOCA 3.4) lists them under their MLNX_OFED sysfs names. The plan states them so a host that
# drifted from them shows up in host-check.sh; nothing here tunes them.
DCQCN_SOURCE = "NVIDIA default (DOCA 3.4, DCQCN CC Parameters)"
DCQCN_DEFAULTS: tuple[tuple[str, int], ...] = (
    ("dce_tcp_g", 1019),  # alpha's gain g, fixed point /1024
    ("dce_tcp_rtt", 1),  # alpha update period, us
    ("initial_alpha_value", 1023),  # alpha on a flow's first CNP, fixed point /1024
    ("rate_to_set_on_first_cnp", 0),  # Mb/s; 0: cut from the current rate
    ("rpg_min_dec_fac", 50),  # largest cut in one step, percent
    ("rpg_min_rate", 1),  # Mb/s, a QP's floor
    ("rpg_gd", 11),  # alpha-to-cut coefficient, log2 fixed point
    ("rate_reduce_monitor_period", 4),  # us between cuts
)
