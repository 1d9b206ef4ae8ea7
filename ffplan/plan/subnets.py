"""A plan's subnets. Zones share one subnet; each plane is a subnet of its own, with its own LIDs, subnet manager
and forwarding tables. Every stage that works on one subnet (routing, the OpenSM files, verify, analyze, reroute,
audit) takes the subnet's view: the same Plan restricted to that subnet's zones, switches, node ports and cables.
"""

from __future__ import annotations

from ffplan.codes.plan import OPTION_VALUE_NOT_IN_PLAN
from ffplan.diagnostics import did_you_mean, option_error
from ffplan.inventory.failed_items import item_name
from ffplan.plan.model import Plan


def subnet_view(plan: Plan, subnet: str) -> Plan:
    """`plan` restricted to `subnet`: its zones, their switches, cables and forwarding tables, and the node ports in
    them (nodes without a port there are left out). A single-subnet plan is its own view."""
    if plan.subnets == [subnet]:
        return plan
    zones = [z for z in plan.zones if z.subnet == subnet]
    if not zones:
        raise KeyError(f"no subnet '{subnet}' in the plan (subnets: {', '.join(plan.subnets)})")
    names = {z.name for z in zones}
    switches = [s for s in plan.switches if s.zone in names]
    in_subnet = {s.name for s in switches}
    nodes = []
    for node in plan.nodes:
        ports = [p for p in node.ports if p.zone in names]
        if ports:
            nodes.append(node.model_copy(update={"ports": ports}))
    cables = [c for c in plan.cables if c.zone in names]
    hostnames = {n.hostname for n in nodes}
    update: dict[str, object] = {
        "zones": zones,
        "switches": switches,
        "nodes": nodes,
        "cables": cables,
        "sm_hosts": [h for h in plan.sm_hosts if h in hostnames],
    }
    if plan.routing is not None:
        lfts = [t for t in plan.routing.lfts if t.switch in in_subnet]
        known = in_subnet | {c.label for c in cables}  # what a failed item of this subnet names
        update["routing"] = plan.routing.model_copy(
            update={
                "lfts": lfts,
                "max_lid": max(len(t.ports) for t in lfts) - 1 if lfts else plan.routing.max_lid,
                "failed": [f for f in plan.routing.failed if item_name(f) in known],
            }
        )
    return plan.model_copy(update=update)


def plane_view(plan: Plan, plane: str | None, command: str) -> Plan:
    """The subnet a one-subnet command (`command`: reroute, audit) works on: `--plane` of a plan with several
    subnets, the plan itself when it has one. Bad or missing --plane: a usage error naming the planes (exit 2)."""
    subnets = plan.subnets
    if plane is None and len(subnets) == 1:
        return plan
    if plane is None:
        raise option_error(
            OPTION_VALUE_NOT_IN_PLAN,
            "--plane",
            f"the plan has {len(subnets)} subnets (planes) and {command} works on "
            "one: each has its own subnet manager, LIDs and routing tables",
            f"add --plane NAME (planes: {', '.join(subnets)})",
        )
    check_plane(plan, plane)
    return subnet_view(plan, plane)


def check_plane(plan: Plan, plane: str) -> None:
    """--plane must name one of the plan's subnets (a usage error, exit 2, naming them otherwise)."""
    subnets = plan.subnets
    if plane not in subnets:
        raise option_error(
            OPTION_VALUE_NOT_IN_PLAN,
            "--plane",
            f"plane {plane!r} is not in the plan",
            " ".join(filter(None, [did_you_mean(plane, subnets), "planes: " + ", ".join(subnets)])),
        )


def subnet_views(plan: Plan) -> list[tuple[str, Plan]]:
    """(subnet, view) for every subnet in plan order."""
    return [(subnet, subnet_view(plan, subnet)) for subnet in plan.subnets]
