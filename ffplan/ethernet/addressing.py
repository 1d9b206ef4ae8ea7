"""Deterministic IPv4 addressing owned by the plan: a /32 loopback per switch, a /31 per leaf-spine cable, and per
leaf a block of /31s, one per down-port (the NIC port on leaf port p gets the p-th /31), announced as one prefix."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from ffplan.inventory.models import RoceAddressing


def host_block_size(down_ports: int) -> int:
    """Addresses of one leaf's host block: a /31 per down-port, rounded up to a power of two (one prefix)."""
    return 1 << (2 * down_ports - 1).bit_length()


@dataclass(frozen=True)
class AddressNeeds:
    loopbacks: int  # switches
    links: int  # leaf-spine cables
    leaves: int
    down_ports: int  # per leaf

    def sizes(self) -> dict[str, int]:
        """Addresses each pool must hold."""
        return {
            "loopbacks": self.loopbacks,
            "links": 2 * self.links,
            "hosts": self.leaves * host_block_size(self.down_ports),
        }


def pools(addressing: RoceAddressing) -> dict[str, ipaddress.IPv4Network]:
    """The three pools; raises ValueError for a prefix that is no network (lint's FF702 reports it, located)."""
    return {name: ipaddress.IPv4Network(getattr(addressing, name)) for name in ("loopbacks", "links", "hosts")}


def pool_problems(addressing: RoceAddressing, needs: AddressNeeds | None) -> list[tuple[str, str, str]]:
    """(pool, message, hint) for every pool that is no network, overlaps another or is too small."""
    found: list[tuple[str, str, str]] = []
    nets: dict[str, ipaddress.IPv4Network] = {}
    for name in ("loopbacks", "links", "hosts"):
        text = getattr(addressing, name)
        try:
            nets[name] = ipaddress.IPv4Network(text)
        except ValueError as exc:
            found.append(
                (
                    name,
                    f"'{text}' is not an IPv4 network: {exc}",
                    "write the network address and prefix length with no host bits set, e.g. 10.1.0.0/16",
                )
            )
    names = list(nets)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            if nets[a].overlaps(nets[b]):
                found.append(
                    (
                        b,
                        f"the {b} pool {nets[b]} overlaps the {a} pool {nets[a]}",
                        "give each pool its own range: an address would be planned twice",
                    )
                )
    if needs is not None:
        for name, wanted in needs.sizes().items():
            if name in nets and nets[name].num_addresses < wanted:
                found.append(
                    (
                        name,
                        f"the {name} pool {nets[name]} holds {nets[name].num_addresses:,} addresses; the "
                        f"fabric needs {wanted:,}",
                        f"use a shorter prefix (at most /{32 - (wanted - 1).bit_length()})",
                    )
                )
    return found


def nth(net: ipaddress.IPv4Network, offset: int) -> ipaddress.IPv4Address:
    return net.network_address + offset
