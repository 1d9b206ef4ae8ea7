"""verify's table checks on arrays: the rendered LFT file read in one pass (read_lft_file), installed LFTs == plan,
every CA pair reachable and every switch LID reachable, computed per destination LID over all switches at once (the
tables towards one LID form an in-tree, as analyze walks them). Dicts of entries and the hop-by-hop walk (walk.py,
still used for OpenSM's ftree tables, whose link loads it counts) do not scale: a 16,384-endpoint subnet has
22.6 M entries and 268 M CA pairs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ffplan.fabric.arrays import Channels
from ffplan.fabric.discovery import DiscoveredFabric
from ffplan.fabric.lft import HEADER, JUNK, lft_array, portguid, scan_lfts
from ffplan.fabric.walk import RouteLengths, route_lengths, walk
from ffplan.opensm import layout as L
from ffplan.opensm import Subnet
from ffplan.verify.expect import lid_name

LID_BLOCK = 128  # destination LIDs walked together (switches x LID_BLOCK cells per array: in the L2 cache)


def planned_array(fab: Subnet, width: int) -> np.ndarray:
    routing = fab.plan.routing
    assert routing is not None
    lfts = {lft.switch: lft.ports for lft in routing.lfts}
    out = np.full((len(fab.switches), width), routing.unrouted_port, dtype=np.uint8)
    for i, s in enumerate(fab.switches):
        table = lfts.get(s.name)
        if table is not None:
            n = min(width, len(table))
            out[i, :n] = table[:n]
    return out


@dataclass
class Reach:
    pairs: int
    reachable: int
    hops: dict[int, int]  # switches traversed -> pairs (CA pairs only)
    failures: list[str]

    @property
    def broken(self) -> int:
        return self.pairs - self.reachable


def _reach(
    ch: Channels,
    lft: np.ndarray,
    dests: np.ndarray,
    extra: int,
    fab: Subnet,
    names: list[str],
    known: _Known | None,
    max_failures: int = 8,
) -> Reach:
    """Pairs (source, destination LID) for every LID of `dests`: at each switch its CA ports (`ch.sources`) and
    `extra` more (the switch itself), less the destination's own port at its switch. The routes' lengths come from
    the in-trees (fabric.walk.route_lengths), or from those a router measured (`known`); a route takes at most as many
    hops as there are switches (more is a loop), and only the first failures are walked to name where they end."""
    n = len(ch.switches)
    res = Reach(0, 0, {}, [])
    hops_count = np.zeros(n + 2, dtype=np.int64)  # a walk traverses at most every switch once
    w = (ch.sources + extra).astype(np.int64)  # sources at each switch (the destination's own port counts too)
    src = np.flatnonzero(w)  # the switches with sources (every destination's own among them): the rows weighed
    place = np.zeros(n, dtype=np.intp)  # a switch's row among them
    place[src] = np.arange(len(src))
    rows = np.arange(len(src), dtype=np.intp)[:, None]
    for a in range(0, len(dests), LID_BLOCK):
        lids = dests[a : a + LID_BLOCK]
        cols = np.arange(len(lids))
        at = ch.dest_switch[lids]
        links = known.lengths(lids) if known is not None else None
        if links is None:
            links = route_lengths(ch, lft[:, lids], (at, ch.dest_port[lids]), max_hops=n)
        ok = links >= 0
        # the routes of each switch by switches traversed (bin 0: not arriving), weighted by its sources; then
        # less each destination's own port, which is no source of a pair with itself
        width = int(links.max()) + 2
        cell = links.take(src, axis=0).astype(np.intp)  # (source switch, switches traversed) per route, in place
        cell += rows * width + 1  # a route that does not arrive (-1) falls in bin 0
        by_hops = w[src] @ np.bincount(cell.ravel(), minlength=len(src) * width).reshape(len(src), width)
        own = cell[place[at], cols] - place[at] * width
        by_hops -= np.bincount(own, minlength=width)
        res.pairs += len(lids) * int(w.sum()) - len(lids)
        res.reachable += int(by_hops[1:].sum())
        hops_count[1:width] += by_hops[1:]
        if len(res.failures) < max_failures and not ok.all():
            lost = ~ok & (w[:, None] > 0)
            lost[at, cols] &= w[at] > 1
            j, i = np.nonzero(lost.T)  # by LID, then switch
            j, i = j[: max_failures - len(res.failures)], i[: max_failures - len(res.failures)]
            end = walk(ch, lft, i, lids[j], max_hops=n).end
            res.failures += [
                f"{names[s]} -> {lid_name(fab, int(lids[k]))}: dropped at {names[int(e)]}"
                for s, k, e in zip(i.tolist(), j.tolist(), end.tolist())
            ]
    res.hops = {h: int(c) for h, c in enumerate(hops_count.tolist()) if c}
    return res


def reachability(
    fab: Subnet, ch: Channels, lft: np.ndarray, measured: RouteLengths | None = None
) -> tuple[Reach, Reach]:
    """Walk `lft` ((switches x LIDs), fab.switches order) on the channels of fab's switches: every CA pair, and
    every switch LID from every other switch and every CA port. `measured`: the route lengths of the same tables a
    router measured (design.routing.measured_route), taken where they are these (_Known)."""
    names = [s.name for s in fab.switches]
    known = _Known.of(measured, ch, names) if measured is not None else None
    delivered = ch.dest_switch >= 0
    return (
        _reach(ch, lft, np.flatnonzero(delivered & (ch.dest_port > 0)), 0, fab, names, known),
        _reach(ch, lft, np.flatnonzero(delivered & (ch.dest_port == 0)), 1, fab, names, known),
    )


@dataclass
class _Known:
    """A router's route lengths of the tables reachability walks, by its rows (`links`), and the LIDs whose column
    is the walk's: delivered at the same switch and port, over the same links (`usable`)."""

    links: np.ndarray
    usable: np.ndarray

    @classmethod
    def of(cls, measured: RouteLengths, ch: Channels, names: list[str]) -> _Known | None:
        """`measured` in the rows of `ch` (switches `names`), or None when its switches or links are not these."""
        index = {s: i for i, s in enumerate(measured.ch.switches)}
        if any(s not in index for s in names) or measured.ch.next.shape[1] != ch.next.shape[1]:
            return None
        rows = np.array([index[s] for s in names], dtype=np.intp)
        ours = np.full(len(index) + 1, -1, dtype=np.int64)  # a measured switch -> its row here; the last: none
        ours[rows] = np.arange(len(rows))
        if not np.array_equal(ours[measured.ch.next[rows]], ch.next):
            return None
        width = min(measured.links.shape[1], len(ch.dest_switch), len(measured.ch.dest_switch))
        usable = np.zeros(len(ch.dest_switch), dtype=bool)
        usable[:width] = (ours[measured.ch.dest_switch[:width]] == ch.dest_switch[:width]) & (
            measured.ch.dest_port[:width] == ch.dest_port[:width]
        )
        return cls(measured.links.take(rows, axis=0), usable)

    def lengths(self, lids: np.ndarray) -> np.ndarray | None:
        """The route lengths of the columns `lids` when each is usable and every route of them arrives (a route of
        MAX_HOPS links or more, which the router leaves at -1, still arrives here), else None."""
        if not self.usable[lids].all():
            return None
        links = self.links.take(lids, axis=1)
        return links if (links >= 0).all() else None


