"""ECMP as the probability distribution it is: flows per link on a RoCE plan (docs/ethernet.md, "ECMP analysis").

A switch hashes every flow (one per QP) onto one of its equal-cost next hops. ffplan models the hash as uniform and
independent per flow and per switch, and reads the next-hop sets from the plan's `ethernet` section (not from the
cabling), so a plan whose ECMP groups are wrong shows it here. The flows are the analyze patterns' (the same
bundles as InfiniBand's: source leaf, destination port, connections), each connection split into `qps` flows of
1/qps of its traffic. Loads are in connections (a flow of one QP out of 4 counts 1/4).

Two exact-in-distribution ways to draw the loads of many trials at once, never flow by flow:

* `exact`: every (switch, destination leaf) state splits its flows multinomially over its next hops, wave after
  wave until every flow has arrived: the joint distribution of all link loads, on any ECMP graph.
* `tiers` (two-tier Clos only): a leaf's uplinks get a multinomial split of all its flows (the flows to every
  destination of one ECMP group hash over the same set); the downlinks into a leaf get a multinomial split of all
  flows to it, with the probability of each downlink from the source leaves' spine spread. Each tier's loads have
  exactly the right distribution; the two tiers are drawn independently, whereas a flow from leaf A to B through
  spine s loads both A->s and s->B. The correlation of those two loads is about 1/(leaves - 1) of their
  variances; `benchmarks/ecmp.py` measures the difference against `exact`. `auto` takes `exact` when its work
  is small and `tiers` otherwise.

Pinned paths are InfiniBand's way on Ethernet: every switch sends the flows to one destination port down one
next hop, so all QPs of a connection share a path and the busiest link is one number, not a distribution. The
rule is ffplan.ethernet.pinning's, the one the design renders: a switch takes entry r mod n of its next hops in
pinning order, r starting as the port's rank on its leaf and divided by the number of next switches at every hop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ffplan.analyze.bounds import lower_bound
from ffplan.analyze.flows import Demand, TopologyArrays
from ffplan.analyze.loads import TIER_ORDER
from ffplan.analyze.patterns import PATTERNS, build_pattern
from ffplan.ethernet.forwarding import Change, Failed, reduced_plan
from ffplan.ethernet.pinning import pinning_order
from ffplan.plan.model import Plan

Paths = Literal["ecmp", "pinned"]
Sampler = Literal["auto", "exact", "tiers"]
SAMPLERS = ("auto", "exact", "tiers")
EXACT_WORK = 20_000_000  # values `auto` lets the exact sampler draw before it takes the per-tier one
CHUNK = 4_000_000  # values drawn at once (about 32 MB of int64 per array)
QPS_SETTING = "NCCL_IB_QPS_PER_CONNECTION"


@dataclass(frozen=True)
class EcmpOptions:
    trials: int = 1000
    seed: int = 0
    qps: int = 1
    paths: Paths = "ecmp"
    sampler: Sampler = "auto"


class EcmpFabric:
    """One plane of a RoCE plan as arrays: the directed switch-to-switch links (`src`, `dst` switch indexes) and,
    per (switch, destination leaf) state, its next hops as link ids (`hops(state)`), from the plan's ECMP groups."""

    def __init__(self, plan: Plan):
        if plan.ethernet is None:
            raise ValueError("not a RoCE plan: it has no `ethernet` section")
        self.switches = [s.name for s in plan.switches]
        self.sid = {name: i for i, name in enumerate(self.switches)}
        self.tier = [s.tier for s in plan.switches]
        n = len(self.switches)
        by_name = {s.name: s for s in plan.ethernet.switches}
        src: list[int] = []
        dst: list[int] = []
        names: list[str] = []
        ports: list[str] = []  # per link its SONiC port name
        link_of: dict[tuple[int, str], int] = {}  # (switch, next-hop address) -> link id
        host_rank: dict[tuple[int, int], int] = {}  # (leaf, port number) -> rank among the leaf's host ports
        for i, name in enumerate(self.switches):
            host_ports = 0
            for p in by_name[name].ports:
                if p.peer in self.sid:
                    link_of[(i, str(p.peer_address))] = len(src)
                    src.append(i)
                    dst.append(self.sid[p.peer])
                    names.append(f"{name}[{p.name}] -> {p.peer}[{p.peer_port}]")
                    ports.append(p.name)
                else:
                    host_rank[(i, int(p.port))] = host_ports
                    host_ports += 1
        self.src, self.dst = np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64)
        self.host_rank = np.zeros((n, max((port for _, port in host_rank), default=0) + 1), dtype=np.int64)
        for (leaf, port), rank in host_rank.items():
            self.host_rank[leaf, port] = rank
        self.link_names = names
        self.link_port = ports
        self.state = np.full((n, n), -1, dtype=np.int64)  # (switch, destination leaf) -> state id; -1: no route
        hop_lists: list[list[int]] = []
        dest: list[int] = []  # per state its destination leaf
        for i, name in enumerate(self.switches):
            for group in by_name[name].ecmp:
                try:
                    ids = [link_of[(i, str(a))] for a in group.next_hops]
                except KeyError as exc:
                    raise ValueError(f"{name}: ECMP next hop {exc.args[0][1]} is no neighbour's address") from None
                for d in group.destinations:
                    self.state[i, self.sid[d]] = len(hop_lists)
                    hop_lists.append(ids)
                    dest.append(self.sid[d])
        self.hop_len = np.array([len(h) for h in hop_lists], dtype=np.int64)
        self.hop_off = np.concatenate([[0], np.cumsum(self.hop_len)[:-1]]).astype(np.int64)
        self.hop_flat = np.array([x for h in hop_lists for x in h], dtype=np.int64)
        self.dest = np.array(dest, dtype=np.int64)
        self._hop_lists = hop_lists

    def hops(self, state: int) -> np.ndarray:
        o = self.hop_off[state]
        return self.hop_flat[o : o + self.hop_len[state]]

    def last_hop(self) -> np.ndarray:
        """Per state: every next hop ends on the destination leaf (a spine's state in a two-tier Clos)."""
        ends = self.dst[self.hop_flat] == np.repeat(self.dest, self.hop_len)
        return (
            np.logical_and.reduceat(ends, self.hop_off) & (self.hop_len > 0) if len(ends) else np.zeros(0, dtype=bool)
        )

    def two_tier_states(self) -> np.ndarray:
        """Per state: every next hop leads to a switch other than the destination whose state is a last hop."""
        if not len(self.hop_flat):
            return np.zeros(0, dtype=bool)
        mid = self.dst[self.hop_flat]
        dest = np.repeat(self.dest, self.hop_len)
        nxt = self.state[mid, dest]
        ok = (mid != dest) & (nxt >= 0) & self.last_hop()[np.maximum(nxt, 0)]
        return np.logical_and.reduceat(ok, self.hop_off)

    def pinned_tables(self) -> tuple[np.ndarray, np.ndarray]:
        """Per state its next hops in pinning order, flat like `hop_flat`, and its number of next switches."""
        if not hasattr(self, "_pinned"):
            self._pinned = self._pinned_tables(self._hop_lists)
        return self._pinned

    def _pinned_tables(self, hop_lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        """Per state its next hops in pinning order (ffplan.ethernet.pinning), flat like `hop_flat`, and its number
        of next switches."""
        out: list[int] = []
        fan: list[int] = []
        for ids in hop_lists:
            ordered, next_switches = pinning_order(ids, lambda lk: (self.switches[self.dst[lk]], self.link_port[lk]))
            out.extend(ordered)
            fan.append(next_switches)
        return np.array(out, dtype=np.int64), np.array(fan, dtype=np.int64)

    def tier_name(self, link: int) -> str:
        return f"{self.tier[self.src[link]]} → {self.tier[self.dst[link]]}"


@dataclass
class Flows:
    """One phase's connections between leaves: per bundle its source leaf, destination leaf and the destination
    port's rank on it (fabric indexes), and connections; bundles within one leaf are left out."""

    src: np.ndarray
    dst: np.ndarray
    rank: np.ndarray
    weight: np.ndarray


def leaf_flows(fab: EcmpFabric, net: TopologyArrays, demand: Demand) -> Flows:
    names = net.switches
    to_fab = np.array([fab.sid[s] for s in names], dtype=np.int64)
    home = net.leaf_of[demand.dst]
    ok = home >= 0
    a, b = to_fab[demand.leaf[ok]], to_fab[home[ok]]
    ports = net.leaf_port[demand.dst[ok]]
    rank = fab.host_rank[b, np.minimum(ports, fab.host_rank.shape[1] - 1)]
    away = a != b
    return Flows(a[away], b[away], rank[away], demand.weight[ok][away].astype(np.int64))


@dataclass
class Sampled:
    """Per trial the busiest link's load (in flows, qps per connection), per tier the same, and unroutable flows."""

    busiest: np.ndarray
    by_tier: dict[str, np.ndarray]
    unroutable: float
    sampler: str


def _tiers_of(fab: EcmpFabric) -> tuple[list[str], np.ndarray]:
    names = [fab.tier_name(i) for i in range(len(fab.src))]
    order = sorted(set(names), key=lambda t: (TIER_ORDER.get(t, len(TIER_ORDER)), t))
    return order, np.array([order.index(t) for t in names], dtype=np.int64)


def _reduce(loads: np.ndarray, tier_of: np.ndarray, tiers: int) -> tuple[np.ndarray, np.ndarray]:
    """(busiest link per trial, busiest link per tier and trial) of (trials, links) loads."""
    per_tier = np.zeros((tiers, loads.shape[0]), dtype=np.int64)
    for t in range(tiers):
        cols = tier_of == t
        if cols.any():
            per_tier[t] = loads[:, cols].max(axis=1)
    return loads.max(axis=1) if loads.shape[1] else np.zeros(loads.shape[0], dtype=np.int64), per_tier


def _split_uniform(rng: np.random.Generator, n: np.ndarray, k: int) -> np.ndarray:
    """n (rows, trials) flows each hashed uniformly onto k next hops: (rows, trials, k) counts."""
    return rng.multinomial(n, np.full(k, 1.0 / k))


def sample_exact(fab: EcmpFabric, flows: Flows, qps: int, trials: int, rng: np.random.Generator) -> Sampled:
    """Every (switch, destination leaf) state splits its flows over its next hops, wave by wave (module doc)."""
    n_sw, n_links = len(fab.switches), len(fab.src)
    keys, inv = np.unique(flows.src * n_sw + flows.dst, return_inverse=True)
    start = np.bincount(inv, weights=flows.weight).astype(np.int64) * qps
    tiers, tier_of = _tiers_of(fab)
    busiest, per_tier, lost = [], [], 0
    width = max(int(fab.hop_len.max()) if len(fab.hop_len) else 1, 1)
    step = max(1, CHUNK // max(len(keys) * width, n_links, 1))
    for t0 in range(0, trials, step):
        t = min(step, trials - t0)
        loads = np.zeros((t, n_links), dtype=np.int64)
        at, to = keys // n_sw, keys % n_sw
        counts = np.repeat(start[:, None], t, axis=1)
        for _ in range(n_sw):
            moving = (at != to) & (counts.sum(axis=1) > 0)
            at, to, counts = at[moving], to[moving], counts[moving]
            if not len(at):
                break
            state = fab.state[at, to]
            routed = state >= 0
            lost += int(counts[~routed].sum())
            at, to, counts, state = at[routed], to[routed], counts[routed], state[routed]
            nxt_at, nxt_to, nxt_counts = [], [], []
            for k in np.unique(fab.hop_len[state]).tolist():
                rows = fab.hop_len[state] == k
                links = fab.hop_off[state[rows]][:, None] + np.arange(k)
                links = fab.hop_flat[links]  # (rows, k)
                draw = _split_uniform(rng, counts[rows], k)  # (rows, t, k)
                idx = (np.arange(t)[None, :, None] * n_links + links[:, None, :]).ravel()
                loads += (
                    np.bincount(idx, weights=draw.ravel(), minlength=t * n_links).astype(np.int64).reshape(t, n_links)
                )
                nxt_at.append(fab.dst[links].ravel())
                nxt_to.append(np.repeat(to[rows], k))
                nxt_counts.append(draw.transpose(0, 2, 1).reshape(-1, t))
            at, to, counts = np.concatenate(nxt_at), np.concatenate(nxt_to), np.concatenate(nxt_counts)
            key = at * n_sw + to
            order = np.argsort(key, kind="stable")
            key = key[order]
            starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
            at, to, counts = key[starts] // n_sw, key[starts] % n_sw, np.add.reduceat(counts[order], starts, axis=0)
        top, tops = _reduce(loads, tier_of, len(tiers))
        busiest.append(top)
        per_tier.append(tops)
    return _sampled(busiest, per_tier, tiers, lost / max(trials, 1), "exact")


def _sampled(
    busiest: list[np.ndarray], per_tier: list[np.ndarray], tiers: list[str], unroutable: float, sampler: str
) -> Sampled:
    b = np.concatenate(busiest) if busiest else np.zeros(0, dtype=np.int64)
    pt = np.concatenate(per_tier, axis=1) if per_tier else np.zeros((len(tiers), 0), dtype=np.int64)
    return Sampled(b, {name: pt[i] for i, name in enumerate(tiers)}, unroutable, sampler)


def two_tier(fab: EcmpFabric, flows: Flows) -> bool:
    """Every route of these flows is leaf -> spine -> leaf: each next hop of the source leaf is a switch whose next
    hops for the destination all end on it."""
    state = fab.state[flows.src, flows.dst]
    return bool((state >= 0).all() and fab.two_tier_states()[state].all())


def sample_tiers(fab: EcmpFabric, flows: Flows, qps: int, trials: int, rng: np.random.Generator) -> Sampled:
    """Uplinks from every leaf's flows, downlinks from the flows into every leaf, the tiers drawn independently
    (module doc); needs `two_tier`."""
    n_links = len(fab.src)
    weight = flows.weight * qps
    states, per_flow = np.unique(fab.state[flows.src, flows.dst], return_inverse=True)
    set_of: dict[tuple[int, ...], int] = {}  # a source leaf's next-hop set -> id
    flow_set = np.array(
        [set_of.setdefault(tuple(fab.hops(s).tolist()), len(set_of)) for s in states.tolist()], dtype=np.int64
    )[per_flow]
    sets = list(set_of)
    groups: dict[tuple[tuple[int, ...], tuple[float, ...]], int] = {}  # (links, probabilities) -> flows: a multinomial
    for links, total in zip(sets, np.bincount(flow_set, weights=weight, minlength=len(sets)).tolist()):
        groups[(links, (1.0 / len(links),) * len(links))] = int(total)
    # what the downlinks see of a source leaf is only how its next hops spread over the spines
    spread_of: dict[tuple[tuple[int, int], ...], int] = {}
    set_spread = np.array(
        [
            spread_of.setdefault(
                tuple(zip(*(x.tolist() for x in np.unique(fab.dst[list(links)], return_counts=True)))), len(spread_of)
            )
            for links in sets
        ],
        dtype=np.int64,
    )
    spreads = list(spread_of)
    keys, where = np.unique(flows.dst * len(spreads) + set_spread[flow_set], return_inverse=True)
    for key, total in zip(keys.tolist(), np.bincount(where, weights=weight).tolist()):
        b, spread = divmod(key, len(spreads))
        down = _downlinks(fab, spreads[spread], b)
        groups[down] = groups.get(down, 0) + int(total)
    tiers, tier_of = _tiers_of(fab)
    busiest, per_tier = [], []
    step = max(1, CHUNK // max(n_links, sum(len(links) for links, _ in groups), 1))
    for t0 in range(0, trials, step):
        t = min(step, trials - t0)
        loads = np.zeros((t, n_links), dtype=np.int64)
        for (links, probs), total in groups.items():
            loads[:, list(links)] += rng.multinomial(total, probs, size=t)
        top, tops = _reduce(loads, tier_of, len(tiers))
        busiest.append(top)
        per_tier.append(tops)
    return _sampled(busiest, per_tier, tiers, 0.0, "tiers")


def _downlinks(
    fab: EcmpFabric, spread: tuple[tuple[int, int], ...], leaf: int
) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """The links into `leaf` a flow ends on, with their probabilities, when its source leaf has `spread` (next
    switch, links to it) next hops: each spine splits its share evenly over its own next hops to the leaf."""
    width = sum(count for _, count in spread)
    prob: dict[int, float] = {}
    for mid, count in spread:
        nxt = fab.hops(int(fab.state[mid, leaf])).tolist()
        for d in nxt:
            prob[d] = prob.get(d, 0.0) + count / width / len(nxt)
    order = sorted(prob)
    return tuple(order), tuple(prob[d] for d in order)


def pinned_loads(fab: EcmpFabric, flows: Flows) -> tuple[np.ndarray, int]:
    """(connections per link, unroutable connections) when every switch pins each destination port to one next hop
    (module doc): deterministic, the InfiniBand way."""
    loads = np.zeros(len(fab.src), dtype=np.int64)
    pinned, fan = fab.pinned_tables()
    at, to, rank, w = flows.src, flows.dst, flows.rank, flows.weight
    lost = 0
    for _ in range(len(fab.switches)):
        moving = at != to
        at, to, rank, w = at[moving], to[moving], rank[moving], w[moving]
        if not len(at):
            break
        state = fab.state[at, to]
        routed = state >= 0
        lost += int(w[~routed].sum())
        at, to, rank, w, state = at[routed], to[routed], rank[routed], w[routed], state[routed]
        link = pinned[fab.hop_off[state] + rank % fab.hop_len[state]]
        loads += np.bincount(link, weights=w, minlength=len(loads)).astype(np.int64)
        at, rank = fab.dst[link], rank // fan[state]  # the next switch spreads what this one's choice left over
    return loads, lost


@dataclass
class EcmpResult:
    pattern: str
    scope: str
    description: str
    paths: str
    qps: int
    trials: int
    seed: int
    sampler: str
    phases: int
    worst_phase: str
    flows: int  # connections in the worst phase
    links: int
    bound: int
    bound_cut: str
    mean: float  # of the busiest link's load (connections), over the trials
    p50: float
    p99: float
    max: float
    over_10: float  # probability the busiest link is above 1.1 x bound
    over_50: float
    unroutable: float
    by_tier: dict[str, dict[str, float]] = field(default_factory=dict)  # tier -> mean/p99/max of its busiest link

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        for key in ("mean", "p50", "p99", "max", "over_10", "over_50", "unroutable"):
            d[key] = round(d[key], 4)
        d["by_tier"] = {t: {k: round(v, 4) for k, v in s.items()} for t, s in self.by_tier.items()}
        return d


def _quantile(x: np.ndarray, q: float) -> float:
    return float(np.quantile(x, q, method="inverted_cdf")) if len(x) else 0.0


def _stats(loads: np.ndarray, per: int) -> dict[str, float]:
    x = loads / per
    return {
        "mean": float(x.mean()) if len(x) else 0.0,
        "p50": _quantile(x, 0.5),
        "p99": _quantile(x, 0.99),
        "max": float(x.max()) if len(x) else 0.0,
    }


def analyze_ecmp(
    plan: Plan,
    net: TopologyArrays,
    patterns: list[str] | tuple[str, ...],
    options: EcmpOptions,
    *,
    plane: int = 0,
    scope: str | None = None,
    roles: tuple[str, ...] | None = None,
) -> list[EcmpResult]:
    """Busiest-link distributions of `patterns` on one plane (`plan` a subnet view, `net` its topology arrays);
    `plane` keeps the planes' random streams apart."""
    fab = EcmpFabric(plan)
    results = []
    for name in patterns:
        pat = build_pattern(net, name, scope, roles)
        worst: tuple[float, EcmpResult] | None = None
        for index, phase in enumerate(pat.phases):
            bound, cut = lower_bound(net, phase.demand)
            flows = leaf_flows(fab, net, phase.demand)
            r = _phase(fab, flows, options, [options.seed, plane, PATTERNS.index(name), index])
            res = EcmpResult(
                pattern=name,
                scope=pat.scope,
                description=pat.description,
                paths=options.paths,
                qps=1 if options.paths == "pinned" else options.qps,
                trials=r[2],
                seed=options.seed,
                sampler=r[3],
                phases=len(pat.phases),
                worst_phase=phase.name,
                flows=phase.demand.flows,
                links=len(fab.src),
                bound=bound,
                bound_cut=cut,
                **r[0],
                over_10=float((r[1] > 1.1 * bound).mean()) if len(r[1]) else 0.0,
                over_50=float((r[1] > 1.5 * bound).mean()) if len(r[1]) else 0.0,
                unroutable=r[4],
                by_tier=r[5],
            )
            ratio = res.mean / bound if bound else res.mean
            if worst is None or ratio > worst[0]:
                worst = (ratio, res)
        if worst is not None:
            results.append(worst[1])
    return results


def _phase(
    fab: EcmpFabric, flows: Flows, opt: EcmpOptions, seed: list[int]
) -> tuple[dict[str, float], np.ndarray, int, str, float, dict[str, dict[str, float]]]:
    """(busiest-link stats, its samples in connections, trials, sampler, unroutable, per-tier stats) of one phase."""
    if opt.paths == "pinned":
        loads, lost = pinned_loads(fab, flows)
        tiers, tier_of = _tiers_of(fab)
        top, tops = _reduce(loads[None, :], tier_of, len(tiers))
        by_tier = {t: _stats(tops[i], 1) for i, t in enumerate(tiers) if (tier_of == i).any()}
        return _stats(top, 1), top.astype(float), 0, "pinned", float(lost), by_tier
    rng = np.random.default_rng(seed)
    sampler = opt.sampler
    if sampler != "exact":
        fits = two_tier(fab, flows)
        if sampler == "tiers" and not fits:
            raise ValueError("--sampler tiers needs every route to be leaf -> spine -> leaf; use --sampler exact")
        width = int(fab.hop_len.max()) if len(fab.hop_len) else 1
        work = len(set(zip(flows.src.tolist(), flows.dst.tolist()))) * width * opt.trials
        sampler = "tiers" if fits and (sampler == "tiers" or work > EXACT_WORK) else "exact"
    fn = sample_tiers if sampler == "tiers" else sample_exact
    s = fn(fab, flows, opt.qps, opt.trials, rng)
    by_tier = {t: _stats(x, opt.qps) for t, x in s.by_tier.items()}
    return _stats(s.busiest, opt.qps), s.busiest / opt.qps, opt.trials, s.sampler, s.unroutable / opt.qps, by_tier


@dataclass(frozen=True)
class FailureEffect:
    """What a failure does to the plan's ECMP sets (ffplan.ethernet.forwarding): every (switch, destination leaf)
    whose next hops change, counted by prefix as a FIB holds them."""

    items: list[str]  # as the operator named them
    failed: Failed
    changes: list[Change]

    @property
    def narrowed(self) -> int:
        """Prefixes that keep a route over fewer next hops."""
        return sum(len(c.prefixes) for c in self.changes if c.reduced)

    @property
    def unreachable(self) -> int:
        """(switch, prefix) routes the failure removes: the switch has no path left."""
        return sum(len(c.prefixes) for c in self.changes if not c.reduced)

    @property
    def switches(self) -> int:
        return len({c.switch for c in self.changes})

    def as_dict(self) -> dict:
        return {
            "failed": self.items,
            "cables": sorted(self.failed.cables),
            "switches": sorted(self.failed.switches),
            "switches_changed": self.switches,
            "prefixes_narrowed": self.narrowed,
            "prefixes_unreachable": self.unreachable,
            "changes": [c.as_dict() for c in self.changes],
        }


def after_failure(plan: Plan, items: list[str], failed: Failed) -> tuple[Plan, FailureEffect]:
    """`plan` with its ECMP groups reduced by `failed` (what the Monte Carlo then draws over), and what changed."""
    reduced, changed = reduced_plan(plan, failed)
    return reduced, FailureEffect(items, failed, changed)


def plan_qps(plan: Plan) -> int:
    """NCCL_IB_QPS_PER_CONNECTION the plan's host profiles set (the largest if they differ), else NCCL's 1."""
    values = [
        int(s.value)
        for p in (plan.ethernet.host_profiles if plan.ethernet else [])
        for s in p.nccl
        if s.name == QPS_SETTING and str(s.value).isdigit()
    ]
    return max(values, default=1)
