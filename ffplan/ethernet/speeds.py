"""Which speed a RoCE fabric's links run at and how many ports a switch has at that speed (breakout)."""

from __future__ import annotations

from dataclasses import dataclass

from ffplan.inventory.models import Inventory, NicModel, SwitchModel


@dataclass(frozen=True)
class LinkSpeed:
    gbps: int  # every fabric link
    breakout: int  # each switch cage split this many ways (1: unsplit)
    radix: int  # switch ports at `gbps`


def switch_speeds(model: SwitchModel) -> dict[int, int]:
    """Speed -> breakout that gives it, for every speed the switch's ports (or their breakouts) run at."""
    if model.ethernet is None:
        return {}
    return {model.ethernet.speed_gbps // n: n for n in sorted(model.ethernet.breakout, reverse=True)}


def nic_speed(nic: NicModel, switch: SwitchModel) -> int | None:
    """The fastest speed the NIC takes that the switch can give it, or None."""
    common = set(nic.ethernet_gbps) & set(switch_speeds(switch))
    return max(common) if common else None


def link_speed(inv: Inventory, nics: list[NicModel]) -> LinkSpeed | None:
    """The fabric's link speed (the inventory's, else the fastest every NIC and the switch share) and the switch's
    radix at it; None when there is no such speed (lint's FF707 and FF709 say why)."""
    switch = inv.models.switches.get(inv.fabric.switch_model)
    if switch is None or switch.ethernet is None:
        return None
    speeds = switch_speeds(switch)
    wanted: int | None = inv.fabric.roce.link_gbps
    if wanted is None:
        shared = set(speeds)
        for nic in nics:
            shared &= set(nic.ethernet_gbps)
        wanted = max(shared) if shared else None
    if wanted is None or wanted not in speeds:
        return None
    return LinkSpeed(wanted, speeds[wanted], switch.ports * speeds[wanted])


def used_nics(inv: Inventory) -> list[NicModel]:
    """The NIC models the node models of the inventory's groups carry."""
    names: dict[str, None] = {}
    for group in inv.groups:
        node = inv.models.nodes.get(group.model)
        for dev in node.devices if node else []:
            if dev.kind == "nic":
                names.setdefault(dev.model)
    return [inv.models.nics[n] for n in names if n in inv.models.nics]


def fabric_radix(inv: Inventory) -> int:
    """Ports per switch as the fabric uses them: the model's ports on InfiniBand, its breakout ports on RoCE (an
    800G cage as 2x400G doubles the radix)."""
    model = inv.models.switches[inv.fabric.switch_model]
    if inv.fabric.transport == "roce":
        speed = link_speed(inv, used_nics(inv))
        if speed is not None:
            return speed.radix
    return model.ports
