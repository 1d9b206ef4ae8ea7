"""Tabular exports of a plan: the cable plan (NetBox cable import columns) and the bill of materials."""

from __future__ import annotations

import csv
import io
from collections import Counter

from ffplan.plan.model import Cable, CableEnd, Plan
from ffplan.plan.optics import OPTICAL_MEDIA, TWIN_PORT_SPEEDS, longest, medium, twin_port_transceivers

# InfiniBand connector by link speed.
CONNECTOR = {"EDR": "QSFP28", "HDR": "QSFP56", "NDR": "OSFP", "XDR": "OSFP"}
# Ethernet module by link speed (Gb/s): OSFP at 400G and 800G (Spectrum-4 cages, ConnectX-7 / BlueField-3 NICs).
ETHERNET_CONNECTOR = {100: "QSFP28", 200: "QSFP56", 400: "OSFP", 800: "OSFP"}
# NetBox cable type slugs (dcim CableTypeChoices).
NETBOX_CABLE_TYPE = {"DAC": "dac-passive", "AOC": "aoc"}
# The columns of NetBox's cable import (dcim CableImportForm): an unknown header fails the whole file.
CABLE_COLUMNS = [
    "side_a_site",
    "side_a_device",
    "side_a_type",
    "side_a_name",
    "side_b_site",
    "side_b_device",
    "side_b_type",
    "side_b_name",
    "type",
    "status",
    "label",
    "length",
    "length_unit",
    "description",
]


def interface_name(end: CableEnd, names: dict[tuple[str, int], str] | None = None) -> str:
    """Switch ports as the switch names them (IB1/<port>, or `names`' SONiC name on a RoCE plan); NIC ends by their
    OS device name."""
    if not isinstance(end.port, int):
        return end.port
    return names[(end.device, end.port)] if names else f"IB1/{end.port}"


def switch_port_names(plan: Plan) -> dict[tuple[str, int], str]:
    """(switch, port) -> the port's name on a RoCE plan's switches (SONiC's Ethernet<lane>); empty on InfiniBand."""
    eth = plan.ethernet
    return {} if eth is None else {(sw.name, p.port): p.name for sw in eth.switches for p in sw.ports}


