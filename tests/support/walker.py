"""One route's links, hop by hop, for tests that want the path itself (analyze counts loads without it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ffplan.fabric.arrays import Channels, table_array
from ffplan.fabric.walk import Walked, walk
from ffplan.plan.model import UNROUTED, LftLike
from ffplan.plan.topology import Topology


class RouteError(Exception):
    """A flow's walk ends in a dead end (unrouted LID, wrong CA, loop)."""


@dataclass
class Walker:
    """Paths over a set of LFTs (switch name -> ports by LID) on the plan's topology (its alive part): every switch
    is walked to a LID at once (fabric.walk), on the first path asked to that LID."""

    topo: Topology
    tables: Mapping[str, LftLike]
    _walked: dict[int, Walked] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._ch = Channels(self.topo)
        self._lft = table_array(self.topo, self.tables)
        self._sid = {s: i for i, s in enumerate(self._ch.switches)}

    def path(self, switch: str, lid: int) -> tuple:
        """Directed switch-to-switch links ((switch, port), ...) from `switch` to the destination, or raise."""
        ch, i = self._ch, self._sid[switch]
        w = self._walked.get(lid)
        if w is None:
            n = len(ch.switches)
            w = self._walked[lid] = walk(ch, self._lft, np.arange(n), np.full(n, lid), trace=True)
        if not w.reached[i]:
            raise RouteError(self._why(switch, lid, w, i))
        links = []
        for k, c in w.steps:
            at = int(np.searchsorted(k, i))  # walk indexes stay sorted
            if at == len(k) or k[at] != i:
                break
            sw, port = ch.ends[int(c[at])]
            links.append((ch.switches[sw], port))
        return tuple(links)

    def _why(self, switch: str, lid: int, w: Walked, i: int) -> str:
        if w.looping[i]:
            return f"LID {lid} loops from {switch}"
        v = self._ch.switches[int(w.end[i])]
        port = int(self._lft[w.end[i], lid])
        if port == 0:
            return f"{v} delivers LID {lid} to itself"
        if port == UNROUTED:
            return f"{v} does not route LID {lid}"
        what = self.topo.peer.get((v, port))
        if what is not None and what[0] == "ca":
            return f"{v} port {port} leads to LID {what[1]}, not {lid}"
        return f"{v} port {port} (for LID {lid}) is not connected"
