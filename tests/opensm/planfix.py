"""Plans for the OpenSM tests: designed from the shipped inventories (cached per session).

While a plan lacks routing or QoS (the design stage that fills them is separate), `complete()` adds a simple
deterministic stand-in: shortest-path routes spread by destination LID (valid, loop-free, not balanced) and a
four-class QoS plan. Once the designer fills both, the real ones are used unchanged.
"""

from __future__ import annotations

from collections import deque
from functools import lru_cache
from pathlib import Path

from ffplan.plan.model import Lft, PortClassQos, Plan, Qos, Routing, TrafficClassPlan, VlArbEntry

ROOT = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=4)
def designed(name: str) -> Plan:
    from ffplan.design import design
    from ffplan.inventory import load_inventory

    return complete(design(load_inventory(ROOT / "inventories" / f"{name}.yaml")))


def complete(plan: Plan) -> Plan:
    update = {}
    if plan.routing is None:
        update["routing"] = stand_in_routing(plan)
    if plan.qos is None:
        update["qos"] = stand_in_qos()
    return plan.model_copy(update=update) if update else plan


def stand_in_routing(plan: Plan) -> Routing:
    sw_lid = {s.name: s.lid for s in plan.switches}
    adj: dict[str, list[tuple[int, str]]] = {s.name: [] for s in plan.switches}
    for c in plan.cables:
        if c.kind == "node-leaf":
            continue
        adj[c.a.device].append((int(c.a.port), c.b.device))
        adj[c.b.device].append((int(c.b.port), c.a.device))
    dests: list[tuple[int, str, int]] = [(s.lid, s.name, 0) for s in plan.switches]
    for n in plan.nodes:
        for p in n.ports:
            dests.append((p.lid, p.leaf, p.leaf_port))
    max_lid = max(l for l, _, _ in dests)
    tables = {s.name: [255] * (max_lid + 1) for s in plan.switches}
    for lid, home, port in dests:
        dist = {home: 0}
        q = deque([home])
        while q:
            u = q.popleft()
            for _, v in adj[u]:
                if v not in dist:
                    dist[v] = dist[u] + 1
                    q.append(v)
        for s in plan.switches:
            if s.name == home:
                tables[s.name][lid] = port
                continue
            if s.name not in dist:
                continue
            choices = sorted(p for p, v in adj[s.name] if dist.get(v, 1 << 30) == dist[s.name] - 1)
            tables[s.name][lid] = choices[lid % len(choices)]
    return Routing(engine="stand-in shortest path", max_lid=max_lid, unrouted_port=255, failed=[],
                   lfts=[Lft(switch=s.name, ports=tables[s.name]) for s in plan.switches])


def stand_in_qos() -> Qos:
    classes = [
        TrafficClassPlan(name="hfreduce", sl=1, vl=1, weight=64, priority="high", source="ffplan default", description="HFReduce"),
        TrafficClassPlan(name="nccl", sl=2, vl=2, weight=128, priority="low", source="ffplan default", description="NCCL"),
        TrafficClassPlan(name="storage", sl=3, vl=3, weight=128, priority="low", source="ffplan default", description="3FS"),
        TrafficClassPlan(name="other", sl=0, vl=0, weight=32, priority="low", source="ffplan default", description="the rest"),
    ]
    sl2vl = [0, 1, 2, 3] + [0] * 12
    pc = PortClassQos(max_vls=4, high_limit=4, vlarb_high=[VlArbEntry(vl=1, weight=64)],
                      vlarb_low=[VlArbEntry(vl=0, weight=32), VlArbEntry(vl=2, weight=128), VlArbEntry(vl=3, weight=128)],
                      sl2vl=sl2vl)
    return Qos(data_vls=8, classes=classes, port_classes={"default": pc, "ca": pc, "swe": pc, "sw0": pc})


def design_routed(inventory: Path) -> Plan:
    """The plan of `inventory`; a three-layer tree, which ffplan's router refuses until its three-layer router
    lands (FF605), is routed by the stand-in instead so its OpenSM files, ibsim boot and exports can be tested."""
    from unittest import mock

    from ffplan.design import design
    from ffplan.design import pipeline
    from ffplan.design.routing import RULE_UNSUPPORTED, route
    from ffplan.diagnostics import StageError
    from ffplan.inventory import load_inventory

    def route_or_stand_in(plan: Plan, *args: object, **kwargs: object) -> Routing:
        try:
            return route(plan, *args, **kwargs)  # type: ignore[arg-type]
        except StageError as exc:
            if not all(d.rule == RULE_UNSUPPORTED for d in exc.diagnostics):
                raise
            return stand_in_routing(plan)

    with mock.patch.object(pipeline, "route", route_or_stand_in):
        return design(load_inventory(inventory))
