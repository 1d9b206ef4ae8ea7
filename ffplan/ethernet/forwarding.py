"""The forwarding model of a RoCE plan: per switch and destination leaf the ECMP next-hop set (the addresses of the
next switches' ends), intact as the plan's groups say and after cables or switches fail as eBGP computes it. One
prediction for every stage: `analyze --failed` draws its flows over the reduced sets and `verify --failures` expects
every kernel FIB to hold them.

The prediction is a path-vector run over the plan's sessions (one per switch-to-switch cable, both ends up): every
switch keeps the shortest AS paths that do not hold its own ASN, over every neighbor offering one (multipath with
as-path multipath-relax, as the rendered frr.conf configures it). A destination a switch has no such path to is
absent from its entry: the failure cut it off (two-tier spines share an ASN, so a spine that lost its cable to a
leaf does not reach it through another leaf).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from ffplan.inventory.failed_items import PortRef, parse_item
from ffplan.plan.model import EcmpGroup, EthernetPlan, EthernetSwitch, Plan

NextHops = dict[str, dict[str, frozenset[str]]]  # switch -> destination leaf -> next-hop addresses


@dataclass(frozen=True)
class Failed:
    """What is down, by the plan's names: switch-to-switch cables and switches."""

    cables: frozenset[str] = frozenset()
    switches: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Resolved:
    failed: Failed
    unknown: list[str]  # items that name nothing of the plan
    host_cables: list[str]  # items naming a cable to a host: it cuts one NIC off, no next-hop set changes


def prefixes(sw: EthernetSwitch) -> list[str]:
    """The prefixes a leaf originates, as the kernel FIB writes them: its host block and its loopback."""
    out = [sw.host_block] if sw.host_block else []
    return out + [sw.loopback]


def resolve_failed(eth: EthernetPlan, items: list[str]) -> Resolved:
    """Cable labels, switch names and `switch[port]` (the one failed-item grammar, inventory/failed_items.py) ->
    what is down; a cable to a host and an item that names nothing are set apart."""
    switches = {sw.name for sw in eth.switches}
    cable_of: dict[str, bool] = {}  # cable label -> between two switches
    port_cable: dict[tuple[str, int], str] = {}
    for sw in eth.switches:
        for p in sw.ports:
            cable_of[p.cable] = p.peer in switches
            port_cable[(sw.name, p.port)] = p.cable
    cables: set[str] = set()
    down: set[str] = set()
    unknown: list[str] = []
    host: list[str] = []
    for text in items:
        item = parse_item(text)
        label = port_cable.get((item.switch, item.port)) if isinstance(item, PortRef) else item
        if label is not None and label in cable_of:
            if cable_of[label]:
                cables.add(label)
            else:
                host.append(text)
        elif isinstance(item, str) and item in switches:
            down.add(item)
        else:
            unknown.append(text)
    return Resolved(Failed(frozenset(cables), frozenset(down)), unknown, host)


def planned_next_hops(switches: list[EthernetSwitch]) -> NextHops:
    """The plan's ECMP groups, for the destinations among `switches`."""
    names = {sw.name for sw in switches}
    return {
        sw.name: {d: frozenset(g.next_hops) for g in sw.ecmp for d in g.destinations if d in names} for sw in switches
    }


def reduced_next_hops(switches: list[EthernetSwitch], failed: Failed = Failed()) -> NextHops:
    """switch -> destination leaf -> next hops as eBGP computes them over the sessions among `switches` (module doc);
    a failed switch has no entry. Intact, this equals `planned_next_hops`."""
    by_name = {sw.name: sw for sw in switches}
    live = set(by_name) - failed.switches
    heard_by: dict[str, list[tuple[str, str]]] = {n: [] for n in live}  # switch -> (neighbor, switch's address)
    for sw in switches:
        for p in sw.ports:
            if sw.name in live and p.peer in live and p.cable not in failed.cables:
                heard_by[p.peer].append((sw.name, str(p.peer_address)))
    asn = {sw.name: sw.asn for sw in switches}
    hops: NextHops = {n: {} for n in live}
    for origin in sorted(live):
        if not by_name[origin].host_block:
            continue
        # breadth first: the switches whose shortest paths have k AS hops learn them from those with k - 1
        paths: dict[str, frozenset[tuple[int, ...]]] = {origin: frozenset({(asn[origin],)})}
        frontier = [origin]
        while frontier:
            offers: dict[str, list[tuple[str, tuple[int, ...]]]] = {}
            for nb in frontier:
                for s, addr in heard_by[nb]:
                    if s not in paths:
                        offers.setdefault(s, []).extend(
                            (addr, (asn[s],) + path) for path in paths[nb] if asn[s] not in path
                        )
            frontier = sorted(s for s, got in offers.items() if got)
            for s in frontier:
                paths[s] = frozenset(path for _, path in offers[s])
                hops[s][origin] = frozenset(addr for addr, _ in offers[s])
    return hops


