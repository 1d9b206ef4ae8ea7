"""Analyze stage: flows per link for traffic patterns over a plan's routes (or OpenSM's own tables).

`analyze(plan, patterns, ...) -> list[PatternResult]`: the link loads, lower bound and skew of each pattern.
See docs/routing.md for the patterns and the lower bounds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ffplan.analyze.bounds import lower_bound
from ffplan.analyze.flows import TopologyArrays, count_loads
from ffplan.analyze.patterns import PATTERNS, Pattern, Phase, build_pattern
from ffplan.plan.topology import Topology, build_topology, resolve_failed
from ffplan.fabric.reach import RouteCounts
from ffplan.fabric.walk import in_trees
from ffplan.plan.model import LftLike, Plan, RouteCheck


@dataclass
class LinkStat:
    link: str  # "z1-leaf01[21] -> z1-spine01[1]"
    flows: int


@dataclass
class PatternResult:
    pattern: str
    scope: str
    roles: list[str] | None
    description: str
    phases: int
    flows: int  # in the worst phase
    links: int  # directed switch-to-switch links
    max_load: int
    mean_load: float
    min_load: int
    bound: int
    bound_cut: str
    ratio: float
    worst_phase: str
    ca_max_inject: int  # most flows one CA port sends (its own cable's load)
    ca_max_eject: int
    cross_zone_flows: int
    unroutable: int
    top: list[LinkStat] = field(default_factory=list)
    # storage-read only: GiB/s each GPU reads when every flow gets the same share of the busiest link or CA port
    storage_gib_s_per_gpu: float | None = None
    # the worst phase's flows on every link by tier ("leaf → spine", "between zones", ...): the HTML report's
    # histograms; not in as_dict (json prints the figures above)
    loads_by_tier: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        del d["loads_by_tier"]
        d["top"] = [{"link": t.link, "flows": t.flows} for t in self.top]
        d["mean_load"] = round(self.mean_load, 3)
        d["ratio"] = round(self.ratio, 4)
        if self.storage_gib_s_per_gpu is None:
            del d["storage_gib_s_per_gpu"]
        else:
            d["storage_gib_s_per_gpu"] = round(self.storage_gib_s_per_gpu, 4)
        return d


def storage_per_gpu(plan: Plan, r: PatternResult) -> float | None:
    """What the storage-read pattern delivers to each GPU: every flow at the rate of the busiest link or CA port
    (link speed / its flows), all flows together divided by the compute nodes' GPUs (ffplan.design.storage)."""
    from ffplan.design.storage import gbps_to_gib_s
    from ffplan.inventory.models import LinkSpeed

    models = {m.name: m for m in plan.node_models}
    gpus = sum(models[n.model].gpus for n in plan.nodes if n.role == "compute" and n.model in models)
    busiest = max(r.max_load, r.ca_max_inject, r.ca_max_eject)
    speed = next((m.speed for m in plan.switch_models if m.name == plan.fabric_switch_model), None)
    if not gpus or not busiest or speed is None:
        return None
    return gbps_to_gib_s(LinkSpeed(speed).gbps) / busiest * r.flows / gpus


def topology_for(plan: Plan) -> Topology:
    """The plan's topology with the routing's failed items marked (so loads skip dead links)."""
    topo = build_topology(plan)
    if plan.routing is not None and plan.routing.failed:
        cables, switches, _ = resolve_failed(topo, plan.routing.failed)
        topo.failed_cables, topo.failed_switches = cables, switches
    return topo


def plan_tables(plan: Plan) -> Mapping[str, LftLike]:
    if plan.routing is None:
        raise ValueError("the plan has no routing")
    return {lft.switch: lft.ports for lft in plan.routing.lfts}


def analyze(
    plan: Plan,
    patterns: list[str] | tuple[str, ...] = PATTERNS,
    *,
    scope: str | None = None,
    roles: tuple[str, ...] | None = None,
    tables: Mapping[str, LftLike] | None = None,
    top: int = 5,
    topo: Topology | None = None,
) -> list[PatternResult]:
    net, lft = _arrays(plan, tables, topo)
    return _patterns(plan, net, lft, patterns, scope, roles, top, None)


def analyze_and_check(
    plan: Plan,
    patterns: list[str] | tuple[str, ...] = PATTERNS,
    *,
    scope: str | None = None,
    roles: tuple[str, ...] | None = None,
    tables: Mapping[str, LftLike] | None = None,
    top: int = 5,
    topo: Topology | None = None,
) -> tuple[list[PatternResult], RouteCheck]:
    """`analyze`, and the route check of the same tables (fabric.reach.check_routes) on the same channels: counted
    over the in-trees the loads of a pattern go over anyway, or on its own when none does."""
    net, lft = _arrays(plan, tables, topo)
    width = lft.shape[1]
    counts = RouteCounts(net.topo, net.channels, width)
    results = _patterns(plan, net, lft, patterns, scope, roles, top, counts)
    if not counts.complete:
        for block in in_trees(net.channels, lft, (net.channels.dest_switch[:width], net.channels.dest_port[:width])):
            counts.add(block)
    return results, counts.result()


