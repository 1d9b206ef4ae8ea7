"""Exports of a plan for other tools: Slurm topology.conf, Kubernetes node labels and Kueue's Topology
(kubernetes.py), an Ansible inventory, the NetBox import with the
cable plan (netbox.py), the BOM, and the diagrams of each zone (ffplan.render.diagrams). The templates print;
grouping and hostlist compression are computed here.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any, Callable, NamedTuple

from ffplan.plan.exports import bom_csv
from ffplan.plan.model import Node, NodePort, Plan
from ffplan.plan.subnets import subnet_view
from ffplan.render.diagrams import render_diagrams
from ffplan.render.kubernetes import render_kubernetes
from ffplan.templating import render_template
from ffplan.render.netbox import render_netbox

_NUM = re.compile(r"^(.*?)(\d+)$")


# ---------------------------------------------------------------- Slurm hostlists


def hostlist(names: list[str]) -> str:
    """Slurm hostlist expression: `cn[0001-0015,0020],mgmt1`. Names are grouped by the prefix before their
    trailing digits; a range only joins numbers of the same digit count, so zero padding survives."""
    groups: dict[str, list[tuple[int, str]]] = defaultdict(list)
    plain: list[str] = []
    order: list[str] = []
    for name in dict.fromkeys(names):
        m = _NUM.match(name)
        if m is None or not m.group(1):
            plain.append(name)
            order.append(name)
            continue
        prefix = m.group(1)
        if prefix not in groups:
            order.append("\0" + prefix)
        groups[prefix].append((int(m.group(2)), m.group(2)))
    out = []
    for key in order:
        if not key.startswith("\0"):
            out.append(key)
            continue
        prefix = key[1:]
        items = sorted(set(groups[prefix]), key=lambda t: (t[0], len(t[1])))
        if len(items) == 1:
            out.append(prefix + items[0][1])
            continue
        runs: list[list[tuple[int, str]]] = []
        for num, text in items:
            last = runs[-1][-1] if runs else None
            if last is not None and num == last[0] + 1 and len(text) == len(last[1]):
                runs[-1].append((num, text))
            else:
                runs.append([(num, text)])
        parts = [r[0][1] if len(r) == 1 else f"{r[0][1]}-{r[-1][1]}" for r in runs]
        out.append(f"{prefix}[{','.join(parts)}]")
    return ",".join(out)


# ---------------------------------------------------------------- Slurm topology.conf


def topology_conf(plan: Plan) -> str:
    """topology/tree: every compute node under exactly one leaf (Slurm's tree plugin places a node by its leaf),
    switches above it as cabled. Planes are identical subnets with every node in each, so the first plane stands
    for all; a node with several ports in the subnet (rail-optimized) sits under the leaf of its first port,
    the rail-0 leaf of its scalable unit, which groups the same nodes as every other rail's leaf."""
    stands_for = plan.subnets[0]
    view = subnet_view(plan, stands_for)
    compute = [n for n in view.nodes if n.role == "compute"]
    leaf_nodes: dict[str, list[str]] = defaultdict(list)
    for n in compute:
        leaf_nodes[n.ports[0].leaf].append(n.hostname)
    below: dict[str, list[str]] = defaultdict(list)  # upper switch -> the switches cabled below it
    tier = {s.name: s.tier for s in view.switches}
    for c in view.cables:
        if c.kind != "node-leaf" and c.a.device not in below[c.b.device]:
            below[c.b.device].append(c.a.device)
    zones: list[dict[str, Any]] = []  # the template's view of each zone
    for z in view.zones:
        switches = [s for s in view.switches if s.zone == z.name]
        leaves = [s.name for s in switches if s.tier == "leaf" and leaf_nodes.get(s.name)]
        if not leaves:
            continue
        listed = set(leaves)
        uppers = []
        for level in ("spine", "core"):
            for s in (s for s in switches if s.tier == level):
                children = [c for c in below[s.name] if c in listed and tier[c] != level]
                if children:
                    uppers.append({"name": s.name, "switches": hostlist(children)})
                    listed.add(s.name)
        top_tier = "core" if any(s.tier == "core" and s.name in listed for s in switches) else "spine"
        tops = [s.name for s in switches if s.tier == top_tier and s.name in listed] or leaves
        zones.append(
            {
                "name": z.name,
                "leaves": [
                    {"name": leaf, "nodes": hostlist(leaf_nodes[leaf]), "count": len(leaf_nodes[leaf])}
                    for leaf in leaves
                ],
                "uppers": uppers,
                "top": {"name": z.name, "switches": hostlist(tops)},
            }
        )
    planes = plan.subnets if plan.layout == "planes" and len(plan.subnets) > 1 else []
    return render_template(
        "exports/topology.conf",
        plan_name=plan.inventory.name,
        zones=zones,
        planes=planes,
        stands_for=stands_for,
        rail_optimized=plan.placement == "rail-optimized",
        root_example=hostlist([z["name"] for z in zones]),
        compute_count=len(compute),
    )


# ---------------------------------------------------------------- Ansible


def _group_name(kind: str, name: str) -> str:
    """Ansible group names must be identifiers: other characters become '_'."""
    return f"{kind}_" + re.sub(r"[^A-Za-z0-9_]", "_", name)


class _AnsibleHost(NamedTuple):
    """A host as the Ansible inventory's template prints it (a tuple: its fields are read without a dictionary miss)."""

    name: str
    vars: list[tuple[str, object]]
    planes: list[tuple[str, str]]  # (plane, NIC)
    ports: list[list[tuple[str, object]]] | None  # each port's (key, value) pairs; None: a switch (no ffplan_ports)


def _port_vars(plan: Plan) -> Callable[[Node, NodePort], list[tuple[str, object]]]:
    """What identifies a fabric port beyond its leaf: InfiniBand's LID and port GUID, or a RoCE port's address, the
    leaf's end of its /31 (the gateway), the leaf's ASN, its policy-routing table and MTU."""
    eth = plan.ethernet
    if eth is None:
        return lambda node, p: [("lid", p.lid), ("port_guid", p.port_guid), ("guid_placeholder", p.guid_placeholder)]
    interface = {(h.hostname, h.nic): h for h in eth.hosts}
    asn = {sw.name: sw.asn for sw in eth.switches}

    def roce(node: Node, p: NodePort) -> list[tuple[str, object]]:
        h = interface[(node.hostname, p.nic)]
        return [
            ("address", h.address),
            ("gateway", h.gateway),
            ("leaf_asn", asn[p.leaf]),
            ("table", h.table),
            ("mtu", h.mtu),
        ]

    return roce


def _switch_hosts(plan: Plan) -> list[tuple[_AnsibleHost, str]]:
    """(host, tier) of every switch of a RoCE plan: tier, zone, rack, U, ASN, loopback and a leaf's host block;
    none on InfiniBand (its switches are managed through the subnet manager, not as hosts)."""
    if plan.ethernet is None:
        return []
    switch = {s.name: s for s in plan.switches}
    out: list[tuple[_AnsibleHost, str]] = []
    for eth in plan.ethernet.switches:
        s = switch[eth.name]
        block: list[tuple[str, object]] = [("ffplan_host_block", eth.host_block)] if eth.host_block else []
        facts: list[tuple[str, object]] = [
            ("ffplan_tier", s.tier),
            ("ffplan_zone", s.zone),
            ("ffplan_rack", s.rack),
            ("ffplan_u", s.u),
            ("ffplan_asn", eth.asn),
            ("ffplan_loopback", eth.loopback),
        ]
        out.append((_AnsibleHost(eth.name, facts + block, [], None), str(s.tier)))
    return out


def ansible_inventory(plan: Plan) -> str:
    planes = plan.layout == "planes"
    profile_of = {h: p.name for p in plan.hosts or [] for h in p.hosts}
    port_vars = _port_vars(plan)
    first_keys = ("lid", "port_guid") if plan.ethernet is None else ("address", "gateway", "leaf_asn")
    hosts: list[_AnsibleHost] = []
    groups: dict[str, dict[str, None]] = defaultdict(dict)  # group -> its hosts, in plan order, each once
    sources: dict[str, set[str]] = defaultdict(set)
    for n in plan.nodes:
        first = n.ports[0] if n.ports else None
        hosts.append(
            _AnsibleHost(
                n.hostname,
                [
                    ("ffplan_role", n.role),
                    ("ffplan_node_model", n.model),
                    ("ffplan_profile", profile_of.get(n.hostname, "")),
                    ("ffplan_rack", n.rack),
                    ("ffplan_u", n.u),
                ]
                + (
                    [("ffplan_zone", first.zone), ("ffplan_leaf", first.leaf), ("ffplan_leaf_port", first.leaf_port)]
                    + [(f"ffplan_{k}", v) for k, v in port_vars(n, first) if k in first_keys]
                    if first
                    else []
                ),
                # planes: the NIC each plane reaches the host through (a plane's OpenSM, NCCL_IB_HCA, per-plane tests)
                [(p.zone, p.nic) for p in n.ports] if planes else [],
                [
                    [("nic", p.nic), ("port", p.port), ("zone", p.zone), ("leaf", p.leaf), ("leaf_port", p.leaf_port)]
                    + port_vars(n, p)
                    for p in n.ports
                ],
            )
        )
        memberships = (
            [("role", n.role), ("rack", n.rack)]
            + [("zone", z) for z in dict.fromkeys(p.zone for p in n.ports)]
            + [("leaf", leaf) for leaf in dict.fromkeys(p.leaf for p in n.ports)]
        )
        if n.hostname in profile_of:
            memberships.append(("profile", profile_of[n.hostname]))
        for kind, name in memberships:
            g = _group_name(kind, name)
            sources[g].add(f"{kind}:{name}")
            groups[g][n.hostname] = None
    for sw, name in _switch_hosts(plan):  # a RoCE plan's switches run SONiC: their ASN and loopback for its playbooks
        hosts.append(sw)
        g = _group_name("tier", name)
        sources[g].add(f"tier:{name}")
        groups[g][sw.name] = None
    clashes = sorted(g for g, s in sources.items() if len(s) > 1)
    if clashes:
        raise ValueError(f"Ansible group names collide after sanitising: {', '.join(clashes)}")
    ordered = sorted(groups.items())
    return render_template(
        "exports/ansible-inventory.yaml",
        plan_name=plan.inventory.name,
        hosts=hosts,
        planes=planes,
        groups=[(g, list(h)) for g, h in ordered],
        roce=plan.ethernet is not None,
    )


# ---------------------------------------------------------------- all exports


def render_exports(plan: Plan) -> dict[str, str]:
    files = {
        "exports/topology.conf": topology_conf(plan),
        "exports/ansible-inventory.yaml": ansible_inventory(plan),
        "exports/bom.csv": bom_csv(plan),
        **render_netbox(plan),
        **render_kubernetes(plan),
    }
    files.update(render_diagrams(plan))
    return files
