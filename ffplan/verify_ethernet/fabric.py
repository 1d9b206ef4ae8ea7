"""What the plan says a (part of a) RoCE fabric is and does: its namespaces, veth pairs and interface names, the BGP
sessions, every switch's FIB (host prefix -> ECMP next-hop set), the pings that must arrive, and the reduced next-hop
sets after a cable or switch fails (ffplan.ethernet.forwarding, as prefixes).

Interface names: a switch port keeps its SONiC name (`Ethernet0`..`Ethernet9999`: at most 12 characters by the
plan's pattern, within Linux's 15, and unique inside the switch's own namespace), so the rendered frr.conf's
`interface EthernetN` blocks bind to the real interfaces unchanged; `Loopback0` likewise. A host's k-th fabric NIC
(plan order) is `eth<k>` in the host's namespace, the RDMA device name (mlx5_0) mapping to it through a stand-in
sysfs, as on a real host where the netdev and the RDMA device have different names.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ffplan.ethernet.forwarding import (
    Failed,
    NextHops,
    pinned_routes,
    planned_next_hops,
    prefixes,
    reduced_next_hops,
)
from ffplan.plan.model import EthernetSwitch, HostInterface, Plan


@dataclass(frozen=True)
class Veth:
    """One planned cable as a veth pair: end `a` is created in a's namespace, end `b` moved into b's at once."""

    cable: str
    a: str
    a_if: str
    b: str
    b_if: str
    between_switches: bool


@dataclass
class Part:
    """The switches and host NICs a run boots: the whole plan, a plane or a zone."""

    describe: str
    switches: list[EthernetSwitch]
    hosts: dict[str, list[HostInterface]]  # hostname -> its NICs in the part, plan order
    ifname: dict[tuple[str, str], str]  # (hostname, NIC) -> interface name, for every NIC of a host in the part
    veths: list[Veth]
    zone: dict[str, str]  # switch -> zone
    excluded: list[str] = field(default_factory=list)

    @property
    def by_name(self) -> dict[str, EthernetSwitch]:
        return {sw.name: sw for sw in self.switches}


def part_of(plan: Plan, zones: list[str] | None, describe: str) -> Part:
    """The part of a RoCE plan made of `zones` (None: all)."""
    eth = plan.ethernet
    assert eth is not None
    zone = {sw.name: sw.zone for sw in plan.switches}
    picked = set(zones) if zones is not None else set(zone.values())
    switches = [sw for sw in eth.switches if zone[sw.name] in picked]
    names = {sw.name for sw in switches}
    ifname: dict[tuple[str, str], str] = {}
    per_host: dict[str, list[HostInterface]] = {}
    for h in eth.hosts:
        per_host.setdefault(h.hostname, []).append(h)
    hosts: dict[str, list[HostInterface]] = {}
    for hostname, nics in per_host.items():
        mine = [h for h in nics if h.leaf in names]
        if mine:
            hosts[hostname] = mine
            for k, h in enumerate(nics):
                ifname[(hostname, h.nic)] = f"eth{k}"
    veths = []
    ports_of = {sw.name: sw.ports for sw in switches}
    for sw in switches:
        for p in sw.ports:
            if p.peer in hosts:
                veths.append(Veth(p.cable, sw.name, p.name, p.peer, ifname[(p.peer, p.peer_port)], False))
            elif p.peer in names and sw.name < p.peer:  # a switch-to-switch cable once, from its first end
                far = next(q for q in ports_of[p.peer] if q.cable == p.cable)
                veths.append(Veth(p.cable, sw.name, p.name, p.peer, far.name, True))
    excluded = []
    if zones is not None:
        others = sorted(set(zone.values()) - picked)
        outside = sum(1 for h in eth.hosts if h.hostname in hosts and h.leaf not in names)
        excluded.append(f"zones/planes {', '.join(others)}: their switches and cables")
        if outside:
            excluded.append(
                f"{outside} NICs of the booted hosts in other planes: unconnected stand-ins (the host "
                "script still configures them)"
            )
    return Part(describe, switches, hosts, ifname, veths, zone, excluded)


def planned_fib(part: Part) -> dict[str, dict[str, set[str]]]:
    """switch -> prefix -> next hops: the plan's ECMP groups, for the destinations inside the part (and with pinned
    paths each host /31 over its pinned next hop)."""
    return _fib(part, planned_next_hops(part.switches))


def predicted_fib(part: Part, failed: Failed = Failed()) -> dict[str, dict[str, set[str]]]:
    """switch -> prefix -> next hops after `failed` (the shared prediction, ffplan.ethernet.forwarding, that
    `ffplan analyze --failed` reports too); an unreachable prefix is absent. Intact, this equals `planned_fib`.
    With pinned paths a /31 whose pinned path broke is absent too: the aggregate's reduced set carries it."""
    return _fib(part, reduced_next_hops(part.switches, failed))


def _fib(part: Part, hops: NextHops) -> dict[str, dict[str, set[str]]]:
    by_name = part.by_name
    pinned = pinned_routes(part.switches, hops)
    return {
        sw: {prefix: set(addrs) for dest, addrs in routes.items() for prefix in prefixes(by_name[dest])}
        | {prefix: set(addrs) for prefix, addrs in pinned.get(sw, {}).items()}
        for sw, routes in hops.items()
    }


def ping_pairs(part: Part, limit: int = 16) -> list[tuple[HostInterface, HostInterface]]:
    """(source, destination) NICs that must reach each other: those on leaves of the same zone or plane (planes do
    not reach each other), on different leaves. All pairs while a zone has at most `limit` NICs; beyond, each NIC
    pings the NIC at its position on the next leaf (every NIC sends and receives once, every leaf reaches the next)."""
    by_zone: dict[str, dict[str, list[HostInterface]]] = {}
    for nics in part.hosts.values():
        for h in nics:
            by_zone.setdefault(part.zone[h.leaf], {}).setdefault(h.leaf, []).append(h)
    pairs = []
    for zone in sorted(by_zone):
        leaves = [by_zone[zone][leaf] for leaf in sorted(by_zone[zone])]
        if len(leaves) < 2:
            continue
        every = [h for nics in leaves for h in nics]
        if len(every) <= limit:
            pairs += [(a, b) for a in every for b in every if a.leaf != b.leaf]
        else:
            for i, nics in enumerate(leaves):
                nxt = leaves[(i + 1) % len(leaves)]
                pairs += [(h, nxt[j % len(nxt)]) for j, h in enumerate(nics)]
    return pairs


def fib_differences(expected: dict[str, dict[str, set[str]]], fibs: dict[str, dict[str, set[str]]]) -> list[str]:
    """One line per (switch, prefix) whose kernel route differs from the expected next hops; a prefix expected
    nowhere (unreachable) must have no route with a next hop."""
    diffs = []
    for switch in sorted(expected):
        fib = fibs.get(switch, {})
        for prefix, hops in sorted(expected[switch].items()):
            got = fib.get(prefix)
            if got != hops and (hops or got):  # expected unreachable: no route (or a blackhole) is right
                shown = "no route" if got is None else ("blackhole" if not got else ", ".join(sorted(got)))
                diffs.append(f"{switch} {prefix}: {shown}, plan {', '.join(sorted(hops)) or 'unreachable'}")
    return diffs
