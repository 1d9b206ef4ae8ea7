"""Traffic patterns as lists of flows (source CA LID, destination CA LID), in one or more phases.

Scope `zone` runs the pattern inside every zone at once (Fire-Flyer 2 keeps jobs inside a zone); scope
`fabric` runs it once over all zones. A flow between two nodes uses ports in a zone both have (a dual-homed
storage server is reached through its port in the source's zone), else their first ports.
"""

from __future__ import annotations

from dataclasses import dataclass

from ffplan.analyze.flows import Demand, TopologyArrays, all_to_all_demand, pair_demand
from ffplan.plan.topology import Topology

Roles = tuple[str, ...] | None  # the node roles a pattern covers; None: every role
Flows = tuple[str, list[tuple[int, int]]]  # a phase's name and its (source CA LID, destination CA LID) flows

PATTERNS = ("all-to-all", "shift", "ring", "double-binary-tree", "storage-incast", "storage-read")
DEFAULT_SCOPE = {
    "all-to-all": "zone",
    "shift": "zone",
    "ring": "zone",
    "double-binary-tree": "fabric",
    "storage-incast": "zone",
    "storage-read": "zone",
}
DEFAULT_ROLES: dict[str, Roles] = {
    "all-to-all": None,
    "shift": None,
    "ring": ("compute",),
    "double-binary-tree": ("compute",),
    "storage-incast": ("compute",),
    "storage-read": ("compute",),
}
DESCRIPTION = {
    "all-to-all": "every CA port to every other CA port",
    "shift": "leaf shift k = 1..L-1: the j-th port of leaf i to the j-th port of leaf i+k (one phase per k)",
    "ring": "ring all-reduce: node r to node r+1 in hostname order, on every rail (port i of a node to port i of the next)",
    "double-binary-tree": "NCCL double binary tree over the nodes in (zone, hostname) order, both directions of every edge, "
    "on every rail",
    "storage-incast": "every compute node writes to every storage server (its port in the node's zone)",
    "storage-read": "every storage server sends to every compute node (its port in the node's zone)",
}


@dataclass
class Phase:
    name: str
    demand: Demand


@dataclass
class Pattern:
    name: str
    scope: str
    roles: tuple[str, ...] | None
    description: str
    phases: list[Phase]


class _Nodes:
    def __init__(self, topo: Topology):
        self.topo = topo
        alive = topo.cable_alive
        self.ports: dict[str, dict[str, int]] = {}  # host -> zone -> LID (first alive port per zone)
        # host -> zone -> LID of each alive port in NIC order: its rails there (NCCL's rings and trees run one per NIC,
        # port i of a node to port i of the next, when rails are aligned: NCCL_CROSS_NIC=0)
        self.rail_ports: dict[str, dict[str, list[int]]] = {}
        self.role: dict[str, str] = {}
        for n in topo.plan.nodes:
            self.role[n.hostname] = n.role
            for p in n.ports:
                if alive(p.cable) and p.leaf not in topo.failed_switches:
                    self.ports.setdefault(n.hostname, {}).setdefault(p.zone, p.lid)
                    self.rail_ports.setdefault(n.hostname, {}).setdefault(p.zone, []).append(p.lid)
        self.rails = max((len(lids) for zones in self.rail_ports.values() for lids in zones.values()), default=1)

    def hosts(self, roles: Roles) -> list[str]:
        return sorted(h for h in self.ports if roles is None or self.role[h] in roles)

    def pair(self, a: str, b: str) -> tuple[int, int] | None:
        pa, pb = self.ports.get(a), self.ports.get(b)
        if not pa or not pb:
            return None
        for z in self.topo.zones:
            if z in pa and z in pb:
                return pa[z], pb[z]
        return next(iter(pa.values())), next(iter(pb.values()))

    def rail_pair(self, a: str, b: str, rail: int) -> tuple[int, int] | None:
        """Port `rail` of `a` to port `rail` of `b` in a zone both have; rail 0 is `pair` (which also joins nodes
        with no zone in common), and a node without that rail sends nothing on it."""
        if rail == 0:
            return self.pair(a, b)
        pa, pb = self.rail_ports.get(a, {}), self.rail_ports.get(b, {})
        for z in self.topo.zones:
            if z in pa and z in pb and rail < len(pa[z]) and rail < len(pb[z]):
                return pa[z][rail], pb[z][rail]
        return None

    def zone(self, host: str) -> str:
        return next(iter(self.ports[host]))


def build_pattern(net: TopologyArrays, name: str, scope: str | None = None, roles: Roles = None) -> Pattern:
    if name not in PATTERNS:
        raise ValueError(f"unknown pattern {name!r}")
    scope = scope or DEFAULT_SCOPE[name]
    roles = roles if roles else DEFAULT_ROLES[name]
    topo = net.topo
    if name == "all-to-all" and scope == "zone":  # quadratic in ports: aggregated per leaf, never listed
        phases = [Phase("all", all_to_all_demand(net, [_ports(topo, z, roles) for z in topo.zones]))]
    else:
        nodes = _Nodes(topo)  # the hosts' ports: what the listed patterns pair up
        fn = {
            "all-to-all": _all_to_all,
            "shift": _shift,
            "ring": _ring,
            "double-binary-tree": _dbtree,
            "storage-incast": _incast,
            "storage-read": _read,
        }[name]
        phases = [Phase(phase, pair_demand(net, flows)) for phase, flows in fn(topo, nodes, scope, roles)]
    return Pattern(name, scope, roles, DESCRIPTION[name], phases)


