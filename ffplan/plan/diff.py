"""What changed between two plans, grouped so a technician can act on it (after Batfish's base-vs-change).

Cables are matched by what they connect: a node's NIC, or a switch port on the lower tier (leaf side).
A matched cable whose far end changed is a move; unmatched ones are removed or added.

Complete by construction: every field of a cable, node, node port and switch is compared (the models' own field
lists, so a field added later is compared too), the order of every list (files list items in plan order: nccl.conf,
lfts.dump, the NetBox rows), and every other field of the plan through one walk. If the plans' data differ, the
diff is not empty (a last walk over both plans' data stands behind the groups).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ffplan.plan.model import Cable, Node, NodePort, Plan, Routing, Switch


@dataclass
class Move:
    old: Cable
    new: Cable


@dataclass
class FieldChange:
    item: str  # hostname/nic, switch name, or a dotted path
    field: str
    old: Any
    new: Any


@dataclass
class PlanDiff:
    cables_removed: list[Cable] = field(default_factory=list)
    cables_added: list[Cable] = field(default_factory=list)
    cables_moved: list[Move] = field(default_factory=list)
    cables_changed: list[FieldChange] = field(default_factory=list)  # same ends, other length/type/label
    nodes_added: list[str] = field(default_factory=list)
    nodes_removed: list[str] = field(default_factory=list)
    node_ports: list[FieldChange] = field(default_factory=list)
    switches_added: list[str] = field(default_factory=list)
    switches_removed: list[str] = field(default_factory=list)
    switch_fields: list[FieldChange] = field(default_factory=list)
    failed_added: list[str] = field(default_factory=list)  # cables/switches the new plan routes around
    failed_removed: list[str] = field(default_factory=list)  # back in use
    failed_where: dict[str, str] = field(default_factory=dict)  # failed item -> its cable ends or switch
    routing: dict[str, list[tuple[int, int | None, int | None]]] = field(
        default_factory=dict
    )  # switch -> (lid, old, new)
    qos: list[FieldChange] = field(default_factory=list)
    hosts: list[FieldChange] = field(default_factory=list)
    other: list[FieldChange] = field(default_factory=list)  # inventory hash, solver, zones

    @property
    def empty(self) -> bool:
        return not any(getattr(self, f) for f in self.__dataclass_fields__)

    def counts(self) -> dict[str, int]:
        return {
            "cables_removed": len(self.cables_removed),
            "cables_added": len(self.cables_added),
            "cables_moved": len(self.cables_moved),
            "cables_changed": len(self.cables_changed),
            "nodes_added": len(self.nodes_added),
            "nodes_removed": len(self.nodes_removed),
            "node_port_fields": len(self.node_ports),
            "switches_added": len(self.switches_added),
            "switches_removed": len(self.switches_removed),
            "switch_fields": len(self.switch_fields),
            "failed_added": len(self.failed_added),
            "failed_removed": len(self.failed_removed),
            "routing_entries": sum(len(v) for v in self.routing.values()),
            "qos": len(self.qos),
            "hosts": len(self.hosts),
            "other": len(self.other),
        }


def cable_key(c: Cable) -> tuple:
    """A node's cable is identified by its NIC; a switch-to-switch cable by its lower-tier end."""
    return ("nic", c.a.device, c.a.port) if c.kind == "node-leaf" else ("port", c.a.device, c.a.port)


# Every field but the ones a record is matched by: compared one by one, whatever the model grows.
_SWITCH_FIELDS = tuple(f for f in Switch.model_fields if f != "name")
_NODE_FIELDS = tuple(f for f in Node.model_fields if f not in ("hostname", "ports"))
_PORT_FIELDS = tuple(f for f in NodePort.model_fields if f not in ("nic", "port"))
_CABLE_FIELDS = tuple(f for f in Cable.model_fields if f not in ("a", "b"))
_ROUTING_FIELDS = tuple(f for f in Routing.model_fields if f not in ("failed", "lfts"))
_GROUPED = ("cables", "nodes", "switches", "routing", "qos", "hosts")  # the plan's fields with a group of their own
ORDER = "order"  # the field of a FieldChange that says a list holds the same items in another order


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Leaf path -> value; a list of named records by name, its names' order under `prefix[*]`."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(value, list) and value and all(isinstance(v, dict) and "name" in v for v in value):
        out = {f"{prefix}[*]": [v["name"] for v in value]}
        for v in value:
            out.update(_flatten(v, f"{prefix}[{v['name']}]"))
        return out
    if isinstance(value, list) and value and all(isinstance(v, (dict, list)) for v in value):
        out = {}
        for i, v in enumerate(value):
            out.update(_flatten(v, f"{prefix}[{i}]"))
        return out
    return {prefix: value}