def table_checks(
    fab: Subnet, topo: DiscoveredFabric, dump_fts: str, max_items: int = 12
) -> list[tuple[str, bool, str, list[str]]]:
    """(check, passed, detail, items) for a booted (sub-)fabric: its discovered topology and `dump_fts -n` output;
    the details read as the walk's (checks.check_reachability)."""
    routing = fab.plan.routing
    assert routing is not None
    guids = [s.node_guid for s in fab.switches]
    names = [s.name for s in fab.switches]
    width = max(fab.lid_owner) + 1
    installed, entries = lft_array(dump_fts, guids, width, routing.unrouted_port)
    planned = planned_array(fab, width)
    valid = np.array(sorted(fab.lid_owner), dtype=np.int64)
    planned_entries = (planned[:, valid] != routing.unrouted_port).sum(axis=1)
    rows, cols = np.nonzero(installed[:, valid] != planned[:, valid])
    items = [f"{names[i]}: no table in installed" for i in np.flatnonzero(entries < 0).tolist()]
    empty = (entries == 0) & (planned_entries > 0)
    items += [
        f"{names[i]}: EMPTY table in installed ({planned_entries[i]} planned entries; is its block missing "
        f"from {L.LFTS}?)"
        for i in np.flatnonzero(empty).tolist()
    ]
    listed = entries > 0
    shown = listed[rows]
    items += [
        f"{names[i]} {lid_name(fab, int(valid[j]))}: plan port {planned[i, valid[j]]}, installed port "
        f"{installed[i, valid[j]]}"
        for i, j in zip(rows[shown][:max_items].tolist(), cols[shown][:max_items].tolist())
    ]
    out = [
        (
            "LFTs installed == plan",
            not len(rows),
            f"{int(entries[entries > 0].sum())} entries on {int((entries >= 0).sum())} switches; {len(rows)} "
            "differences",
            items,
        )
    ]
    ca, sw = reachability(fab, Channels.discovered(topo, guids), installed)
    hops = ", ".join(f"{n} switch{'es' if n > 1 else ''}: {c}" for n, c in sorted(ca.hops.items()))
    out.append(
        (
            "every CA pair reachable",
            ca.broken == 0,
            f"{ca.reachable}/{ca.pairs} pairs by walking the installed tables ({hops})",
            ca.failures,
        )
    )
    out.append(
        (
            "every switch LID reachable",
            sw.broken == 0,
            f"{sw.reachable}/{sw.pairs} (source, switch LID) pairs from every other switch and every CA port by "
            "walking the installed tables",
            sw.failures,
        )
    )
    return out


