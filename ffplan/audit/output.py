"""An audit as text, JSON or a Markdown work order, and the discovered GUIDs as an inventory fragment."""

from __future__ import annotations

import json

import yaml
from pydantic import TypeAdapter

from ffplan.audit import KINDS, Audit, End, Finding
from ffplan.inventory.models import Guid, Host, Name
from ffplan.plan.model import Plan

WHOLE_SWITCH = ("switches-swapped", "switch-missing")  # a finding per switch, its cables listed under it
TITLES = {
    "switches-swapped": "Switches in each other's place",
    "switch-missing": "Missing switches",
    "missing": "Missing cables",
    "wrong-switch": "Cables on the wrong switch",
    "wrong-port": "Cables on the wrong port",
    "swapped": "Swapped pairs",
    "extra": "Extra cables",
    "wrong-rate": "Links at the wrong speed or width",
    "guid-differs": "Devices whose GUID differs from the plan",
    "unknown-device": "Unknown devices",
}


def _summary(a: Audit) -> str:
    counts = ", ".join(f"{a.count(k)} {k}" for k in KINDS if a.count(k))
    state = "matches the plan" if a.matches else f"{len(a.findings)} difference(s): {counts}"
    inside = f" ({a.aggregation_nodes} SHARP aggregation nodes inside switches left out)" if a.aggregation_nodes else ""
    return (
        f"{a.devices_found} devices and {a.links_found} links found{inside}, {a.planned_cables} cables planned; "
        f"the fabric {state}"
    )


def _ends(f: Finding) -> str:
    parts = []
    for a, b in f.planned:
        parts.append(f"plan {a} <-> {b}")
    for a, b in f.found:
        parts.append(f"found {a} <-> {b}")
    return "; ".join(parts)


def format_text(a: Audit, source: str) -> str:
    lines = [f"audit of {source} against plan {a.inventory}", _summary(a)]
    for f in a.findings:
        if f.kind in WHOLE_SWITCH:  # one line for the switch, its cables under it
            lines.append(f"  {f.kind:<14} {f.detail}")
            for label, row in zip(f.cables, _cable_rows(f)):
                lines.append(f"  {'':<14}   {label:<26} {row}")
            continue
        label = " / ".join(f.cables) if f.cables else "-"
        lines.append(f"  {f.kind:<14} {label:<28} {f.detail}")
        if f.planned or f.found:
            lines.append(f"  {'':<14} {'':<28} {_ends(f)}")
    return "\n".join(lines) + "\n"


def _cable_rows(f: Finding) -> list[str]:
    found: list[tuple[End, End] | None] = list(f.found) or [None] * len(f.planned)
    return [f"plan {a} <-> {b}" + (f"; found {x[0]} <-> {x[1]}" if x else "") for (a, b), x in zip(f.planned, found)]


def as_json(a: Audit, source: str) -> str:
    return (
        json.dumps(
            {
                "fabric": source,
                "inventory": a.inventory,
                "matches": a.matches,
                "devices_found": a.devices_found,
                "links_found": a.links_found,
                "planned_cables": a.planned_cables,
                "aggregation_nodes": a.aggregation_nodes,
                "counts": {k: a.count(k) for k in KINDS},
                "findings": [f.as_dict() for f in a.findings],
            },
            indent=2,
            sort_keys=True,
        )
        + "\n"
    )


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def format_markdown(a: Audit, source: str) -> str:
    """A work order for the cabling crew: one checklist table per kind, both ends with rack, U and port."""
    out = [
        f"# Cabling work order: {a.inventory}",
        "",
        f"As-built fabric `{source}` against the plan. {_summary(a)}.",
        "",
    ]
    if a.matches:
        out.append("Nothing to do.")
    for kind in KINDS:
        items = [f for f in a.findings if f.kind == kind]
        if not items:
            continue
        out += [
            f"## {TITLES[kind]} ({len(items)})",
            "",
            "| done | cable | planned ends | found | what to do |",
            "|---|---|---|---|---|",
        ]
        for f in items:
            if kind in WHOLE_SWITCH:
                out.append(f"| [ ] | {len(f.cables)} cables | {_cell(f.detail)} | | {_cell(f.action)} |")
                found_ends: list[tuple[End, End] | None] = list(f.found) or [None] * len(f.planned)
                for label, (x, y), got in zip(f.cables, f.planned, found_ends):
                    out.append(
                        f"| [ ] | {_cell(label)} | {_cell(f'{x} ↔ {y}')} | "
                        f"{_cell(f'{got[0]} ↔ {got[1]}' if got else 'no link')} | |"
                    )
                continue
            planned = "<br>".join(f"{x} ↔ {y}" for x, y in f.planned) or "-"
            found = "<br>".join(f"{x} ↔ {y}" for x, y in f.found)
            if not f.found or f.found == f.planned:  # nothing or the planned link itself: say what is wrong
                found = "<br>".join(filter(None, (found, f.detail)))
            out.append(
                f"| [ ] | {_cell(' / '.join(f.cables) or '-')} | {_cell(planned)} | {_cell(found)} | "
                f"{_cell(f.action)} |"
            )
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def guid_fragment(a: Audit, plan: Plan, source: str) -> str:
    """The discovered GUIDs as inventory YAML: `fabric.switch_guids` and `groups[].hosts[]` with `guids`.

    Every value is checked against the inventory schema (switch names, GUID pattern, Host) before writing.
    """
    switch_guids = TypeAdapter(dict[Name, Guid]).validate_python(dict(sorted(a.switch_guids.items())))
    groups: dict[str, list[dict]] = {}
    for node in plan.nodes:
        nics = {nic: g for (host, nic), g in a.card_guids.items() if host == node.hostname}
        if not nics:
            continue
        host = Host.model_validate(
            {"hostname": node.hostname, "rack": node.rack, "u": node.u, "guids": dict(sorted(nics.items()))}
        )
        groups.setdefault(node.group, []).append(host.model_dump(include={"hostname", "rack", "u", "guids"}))
    data = {
        "fabric": {"switch_guids": switch_guids},
        "groups": [{"name": name, "hosts": hosts} for name, hosts in groups.items()],
    }
    header = (
        f"# GUIDs of inventory '{plan.inventory.name}' as `ibnetdiscover` found them ({source}), written by\n"
        "# `ffplan audit --write-guids`. Merge into the inventory so that the next `ffplan design` pins them:\n"
        "# fabric.switch_guids as is; each group's hosts into that group's `hosts:` (a group generated with\n"
        "# `count`/`hostname` lists its hosts explicitly to carry GUIDs). See docs/audit.md.\n"
    )
    return header + yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=1 << 16)