def _field_changes(old: Any, new: Any, prefix: str = "") -> list[FieldChange]:
    a, b = _flatten(old, prefix), _flatten(new, prefix)
    changes = []
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key), b.get(key)
        if va == vb:
            continue
        item, _, name = key.rpartition(".")
        if isinstance(va, list) and isinstance(vb, list) and all(not isinstance(v, (dict, list)) for v in va + vb):
            if sorted(map(repr, va)) == sorted(map(repr, vb)):  # the same items (of a named list: the same records)
                changes += _order(key.removesuffix("[*]"), va, vb)
                continue
            if key.endswith("[*]"):
                continue  # records added or removed: their fields say so
            # Long lists (the hosts of a profile): say what came and went, not both lists.
            va, vb = [v for v in va if v not in vb], [v for v in vb if v not in va]
            name += " (removed -> added)"
        changes.append(FieldChange(item or prefix, name, va, vb))
    return changes


def _order(item: str, old: list, new: list) -> list[FieldChange]:
    """An order change of the items both lists hold, as the first position where they differ (files list them in
    this order)."""
    common = set(old) & set(new)
    a, b = [k for k in old if k in common], [k for k in new if k in common]
    first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
    if first is None:
        return []
    return [FieldChange(item, ORDER, f"#{first + 1} {_shown(a[first])}", f"#{first + 1} {_shown(b[first])}")]


def _shown(key: Any) -> str:
    return "/".join(map(str, key)) if isinstance(key, tuple) else str(key)


def diff_plans(old: Plan, new: Plan) -> PlanDiff:
    d = PlanDiff()
    old_cables = {cable_key(c): c for c in old.cables}
    new_cables = {cable_key(c): c for c in new.cables}
    d.cables_added = [new_cables[key] for key in sorted(set(new_cables) - set(old_cables), key=str)]
    d.cables_removed = [old_cables[key] for key in sorted(set(old_cables) - set(new_cables), key=str)]
    for key in sorted(set(old_cables) & set(new_cables), key=str):
        old_cable, new_cable = old_cables[key], new_cables[key]
        if (old_cable.b.device, old_cable.b.port) != (new_cable.b.device, new_cable.b.port):
            d.cables_moved.append(Move(old_cable, new_cable))
        else:
            for name in _CABLE_FIELDS:
                if getattr(old_cable, name) != getattr(new_cable, name):
                    d.cables_changed.append(
                        FieldChange(old_cable.label, name, getattr(old_cable, name), getattr(new_cable, name))
                    )
    d.other += _order("cables", [cable_key(c) for c in old.cables], [cable_key(c) for c in new.cables])

    old_nodes = {n.hostname: n for n in old.nodes}
    new_nodes = {n.hostname: n for n in new.nodes}
    d.nodes_added = sorted(set(new_nodes) - set(old_nodes))
    d.nodes_removed = sorted(set(old_nodes) - set(new_nodes))
    for host in sorted(set(old_nodes) & set(new_nodes)):
        a, b = old_nodes[host], new_nodes[host]
        for name in _NODE_FIELDS:
            if getattr(a, name) != getattr(b, name):
                d.node_ports.append(FieldChange(host, name, getattr(a, name), getattr(b, name)))
        ports_a = {(p.nic, p.port): p for p in a.ports}
        ports_b = {(p.nic, p.port): p for p in b.ports}
        d.node_ports += _order(f"{host} ports", list(ports_a), list(ports_b))
        for key in sorted(set(ports_a) | set(ports_b)):
            pa, pb = ports_a.get(key), ports_b.get(key)
            where = f"{host}/{key[0]}" + (f":{key[1]}" if key[1] != 1 else "")
            if pa is None or pb is None:
                d.node_ports.append(FieldChange(where, "port", pa and pa.cable, pb and pb.cable))
                continue
            for name in _PORT_FIELDS:
                if getattr(pa, name) != getattr(pb, name):
                    d.node_ports.append(FieldChange(where, name, getattr(pa, name), getattr(pb, name)))

    old_sw = {s.name: s for s in old.switches}
    new_sw = {s.name: s for s in new.switches}
    d.switches_added = sorted(set(new_sw) - set(old_sw))
    d.switches_removed = sorted(set(old_sw) - set(new_sw))
    for name in sorted(set(old_sw) & set(new_sw)):
        for f in _SWITCH_FIELDS:
            va, vb = getattr(old_sw[name], f), getattr(new_sw[name], f)
            if va != vb:
                d.switch_fields.append(FieldChange(name, f, va, vb))
    d.other += _order("nodes", list(old_nodes), list(new_nodes)) + _order("switches", list(old_sw), list(new_sw))

    old_failed = set(old.routing.failed) if old.routing else set()
    new_failed = set(new.routing.failed) if new.routing else set()
    d.failed_added = sorted(new_failed - old_failed)
    d.failed_removed = sorted(old_failed - new_failed)
    d.failed_where = {item: failed_link_text(new, item) for item in d.failed_added}
    d.failed_where.update({item: failed_link_text(old, item) for item in d.failed_removed})
    d.routing = _routing_changes(old, new)
    if old.routing is not None and new.routing is not None:
        d.other += _order("routing.failed", old.routing.failed, new.routing.failed)
        d.other += _order("routing.lfts", [t.switch for t in old.routing.lfts], [t.switch for t in new.routing.lfts])
        for name in _ROUTING_FIELDS:
            d.other += _field_changes(
                _dump(getattr(old.routing, name)), _dump(getattr(new.routing, name)), f"routing.{name}"
            )
    elif old.routing is not new.routing:  # one plan has no routing section
        d.other.append(
            FieldChange(
                "plan",
                "routing",
                "absent" if old.routing is None else "present",
                "absent" if new.routing is None else "present",
            )
        )
    d.qos = _field_changes(_dump(old.qos), _dump(new.qos), "qos")
    d.hosts = _field_changes(_dump(old.hosts), _dump(new.hosts), "hosts")
    for name in Plan.model_fields:
        if name not in _GROUPED:
            d.other += _field_changes(_dump(getattr(old, name)), _dump(getattr(new, name)), name)
    if d.empty:  # behind the groups: the plans' whole data
        d.other += _whole_difference(old, new)
    return d