@dataclass
class LftFileArrays:
    """An LFT file read in one pass into (switches x width) arrays: the port of each entry (-1: none) and its line."""

    ports: np.ndarray  # int16
    lines: np.ndarray  # int32, 0 where no entry
    header_line: np.ndarray  # line of each switch's block, 0 if it has none
    blocks: int = 0  # blocks in the file, the fabric's and any other
    entries: int = 0
    beyond: int = 0  # entries of the fabric's switches for LIDs no switch or CA has
    no_portguid: int = 0
    foreign: list[tuple[int, str]] = field(default_factory=list)  # (header line, guid): switches not in the fabric
    duplicates: list[tuple[int, str]] = field(default_factory=list)
    junk: list[tuple[int, str]] = field(default_factory=list)
    portguid_mismatch: list[tuple[int, int, str]] = field(default_factory=list)  # (line, LID, portguid named)


def read_lft_file(text: str, fab: Subnet) -> LftFileArrays:
    """ffplan's lfts.dump (or any dump_fts-style text) against the fabric, without a dict per entry."""
    row = {s.node_guid: i for i, s in enumerate(fab.switches)}
    width = max(fab.lid_owner) + 1
    owner = [""] * width
    for lid, (g, _name) in fab.lid_owner.items():
        owner[lid] = g
    out = LftFileArrays(
        ports=np.full((len(row), width), -1, dtype=np.int16),
        lines=np.zeros((len(row), width), dtype=np.int32),
        header_line=np.zeros(len(row), dtype=np.int64),
    )
    current = -1  # row of the block being read; -2: a block of a switch not in the fabric
    seen: set[str] = set()
    ports, lines = out.ports, out.lines
    for rec in scan_lfts(text):
        no, kind = rec[0], rec[1]
        if kind == HEADER:
            g = rec[2]
            if g in seen:
                out.duplicates.append((no, rec[3]))
            seen.add(g)
            out.blocks += 1
            current = row.get(g, -2)
            if current >= 0:
                out.header_line[current] = no
            else:
                out.foreign.append((no, g))
            continue
        if kind == JUNK:
            out.junk.append((no, rec[2]))
            continue
        out.entries += 1
        pg = portguid(rec[4])
        if pg is None:
            out.no_portguid += 1
        if current < 0:
            continue
        lid = rec[2]
        if lid >= width:
            out.beyond += 1
            continue
        ports[current, lid], lines[current, lid] = rec[3], no
        if pg is not None and owner[lid] and pg != owner[lid]:
            out.portguid_mismatch.append((no, lid, pg))
    return out
