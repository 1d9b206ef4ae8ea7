"""Live re-routing: the plan and the fabric as it is now -> the file routing engine's input for that fabric.

The fabric as it is now is either the text `ibnetdiscover` prints on the live subnet or a list of failed items
(cable labels, switch names, `switch[port]`). Switches are matched by node GUID, CA ports by port GUID, links
by both ends and port numbers; whatever the plan has and the fabric lacks is failed. The router
(`ffplan.design.routing.route`) re-routes around it, and the LFT file lists only the LIDs of ports that are up,
because OpenSM 3.3.23 corrupts its heap on entries above the highest LID it found (docs/operations.md).
The file replaces the one OpenSM reads atomically; a SIGHUP makes OpenSM run a heavy sweep, which re-reads it.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from ffplan.fabric.discovery import AGGREGATION_NODE, DiscoveredFabric
from ffplan.inventory.failed_items import parse_item
from ffplan.plan.model import MAX_LID, Plan, Routing
from ffplan.plan.topology import build_topology, resolve_failed
from ffplan.opensm import Subnet, build_fabric
from ffplan.opensm.layout import View

if TYPE_CHECKING:
    from ffplan.fabric.walk import RouteLengths
    from ffplan.verify.arrays import Reach


@dataclass
class Missing:
    """What the plan has and the fabric lacks (names and cable labels), and what the fabric has beyond the plan."""

    switches: list[str]
    cables: list[str]  # switch-to-switch cables down while both switches are up
    ca_ports: list[str]  # labels of node-leaf cables whose CA port is absent while the leaf is up
    unexpected: list[str]  # discovered links that are not planned
    unplanned_nodes: list[str]  # discovered switches and CA ports whose GUID the plan does not have
    wrong_kind: list[str]  # planned switches whose GUID the fabric reports as a CA

    @property
    def failed(self) -> list[str]:
        return sorted(self.switches + self.cables + self.ca_ports)

    def beyond_failures(self) -> list[str]:
        """Why this fabric is not the plan's fabric with parts down, one line per reason (empty: it is).

        Tables for such a fabric would black-hole what is cabled: a CA port on an unplanned link or with an
        unplanned GUID gets a LID from OpenSM and no route, so reroute refuses it and points to audit."""
        reasons = []
        for what, items in (
            ("node(s) the plan reports as another kind", self.wrong_kind),
            ("link(s) the plan does not have", self.unexpected),
            ("switch(es) or CA port(s) whose GUID the plan does not have", self.unplanned_nodes),
        ):
            if items:
                more = f", ... ({len(items) - 3} more)" if len(items) > 3 else ""
                reasons.append(f"{len(items)} {what}: " + ", ".join(items[:3]) + more)
        return reasons


def missing_from_discovery(plan: Plan, topo: DiscoveredFabric) -> Missing:
    """Compare the planned fabric with a discovered one (`ibnetdiscover` output parsed by fabric.discovery)."""
    switch_guid = {s.name: s.node_guid for s in plan.switches}
    up = {s.name for s in plan.switches if topo.kind.get(s.node_guid) == "Switch"}
    planned_port_guid = {(p.node_guid, p.port): p.port_guid for n in plan.nodes for p in n.ports}
    ca_port_guids = set(planned_port_guid.values())
    desc = topo.desc
    switch_nodes = {g for g, kind in topo.kind.items() if kind == "Switch"}
    port_guid = topo.port_guid

    def name(node: str, port: int | None = None) -> str:
        return f"{desc.get(node) or node}" + ("" if port is None else f"[{port}]")

    unplanned = {name(g) for g in switch_nodes - set(switch_guid.values())}

    # A link is keyed by its two ends' keys, in order. A switch's end: its (node GUID, port) as discovered. A CA
    # port: ("ca", its port GUID), the one ibnetdiscover prints on the CA port line, else (an ibsim net file) the
    # one the plan gives that node GUID and port number.
    def ca_key(end: tuple[str, int]) -> tuple[str, str]:
        pg = port_guid.get(end) or planned_port_guid.get(end, f"{end[0]}[{end[1]}]")
        if pg not in ca_port_guids and desc.get(end[0]) != AGGREGATION_NODE:
            unplanned.add(f"{name(*end)} (port GUID {pg})")
        return ("ca", pg)

    found: dict[tuple, tuple] = {}  # link -> its two ends in the fabric
    for a, b in topo.links:  # most are switch-to-switch: no call and no new key for their ends
        x = a if a[0] in switch_nodes else ca_key(a)
        y = b if b[0] in switch_nodes else ca_key(b)
        found[(x, y) if x <= y else (y, x)] = (a, b)
    planned: dict[tuple, tuple[str, str, tuple[str, ...]]] = {}  # link -> (kind, label, switches it needs)
    for c in plan.cables:
        if c.kind != "node-leaf":
            ends = ((switch_guid[c.a.device], int(c.a.port)), (switch_guid[c.b.device], int(c.b.port)))
            planned[_link(*ends)] = (c.kind, c.label, (c.a.device, c.b.device))
    for n in plan.nodes:
        for p in n.ports:
            planned[_link((switch_guid[p.leaf], p.leaf_port), ("ca", p.port_guid))] = (
                "node-leaf",
                p.cable,
                (p.leaf,),
            )
    cables: list[str] = []
    ca_ports: list[str] = []
    for link in planned.keys() - found.keys():  # the differences of the two, in C: a link at a time in Python only here
        kind, label, needs = planned[link]
        if all(s in up for s in needs):
            (ca_ports if kind == "node-leaf" else cables).append(label)
    # a SHARP Aggregation Node is a CA on its switch's extra port, inside the switch: no cable of the plan
    unexpected = [
        f"{name(*a)} <-> {name(*b)}"
        for a, b in (found[link] for link in found.keys() - planned.keys())
        if AGGREGATION_NODE not in (desc.get(a[0]), desc.get(b[0]))
    ]
    wrong_kind = [
        f"{s.name} ({s.node_guid}) is a {topo.kind[s.node_guid]}"
        for s in plan.switches
        if topo.kind.get(s.node_guid, "Switch") != "Switch"
    ]
    return Missing(
        switches=sorted(set(switch_guid) - up),
        cables=sorted(cables),
        ca_ports=sorted(ca_ports),
        unexpected=sorted(unexpected),
        unplanned_nodes=sorted(unplanned),
        wrong_kind=sorted(wrong_kind),
    )


def _link(x: tuple, y: tuple) -> tuple:
    """A link by its two ends' keys, whichever end is named first."""
    return (x, y) if x <= y else (y, x)