def _whole_difference(old: Plan, new: Plan) -> list[FieldChange]:
    """The first place where the two plans' data differ, or nothing: a field no group above compares still shows."""

    def walk(a: Any, b: Any, path: str) -> FieldChange | None:
        if type(a) is not type(b) or not isinstance(a, (dict, list)):
            return None if a == b else FieldChange(path.rpartition(".")[0] or path, path.rpartition(".")[2], a, b)
        if isinstance(a, dict):
            keys = list(dict.fromkeys([*a, *b]))
            return next((c for k in keys if (c := walk(a.get(k), b.get(k), f"{path}.{k}"))), None)
        if len(a) != len(b):
            return FieldChange(path, "length", len(a), len(b))
        return next((c for i, (x, y) in enumerate(zip(a, b)) if (c := walk(x, y, f"{path}[{i}]"))), None)

    change = walk(old.model_dump(mode="json"), new.model_dump(mode="json"), "plan")
    return [change] if change else []


def _dump(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, list):
        return [_dump(v) for v in value]
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else value


def _routing_changes(old: Plan, new: Plan) -> dict[str, list[tuple[int, int | None, int | None]]]:
    if old.routing is None or new.routing is None:
        return {}
    a = {lft.switch: lft.ports for lft in old.routing.lfts}
    b = {lft.switch: lft.ports for lft in new.routing.lfts}
    changes = {}
    no_table = np.zeros(0, dtype=np.uint8)
    for switch in sorted(set(a) | set(b)):
        pa, pb = a.get(switch, no_table), b.get(switch, no_table)
        common = min(len(pa), len(pb))
        changed = np.flatnonzero(pa[:common] != pb[:common]).tolist()
        rows: list[tuple[int, int | None, int | None]] = [(lid, int(pa[lid]), int(pb[lid])) for lid in changed]
        rows += [(lid, int(pa[lid]), None) for lid in range(common, len(pa))]  # the table got shorter
        rows += [(lid, None, int(pb[lid])) for lid in range(common, len(pb))]
        if rows:
            changes[switch] = rows
    return changes


# ---------------------------------------------------------------- presentation


def _end(c: Cable, side: str) -> str:
    end = getattr(c, side)
    return f"{end.device}:{end.port}"


def failed_link_text(plan: Plan, item: str) -> str:
    """A failed item of the plan's routing as a technician finds it: the cable's two ends, or the switch."""
    for c in plan.cables:
        if item in (c.label, f"{c.a.device}[{c.a.port}]", f"{c.b.device}[{c.b.port}]"):
            return f"{item}: cable {_end(c, 'a')} <-> {_end(c, 'b')} ({c.kind})"
    if any(s.name == item for s in plan.switches):
        return f"{item}: switch, every cable on it"
    return item


