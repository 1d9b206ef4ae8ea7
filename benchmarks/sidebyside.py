"""ffplan's routes next to OpenSM's own engines on the same degraded fabric, every table installed by the real
OpenSM in ibsim and read back with dump_fts.

For each failure case (failed cables and switches) the (sub-)fabric without them is booted once per routing:
ffplan's tables re-routed around the failure (`ffplan.reroute`) through the file engine, and OpenSM's ftree, updn,
minhop and dfsssp computing their own. Flows (source CA port, destination LID) are counted per directed
switch-to-switch link for three patterns: A = all-to-all among compute ports, B = all-to-all among all CA
ports, C = every compute port to every storage port (as in `ffplan analyze`, no flow between two ports of one
host). The lower bound is analyze's on the plan's topology as booted: the cuts out of and into every leaf over its
live links, and on a three-layer tree the live spine-core links out of and into every pod.
"""

from __future__ import annotations

import math
import re
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import numpy as np

from ffplan.plan.model import Plan
from ffplan.opensm import layout as L
from ffplan.opensm import Subnet, build_fabric
from ffplan.opensm.files import opensm_files
from ffplan.fabric.discovery import DiscoveredFabric
from ffplan.verify.boot import boot
from ffplan.verify.sim import SimError
from ffplan.verify.walk import Tables, walk_switch_lids

if TYPE_CHECKING:  # analyze loads its arrays only when a bound is asked for
    from ffplan.analyze.flows import TopologyArrays

ENGINES = ("ffplan", "ftree", "updn", "minhop", "dfsssp")
PATTERNS = {
    "A": ("compute", "compute"),  # all-to-all among compute ports
    "B": (None, None),  # all-to-all among all CA ports
    "C": ("compute", "storage"),  # every compute port to every storage port
}


@dataclass
class Load:
    max: int
    bound: int
    unreachable: int  # pattern flows that do not arrive

    @property
    def ratio(self) -> float:
        return self.max / self.bound if self.bound else (1.0 if self.max == 0 else math.inf)


@dataclass
class Row:
    case: str
    routing: str
    loads: dict[str, Load] = field(default_factory=dict)
    ca_pairs_unreachable: int = 0
    switch_lids_unreachable: int = 0
    error: str = ""


def pattern_load(
    topo: DiscoveredFabric, tables: dict[str, dict[int, int]], sources: set, dests: set, host: dict | None = None
) -> tuple[Counter, int]:
    """Flows per directed inter-switch link (switch GUID, egress port) for every (source, destination) CA port
    pair of the pattern on two hosts (`host`: CA port -> its host, as analyze: no flow between two ports of one
    host; without it, every pair of two ports); and the number of pairs that do not arrive."""
    t = Tables(topo, tables, topo.desc)
    host = host if host is not None else {gp: gp for gp in sources | dests}
    by_switch: Counter = Counter(t.attach[gp] for gp in sources if gp in t.attach)
    same_host: Counter = Counter((t.attach[gp], host.get(gp)) for gp in sources if gp in t.attach)
    start, lids, weight = [], [], []
    for dst in dests:
        dlid = topo.port_lid.get(dst) if topo.kind.get(dst[0]) == "Ca" else None
        if dlid is None:
            continue
        for sw, n in by_switch.items():
            n -= same_host[(sw, host.get(dst))]
            if n > 0:
                start.append(t.index[sw])
                lids.append(dlid)
                weight.append(n)
    load: Counter = Counter()
    if not start:
        return load, 0
    w = t.walk(np.array(start, dtype=np.int64), np.array(lids, dtype=np.int64), trace=True)
    flow = np.array(weight, dtype=np.int64)
    flows = w.loads(flow, len(t.ch.ends))
    for c in np.flatnonzero(flows).tolist():
        i, port = t.ch.ends[c]
        load[(t.switches[i], port)] = int(flows[c])
    return load, int(flow[~w.reached].sum())


def booted_topology(fab: Subnet) -> tuple[TopologyArrays, dict[int, str]]:
    """The plan's topology as the view boots it (its zone only, without its dropped cables and switches), and each CA
    LID's host."""
    from ffplan.analyze.flows import TopologyArrays
    from ffplan.plan.topology import build_topology

    topo = build_topology(fab.plan)
    view = fab.view
    topo.failed_cables = set(view.drop_cables)
    topo.failed_switches = set(view.drop_switches) | {s for s in topo.lid if view.zone and topo.zone_of[s] != view.zone}
    return TopologyArrays(topo), {lid: ca.host for lid, ca in topo.ca_by_lid.items()}


def plan_bound(
    fab: Subnet, sources: set[int], dests: set[int], booted: tuple[TopologyArrays, dict[int, str]] | None = None
) -> tuple[int, str]:
    """analyze's lower bound (ffplan.analyze.bounds: the cuts out of and into every leaf, and on a three-layer tree
    the spine-core links out of and into every pod) for the flows between the plan LIDs `sources` and `dests` on two
    hosts, on `booted` (default: booted_topology(fab))."""
    from ffplan.analyze.bounds import lower_bound
    from ffplan.analyze.flows import all_to_all_demand, pair_demand

    net, host = booted or booted_topology(fab)
    if sources == dests:
        demand = all_to_all_demand(net, [sorted(sources)])
    else:
        demand = pair_demand(net, [(a, b) for a in sorted(sources) for b in sorted(dests) if host[a] != host[b]])
    return lower_bound(net, demand)


