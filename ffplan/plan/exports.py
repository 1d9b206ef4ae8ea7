"""Tabular exports of a plan: the cable plan (NetBox cable import columns) and the bill of materials."""

from __future__ import annotations

import csv
import io
from collections import Counter

from ffplan.plan.model import Cable, CableEnd, Plan

# InfiniBand connector by link speed.
CONNECTOR = {"EDR": "QSFP28", "HDR": "QSFP56", "NDR": "OSFP", "XDR": "OSFP"}
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
    for kind, length, n in cable_counts(plan.cables):
        rows.append(["cable", f"{kind} {length:g} m", n, connector])
    aoc = sum(1 for c in plan.cables if c.type == "AOC")
    rows.append(["transceiver", f"{connector} (separate)", 0, f"none: the {aoc} AOCs have theirs built in, DACs need none"])
    for model, n in sorted(Counter(nd.model for nd in plan.nodes).items()):
        rows.append(["node", model, n, ""])
    return rows


def bom_csv(plan: Plan) -> str:
    return csv_text(bom_rows(plan), ["category", "item", "quantity", "note"])