def sections(d: PlanDiff, verbose: bool = False) -> list[tuple[str, list[str]]]:
    """(title, lines) per group, in the order a technician works: pull, move, lay, then configuration."""
    out: list[tuple[str, list[str]]] = []

    def add(title: str, lines: list[str], count: str = "") -> None:
        if lines:
            out.append((f"{title} ({count or len(lines)})", lines))

    add(
        "cables to remove",
        [f"{c.label}: {_end(c, 'a')} <-> {_end(c, 'b')} ({c.type} {c.length_m:g} m)" for c in d.cables_removed],
    )
    add(
        "cables to move",
        [
            f"{m.old.label} -> {m.new.label}: {_end(m.new, 'a')} from {_end(m.old, 'b')} to {_end(m.new, 'b')} ({m.new.type} {m.new.length_m:g} m)"
            for m in d.cables_moved
        ],
    )
    add(
        "cables to add",
        [f"{c.label}: {_end(c, 'a')} <-> {_end(c, 'b')} ({c.type} {c.length_m:g} m)" for c in d.cables_added],
    )
    add("cables relabelled or re-specified", [f"{f.item}: {f.field} {f.old} -> {f.new}" for f in d.cables_changed])
    add("nodes added", d.nodes_added)
    add("nodes removed", d.nodes_removed)
    add("node ports changed", [f"{f.item}: {f.field} {f.old} -> {f.new}" for f in d.node_ports])
    add("switches added", d.switches_added)
    add("switches removed", d.switches_removed)
    add("switches changed", [f"{f.item}: {f.field} {f.old} -> {f.new}" for f in d.switch_fields])
    add("failed links added (routed around)", [d.failed_where[item] for item in d.failed_added])
    add("failed links removed (back in use)", [d.failed_where[item] for item in d.failed_removed])
    routing = []
    for switch, rows in d.routing.items():
        routing.append(f"{switch}: {len(rows)} entr{'y' if len(rows) == 1 else 'ies'} changed")
        if verbose:
            routing += [f"    lid {lid}: port {old} -> {new}" for lid, old, new in rows]
    # the count is of entries (what --verbose lists), not of switches
    entries, switches = sum(len(rows) for rows in d.routing.values()), len(d.routing)
    add(
        "routing",
        routing,
        f"{entries:,} entr{'y' if entries == 1 else 'ies'} on {switches} switch{'' if switches == 1 else 'es'}",
    )
    add("qos", [f"{f.item}.{f.field}: {f.old} -> {f.new}" for f in d.qos])
    add("host settings", [f"{f.item}.{f.field}: {f.old} -> {f.new}" for f in d.hosts])
    add("plan", [f"{f.item}.{f.field}: {f.old} -> {f.new}" for f in d.other])
    return out


def format_text(d: PlanDiff, verbose: bool = False) -> str:
    if d.empty:
        return "no differences\n"
    lines = []
    for title, rows in sections(d, verbose):
        lines.append(title + ":")
        lines += [f"  {row}" for row in rows]
    return "\n".join(lines) + "\n"


def format_markdown(d: PlanDiff, verbose: bool = False) -> str:
    if d.empty:
        return "No differences.\n"
    lines = ["# Plan changes", ""]
    for title, rows in sections(d, verbose):
        lines += [f"## {title[0].upper()}{title[1:]}", ""]
        lines += [f"- `{row.strip()}`" for row in rows]
        lines.append("")
    return "\n".join(lines)


def as_json(d: PlanDiff, verbose: bool = False) -> dict:
    def cable(c: Cable) -> dict:
        return c.model_dump(mode="json")

    def change(f: FieldChange) -> dict:
        return {"item": f.item, "field": f.field, "old": f.old, "new": f.new}

    return {
        "identical": d.empty,
        "counts": d.counts(),
        "cables_removed": [cable(c) for c in d.cables_removed],
        "cables_moved": [{"old": cable(m.old), "new": cable(m.new)} for m in d.cables_moved],
        "cables_added": [cable(c) for c in d.cables_added],
        "cables_changed": [change(f) for f in d.cables_changed],
        "nodes_added": d.nodes_added,
        "nodes_removed": d.nodes_removed,
        "node_ports": [change(f) for f in d.node_ports],
        "switches_added": d.switches_added,
        "switches_removed": d.switches_removed,
        "switch_fields": [change(f) for f in d.switch_fields],
        "failed_added": d.failed_added,
        "failed_removed": d.failed_removed,
        "routing": {
            s: (
                {"changed": len(rows), "entries": [{"lid": lid, "old": o, "new": n} for lid, o, n in rows]}
                if verbose
                else {"changed": len(rows)}
            )
            for s, rows in d.routing.items()
        },
        "qos": [change(f) for f in d.qos],
        "hosts": [change(f) for f in d.hosts],
        "plan": [change(f) for f in d.other],
    }
