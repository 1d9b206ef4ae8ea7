"""Routing: a full linear forwarding table (LFT) for every switch of the plan, each subnet routed on its own by the
router its fabric needs (`router_for`): the zone router (`zones`) for two-layer zones joined by inter-zone links, the
tree router (`tree`, with its `rebalance`) for pure fat trees. Both are a `Router`: failure-independent state built
once, then one call per failure case. The routes are proven deadlock-free (ffplan.fabric.deadlock) and checked
(ffplan.fabric.reach) before the plan is written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Protocol

import numpy as np

from ffplan.codes.design import ROUTING_UNSUPPORTED
from ffplan.fabric.reach import check_routes
from ffplan.fabric.walk import RouteLengths
from ffplan.design.routing.common import RoutingTables, intra_slots, unknown_failed
from ffplan.design.routing.rebalance import Rebalance
from ffplan.design.routing.relief import relieve
from ffplan.design.routing.tree import TreeCase, TreeRouter
from ffplan.design.routing.zones import ZoneRouter
from ffplan.diagnostics import COMMAND_LINE, Collector, StageError
from ffplan.inventory.failed_items import item_name
from ffplan.plan.model import UNROUTED, DeadlockProof, Lft, Plan, RouteCheck, Routing
from ffplan.plan.subnets import subnet_views
from ffplan.plan.topology import Topology, build_topology, resolve_failed

if TYPE_CHECKING:
    from ffplan.fabric.arrays import Channels
    from ffplan.inventory import LoadedInventory

ENGINE = "ffplan d-mod-k"


class Router(Protocol):
    """A subnet's router: what does not depend on failures is computed once, so one router serves any number of
    failure cases (the sweep); neither call changes it."""

    topo: Topology

    def tables(
        self, failed: Iterable[str] = (), *, loaded: LoadedInventory | None = None, inventory_items: int = 0
    ) -> RoutingTables:
        """The tables of the case `failed` (cable labels, switch names, `switch[port]`); FF601 for an unknown item."""
        ...

    def proven_tables(
        self,
        failed: Iterable[str],
        intact_channels: Channels | None = None,
        *,
        loaded: LoadedInventory | None = None,
        inventory_items: int = 0,
    ) -> tuple[RoutingTables, DeadlockProof, Channels]:
        """(`tables(failed)`, its deadlock proof, its channels): routes left open as needed for the proof."""
        ...


def route(
    plan: Plan, failed: Iterable[str] = (), *, check: bool = True, loaded: LoadedInventory | None = None
) -> Routing:
    """Route `plan` around `failed` (cable labels, switch names, `switch[port]`), prove the routes deadlock-free
    and return the plan's `Routing`: each subnet is routed on its own (its switches' tables cover its own LIDs).

    When designing, `loaded` is the inventory: its `fabric.failed_links` are avoided too and an unknown item is
    reported at its line (items of `failed` as the `--exclude-link` option). Raises StageError (FF601) for an
    unknown failed item and (FF602) for a channel dependency cycle."""
    return measured_route(plan, failed, check=check, loaded=loaded)[0]


def measured_route(
    plan: Plan, failed: Iterable[str] = (), *, check: bool = True, loaded: LoadedInventory | None = None
) -> tuple[Routing, RouteLengths | None]:
    """`route`, and the route lengths of its tables when the router measured them on the way (a single subnet's,
    after failures; RoutingTables.lengths), else None."""
    inv_failed = list(loaded.inventory.fabric.failed_links) if loaded is not None else []
    items = inv_failed + list(failed)
    if len(plan.subnets) == 1:
        return _route_subnet(plan, items, check, loaded, len(inv_failed))
    topo = build_topology(plan)
    _, _, unknown = resolve_failed(topo, items)
    if unknown:
        raise unknown_failed(topo, items, unknown, loaded, len(inv_failed))
    subnet_of = {z.name: z.subnet for z in plan.zones}
    # a cable's end a (node-leaf: its leaf) or the switch of `switch[port]` names the item's subnet
    item_subnet = [
        subnet_of[topo.zone_of[topo.by_label[item][1] if item in topo.by_label else item_name(item)]] for item in items
    ]
    parts = [
        _route_subnet(view, [item for item, sub in zip(items, item_subnet) if sub == subnet], check, None, 0)[0]
        for subnet, view in subnet_views(plan)
    ]
    return _merged(plan, parts, sorted(set(items))), None


def _route_subnet(
    plan: Plan, items: list[str], check: bool, loaded: LoadedInventory | None, inventory_items: int
) -> tuple[Routing, RouteLengths | None]:
    router = router_for(plan, loaded)
    proof = routes = None
    if check:
        rt, proof, channels = router.proven_tables(items, loaded=loaded, inventory_items=inventory_items)
        routes = check_routes(rt.topo, rt.tables, channels, rt.lengths)
    else:
        rt = router.tables(items, loaded=loaded, inventory_items=inventory_items)
    lfts = [Lft(switch=s.name, ports=np.array(rt.tables[s.name], dtype=np.uint8)) for s in plan.switches]
    routing = Routing(
        engine=ENGINE,
        max_lid=rt.max_lid,
        unrouted_port=UNROUTED,
        failed=rt.failed,
        deadlock=proof,
        check=routes,
        lfts=lfts,
    )
    if rt.lengths is None or rt.channels is None:
        return routing, None
    return routing, RouteLengths(rt.channels, rt.lengths)  # (measured on the case's own channels)


def router_for(plan: Plan, loaded: LoadedInventory | None = None) -> Router:
    """The router of one subnet: the tree router for pure fat trees (no inter-zone links: planes, single zones,
    three-layer trees; it balances sparsely filled leaves), the two-layer router for zones joined by inter-zone links
    (Fire-Flyer 2's)."""
    topo = build_topology(plan)
    if topo.inter_zone:
        if all(z.layers == 2 for z in plan.zones):
            return ZoneRouter(topo)
        c = Collector(loaded.source.file if loaded else COMMAND_LINE)
        c.error(
            ROUTING_UNSUPPORTED,
            ("fabric", "inter_zone_links"),
            "ffplan cannot route three-layer trees joined by inter-zone links",
            "plan each three-layer tree as a plane of its own, or use two-layer zones",
        )
        raise StageError(c.items)
    slots: dict[int, int] = {}
    for zone in topo.zones:
        slots.update(intra_slots(topo, zone).slot)
    return TreeRouter(topo, slots, _rebalance, _relieve)


def _merged(plan: Plan, parts: list[Routing], failed: list[str]) -> Routing:
    """One Routing of the subnets' routings: each switch keeps its subnet's table; proofs and checks add up."""
    table = {t.switch: t for part in parts for t in part.lfts}
    proofs = [p.deadlock for p in parts if p.deadlock is not None]
    checks = [p.check for p in parts if p.check is not None]
    proof = check = None
    if proofs:
        proof = proofs[0].model_copy(
            update={
                "scope": proofs[0].scope + " (each subnet on its own)",
                "channels": sum(p.channels for p in proofs),
                "dependencies": sum(p.dependencies for p in proofs),
                "acyclic": all(p.acyclic for p in proofs),
                "valley_turns": sum(p.valley_turns for p in proofs),
            }
        )
    if checks:
        check = RouteCheck(**{f: sum(getattr(c, f) for c in checks) for f in RouteCheck.model_fields})
    return Routing(
        engine=parts[0].engine,
        max_lid=max(p.max_lid for p in parts),
        unrouted_port=UNROUTED,
        failed=failed,
        deadlock=proof,
        check=check,
        lfts=[table[s.name] for s in plan.switches],
    )


def _rebalance(case: TreeCase) -> None:
    Rebalance(case).run()


_relieve = relieve  # (module attributes: a benchmark or test routes by the minimal repair alone with both None)
