"""The optics of a plan's runs: which medium an optical run of each InfiniBand speed takes, how far it reaches, and
the transceivers the runs need. The BOM (ffplan.plan.exports), design's reach warning (FF156) and the cost report
(ffplan.report) all count from here, so they agree.

EDR and HDR optical runs are active optical cables (a transceiver built into each end). NDR and XDR switch ports sit
two to an OSFP cage with one twin-port transceiver, and the runs are fibre between transceivers: one per switch cage,
one per NIC cage (a multi-planar NIC's planes share its cage). The medium is the first of the speed's media whose
reach covers the run (multimode before single-mode); a run beyond the last is beyond reach.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from ffplan.plan.model import Cable, Plan

# Speeds whose switch ports sit two to a cage (twin-port OSFP, ports 2c-1 and 2c).
TWIN_PORT_SPEEDS = ("NDR", "XDR")
AOC_OPTICAL_ENDS = 2  # an active optical cable carries a transceiver at each end


@dataclass(frozen=True)
class Medium:
    name: str  # "AOC", "multimode", "single-mode"
    reach_m: float
    source: str


_AOC_100 = Medium(
    "AOC",
    100.0,
    "assumption: the longest EDR/HDR AOC the catalog lists (NVIDIA MFA1A00 / MFS1S00 "
    "families); the spec pages read here give no length table",
)
# Per speed, the media an optical run may take, shortest reach (cheapest) first.
OPTICAL_MEDIA: dict[str, tuple[Medium, ...]] = {
    "EDR": (_AOC_100,),
    "HDR": (_AOC_100,),
    "NDR": (
        Medium(
            "multimode",
            50.0,
            "NVIDIA MMA4Z00-NS twin-port OSFP 2x400G multimode 2xSR4: 50 m over OM4 "
            "(docs.nvidia.com/networking/display/800GMMA4Z00NS)",
        ),
        Medium(
            "single-mode",
            500.0,
            "NVIDIA MMS4X00-NM twin-port OSFP 2x400G single-mode 2xDR4: 500 m "
            "(docs.nvidia.com/networking/display/mms4x00nmhgx500)",
        ),
    ),
    "XDR": (
        Medium(
            "single-mode",
            500.0,
            "assumption: NDR's single-mode DR4 reach (MMS4X00-NM, 500 m); no XDR "
            "transceiver spec among the sources read",
        ),
    ),
}


def medium(speed: str, length_m: float) -> Medium | None:
    """The medium an optical run of this length takes at this speed; None beyond the reach of every medium."""
    return next((m for m in OPTICAL_MEDIA[speed] if length_m <= m.reach_m + 1e-9), None)


def longest(speed: str) -> Medium:
    """The speed's medium of the longest reach."""
    return OPTICAL_MEDIA[speed][-1]


def beyond_reach(cables: Iterable[Cable], speed: str) -> list[Cable]:
    """Optical runs longer than every medium of the speed reaches (FF156)."""
    return [c for c in cables if c.type == "AOC" and medium(speed, c.length_m) is None]


def fabric_speed(plan: Plan) -> str | None:
    """The fabric switch model's InfiniBand speed; None on a RoCE plan (Ethernet media are not modelled here)."""
    return next(m.speed for m in plan.switch_models if m.name == plan.fabric_switch_model)


@dataclass(frozen=True)
class Transceivers:
    """A twin-port speed's transceivers by medium: switch cages and NIC cages (planar: cards), with the switch ports
    and NIC links they serve."""

    switch_cages: dict[str, int]
    switch_ports: dict[str, int]
    nic_cages: dict[str, int]  # ordinary NICs: one cage per link
    card_cages: dict[str, int]  # multi-planar NICs: one cage per card
    card_links: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.switch_cages.values()) + sum(self.nic_cages.values()) + sum(self.card_cages.values())


def twin_port_transceivers(plan: Plan, speed: str) -> Transceivers:
    """The transceivers of a twin-port speed's optical runs: a cage takes the medium its longest run needs (both ports
    of a twin-port transceiver are one medium); a run beyond reach counts in the longest-reaching medium."""
    card = _planar_cards(plan)
    rank = {m.name: i for i, m in enumerate(OPTICAL_MEDIA[speed])}
    cage_medium: dict[tuple, str] = {}
    ports: dict[tuple, int] = {}
    for c in plan.cables:
        if c.type != "AOC":
            continue
        name = (medium(speed, c.length_m) or longest(speed)).name
        for end in (c.a, c.b):
            if isinstance(end.port, int):
                cage: tuple = ("switch", end.device, (end.port + 1) // 2)
            elif (end.device, end.port) in card:
                cage = ("card", *card[(end.device, end.port)])
            else:
                cage = ("nic", end.device, end.port, c.label)
            if cage not in cage_medium or rank[name] > rank[cage_medium[cage]]:
                cage_medium[cage] = name
            ports[cage] = ports.get(cage, 0) + 1
    out: dict[str, dict[str, int]] = {"switch": {}, "switch_ports": {}, "nic": {}, "card": {}, "card_links": {}}
    for cage, name in cage_medium.items():
        out[cage[0]][name] = out[cage[0]].get(name, 0) + 1
        if cage[0] in ("switch", "card"):
            links = "switch_ports" if cage[0] == "switch" else "card_links"
            out[links][name] = out[links].get(name, 0) + ports[cage]
    return Transceivers(out["switch"], out["switch_ports"], out["nic"], out["card"], out["card_links"])


def _planar_cards(plan: Plan) -> dict[tuple[str, object], tuple[str, str]]:
    """(host, NIC device) -> (host, card's system image GUID) for the functions of multi-planar NICs: a card's planes
    leave through its one cage."""
    planar = {m.name for m in plan.nic_models if m.planes > 1}
    return {
        (n.hostname, p.nic): (n.hostname, p.sysimg_guid) for n in plan.nodes for p in n.ports if p.nic_model in planar
    }


def estimated_transceivers(speed: str | None, lots: Iterable[tuple[str, str, float, int]]) -> int:
    """Transceivers of sized cable lots (kind, type, length, count) without port numbers: at a twin-port speed one per
    two optical switch ends (their cages) plus one per optical NIC end, else two per AOC (built in)."""
    optical = [(kind, count) for kind, kind_type, _, count in lots if kind_type == "AOC"]
    if speed not in TWIN_PORT_SPEEDS:
        return AOC_OPTICAL_ENDS * sum(count for _, count in optical)
    switch_ends = sum(count * (1 if kind == "node-leaf" else 2) for kind, count in optical)
    nic_ends = sum(count for kind, count in optical if kind == "node-leaf")
    return math.ceil(switch_ends / 2) + nic_ends
