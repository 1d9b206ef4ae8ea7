"""The tree router's rebalance after a spine-core cable or a core fails (docs/routing.md section 7, step 4): greedy
moves of healthy entries off the busiest link while that lowers the maximum all-to-all flows per link.
"""

from __future__ import annotations

import numpy as np

from ffplan.design.routing.tree import TreeCase
from ffplan.fabric.arrays import MAX_HOPS
from ffplan.plan.model import UNROUTED


class Rebalance:
    """After a spine-core cable or a core fails (leaf-spine cable and spine failures stay within 1 % of the bound,
    docs/routing.md section 7), moves entries of CA destinations off the busiest link while that lowers the maximum
    all-to-all flows per link: a source leaf sends a destination up another spine of its pod (a different core group
    when the destination is in another pod), a spine sends it up another core slot, a core down another of its
    cables to the same spine. Issue 11's rule: a healthy entry moves only when the maximum falls.

    Greedy and deterministic: the busiest link (lowest switch and port first); among the entries whose flows cross
    it (its own switch's and those upstream of it) and their other valid ports, the move whose busiest link after
    the move carries the fewest flows (then the most flows moved, then the lowest switch, LID and port). A move is
    taken only if every link it adds flows to stays below the current maximum (so each step lowers the maximum or
    the number of links at it) and it puts at most two destinations on one link in a leaf shift phase (_shared: as
    the minimal repair does, so the shift pattern stays as balanced). When every such move is blocked by one link,
    flows are first moved off that link under the same limit. The moves after the last fall of the maximum are
    undone. Every route stays leaf-spine(-core-spine)-leaf: shortest and up*/down*."""

    MOVES = 5000  # at most; each lowers the maximum or the links at it
    RELIEVE = 8  # links to make room on, at most, when every move off the busiest link is blocked by one

    def __init__(self, case: TreeCase):
        self.c = c = case
        r = c.r
        self.lft, self.next = c.lft, c.ch.next
        cas = c.d[r.d_ca[c.d]]
        self.lids = r.d_lid[cas]
        self.dleaf = r.d_leaf[cas]
        n = len(r.names)
        self.rows = np.arange(n)
        self.through = self._weights(cas)  # flows of each destination at each switch, once _walk_flows walked them
        width = self.next.shape[1]
        # flows per (switch, port) link, and after them a cell for a move's links not gaining flows, one for gaps
        self._loads = np.zeros(n * width + 2, dtype=np.int64)
        self._unmoved = n * width
        self._loads[self._unmoved :] = _NEVER, _GAP
        self.load = self._loads[: n * width].reshape(n, width)
        self._walk_flows()
        self.moves: list[tuple[int, int, int]] = []  # (switch, destination column, its former port)
        self._tier = np.array([{"leaf": 0, "spine": 1, "core": 2}[c.t.tier[name]] for name in r.names], dtype=np.int64)
        self._parent: dict[int, np.ndarray] = {}  # destination column -> _parents(it)
        self._column = np.ascontiguousarray(self.lft[:, self.lids].T)  # the tables by destination column, kept with lft
        # the moves off each link found so far; a move changes one destination's routes only, and of those only the
        # moves of the switches it touched (_touched), so only those are found again
        self._found: dict[int, _Found] = {}
        # destination column -> the last _set that changed it, and a last entry for the gaps' column -1: never
        self._changed_at = np.zeros(len(cas) + 1, dtype=np.int64)
        self._touched: dict[int, np.ndarray] = {}  # destination column -> per switch, the last _set touching its moves
        self._sets = 0
        self._carries: dict[int, tuple[int, int]] = {}  # _carried: link * switches + leaf -> (columns, as of _set)
        self._switch_set = np.zeros(n, dtype=np.int64)  # switch -> the last _set changing its tables or flows
        self._row_max = self.load.max(axis=1)
        self._dirty: set[int] = set()  # switches whose loads _set changed since _busiest
        self._next_to = np.zeros((n, n), dtype=bool)  # [a, b]: some port of a leads to b
        ports = self.next >= 0
        self._next_to[np.nonzero(ports)[0], self.next[ports]] = True
        self._near_columns = _near_columns(self.dleaf, r.leaf_index, r.zone, max(r.K - 1, 0))

    def _walk_flows(self) -> None:
        """Every flow walked from its leaf towards its destination as fabric.walk walks it (to where its LID is
        delivered, a dead end or MAX_HOPS links), counted at each switch it enters and on each link it takes; the
        flows of one destination that enter one switch walk on together, summed (the walk of each of the 8 M flows
        of a 16k tree took most of the start). `through` holds the flows' weights at their leaves at first. The
        destinations walk apart, a block of columns at a time, so that the temporaries stay small (page faults)."""
        ch, n, columns = self.c.ch, *self.through.shape
        load, width = self.load.reshape(-1), self.load.shape[1]
        tables, through, lft_width = self.lft.ravel(), self.through.reshape(-1), self.lft.shape[1]
        rows = np.flatnonzero(self.through.any(axis=1))  # the first hop: every column of every switch holding flows
        step = max(_BLOCK // max(len(rows), 1), 1)
        for first in range(0, columns, step):
            lids = self.lids[first : first + step]
            # where each column of the block is delivered (flat takes: several times faster than 2-D fancy indexing)
            home_switch, home_port = ch.dest_switch[lids], ch.dest_port[lids]
            entering = np.zeros(n * len(lids), dtype=self.through.dtype)  # the flows entering a cell at one hop
            at, j, flow = rows[:, None], np.arange(len(lids)), self.through[rows, first : first + step]
            for _ in range(MAX_HOPS):
                port = tables.take(at * lft_width + lids.take(j))
                nxt = ch.next.take(at * width + port)
                go = ~((at == home_switch.take(j)) & (port == home_port.take(j))) & (nxt >= 0)
                if not go.any():
                    break
                flow = flow[go]
                # np.add.at's fast path (a bincount's cost) wants the flows in the loads' dtype: 25 times the CPU else
                np.add.at(load, (at * width + port)[go], flow.astype(load.dtype))
                np.add.at(entering, (nxt.astype(np.int64) * len(lids) + j)[go], flow)
                cells = np.flatnonzero(entering != 0)  # (of a bool array: a fifth of the CPU of int32's)
                flow = entering[cells]
                entering[cells] = 0
                at, j = np.divmod(cells, len(lids))
                through[at * columns + first + j] += flow  # (cells are distinct)

    def _weights(self, cas: np.ndarray) -> np.ndarray:
        """(switches x destinations): flows from each alive leaf's CA ports to each CA destination of its zone on
        another leaf, less those between two ports of one host (as analyze's all-to-all counts them)."""
        r, topo = self.c.r, self.c.t
        hosts = [topo.ca_by_lid[lid].host for lid in self.lids.tolist()]
        return _all_to_all(r.d_leaf[cas], np.unique(hosts, return_inverse=True)[1], r.zone)

    def run(self) -> None:
        flat = self.load.ravel()
        top = self._busiest()
        best = int(flat[top])
        kept = 0
        for _ in range(self.MOVES):
            s, p = divmod(top, self.load.shape[1])
            if not self._move_off(s, p, int(flat[top])):
                break
            top = self._busiest()
            if flat[top] < best:
                best, kept = int(flat[top]), len(self.moves)
        self._undo(kept)

    def _busiest(self) -> int:
        """The busiest link, the first in the order of switch and port (flat.argmax()): the first row at the highest
        row maximum, kept up to date for the rows _set changed."""
        if self._dirty:
            rows = np.fromiter(self._dirty, dtype=np.int64, count=len(self._dirty))
            self._row_max[rows] = self.load[rows].max(axis=1)
            self._dirty.clear()
        s = int(self._row_max.argmax())
        return s * self.load.shape[1] + int(self.load[s].argmax())

    def _move_off(self, s: int, p: int, limit: int, avoid: int = -1) -> bool:
        """Take the best move of flows off link (s, p) that keeps every link it adds flows to below `limit` and adds
        none to link `avoid`; False when there is none. Without `avoid` (a move off the busiest link), when every
        move is blocked by one link, first make room there: moves off that link under the same limit that add
        nothing to (s, p) (undone when the room made is not enough)."""
        c = self._candidates(s, p)
        if c is None:
            return False
        t, j, q, f, new, _ = c.moves()
        peak = self._loads.take(new).max(axis=0)  # the busiest link gaining flows, after the move
        peak += f
        if avoid >= 0:
            peak[(new == avoid).any(axis=0)] = limit  # (as if it did not fit)
        k = self._best(limit, t, j, q, f, peak, new)
        if k >= 0:
            self.moves.append((int(t[k]), int(j[k]), int(self.lft[t[k], self.lids[j[k]]])))
            self._set(int(t[k]), int(j[k]), int(q[k]))
            return True
        if avoid >= 0:
            return False
        over = self._loads[new] + f >= limit
        blocked = c.in_found_order(np.nonzero((over.sum(axis=0) == 1) & (j >= 0))[0], self._tier)  # (not gaps)
        width = self.load.shape[1]
        tried: set[int] = set()
        order = blocked[np.lexsort((q[blocked], t[blocked], -f[blocked], peak[blocked]))]
        # taken now: the moves below find moves again into the buffers these arrays view
        blocking = [(int(new[:, k][over[:, k]][0]), int(f[k])) for k in order.tolist()]
        for link, flows in blocking:
            if link in tried or len(tried) == self.RELIEVE:
                continue
            tried.add(link)
            mark = len(self.moves)
            while self.load.ravel()[link] + flows >= limit:
                if not self._move_off(link // width, link % width, limit, s * width + p):
                    break
            if self._move_off(s, p, limit, s * width + p):  # (s, p) as `avoid`: no move adds to it, no second relief
                return True
            self._undo(mark)
        return False

    def _candidates(self, s: int, p: int) -> _Found | None:
        """Every move that takes flows off link (s, p), or None. A move is a leaf sending destination j up another valid
        uplink (its spine brings j down), a spine of another pod sending it up another valid core slot (its core
        reaches the spine at this spine's position in j's pod), or a core sending it down another of its cables to the
        same spine: every route stays shortest and up*/down*. A switch's moves of j depend on j's routes and flows at
        the switches around it alone, so those found for (s, p) before stay but for those a _set touched since."""
        top = s * self.load.shape[1] + p
        found = self._found.get(top)
        if found is None:
            cols = np.flatnonzero(self._crossing(s, p, slice(None)))
            found = self._found[top] = _Found(
                self._sets, cols, len(self.lids), self._moves_of(s, p, cols, None), self._unmoved
            )
        elif found.at < self._sets:
            changed = np.nonzero(self._changed_at[:-1] > found.at)[0]
            cross = self._crossing(s, p, changed)
            mine = cross | (found.stamp[changed] >= 0)
            cols, cross = changed[mine], cross[mine]
            if len(cols):
                touched = np.vstack([self._touched[j] for j in cols.tolist()]) > found.at  # (cols, switches)
                t, j = found.moves()[:2]
                k = np.flatnonzero(self._changed_at.take(j) > found.at)
                found.drop(k[touched[np.searchsorted(cols, j[k]), t[k]]])
                found.add(self._moves_of(s, p, cols[cross], touched[cross]))
                found.stamp[cols] = self._sets
            found.at = self._sets
        if not found.live:
            return None
        return found

    def _crossing(self, s: int, p: int, among: np.ndarray | slice) -> np.ndarray:
        """Which destination columns of `among` (a slice of all: no gather) have flows crossing link (s, p)."""
        out: np.ndarray = (self.lft[s, self.lids[among]] == p) & (self.through[s, among] > 0)
        return out

    def _moves_of(self, s: int, p: int, cols: np.ndarray, only: np.ndarray | None) -> tuple[np.ndarray, ...]:
        """The moves off link (s, p) of the destination columns `cols` (ascending, crossing it), at the switches `only`
        marks (columns x switches; None: every switch), in the order of tier, column, switch and port: (switch t,
        column j, new port q, flows f of j at t, the new route's links gaining flows (5 x moves, padded with the
        cell after the loads), the port's place among the switch's candidate ports)."""
        c, r = self.c, self.c.r
        if not len(cols):
            return _NO_MOVES
        n = len(self.rows)
        # (columns, switches + 1), by vstack: np.stack's Python costs two to three times more for a few arrays
        parents = np.vstack([self._parents(j) for j in cols.tolist()])
        # (column, switch) pairs whose flows of the column cross (s, p); of a few switches, by their routes alone
        if only is None:
            jj, t = np.nonzero(self._upstream(s, parents)[:, :-1])
        else:
            jj, t = np.nonzero(only)
            passes = self._passes(s, parents, jj * (n + 1), t)
            jj, t = jj[passes], t[passes]
        flows = self.through[t, cols[jj]]
        jj, t, flows = jj[flows > 0], t[flows > 0], flows[flows > 0]
        leaf = self.dleaf[cols[jj]]
        tier = self._tier[t]
        parts: list[tuple[np.ndarray, np.ndarray | None, np.ndarray]] = []
        at = tier == 0  # a leaf: another uplink whose spine brings j down
        spines = r.up_to[t[at]]
        ok = c.up_ok[t[at]] & (spines >= 0) & c.alive[np.maximum(spines, 0)]
        ok &= c.reach[np.maximum(spines, 0), leaf[at][:, None]] & (t[at] != leaf[at])[:, None]
        parts.append((np.nonzero(at)[0], r.up_port[t[at]], ok))
        at = (tier == 1) & (r.pod[t] != r.pod[leaf]) & (r.K > 0)  # a spine of another pod: another core slot
        cores = r.cu_to[t[at]]
        far = r.spine_at[r.zone[t[at]], r.pod[leaf[at]], r.position[t[at]]]
        ok = c.cu_ok[t[at]] & (cores >= 0) & c.alive[np.maximum(cores, 0)]
        ok &= c.link[np.maximum(cores, 0), far[:, None]] != UNROUTED
        parts.append((np.nonzero(at)[0], r.cu_port[t[at]], ok))
        at = tier == 2  # a core: another of its cables to the spine it sends j down to
        hop = parents[jj[at], t[at]]
        ok = (self.next[t[at]] == hop[:, None]) & (hop < n)[:, None]
        parts.append((np.nonzero(at)[0], None, ok))  # (its ports in order: the port is the place)
        hits = [np.nonzero(ok) for _, _, ok in parts]  # (pair, place) of each valid port
        pair = np.concatenate([rows[k] for (rows, _, _), (k, _) in zip(parts, hits)])
        place = np.concatenate([at for _, at in hits])
        q = np.concatenate([at if ports is None else ports[ok] for (_, ports, ok), (_, at) in zip(parts, hits)])
        keep = q != self._column[cols[jj], t][pair]
        pair, q, place = pair[keep], q[keep], place[keep]
        nxt = self.next[t[pair], q].astype(np.int64)
        nxt[nxt < 0] = n  # no next switch: no route
        takes = ~self._passes(s, parents, jj[pair] * (n + 1), nxt)  # the new route leaves (s, p)
        pair, q, place, nxt = pair[takes], q[takes], place[takes], nxt[takes]
        if not len(pair):
            return _NO_MOVES
        links = self._first_links(cols, parents)
        new = np.empty((5, len(pair)), dtype=np.int64)  # (link of the route, move): contiguous rows to weigh
        new[0] = t[pair] * self.load.shape[1] + q
        self._walk_links(links, parents, jj[pair] * (n + 1), nxt, new[1:])  # the new route's links after (t, q)
        old = np.empty((4, len(jj)), dtype=np.int64)  # each pair's route now, the same for its moves
        self._walk_links(links, parents, jj * (n + 1), t, old)
        kept = np.zeros(new[1:].shape, dtype=bool)  # links of the new route on the old one, and the padding
        for link in old:
            kept |= new[1:] == link[pair]
        np.putmask(new[1:], kept, self._unmoved)
        # int32 where values fit (_Found's buffers are most of the memory); the links stay int64: numpy's take and
        # indexing by int32 cost 2-4 times more (they convert the indexes)
        t, j, q = t[pair].astype(np.int32), cols[jj[pair]].astype(np.int32), q.astype(np.int32)
        return t, j, q, flows[pair], new, place.astype(np.int32)

    @staticmethod
    def _walk_links(
        links: np.ndarray, parents: np.ndarray, rows: np.ndarray, start: np.ndarray, out: np.ndarray
    ) -> None:
        """Into `out` (4 x routes): the links of the routes from the switches `start` in the rows `rows` (column *
        (switches + 1)) of _first_links' `links` and the columns' `parents` (a route is at most 4 links)."""
        at = rows + start
        for step in range(4):
            links.take(at, out=out[step], mode="clip")  # (not "raise": that copies `out` through a buffer)
            if step < 3:
                at = parents.take(at)
                at += rows  # (in place: a temporary more per step costs page faults, as much CPU again)

    def _first_links(self, cols: np.ndarray, parents: np.ndarray) -> np.ndarray:
        """Flat over (columns x switches + 1): the link (switch * width + port) each switch sends the column out of
        to its next switch, the cell after the loads where there is none."""
        n, width = len(self.rows), self.load.shape[1]
        out = np.full(parents.shape, self._unmoved, dtype=np.int64)
        np.copyto(out[:, :n], self.rows * width + self._column[cols], where=parents[:, :n] < n)
        return out.ravel()

    def _best(
        self,
        limit: int,
        t: np.ndarray,
        j: np.ndarray,
        q: np.ndarray,
        f: np.ndarray,
        peak: np.ndarray,
        new: np.ndarray,
    ) -> int:
        """The move whose busiest link after it carries the fewest flows, below `limit`, then the most flows moved,
        then the lowest switch, LID and port, of those that share a link in a shift phase with one destination at
        most (_shared, checked in that order a block at a time); -1 when there is none."""
        least = int(peak.min())
        if least >= limit:
            return -1
        first = np.flatnonzero(peak == least)
        for key in (-f, t, j, q):  # the first in that order (columns ascend with their LIDs), usually the move
            first = first[key[first] == key[first].min()]
        if self._shared(j[first], new[:, first])[0] <= 1:
            return int(first[0])
        k = np.flatnonzero(peak < limit)
        # sorted in two parts: the moves up to the _SORTED-th least peak (`first` leads them), then the rest; a fine
        # move is usually among the first few hundred, and sorting all ~20 k cost more than checking those
        cut = np.partition(peak[k], min(_SORTED, len(k)) - 1)[min(_SORTED, len(k)) - 1]
        for part, skip in ((k[peak[k] <= cut], 1), (k[peak[k] > cut], 0)):
            part = part[np.lexsort((q[part], self.lids[j[part]], t[part], -f[part], peak[part]))]
            for start in range(skip, len(part), 16):
                block = part[start : start + 16]
                fine = np.nonzero(self._shared(j[block], new[:, block]) <= 1)[0]
                if len(fine):
                    return int(block[fine[0]])
        return -1

    def _shared(self, j: np.ndarray, new: np.ndarray) -> np.ndarray:
        """The most destinations a move of j onto the links `new` gaining flows (_moves_of) puts on one of them with
        j in some leaf shift phase. A phase sends one source leaf's ports to one leaf's ports, and a pod's source
        leaves to consecutive leaves: on a leaf's uplink, the other ports of j's leaf it already carries; on a spine's
        or core's link, the destinations it carries on leaves less than K apart from j's (K consecutive leaves have
        distinct core slots). The minimal repair makes at most two share a link; a move may too, never more."""
        width = self.load.shape[1]
        row, k = np.nonzero(new != self._unmoved)
        links, jk = new[row, k], j[k]
        a, b = np.divmod(links, width)
        mine = (self._column[jk, a] == b) & (self.through[a, jk] > 0)  # j itself, on the link
        most = np.zeros(len(j), dtype=np.int64)
        np.maximum.at(most, k, self._carried(links, self.dleaf[jk]) - mine)
        return most

    def _carried(self, links: np.ndarray, leaves: np.ndarray) -> np.ndarray:
        """Per link and leaf, the destination columns the link carries of those _shared counts for a destination on
        the leaf (itself included): its ports on a leaf's uplink, else the columns of leaves less than K apart.
        Kept until a _set changes the tables or flows at the link's switch (a relief asks again and again)."""
        a, b = np.divmod(links, self.load.shape[1])
        keys = links * len(self.rows) + leaves
        out = np.empty(len(keys), dtype=np.int64)
        missing = []
        for i, (key, changed) in enumerate(zip(keys.tolist(), self._switch_set[a].tolist())):
            kept = self._carries.get(key)
            if kept is not None and kept[1] >= changed:
                out[i] = kept[0]
            else:
                missing.append(i)
        if missing:
            k = np.array(missing)
            a, b, leaves = a[k], b[k], leaves[k]
            near = self._near_columns[leaves]  # (links, columns), -1 padded
            counted = near >= 0
            mine = self._tier[a] == 0  # a leaf's uplink: the ports of the leaf alone
            counted[mine] &= self.dleaf[near[mine]] == leaves[mine, None]
            cols = np.maximum(near, 0)
            counted &= self.lft.take(a[:, None] * self.lft.shape[1] + self.lids[cols]) == b[:, None]
            counted &= self.through.take(a[:, None] * self.through.shape[1] + cols) > 0
            out[k] = counted.sum(axis=1)
            for key, count in zip(keys[k].tolist(), out[k].tolist()):
                self._carries[key] = (count, self._sets)
        return out

    def _undo(self, mark: int) -> None:
        """Undo the moves after the first `mark`."""
        for t, j, port in reversed(self.moves[mark:]):
            self._set(t, j, port)
        del self.moves[mark:]

    def _parents(self, j: int) -> np.ndarray:
        """(switches + 1): the next switch of every switch's route to destination column j by the tables, the last
        (n, for no switch, leading to itself) where there is none. Kept while j's entries stay (_set updates it)."""
        out = self._parent.get(j)
        if out is None:
            n = len(self.rows)
            out = self._parent[j] = np.full(n + 1, n, dtype=np.int64)
            nxt = self.next[self.rows, self._column[j]]
            np.copyto(out[:n], nxt, where=nxt >= 0)
        return out

    @staticmethod
    def _passes(t: int, parents: np.ndarray, rows: np.ndarray, start: np.ndarray) -> np.ndarray:
        """Whether the routes from the switches `start` in the rows `rows` (column * (switches + 1)) of the columns'
        `parents` pass switch t (as _upstream, for these switches alone)."""
        out: np.ndarray = start == t
        at = rows + start
        for _ in range(3):  # a route is at most 4 links
            at = parents.take(at)
            out |= at == t
            at += rows  # (in place, as in _walk_links)
        return out

    @staticmethod
    def _upstream(t: int, parents: np.ndarray) -> np.ndarray:
        """(columns x switches + 1) by the columns' _parents: the switch's route to the destination column passes
        switch t (t's own included; the last, for no switch, never)."""
        row = (np.arange(len(parents)) * parents.shape[1])[:, None]
        at, there = row + np.arange(parents.shape[1]), row + t
        out: np.ndarray = at == there
        for _ in range(3):  # a route is at most 4 links
            at = parents.take(at)
            at += row  # (in place, as in _walk_links)
            out |= at == there
        return out

    def _links(self, t: int, port: int, lid: int) -> list[tuple[int, int]]:
        """The links from switch t to LID `lid` when t sends it out of `port`."""
        out = []
        while (nxt := int(self.next[t, port])) >= 0:
            out.append((t, port))
            t, port = nxt, int(self.lft[nxt, lid])
        return out

    def _set(self, t: int, j: int, port: int) -> None:
        """Switch t sends destination j out of `port`: its flows leave the old path for the new one."""
        lid = int(self.lids[j])
        self._sets += 1
        self._changed_at[j] = self._sets
        # a switch's moves of j change with its route (the switches upstream of t), the routes of the switches it
        # may move j to (their neighbours) and its flows (the switches on t's old and new routes)
        touched = self._touched.setdefault(j, np.zeros(len(self.rows), dtype=np.int64))
        parents = self._parents(j)
        upstream = self._upstream(t, parents[None])[0, :-1]
        touched[upstream | self._next_to[:, upstream].any(axis=1)] = self._sets
        f = int(self.through[t, j])
        self._switch_set[t] = self._sets
        for sign, start in ((-1, int(self.lft[t, lid])), (1, port)):
            for a, b in self._links(t, start, lid):
                self.load[a, b] += sign * f
                self._dirty.add(a)
                nxt = int(self.next[a, b])
                self.through[nxt, j] += sign * f
                touched[nxt] = self._switch_set[nxt] = self._sets
            if sign < 0:
                self.lft[t, lid] = self._column[j, t] = port
                nxt = int(self.next[t, port])
                parents[t] = nxt if nxt >= 0 else len(self.rows)


class _Found:
    """The moves off one link (Rebalance._moves_of's arrays) as of the `at`-th _set, kept in buffers so that finding
    a few again does not copy them all: a move dropped leaves a gap (column -1, every link on the cell after
    `unmoved`, whose load never fits) until a move found again fills it or the gaps outnumber the moves. `stamp`: per
    destination column, the _set as of which its moves were last found (-1: none were). `depth`: the rows of `new` with links
    gaining flows (the rest, all on the cell `unmoved`, are not weighed)."""

    def __init__(self, at: int, cols: np.ndarray, columns: int, moves: tuple[np.ndarray, ...], unmoved: int):
        """The moves `moves` of the destination columns `cols` (of `columns`), found as of the `at`-th _set."""
        self.at, self.unmoved, self.gap = at, unmoved, unmoved + 1
        self.stamp = np.full(columns, -1, dtype=np.int32)
        self.stamp[cols] = at
        self._buffers = list(moves)
        self.size = self.live = len(moves[0])
        self.depth = self._depth(moves[4])

    def _depth(self, new: np.ndarray) -> int:
        return 1 + int(np.flatnonzero((new != self.unmoved).any(axis=1)).max(initial=0))

    def moves(self) -> tuple[np.ndarray, ...]:
        """(switch t, column j, port q, flows f, links `new` (depth x moves), place) of the moves and gaps."""
        t, j, q, f, new, place = (a[..., : self.size] for a in self._buffers)
        return t, j, q, f, new[: self.depth], place

    def drop(self, k: np.ndarray) -> None:
        self._buffers[1][k] = -1
        self._buffers[4][:, k] = self.gap
        self.live -= len(k)

    def add(self, moves: tuple[np.ndarray, ...]) -> None:
        """Put `moves` in the gaps, then after the last move (room for as many again when there is none left)."""
        if self.size - self.live > self.live:  # the gaps dominate: the moves close up
            keep = np.flatnonzero(self._buffers[1][: self.size] >= 0)
            for a in self._buffers:
                a[..., : len(keep)] = a[..., keep]
            self.size = len(keep)
        count = len(moves[0])
        gaps = np.flatnonzero(self._buffers[1][: self.size] < 0)[:count]
        end = self.size + count - len(gaps)
        if end > self._buffers[0].shape[-1]:
            self._buffers = [_room(a[..., : self.size], 2 * end) for a in self._buffers]
        for a, b in zip(self._buffers, moves):
            a[..., gaps] = b[..., : len(gaps)]
            a[..., self.size : end] = b[..., len(gaps) :]
        self.size = end
        self.live += count
        self.depth = max(self.depth, self._depth(moves[4]))

    def in_found_order(self, k: np.ndarray, tier: np.ndarray) -> np.ndarray:
        """The moves `k` in the order the moves of the destinations found together come in (tier, column, switch,
        port), those found earlier first (the ties of the relief's order are taken in it)."""
        t, j, _, _, _, place = self.moves()
        out: np.ndarray = k[np.lexsort((place[k], t[k], j[k], tier[t[k]], self.stamp[j[k]]))]
        return out


def _all_to_all(leaf: np.ndarray, host: np.ndarray, zone: np.ndarray) -> np.ndarray:
    """(switches x columns): the flows from each switch's CA ports (the columns, on their `leaf`, of their `host`
    code) to each column of the switch's `zone` on another leaf, less those between two ports of one host."""
    ports = np.bincount(leaf, minlength=len(zone)).astype(np.int32)  # (int32: half the traffic of int64)
    w: np.ndarray = ports[:, None] * (zone[:, None] == zone[leaf][None, :])
    # every pair (a, b) of columns of one host (b: a place in `order`, the columns by host, from its host's first on)
    order = np.argsort(host, kind="stable")
    size = np.bincount(host)[host]  # per column, its host's columns
    a = np.repeat(np.arange(len(host)), size)
    b = np.arange(len(a)) + np.repeat(np.searchsorted(host[order], host) - (np.cumsum(size) - size), size)
    np.subtract.at(w, (leaf[a], order[b]), 1)
    w[leaf, np.arange(len(leaf))] = 0
    return w


def _near_columns(leaf: np.ndarray, index: np.ndarray, zone: np.ndarray, reach: int) -> np.ndarray:
    """(switches x columns): per leaf, the columns (on their `leaf`) on the leaves of its zone whose `index` differs
    from its own by at most `reach`, -1 padded. In the order of their leaf's zone and index, those are one range."""
    low = index[leaf].min(initial=0)
    stride = index[leaf].max(initial=0) - low + 2 * reach + 1  # (a zone's ranges stay clear of the next zone's)
    key = zone[leaf] * stride + index[leaf] - low
    order = np.argsort(key, kind="stable")
    at = zone * stride + index - low
    first = np.searchsorted(key[order], at - reach)
    count = np.searchsorted(key[order], at + reach, side="right") - first
    count[np.bincount(leaf, minlength=len(zone)) == 0] = 0
    place = np.arange(max(count.max(initial=0), 1))
    padded = np.concatenate([order, np.full(len(place), -1)])  # (a range's places past its end)
    out: np.ndarray = np.where(place < count[:, None], padded[first[:, None] + place], -1)
    return out


def _room(a: np.ndarray, size: int) -> np.ndarray:
    """`a` in a buffer of `size` along its last axis."""
    out = np.empty((*a.shape[:-1], size), dtype=a.dtype)
    out[..., : a.shape[-1]] = a
    return out


_NO_MOVES = tuple(np.zeros((5, 0), dtype=np.int64) if k == 4 else np.zeros(0, dtype=np.int32) for k in range(6))
_BLOCK = 1 << 18  # cells of the first hop walked at once (_walk_flows): its temporaries stay in the L2 cache
_SORTED = 512  # moves _best sorts first when the first is not fine
_NEVER = -(1 << 40)  # the load of the cell a move's links not gaining flows point to: never the busiest
_GAP = 1 << 40  # the load of the cell a gap's links point to: never fits