def _ports(topo: Topology, zone: str | None, roles: Roles) -> list[int]:
    out = []
    for z in topo.zones:
        if zone is not None and z != zone:
            continue
        for leaf in topo.leaves[z]:
            for c in topo.cas[leaf]:
                if (
                    (roles is None or c.role in roles)
                    and topo.cable_alive(c.label)
                    and leaf not in topo.failed_switches
                ):
                    out.append(c.lid)
    return out


def _groups(topo: Topology, nodes: _Nodes, scope: str, roles: Roles) -> list[list[str]]:
    hosts = nodes.hosts(roles)
    if scope == "fabric":
        return [sorted(hosts, key=lambda h: (topo.zones.index(nodes.zone(h)), h))]
    return [[h for h in hosts if nodes.zone(h) == z] for z in topo.zones]


def _all_to_all(topo: Topology, nodes: _Nodes, scope: str, roles: Roles) -> list[Flows]:
    """Scope fabric: every host to every other host (scope zone is aggregated in build_pattern)."""
    flows: list[tuple[int, int]] = []
    hosts = nodes.hosts(roles)
    for a in hosts:
        for b in hosts:
            if a != b and (p := nodes.pair(a, b)):
                flows.append(p)
    return [("all", flows)]


def _shift(topo: Topology, nodes: _Nodes, scope: str, roles: Roles) -> list[Flows]:
    zones = [[z] for z in topo.zones] if scope == "zone" else [topo.zones]
    per_k: dict[int, list[tuple[int, int]]] = {}
    for group in zones:
        leaves = [leaf for z in group for leaf in topo.leaves[z]]
        ports = {
            leaf: [
                c.lid
                for c in topo.cas[leaf]
                if (roles is None or c.role in roles) and topo.cable_alive(c.label) and leaf not in topo.failed_switches
            ]
            for leaf in leaves
        }
        L = len(leaves)
        for k in range(1, L):
            out = per_k.setdefault(k, [])
            for i, leaf in enumerate(leaves):
                dst = ports[leaves[(i + k) % L]]
                for j, lid in enumerate(ports[leaf][: len(dst)]):
                    out.append((lid, dst[j]))
    return [(f"k={k}", per_k[k]) for k in sorted(per_k)]


def _ring(topo: Topology, nodes: _Nodes, scope: str, roles: Roles) -> list[Flows]:
    flows: list[tuple[int, int]] = []
    for hosts in _groups(topo, nodes, scope, roles):
        hosts = sorted(hosts) if scope == "zone" else hosts
        n = len(hosts)
        if n < 2:
            continue
        for rail in range(nodes.rails):
            for r in range(n):
                if p := nodes.rail_pair(hosts[r], hosts[(r + 1) % n], rail):
                    flows.append(p)
    return [("ring", flows)]


def btree_parent(nranks: int, rank: int) -> int:
    """Parent of `rank` in NCCL's binary tree (src/graph/trees.cc ncclGetBtree); -1 for the root."""
    if rank == 0:
        return -1
    bit = 1
    while bit < nranks:
        if bit & rank:
            break
        bit <<= 1
    up = (rank ^ bit) | (bit << 1)
    if up >= nranks:
        up = rank ^ bit
    return up


def dtree_edges(nranks: int) -> list[tuple[int, int]]:
    """(child, parent) edges of both trees of NCCL's double binary tree (the second mirrored, or shifted by one
    when nranks is odd)."""
    edges = []
    for r in range(nranks):
        p = btree_parent(nranks, r)
        if p >= 0:
            edges.append((r, p))
    for r in range(nranks):
        if nranks % 2 == 1:
            s = (r - 1 + nranks) % nranks
            p = btree_parent(nranks, s)
            if p >= 0:
                edges.append((r, (p + 1) % nranks))
        else:
            p = btree_parent(nranks, nranks - 1 - r)
            if p >= 0:
                edges.append((r, nranks - 1 - p))
    return edges


def _dbtree(topo: Topology, nodes: _Nodes, scope: str, roles: Roles) -> list[Flows]:
    flows: list[tuple[int, int]] = []
    for hosts in _groups(topo, nodes, scope, roles):
        for rail in range(nodes.rails):
            for child, parent in dtree_edges(len(hosts)):
                for a, b in ((child, parent), (parent, child)):
                    if p := nodes.rail_pair(hosts[a], hosts[b], rail):
                        flows.append(p)
    return [("trees", flows)]


def _storage(topo: Topology, nodes: _Nodes, scope: str, roles: Roles, read: bool) -> list[Flows]:
    flows: list[tuple[int, int]] = []
    storage = nodes.hosts(("storage",))
    for group in _groups(topo, nodes, scope, roles):
        for c in group:
            for s in storage:
                p = nodes.pair(c, s)
                if p is None:
                    continue
                flows.append((p[1], p[0]) if read else p)
    return [("read" if read else "write", flows)]


def _incast(topo: Topology, nodes: _Nodes, scope: str, roles: Roles) -> list[Flows]:
    return _storage(topo, nodes, scope, roles, read=False)


def _read(topo: Topology, nodes: _Nodes, scope: str, roles: Roles) -> list[Flows]:
    return _storage(topo, nodes, scope, roles, read=True)