@dataclass
class Items:
    """Failed items sorted by what they are; `switch[port]` references become cable labels."""

    names: list[str]  # the items as given
    switches: set[str]
    cables: set[str]  # switch-to-switch cable labels
    ca_cables: set[str]  # node-leaf cable labels
    unknown: list[str]

    def view(self) -> View:
        """The sub-fabric without them."""
        return View(drop_cables=frozenset(self.cables | self.ca_cables), drop_switches=frozenset(self.switches))


def resolve_items(plan: Plan, items: list[str]) -> Items:
    if not items:  # an intact fabric: nothing to look up in the plan's topology (0.3 s to build on 16,384 ports)
        return Items([], set(), set(), set(), [])
    # what --fabric finds (switch names, cable labels) needs only the cables' kinds, keyed as the topology keys them
    kind: dict[str, str] = {c.label: c.kind for c in plan.cables if c.kind != "node-leaf"}
    kind.update((p.cable, "node-leaf") for n in plan.nodes for p in n.ports)
    switches = {s.name for s in plan.switches}
    if all(parse_item(item) == item and (item in kind or item in switches) for item in items):
        cables = {item for item in items if item in kind}
        ca_cables = {label for label in cables if kind[label] == "node-leaf"}
        return Items(items, set(items) - cables, cables - ca_cables, ca_cables, [])
    topo = build_topology(plan)  # switch[port] references, unknown items
    cables, switches, unknown = resolve_failed(topo, items)
    ca_cables = {label for label in cables if topo.by_label[label][0] == "node-leaf"}
    return Items(items, switches, cables - ca_cables, ca_cables, [items[i] for i in unknown])


def failed_items(plan: Plan, failed: list[str]) -> Items:
    """What a re-route avoids: the items the plan's routing already avoids and `failed`, sorted and resolved."""
    assert plan.routing is not None
    return resolve_items(plan, sorted(set(plan.routing.failed) | set(failed)))


@dataclass(frozen=True)
class AggregationNode:
    """A SHARP Aggregation Node found by discovery: a CA inside `switch`, on its extra port, with the LID OpenSM gave
    it. The plan cannot know it (its GUID and LID appear only on the live fabric), so reroute adds its routes."""

    port_guid: str
    lid: int
    switch: str
    port: int


def aggregation_nodes(plan: Plan, topo: DiscoveredFabric) -> list[AggregationNode]:
    """The Aggregation Nodes of the plan's switches that discovery shows with a unicast LID."""
    nodes = {g for g, desc in topo.desc.items() if desc == AGGREGATION_NODE}
    if not nodes:  # no link to look for (98k links of a 16,384-endpoint fabric)
        return []
    switch_of = {s.node_guid: s.name for s in plan.switches}
    out = []
    for (a, pa), (b, pb) in sorted(link for link in topo.links if link[0][0] in nodes or link[1][0] in nodes):
        for (sw, port), (node, node_port) in (((a, pa), (b, pb)), ((b, pb), (a, pa))):
            lid = topo.port_lid.get((node, node_port), 0)
            if (
                sw in switch_of
                and topo.kind.get(node) == "Ca"
                and topo.desc.get(node) == AGGREGATION_NODE
                and 0 < lid <= MAX_LID
            ):
                out.append(AggregationNode(topo.port_guid.get((node, node_port), node), lid, switch_of[sw], port))
    return out


