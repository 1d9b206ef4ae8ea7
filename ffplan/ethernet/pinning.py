"""Pinned paths (`fabric.roce.path_selection: pinned`, docs/ethernet.md "Rendering pinned paths"): every switch sends
the flows to one destination NIC port down one next hop, InfiniBand's way. One rule for the analysis
(ffplan.analyze.ecmp draws its pinned loads with it) and the design (each switch's accepted host /31s per BGP
neighbor, which frr.conf renders as an inbound route map):

a switch lists its next hops round robin over the next switches (by name), each one's links in port-name order,
and takes entry r mod n, r starting as the destination port's rank on its leaf and divided by the number of next
switches at every hop (a spine then spreads over its parallel links the ports the leaves' choice sent it).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence
from typing import TypeVar

from ffplan.plan.model import EthernetSwitch, PinnedPrefixes

T = TypeVar("T")


def pinning_order(hops: Sequence[T], key: Callable[[T], tuple[str, str]]) -> tuple[list[T], int]:
    """`hops` (key: next switch, port name) in pinning order, and the number of next switches."""
    by_next: dict[str, list[T]] = {}
    for hop in hops:
        by_next.setdefault(key(hop)[0], []).append(hop)
    groups = [sorted(by_next[k], key=key) for k in sorted(by_next)]
    return [g[j] for j in range(max(len(g) for g in groups)) for g in groups if j < len(g)], len(groups)


class PinConflict(ValueError):
    """A switch would need two next hops for one host prefix (upstream switches of different fan-outs)."""


def pinned_prefixes(switches: list[EthernetSwitch]) -> dict[str, list[PinnedPrefixes]]:
    """Per switch of a two-tier plane (leaves and spines): for each BGP neighbor of an ECMP group with more than one
    next hop, the host /31s the switch accepts from it (the module's rule), neighbors in port order. A switch whose
    groups have one next hop each has no entry: it has nothing to choose."""
    by_name = {sw.name: sw for sw in switches}
    peer_of = {(sw.name, str(p.peer_address)): p for sw in switches for p in sw.ports}
    hosts = {
        sw.name: [str(ipaddress.ip_interface(p.address).network) for p in sw.ports if p.peer not in by_name]
        for sw in switches
    }

    def order(sw: EthernetSwitch, hops: list[str]) -> tuple[list[str], int]:
        return pinning_order(hops, lambda a: (peer_of[(sw.name, a)].peer, peer_of[(sw.name, a)].name))

    # (switch, destination leaf) -> the divisor its choice applies to the rank: the fan-out of the hop before it
    divisor: dict[tuple[str, str], int] = {}
    for sw in switches:
        if sw.host_block is None:
            continue
        for group in sw.ecmp:
            nexts, fan = order(sw, group.next_hops)
            for mid in {peer_of[(sw.name, a)].peer for a in nexts}:
                for dest in group.destinations:
                    if divisor.setdefault((mid, dest), fan) != fan:
                        raise PinConflict(f"{mid}: leaves with {divisor[(mid, dest)]} and {fan} next switches reach it")
    out: dict[str, list[PinnedPrefixes]] = {}
    for sw in switches:
        accepted: dict[str, list[str]] = {}
        for group in sw.ecmp:
            if len(group.next_hops) < 2:
                continue
            nexts, _ = order(sw, group.next_hops)
            for dest in group.destinations:
                div = 1 if sw.host_block is not None else divisor[(sw.name, dest)]
                for rank, prefix in enumerate(hosts[dest]):
                    accepted.setdefault(nexts[rank // div % len(nexts)], []).append(prefix)
        if accepted:
            out[sw.name] = [
                PinnedPrefixes(neighbor=str(p.peer_address), prefixes=accepted[str(p.peer_address)])
                for p in sw.ports
                if str(p.peer_address) in accepted
            ]
    return out
