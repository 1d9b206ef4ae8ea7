"""Analyze stage: flows per link for traffic patterns over a plan's routes (or OpenSM's own tables).

Public surface: `analyze(plan, patterns, ...) -> list[PatternResult]`, `PATTERNS`, `read_lfts`.
See docs/routing.md for the patterns and the lower bounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ffplan.analyze.bounds import lower_bound
from ffplan.analyze.flows import LinkLoad, Walker, count_loads, fabric_links
from ffplan.analyze.opensm import OpenSmTables, read_lfts, read_topology_lids
from ffplan.analyze.patterns import PATTERNS, Pattern, Phase, build_pattern
from ffplan.plan.topology import Topology, build_topology, resolve_failed
from ffplan.plan.model import Plan

__all__ = ["PATTERNS", "LinkStat", "OpenSmTables", "PatternResult", "analyze", "plan_tables", "read_lfts",
           "read_topology_lids", "topology_for"]


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

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["top"] = [{"link": t.link, "flows": t.flows} for t in self.top]
        d["mean_load"] = round(self.mean_load, 3)
        d["ratio"] = round(self.ratio, 4)
        return d


def topology_for(plan: Plan) -> Topology:
    """The plan's topology with the routing's failed items marked (so loads skip dead links)."""
    topo = build_topology(plan)
    if plan.routing is not None and plan.routing.failed:
        cables, switches, _ = resolve_failed(topo, plan.routing.failed)
        topo.failed_cables, topo.failed_switches = cables, switches
    return topo


def plan_tables(plan: Plan) -> dict[str, list[int]]:
    if plan.routing is None:
        raise ValueError("the plan has no routing")
    return {lft.switch: lft.ports for lft in plan.routing.lfts}


def analyze(plan: Plan, patterns: list[str] | tuple[str, ...] = PATTERNS, *, scope: str | None = None,
            roles: tuple[str, ...] | None = None, tables: dict[str, list[int]] | None = None, top: int = 5,
            topo: Topology | None = None) -> list[PatternResult]:
    topo = topo or topology_for(plan)
    walker = Walker(topo, tables if tables is not None else plan_tables(plan))
    links = fabric_links(topo)
    results = []
    for name in patterns:
        pat = build_pattern(topo, name, scope, roles)
        worst = None
        for phase in pat.phases:
            load = count_loads(walker, phase.flows)
            mx = max((load.fabric.get(l, 0) for l in links), default=0)
            bound, cut = lower_bound(topo, phase.flows, links)
            ratio = mx / bound if bound else (1.0 if mx == 0 else float("inf"))
            key = (ratio, mx)
            if worst is None or key > worst[0]:
                worst = (key, phase, load, mx, bound, cut, ratio)
        if worst is None:
            continue
        _, phase, load, mx, bound, cut, ratio = worst
        results.append(_result(topo, pat, phase, load, links, mx, bound, cut, ratio, top))
    return results


def _result(topo: Topology, pat: Pattern, phase: Phase, load: LinkLoad, links: list[tuple[str, int]], mx: int,
            bound: int, cut: str, ratio: float, top: int) -> PatternResult:
    values = [load.fabric.get(l, 0) for l in links]
    ranked = sorted(links, key=lambda l: (-load.fabric.get(l, 0), l))[:top]
    stats = []
    for sw, port in ranked:
        peer, pport = topo.switch_peer(sw, port)
        stats.append(LinkStat(f"{sw}[{port}] -> {peer}[{pport}]", load.fabric.get((sw, port), 0)))
    cross = sum(1 for s, d in phase.flows if d in topo.ca_by_lid and topo.ca_by_lid[s].zone != topo.ca_by_lid[d].zone)
    return PatternResult(
        pattern=pat.name, scope=pat.scope, roles=list(pat.roles) if pat.roles else None, description=pat.description,
        phases=len(pat.phases), flows=len(phase.flows), links=len(links), max_load=mx,
        mean_load=sum(values) / len(values) if values else 0.0, min_load=min(values, default=0), bound=bound,
        bound_cut=cut, ratio=ratio, worst_phase=phase.name, ca_max_inject=max(load.inject.values(), default=0),
        ca_max_eject=max(load.eject.values(), default=0), cross_zone_flows=cross, unroutable=len(load.unroutable),
        top=stats,
    )
