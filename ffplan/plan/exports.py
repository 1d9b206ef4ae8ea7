"""Tabular exports of a plan: the cable plan (NetBox cable import columns) and the bill of materials."""

from __future__ import annotations

import csv
import io
from collections import Counter

from ffplan.plan.model import Cable, CableEnd, Plan

# InfiniBand connector by link speed.
CONNECTOR = {"EDR": "QSFP28", "HDR": "QSFP56", "NDR": "OSFP", "XDR": "OSFP"}
# Speeds whose switch ports sit two to a cage (twin-port OSFP, ports 2c-1 and 2c): their optical links are a
# twin-port transceiver per switch cage, a single-port OSFP transceiver per NIC port, and fibre between them
# (NVIDIA's NDR/XDR cabling), not active optical cables with a transceiver at each end.
TWIN_PORT_SPEEDS = ("NDR", "XDR")
# NetBox cable type slugs (dcim CableTypeChoices).
NETBOX_CABLE_TYPE = {"DAC": "dac-passive", "AOC": "aoc"}
# The columns of NetBox's cable import (dcim CableImportForm): an unknown header fails the whole file.
CABLE_COLUMNS = [
    "side_a_site", "side_a_device", "side_a_type", "side_a_name", "side_b_site", "side_b_device", "side_b_type",
    "side_b_name", "type", "status", "label", "length", "length_unit", "description",
]


def interface_name(end: CableEnd) -> str:
    """Switch ports as the switch names them (IB1/<port>); NIC ends by their OS device name."""
    return f"IB1/{end.port}" if isinstance(end.port, int) else end.port


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
    rows = []
    for c in plan.cables:
        rows.append([
            site, c.a.device, "dcim.interface", interface_name(c.a), site, c.b.device, "dcim.interface", interface_name(c.b),
            NETBOX_CABLE_TYPE[c.type], "planned", c.label, f"{c.length_m:g}", "m", f"ffplan {c.kind}, zone {c.zone}",
        ])
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
    connector = f"{speed} {CONNECTOR.get(speed, '')}".strip()
    if speed in TWIN_PORT_SPEEDS:
        rows += _twin_port_optics(plan, speed)
    else:
        for kind, length, n in cable_counts(plan.cables):
            rows.append(["cable", f"{kind} {length:g} m", n, connector])
        aoc = sum(1 for c in plan.cables if c.type == "AOC")
        rows.append(["transceiver", f"{connector} (separate)", 0, f"none: the {aoc} AOCs have theirs built in, DACs need none"])
    for model, n in sorted(Counter(nd.model for nd in plan.nodes).items()):
        rows.append(["node", model, n, ""])
    return rows


def _twin_port_optics(plan: Plan, speed: str) -> list[list]:
    """Cable rows (DACs as they are, optical runs as fibre) and the transceivers per cage of a twin-port speed."""
    rows: list[list] = []
    for kind, length, n in cable_counts(plan.cables):
        item, note = (f"DAC {length:g} m", f"{speed} OSFP") if kind == "DAC" else (
            f"fibre {length:g} m", f"{speed}: between the transceivers below (optical runs the plan lists as AOC)")
        rows.append(["cable", item, n, note])
    optical = [end for c in plan.cables if c.type == "AOC" for end in (c.a, c.b)]
    switch_ports = [(end.device, end.port) for end in optical if isinstance(end.port, int)]
    cages = {(device, (port + 1) // 2) for device, port in switch_ports}
    rows.append(["transceiver", f"{speed} twin-port OSFP (switch)", len(cages),
                 f"one per cage of 2 ports: {len(switch_ports)} optical switch ports in {len(cages)} cages"])
    card = _planar_cards(plan)
    nic_ends = [(end.device, end.port) for end in optical if not isinstance(end.port, int)]
    nic_ports = sum(1 for end in nic_ends if end not in card)
    planar = [end for end in nic_ends if end in card]
    if nic_ports or not planar:
        rows.append(["transceiver", f"{speed} OSFP (NIC)", nic_ports, f"one per optical NIC port ({nic_ports})"])
    if planar:
        cards = len({card[end] for end in planar})
        rows.append(["transceiver", f"{speed} twin-port OSFP (multi-planar NIC)", cards,
                     f"one per multi-planar NIC's cage: {len(planar)} optical links of {cards} cards, a plane each"])
    return rows


def _planar_cards(plan: Plan) -> dict[tuple[str, object], tuple[str, str]]:
    """(host, NIC device) -> (host, card's system image GUID) for the functions of multi-planar NICs: a card's planes
    leave through its one cage."""
    planar = {m.name for m in plan.nic_models if m.planes > 1}
    return {(n.hostname, p.nic): (n.hostname, p.sysimg_guid) for n in plan.nodes for p in n.ports if p.nic_model in planar}


def bom_csv(plan: Plan) -> str:
    return csv_text(bom_rows(plan), ["category", "item", "quantity", "note"])
