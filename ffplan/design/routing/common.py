"""What both routers share: the tables of one case (`RoutingTables`), the slots of a zone's CA and leaf LIDs
(`intra_slots`), the FF601 error for a failed item the plan does not have, and the loop that proves a case's
tables deadlock-free, leaving more routes open on each try (`first_proven`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from ffplan.codes.design import UNKNOWN_FAILED_LINK
from ffplan.fabric.arrays import Channels, Tables
from ffplan.fabric.deadlock import prove_deadlock_free
from ffplan.diagnostics import COMMAND_LINE, Collector, InputError, StageError, did_you_mean
from ffplan.plan.model import DeadlockProof
from ffplan.plan.topology import Topology

if TYPE_CHECKING:
    from ffplan.inventory import LoadedInventory

ROLE_ORDER = {"compute": 0, "storage": 1, "management": 2}
_ROLE_WEIGHT = 1 << 40  # more than any slot's CA ports: a role's count outweighs the total (intra_slots)


@dataclass
class RoutingTables:
    topo: Topology  # the plan's topology with this case's failed cables and switches marked
    tables: Tables  # switch -> ports indexed by LID
    max_lid: int
    failed: list[str]
    channels: Channels | None = None  # of `topo`, when the router built them
    # the route length of every (switch, LID) entry (fabric.walk.route_lengths), when the router measured them on the
    # way: -1 also in the columns of LIDs no alive port takes (the route check skips those)
    lengths: np.ndarray | None = None
    # the channel dependencies of the tables' routes on `channels` (fabric.deadlock.channel_dependencies), when the
    # router found them on the way
    dependencies: np.ndarray | None = None


def first_proven(
    attempts: Sequence[Callable[[], RoutingTables]], intact_channels: Channels | None
) -> tuple[RoutingTables, DeadlockProof, Channels]:
    """(tables, deadlock proof, channels) of the first attempt whose tables are proven deadlock-free; each attempt
    leaves more routes open than the one before. Raises the last attempt's StageError. `intact_channels`: the plan's
    Channels, to derive the case's from (faster, for the sweep)."""
    channels: Channels | None = None
    for i, attempt in enumerate(attempts):
        rt = attempt()
        if channels is None:  # every attempt routes the same failure case: the same channels
            if intact_channels is not None:
                channels = intact_channels.without(rt.topo)
            else:
                channels = rt.channels or Channels(rt.topo)
        try:
            edges = rt.dependencies if channels is rt.channels else None  # (channel ids of rt.channels)
            return rt, prove_deadlock_free(rt.topo, rt.tables, channels, edges), channels
        except StageError:
            if i == len(attempts) - 1:
                raise
    raise AssertionError("no attempt")


def unknown_failed(
    topo: Topology, items: list[str], unknown: list[int], loaded: LoadedInventory | None, inventory_items: int
) -> InputError:
    """FF601 for each failed item that is neither a cable nor a switch: bad input (exit 2), located in the inventory
    for its `fabric.failed_links`, at the option for command-line items."""
    c = Collector(loaded.source.file, loaded.source.positions) if loaded is not None else Collector(COMMAND_LINE)
    option = Collector(COMMAND_LINE)
    names = sorted(set(topo.by_label) | set(topo.lid))
    valid = (
        f"valid: a cable label as in cables.csv ({min(topo.by_label)}), a switch name ({min(topo.lid)}) "
        f"or switch[port] ({min(topo.lid)}[1])"
    )
    for i in unknown:
        hint = " ".join(filter(None, [did_you_mean(items[i], names), valid]))
        if i < inventory_items:
            c.error(
                UNKNOWN_FAILED_LINK,
                ("fabric", "failed_links", i),
                f"failed link '{items[i]}' is neither a cable label nor a switch of the plan",
                hint,
            )
        elif loaded is not None:
            option.error(
                UNKNOWN_FAILED_LINK,
                ("--exclude-link",),
                f"--exclude-link '{items[i]}' is neither a cable label nor a switch of the plan",
                hint,
            )
        else:
            c.error(
                UNKNOWN_FAILED_LINK,
                ("failed", i),
                f"failed link '{items[i]}' is neither a cable label nor a switch of the plan",
                hint,
            )
    return InputError(c.items + option.items)


@dataclass
class IntraSlots:
    """The slots of one zone's CA and leaf LIDs (see intra_slots)."""

    slot: dict[int, int]  # CA / leaf LID -> uplink index in its zone
    holes: dict[str, list[int]]  # leaf -> slots none of its CA ports own
    used: dict[str, set[int]]  # leaf -> slots its CA ports own
    total: list[int]  # CA ports per slot
    hole_count: list[int]  # holes per slot


def intra_slots(t: Topology, zone: str) -> IntraSlots:
    """Slots of the CA and leaf LIDs of `zone`: the ports of one leaf distinct, holes dealt round-robin, roles
    balanced per slot, each leaf LID water-filled off its own leaf's holes (docs/routing.md section 1)."""
    leaves = t.leaves[zone]
    U = len(t.uplinks[leaves[0]]) if leaves else 0
    out = IntraSlots({}, {}, {}, [0] * U, [0] * U)
    if U == 0:
        return out
    total, holes = out.total, out.hole_count
    # per role and slot: (the role's CA ports there, all CA ports there) as one integer, ordered as the pair
    rank: dict[str, list[int]] = {}
    P = 0
    for leaf in leaves:
        ports = t.cas[leaf]
        n = len(ports)
        h = (-n) % U
        out.holes[leaf] = [(P + j) % U for j in range(h)]
        for j in range(h):
            holes[(P + j) % U] += 1
        start = (P + h) % U
        cap = [0] * U
        for j in range(n):
            cap[(start + j) % U] += 1
        free = [(start + j) % U for j in range(min(n, U))]  # the slots left, from `start` on: min's ties go first
        P = start
        by_role: dict[str, list] = {}
        for c in ports:
            by_role.setdefault(c.role, []).append(c)
        # the largest role picks first from the slots it has used least; smaller roles share the rest
        for role in sorted(by_role, key=lambda r: (-len(by_role[r]), ROLE_ORDER.get(r, 9), r)):
            mine = rank.setdefault(role, list(total))
            for c in by_role[role]:
                u = min(free, key=mine.__getitem__)
                cap[u] -= 1
                if not cap[u]:
                    free.remove(u)
                out.used.setdefault(leaf, set()).add(u)
                mine[u] += _ROLE_WEIGHT
                for r in rank.values():
                    r[u] += 1
                total[u] += 1
                out.slot[c.lid] = u
    # leaf LIDs: one more destination each, water-filled over a separate counter
    sw_count = [0] * U
    for i, leaf in enumerate(leaves):
        own_holes = set(out.holes.get(leaf, ()))
        u = min(range(U), key=lambda u: (u in own_holes, sw_count[u], (u - i) % U))
        sw_count[u] += 1
        out.slot[t.lid[leaf]] = u
    return out