def _route_aggregation_nodes(
    routing: Routing, plan: Plan, nodes: list[AggregationNode], down: set[str], taken: set[int]
) -> tuple[Routing, list[AggregationNode]]:
    """Every switch forwards an Aggregation Node's LID as it forwards its switch's LID (the same up*/down* path,
    so the deadlock proof holds), and its switch to the node's port. Nodes of switches that are down, or whose LID
    a port of the plan or another node holds, get no route. Returns the routing and the nodes it routes."""
    lid_of = {s.name: s.lid for s in plan.switches}
    shared = {lid for lid, count in Counter(n.lid for n in nodes).items() if count > 1}  # ambiguous: no route
    nodes = [n for n in nodes if n.switch not in down and n.lid not in taken and n.lid not in shared]
    if not nodes:
        return routing, []
    width = max(routing.max_lid, *(n.lid for n in nodes)) + 1
    lfts = []
    for lft in routing.lfts:
        ports = np.full(width, routing.unrouted_port, dtype=lft.ports.dtype)
        ports[: len(lft.ports)] = lft.ports
        for n in nodes:
            ports[n.lid] = n.port if lft.switch == n.switch else ports[lid_of[n.switch]]
        lfts.append(lft.model_copy(update={"ports": ports}))
    return routing.model_copy(update={"lfts": lfts, "max_lid": width - 1}), nodes


@dataclass(frozen=True)
class RouteChecks:
    """What a re-route changed and what its tables reach."""

    entries_changed: int  # (switch, LID) entries of the degraded fabric routed differently from the plan
    switches_changed: int
    ca_pairs: Reach
    switch_lids: Reach


@dataclass
class Rerouted:
    failed: list[str]
    plan: Plan  # the plan with the new routing
    fab: Subnet  # the degraded fabric: ffplan.opensm.files.lfts_chunks(fab) is the file engine's input for it
    route_s: float
    before: Subnet  # the same sub-fabric with the plan's routing
    routed: list[AggregationNode]  # the Aggregation Nodes the new routing reaches
    measured: RouteLengths | None = None  # the route lengths of the new tables, when the router measured them

    @cached_property
    def checks(self) -> RouteChecks:
        """Computed when first asked: the CLI asks while a thread writes the LFT file."""
        from ffplan.fabric.arrays import Channels
        from ffplan.verify.arrays import planned_array, reachability

        fab = self.fab
        width = max(fab.lid_owner) + 1
        live = np.array(sorted(fab.lid_owner), dtype=np.int64)  # the LIDs of the ports that are up
        after = planned_array(fab, width)
        differs = planned_array(self.before, width) != after
        gone = np.ones(width, dtype=bool)
        gone[live] = False
        differs[:, gone] = False  # no port is up at these LIDs: not in the file (a few columns, cheaper than live's)
        changed = np.count_nonzero(differs, axis=1)
        ca_pairs, switch_lids = reachability(
            fab, Channels.of_subnet(fab, [(n.lid, n.switch, n.port) for n in self.routed]), after, self.measured
        )
        return RouteChecks(int(changed.sum()), int((changed > 0).sum()), ca_pairs, switch_lids)


def reroute(plan: Plan, failed: list[str] | Items, aggregation: list[AggregationNode] | None = None) -> Rerouted:
    """Route `plan` around `failed` (on top of what the plan already avoids; or the Items `failed_items` resolved)
    and render the degraded fabric's LFTs, with routes to the SHARP Aggregation Nodes discovery found
    (`aggregation`); `Rerouted.checks` says what changed and what the tables reach.

    A CA port that is down needs no new route (its LID just has no port): it only leaves the file. When nothing
    else is down beyond what the plan's routing already avoids, the plan's own (proven) routing is what routing
    again gives: it is taken as it is."""
    from ffplan.design.routing import ENGINE, measured_route

    items = failed if isinstance(failed, Items) else failed_items(plan, failed)
    avoid = sorted(items.switches | items.cables) + items.unknown  # the router refuses unknown ones
    assert plan.routing is not None
    started = time.perf_counter()
    measured = None
    if plan.routing.engine == ENGINE and plan.routing.deadlock is not None and plan.routing.failed == avoid:
        routing = plan.routing  # design routed (and proved) this very case: 3.7 s of a 16,384-endpoint intact fabric
    else:
        routing, measured = measured_route(plan, failed=avoid)
    route_s = time.perf_counter() - started
    view = items.view()
    before = build_fabric(plan, view)
    routing, routed = _route_aggregation_nodes(routing, plan, aggregation or [], items.switches, set(before.lid_owner))
    new_plan = plan.model_copy(update={"routing": routing})
    # the same sub-fabric (build_fabric reads no routing), its own LID owners: the routed nodes join them below
    fab = replace(before, plan=new_plan, lid_owner=dict(before.lid_owner))
    for n in routed:  # the routed nodes join the fabric the walk checks
        fab.lid_owner[n.lid] = (n.port_guid, AGGREGATION_NODE)
    return Rerouted(
        failed=items.names, plan=new_plan, fab=fab, route_s=route_s, before=before, routed=routed, measured=measured
    )