def pattern_loads(topo: DiscoveredFabric, tables: dict[str, dict[int, int]], fab: Subnet) -> dict[str, Load]:
    """Patterns A, B and C on a (read-back) topology, each against analyze's bound on the plan (plan_bound); the CA
    ports' roles, hosts and plan LIDs come from the plan's fabric, by port GUID (a CA's node GUID in ibsim need not
    be the plan's)."""
    by_guid = {p.port_guid: (ca, p) for ca in fab.cas for p in ca.ports}
    ports = {
        gp: by_guid[g]
        for gp, g in topo.port_guid.items()
        if topo.kind.get(gp[0]) == "Ca" and gp in topo.port_lid and g in by_guid
    }
    host = {gp: ca.hostname for gp, (ca, _) in ports.items()}
    booted = booted_topology(fab)
    loads = {}
    for name, (src_role, dst_role) in PATTERNS.items():
        sources = {gp for gp, (ca, _) in ports.items() if src_role in (None, ca.role)}
        dests = {gp for gp, (ca, _) in ports.items() if dst_role in (None, ca.role)}
        load, lost = pattern_load(topo, tables, sources, dests, host)
        bound, _ = plan_bound(fab, {ports[gp][1].lid for gp in sources}, {ports[gp][1].lid for gp in dests}, booted)
        loads[name] = Load(max(load.values(), default=0), bound, lost)
    return loads


def _engine_files(plan: Plan, view: L.View, engine: str, failed: list[str]) -> tuple[dict[str, str], str, Subnet]:
    """(files, opensm.conf name, fabric) to boot `engine` on the view: ffplan's re-routed tables through the file
    engine, or OpenSM's engine with the ftree configuration's GUID files (updn reads the root GUIDs too)."""
    from ffplan.reroute import reroute

    if engine == "ffplan":
        routed = reroute(plan, failed).plan if failed else plan
        return opensm_files(routed, L.DEFAULT_PREFIX, view, engines=("file",)), L.CONF, build_fabric(routed, view)
    files = opensm_files(plan, L.DEFAULT_PREFIX, view, engines=("ftree",))
    conf = f"opensm-{engine}.conf"
    files[conf] = re.sub(r"(?m)^routing_engine .*$", f"routing_engine {engine},no_fallback", files[L.FTREE_CONF])
    return files, conf, build_fabric(plan, view)


def measure_case(
    plan: Plan,
    case: str,
    failed: list[str],
    zone: str | None,
    tools: dict[str, str],
    workdir: Path,
    engines: tuple[str, ...] = ENGINES,
    timeout: float = 120.0,
    progress: Callable[[str], None] = lambda s: None,
) -> list[Row]:
    from ffplan.reroute import resolve_items

    items = resolve_items(plan, failed)
    if items.unknown:
        raise ValueError(f"{case}: not a cable, switch or switch[port] of the plan: {', '.join(items.unknown)}")
    base = items.view()
    view = L.View(zone=zone, drop_cables=base.drop_cables, drop_switches=base.drop_switches)
    rows = []
    for engine in engines:
        row = Row(case, engine)
        rows.append(row)
        files, conf, fab = _engine_files(plan, view, engine, failed)
        progress(f"{case}: {engine}")
        try:
            b = boot(fab, tools, Path(tempfile.mkdtemp(prefix=f"{engine}-", dir=workdir)), conf, timeout, files)
        except SimError as exc:
            row.error = str(exc).splitlines()[0]
            continue
        row.loads = pattern_loads(b.topo, b.tables, fab)
        row.ca_pairs_unreachable = row.loads["B"].unreachable
        row.switch_lids_unreachable = walk_switch_lids(b.topo, b.tables).broken
    return rows


def markdown(rows: list[Row]) -> str:
    lines = [
        "| case | routing | " + " | ".join(PATTERNS) + " | unreachable CA pairs | unreachable switch-LID pairs |",
        "|---|---|" + "---|" * (len(PATTERNS) + 2),
    ]
    last = None
    for r in rows:
        case = r.case if r.case != last else ""
        last = r.case
        if r.error:
            lines.append(f"| {case} | {r.routing} | " + " | ".join("-" for _ in PATTERNS) + f" | {r.error} | |")
            continue
        cells = [f"{r.loads[p].max:,} ({r.loads[p].ratio:.2f})" for p in PATTERNS]
        lines.append(
            f"| {case} | {r.routing} | "
            + " | ".join(cells)
            + f" | {r.ca_pairs_unreachable:,} | {r.switch_lids_unreachable:,} |"
        )
    return "\n".join(lines) + "\n"
