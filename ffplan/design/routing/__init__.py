"""Routing: a full linear forwarding table for every switch of the plan, proven deadlock-free.

`route(plan, failed)` is the design step (`measured_route`: with the route lengths the router measured, for reroute);
`router_for(plan)` gives a subnet's `Router` (the zone router or the tree router) for many failure cases at once (the
sweep).
"""

from ffplan.design.routing.common import RoutingTables
from ffplan.design.routing.dispatch import ENGINE, Router, measured_route, route, router_for
from ffplan.design.routing.tree import TreeRouter
from ffplan.design.routing.zones import ZoneRouter
from ffplan.plan.model import UNROUTED

__all__ = [
    "ENGINE",
    "UNROUTED",
    "Router",
    "RoutingTables",
    "TreeRouter",
    "ZoneRouter",
    "measured_route",
    "route",
    "router_for",
]