def _arrays(
    plan: Plan, tables: Mapping[str, LftLike] | None, topo: Topology | None
) -> tuple[TopologyArrays, np.ndarray]:
    """The plan's topology as arrays, and `tables` (the plan's own when None) as its LFT array."""
    net = TopologyArrays(topo or topology_for(plan))
    return net, net.lft(tables if tables is not None else plan_tables(plan))


def _patterns(
    plan: Plan,
    net: TopologyArrays,
    lft: np.ndarray,
    patterns: list[str] | tuple[str, ...],
    scope: str | None,
    roles: tuple[str, ...] | None,
    top: int,
    counts: RouteCounts | None,
) -> list[PatternResult]:
    results = []
    for name in patterns:
        pat = build_pattern(net, name, scope, roles)
        worst = None
        for phase in pat.phases:
            load, unroutable = count_loads(net, lft, phase.demand, counts)
            mx = int(load.max()) if len(load) else 0
            bound, cut = lower_bound(net, phase.demand)
            ratio = mx / bound if bound else (1.0 if mx == 0 else float("inf"))
            key = (ratio, mx)
            if worst is None or key > worst[0]:
                worst = (key, phase, load, unroutable, mx, bound, cut, ratio)
        if worst is None:
            continue
        _, phase, load, unroutable, mx, bound, cut, ratio = worst
        result = _result(net, pat, phase, load, unroutable, mx, bound, cut, ratio, top)
        if name == "storage-read":
            result.storage_gib_s_per_gpu = storage_per_gpu(plan, result)
        results.append(result)
    return results


def _result(
    net: TopologyArrays,
    pat: Pattern,
    phase: Phase,
    load: np.ndarray,
    unroutable: int,
    mx: int,
    bound: int,
    cut: str,
    ratio: float,
    top: int,
) -> PatternResult:
    topo, ch = net.topo, net.channels
    # the most loaded links first, ties by (switch name, port): a sort of the arrays, not of 65,536 tuples
    by_name = np.empty(len(net.switches), dtype=np.int64)
    by_name[sorted(range(len(net.switches)), key=net.switches.__getitem__)] = np.arange(len(net.switches))
    ports = np.array([port for _, port in ch.ends], dtype=np.int64)
    stats = []
    for c in np.lexsort((ports, by_name[ch.src_of], -load))[:top].tolist():
        sw, port = ch.ends[c]
        peer, pport = topo.switch_peer(net.switches[sw], port)
        stats.append(LinkStat(f"{net.switches[sw]}[{port}] -> {peer}[{pport}]", int(load[c])))
    d = phase.demand
    return PatternResult(
        pattern=pat.name,
        scope=pat.scope,
        roles=list(pat.roles) if pat.roles else None,
        description=pat.description,
        phases=len(pat.phases),
        flows=d.flows,
        links=len(ch.ends),
        max_load=mx,
        mean_load=int(load.sum()) / len(load) if len(load) else 0.0,
        min_load=int(load.min()) if len(load) else 0,
        bound=bound,
        bound_cut=cut,
        ratio=ratio,
        worst_phase=phase.name,
        ca_max_inject=d.max_inject,
        ca_max_eject=d.max_eject,
        cross_zone_flows=d.cross_zone,
        unroutable=unroutable,
        top=stats,
        loads_by_tier=_by_tier(net, load),
    )


def _by_tier(net: TopologyArrays, load: np.ndarray) -> dict[str, np.ndarray]:
    """`load` (flows per channel) split by the tiers a channel joins ("leaf → spine", or "between zones"), in the
    order of TIER_ORDER, then by name."""
    ch, zones = net.channels, net.zone_of_switch
    tiers = sorted({net.topo.tier[s] for s in net.switches})
    tier = np.array([tiers.index(net.topo.tier[s]) for s in net.switches], dtype=np.int64)
    across = len(tiers) ** 2  # the kind of a channel between zones
    kind = np.where(zones[ch.src_of] == zones[ch.peer_of], tier[ch.src_of] * len(tiers) + tier[ch.peer_of], across)
    names = {
        int(k): "between zones" if k == across else f"{tiers[k // len(tiers)]} → {tiers[k % len(tiers)]}"
        for k in np.unique(kind)
    }
    ordered = sorted(names, key=lambda k: (TIER_ORDER.get(names[k], len(TIER_ORDER)), names[k]))
    return {names[k]: load[kind == k] for k in ordered}


TIER_ORDER = {
    name: i for i, name in enumerate(("leaf → spine", "spine → leaf", "spine → core", "core → spine", "between zones"))
}