def pinned_routes(switches: list[EthernetSwitch], hops: NextHops) -> dict[str, dict[str, frozenset[str]]]:
    """switch -> host /31 -> next hops, for a plan with pinned paths (switches with `pinned` lists), over `hops`
    (`reduced_next_hops`): a switch holds a host /31 from the neighbors among its next hops to the host's leaf that
    hold it themselves (its leaf: always), a pinned one only from its pinned neighbor. So a /31 whose pinned path
    broke anywhere is withdrawn hop by hop and the switch falls back to the aggregate (docs/ethernet.md, "Rendering
    pinned paths"). Empty for an ECMP plan: its leaves announce no /31s."""
    if not any(sw.pinned for sw in switches):
        return {}
    names = {sw.name for sw in switches}
    peer = {(sw.name, str(p.peer_address)): p.peer for sw in switches for p in sw.ports}
    hosts = {
        str(ipaddress.ip_interface(p.address).network): sw.name
        for sw in switches
        for p in sw.ports
        if p.peer not in names
    }
    pin = {(sw.name, prefix): pinned.neighbor for sw in switches for pinned in sw.pinned for prefix in pinned.prefixes}
    routes: dict[str, dict[str, frozenset[str]]] = {sw: {} for sw in hops}
    for _ in range(len(switches)):  # each round reaches one hop further from the leaves; a fixpoint is reached
        for sw in sorted(hops):
            for prefix, leaf in hosts.items():
                if leaf == sw:
                    continue
                offered = hops[sw].get(leaf, frozenset())
                wanted = {pin[(sw, prefix)]} & offered if (sw, prefix) in pin else offered
                have = frozenset(a for a in wanted if peer[(sw, a)] == leaf or prefix in routes.get(peer[(sw, a)], {}))
                if have:
                    routes[sw][prefix] = have
                else:
                    routes[sw].pop(prefix, None)
    return routes


@dataclass(frozen=True)
class Change:
    """One (switch, destination leaf) whose next-hop set the failure changes; `reduced` empty: unreachable."""

    switch: str
    destination: str
    prefixes: list[str]
    planned: list[str]
    reduced: list[str]

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def reduced_plan(plan: Plan, failed: Failed) -> tuple[Plan, list[Change]]:
    """`plan` with the ECMP groups reduced by `failed` (a failed switch: none), so a stage that reads the groups
    (the ECMP analysis) sees the fabric after the failure, and every (switch still up, destination) whose next
    hops changed, in plan order. Only the planes the failure touches are computed again: planes share no session.
    Next hops in port order, destinations with the same set in one group, in the plan's order."""
    eth = plan.ethernet
    assert eth is not None
    subnet = {z.name: z.subnet for z in plan.zones}
    plane = {s.name: subnet[s.zone] for s in plan.switches}
    ends = set(failed.switches) | {sw.name for sw in eth.switches for p in sw.ports if p.cable in failed.cables}
    touched = {plane[name] for name in ends}
    part = [sw for sw in eth.switches if plane[sw.name] in touched]
    planned, reduced = planned_next_hops(part), reduced_next_hops(part, failed)
    by_name = {sw.name: sw for sw in part}
    switches, found = [], []
    for sw in eth.switches:
        if sw.name not in by_name:
            switches.append(sw)
            continue
        now = reduced.get(sw.name, {})
        groups: dict[frozenset[str], list[str]] = {}
        for dest in (d for g in sw.ecmp for d in g.destinations):
            if now.get(dest):
                groups.setdefault(now[dest], []).append(dest)
        ecmp = [EcmpGroup(destinations=dests, next_hops=_ordered(sw, hops)) for hops, dests in groups.items()]
        switches.append(sw.model_copy(update={"ecmp": ecmp}))
        if sw.name in reduced:
            found += [
                Change(
                    sw.name, dest, prefixes(by_name[dest]), _ordered(sw, hops), _ordered(sw, now.get(dest, frozenset()))
                )
                for dest, hops in planned[sw.name].items()
                if now.get(dest, frozenset()) != hops
            ]
    return plan.model_copy(update={"ethernet": eth.model_copy(update={"switches": switches})}), found


def _ordered(sw: EthernetSwitch, hops: frozenset[str]) -> list[str]:
    """Next-hop addresses in the switch's port order."""
    return [str(p.peer_address) for p in sw.ports if str(p.peer_address) in hops]