def csv_text(rows: list[list], header: list[str]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def cables_csv(plan: Plan) -> str:
    """The cable plan as NetBox imports it: both ends at the plan's site (its inventory name); kind and zone
    in the description, since NetBox refuses extra columns."""
    site = plan.inventory.name
    names = switch_port_names(plan)
    rows = []
    for c in plan.cables:
        rows.append(
            [
                site,
                c.a.device,
                "dcim.interface",
                interface_name(c.a, names),
                site,
                c.b.device,
                "dcim.interface",
                interface_name(c.b, names),
                NETBOX_CABLE_TYPE[c.type],
                "planned",
                c.label,
                f"{c.length_m:g}",
                "m",
                f"ffplan {c.kind}, zone {c.zone}",
            ]
        )
    return csv_text(rows, CABLE_COLUMNS)


def cable_counts(cables: list[Cable]) -> list[tuple[str, float, int]]:
    """(type, length, count) of the cables, sorted by type name, then length."""
    counts = Counter((c.type, c.length_m) for c in cables)
    return [(kind, length, n) for (kind, length), n in sorted(counts.items())]


def bom_rows(plan: Plan) -> list[list]:
    """(category, item, quantity, note) rows: switches, cables by type and length, transceivers, nodes."""
    rows: list[list] = []
    for model, n in sorted(Counter(s.model for s in plan.switches).items()):
        tiers = Counter(s.tier for s in plan.switches if s.model == model)
        rows.append(["switch", model, n, ", ".join(f"{k} {v}" for k, v in sorted(tiers.items()))])
    speed = next(m.speed for m in plan.switch_models if m.name == plan.fabric_switch_model)
    if plan.ethernet is not None or speed is None:
        assert plan.ethernet is not None, "only a RoCE plan's switch models have no InfiniBand speed"
        rows += _ethernet_optics(plan, plan.ethernet.link_gbps, plan.ethernet.breakout)
    elif speed in TWIN_PORT_SPEEDS:
        rows += _twin_port_optics(plan, speed)
    else:
        connector = f"{speed} {CONNECTOR.get(speed, '')}".strip()
        for kind, length, n in cable_counts(plan.cables):
            rows.append(["cable", f"{kind} {length:g} m", n, connector])
        aoc = sum(1 for c in plan.cables if c.type == "AOC")
        rows.append(
            ["transceiver", f"{connector} (separate)", 0, f"none: the {aoc} AOCs have theirs built in, DACs need none"]
        )
    for model, n in sorted(Counter(nd.model for nd in plan.nodes).items()):
        rows.append(["node", model, n, ""])
    return rows


def _twin_port_optics(plan: Plan, speed: str) -> list[list]:
    """Cable rows (DACs as they are, optical runs as fibre of their medium) and the transceivers per cage of a twin-port
    speed (ffplan.plan.optics). The speed's first medium (multimode at NDR) is named by the speed alone, as before."""
    first = OPTICAL_MEDIA[speed][0].name

    def named(item: str, name: str) -> str:
        return item if name == first else f"{item} {name}"

    rows: list[list] = []
    for kind, length, n in cable_counts(plan.cables):
        if kind == "DAC":
            rows.append(["cable", f"DAC {length:g} m", n, f"{speed} OSFP"])
            continue
        run = medium(speed, length)
        name = (run or longest(speed)).name
        rows.append(
            [
                "cable",
                named(f"fibre {length:g} m", name),
                n,
                f"{named(speed, name)}: between the transceivers below (optical runs the plan lists as AOC)"
                + ("" if run else f"; beyond the {longest(speed).reach_m:g} m {name} reach (FF156)"),
            ]
        )
    t = twin_port_transceivers(plan, speed)
    for m in OPTICAL_MEDIA[speed]:
        cages, ports = t.switch_cages.get(m.name, 0), t.switch_ports.get(m.name, 0)
        if cages or m.name == first:
            rows.append(
                [
                    "transceiver",
                    named(f"{speed} twin-port OSFP", m.name) + " (switch)",
                    cages,
                    f"one per cage of 2 ports: {ports} optical switch ports in {cages} cages",
                ]
            )
        nics = t.nic_cages.get(m.name, 0)
        if nics or (m.name == first and not t.card_cages):
            rows.append(
                ["transceiver", named(f"{speed} OSFP", m.name) + " (NIC)", nics, f"one per optical NIC port ({nics})"]
            )
        cards, links = t.card_cages.get(m.name, 0), t.card_links.get(m.name, 0)
        if cards:
            rows.append(
                [
                    "transceiver",
                    named(f"{speed} twin-port OSFP", m.name) + " (multi-planar NIC)",
                    cards,
                    f"one per multi-planar NIC's cage: {links} optical links of {cards} cards, a plane each",
                ]
            )
    return rows


def _ethernet_optics(plan: Plan, gbps: int, breakout: int) -> list[list]:
    """A RoCE plan's cables and optics: DACs as they are, optical runs as fibre between a transceiver per switch cage
    (one module for the cage's `breakout` ports, as a 2 x 400G OSFP in an 800G cage) and one per optical NIC port."""
    form = ETHERNET_CONNECTOR[gbps]
    cage = gbps * breakout
    split = (
        f"; a {cage}G cage split {breakout} ways: 1:{breakout} splitter DACs where one cage's ports are copper"
        if breakout > 1
        else ""
    )
    rows: list[list] = []
    for kind, length, n in cable_counts(plan.cables):
        item, note = (
            (f"DAC {length:g} m", f"{gbps}GbE {form} passive copper{split}")
            if kind == "DAC"
            else (
                f"fibre {length:g} m",
                f"{gbps}GbE: between the transceivers below (optical runs the plan lists as AOC)",
            )
        )
        rows.append(["cable", item, n, note])
    optical = [end for c in plan.cables if c.type == "AOC" for end in (c.a, c.b)]
    switch_ports = [(end.device, end.port) for end in optical if isinstance(end.port, int)]
    cages = {(device, (port - 1) // breakout) for device, port in switch_ports}
    nic_ports = len(optical) - len(switch_ports)
    module = f"{cage}G {ETHERNET_CONNECTOR[cage]} ({breakout} x {gbps}G)" if breakout > 1 else f"{gbps}G {form}"
    rows.append(
        [
            "transceiver",
            f"{module} (switch)",
            len(cages),
            f"one per cage: {len(switch_ports)} optical switch ports in {len(cages)} cages",
        ]
    )
    rows.append(["transceiver", f"{gbps}G {form} (NIC)", nic_ports, f"one per optical NIC port ({nic_ports})"])
    return rows


def bom_csv(plan: Plan) -> str:
    return csv_text(bom_rows(plan), ["category", "item", "quantity", "note"])
