"""Failure sweep: re-route a plan (one subnet) around every single leaf-spine and inter-zone cable, every single spine (three-layer
trees: also every spine-core cable and every core) and N random sets of cables, and measure each case with the balance patterns of docs/routing.md.

Speed (the whole single-cable sweep of Fire-Flyer 2 is 1,600 cases): one `Router` serves every case (only what a
failure touches is re-routed), and flows are counted per (source leaf, destination) bundle with numpy: a pattern is
a weight matrix W[switch, LID] = flows from that leaf's CA ports to that LID, walked hop by hop for all bundles at
once. Lower bounds come from the same bundles (analyze.bounds) and are cached per cut and number of alive links.

Where the cases run: in this process, or on a Dask cluster (`client`, ffplan.analyze.sweep_cluster): the plan is
scattered to every worker once, each worker process builds its router and patterns once per plan, chunks of cases go
out and their small results come back as they finish; the report's order is always the cases' order.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

from ffplan.analyze.bounds import Cut, bin_bound, cuts
from ffplan.analyze.flows import Demand, TopologyArrays
from ffplan.fabric.arrays import Channels, table_array
from ffplan.fabric.reach import check_routes
from ffplan.fabric.walk import walk
from ffplan.design.routing import Router, router_for
from ffplan.plan.topology import Topology, build_topology
from ffplan.diagnostics import StageError
from ffplan.plan.model import Plan

if TYPE_CHECKING:  # distributed is imported where a cluster runs the sweep
    from distributed import Client

# name -> (description, source role, destination role or None for every role, across zones)
SWEEP_PATTERNS = {
    "A": ("all-to-all among compute ports, in every zone", "compute", "compute", False),
    "B": ("all-to-all among all CA ports, in every zone", None, None, False),
    "C": ("every compute port to every storage port of its zone", "compute", "storage", False),
    "X": ("every compute port to every storage port of the other zones", "compute", "storage", True),
}


@dataclass
class PatternLoad:
    max_load: int
    bound: int
    ratio: float
    unroutable: int  # flows of the pattern with no route

    @classmethod
    def of(cls, max_load: int, bound: int, unroutable: int) -> PatternLoad:
        return cls(max_load, bound, max_load / bound if bound else (1.0 if max_load == 0 else float("inf")), unroutable)


@dataclass
class CaseResult:
    case: str  # "cable z1-leaf05-p21", "spine z1-spine05", "random 3: a, b, c"
    failed: list[str]
    patterns: dict[str, PatternLoad]
    unreachable_ca_pairs: int
    unreachable_switch_lids: int
    routes_changed: int  # (switch, LID) entries that differ from the intact routes
    deadlock_free: bool  # the channel dependency graph of the routes is acyclic (ffplan.fabric.deadlock)

    def as_dict(self) -> dict:
        return {
            "case": self.case,
            "failed": self.failed,
            "routes_changed": self.routes_changed,
            "deadlock_free": self.deadlock_free,
            "unreachable_ca_pairs": self.unreachable_ca_pairs,
            "unreachable_switch_lids": self.unreachable_switch_lids,
            "patterns": {
                k: {"max": p.max_load, "bound": p.bound, "ratio": round(p.ratio, 4), "unroutable": p.unroutable}
                for k, p in self.patterns.items()
            },
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> CaseResult:
        """The case `as_dict` wrote (a results file's line): the ratios are computed again from max and bound, so a
        resumed sweep reports exactly what a fresh one does."""
        return cls(
            str(d["case"]),
            [str(f) for f in d["failed"]],
            {k: PatternLoad.of(int(p["max"]), int(p["bound"]), int(p["unroutable"])) for k, p in d["patterns"].items()},
            int(d["unreachable_ca_pairs"]),
            int(d["unreachable_switch_lids"]),
            int(d["routes_changed"]),
            bool(d["deadlock_free"]),
        )


@dataclass
class SweepResult:
    intact: CaseResult
    cases: list[CaseResult] = field(default_factory=list)

    def summary(self) -> dict:
        """Per kind of case (cable, spine, random): the worst case per pattern, and totals."""
        out: dict[str, dict] = {}
        for kind in ("cable", "inter-zone", "spine", "core", "random"):
            group = [c for c in self.cases if c.case.startswith(kind)]
            if not group:
                continue
            worst = {}
            for name in SWEEP_PATTERNS:
                w = max(group, key=lambda c: (c.patterns[name].ratio, c.patterns[name].max_load))
                worst[name] = {
                    "max": w.patterns[name].max_load,
                    "bound": w.patterns[name].bound,
                    "ratio": round(w.patterns[name].ratio, 4),
                    "case": w.case,
                }
            out[kind] = {
                "cases": len(group),
                "worst": worst,
                "unreachable_ca_pairs": sum(c.unreachable_ca_pairs for c in group),
                "unreachable_switch_lids": sum(c.unreachable_switch_lids for c in group),
                "cases_with_unreachable": sum(1 for c in group if c.unreachable_ca_pairs or c.unreachable_switch_lids),
                "cases_not_deadlock_free": sum(1 for c in group if not c.deadlock_free),
                "max_routes_changed": max(c.routes_changed for c in group),
            }
        return out


def sweep_cases(
    topo: Topology, random_cases: int = 0, cables_per_case: int = 3, seed: int = 0
) -> list[tuple[str, list[str]]]:
    cables = sorted(label for label, (kind, _, _) in topo.by_label.items() if kind in ("leaf-spine", "spine-core"))
    out = [(f"cable {c}", [c]) for c in cables]
    out += [
        (f"inter-zone {c}", [c])
        for c in sorted(label for label, (kind, _, _) in topo.by_label.items() if kind == "inter-zone")
    ]
    out += [(f"spine {s}", [s]) for z in topo.zones for s in topo.spines[z]]
    out += [(f"core {c}", [c]) for z in topo.zones for c in topo.cores.get(z, [])]
    rng = random.Random(seed)
    for i in range(random_cases):
        pick = sorted(rng.sample(cables, min(cables_per_case, len(cables))))
        out.append((f"random {i + 1}: {', '.join(pick)}", pick))
    return out


class _Patterns:
    """Weight matrices of the sweep patterns and their cached lower bounds."""

    def __init__(self, topo: Topology):
        self.topo = topo
        self.switches = list(topo.lid)
        self.sid = {s: i for i, s in enumerate(self.switches)}
        width = topo.max_lid + 1
        self.weights: dict[str, np.ndarray] = {}
        for name, (_, src_role, dst_role, across) in SWEEP_PATTERNS.items():
            w = np.zeros((len(self.switches), width), dtype=np.int64)
            for leaf, cas in topo.cas.items():
                senders = [c for c in cas if src_role is None or c.role == src_role]
                if not senders:
                    continue
                i = self.sid[leaf]
                hosts = Counter(c.host for c in senders)
                for lid, ca in topo.ca_by_lid.items():
                    if (dst_role is None or ca.role == dst_role) and (ca.zone != topo.zone_of[leaf]) == across:
                        w[i, lid] = len(senders) - hosts[ca.host]  # as analyze: no flow between two ports of one host
            self.weights[name] = w
        # per pattern: its cuts on the intact channels, and every cut's links as (cut index, channel id) pairs
        self.net = TopologyArrays(topo)
        self._cuts: dict[str, tuple[list[Cut], np.ndarray, np.ndarray]] = {}
        for name, w in self.weights.items():
            rows, cols = np.nonzero(w)  # bundles: (source leaf, destination LID)
            found = list(cuts(self.net, Demand(rows, cols, w[rows, cols], int(w.sum()), 0, 0, 0)))
            cut_of_link = np.repeat(np.arange(len(found)), [len(c.links) for c in found])
            links = np.concatenate([c.links for c in found]) if found else np.zeros(0, dtype=np.int64)
            self._cuts[name] = (found, cut_of_link, links)
        self._bounds: dict[tuple[str, int, int], int] = {}

    def loads(self, name: str, lft: np.ndarray, ch: Channels) -> tuple[np.ndarray, int]:
        """(flows per channel, unroutable flows) of pattern `name` over the LFT array: every bundle walked at once; a
        bundle loads the links it crossed before a dead end or in a loop too."""
        w = self.weights[name]
        pos, lid = np.nonzero(w)
        weight = w[pos, lid]
        walked = walk(ch, lft, pos, lid, trace=True)
        return walked.loads(weight, len(ch.ends), arrived_only=False), int(weight[~walked.reached].sum())

    def bound(self, name: str, ch: Channels) -> int:
        """The largest bundle lower bound over analyze's cuts (analyze.bounds.cuts: out of and into every leaf, out of
        every zone, out of and into every pod), each with the links of `ch` still alive."""
        found, cut_of_link, links = self._cuts[name]
        machines = np.bincount(cut_of_link, weights=ch.alive[links], minlength=len(found)).astype(np.int64).tolist()
        best = 0
        for i, cut in enumerate(found):
            key = (name, i, machines[i])
            if key not in self._bounds:
                self._bounds[key] = bin_bound(cut.weights, machines[i])
            best = max(best, self._bounds[key])
        return best


def run_sweep(
    plan: Plan,
    *,
    random_cases: int = 0,
    cables_per_case: int = 3,
    seed: int = 0,
    singles: bool = True,
    client: Client | None = None,
    done: Mapping[str, CaseResult] | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> SweepResult:
    """The intact routes and every case of `sweep_cases`, measured in this process or on the Dask cluster of `client`.

    `done`: results by case name already measured (a results file's): those cases are not run again. `on_result` sees
    every newly measured case as it arrives (to write it down); `progress` gets (cases finished, cases)."""
    topo = build_topology(plan)
    cases = sweep_cases(topo, random_cases, cables_per_case, seed)
    if not singles:
        cases = [c for c in cases if c[0].startswith("random")]
    cases.insert(0, ("intact", []))
    results = {name: done[name] for name, failed in cases if done and name in done and done[name].failed == failed}
    todo = [c for c in cases if c[0] not in results]
    chunks = [todo[i : i + CHUNK] for i in range(0, len(todo), CHUNK)]
    if progress:
        progress(len(results), len(cases))
    for measured in _on_cluster(client, plan, chunks) if client is not None else _in_process(plan, chunks):
        for case in measured:
            results[case.case] = case
            if on_result:
                on_result(case)
        if progress:
            progress(len(results), len(cases))
    ordered = [results[name] for name, _ in cases]
    return SweepResult(ordered[0], ordered[1:])


CHUNK = 20  # cases per task: a progress step, and few enough tasks for the scheduler (Fire-Flyer 2: 83)


def _in_process(plan: Plan, chunks: list[list[tuple[str, list[str]]]]) -> Iterator[list[CaseResult]]:
    if not chunks:  # every case in the results file: no router to build
        return
    state = SweepState(plan)
    for chunk in chunks:
        yield state.measure(chunk)


def _on_cluster(client: Client, plan: Plan, chunks: list[list[tuple[str, list[str]]]]) -> Iterator[list[CaseResult]]:
    """The chunks as tasks on the cluster, results in the order they finish. The plan goes to every worker once
    (scatter, not hashed: tokenizing a large plan would cost more than sending it)."""
    from distributed import as_completed

    if not chunks:
        return
    shipped = client.scatter(plan, broadcast=True, hash=False)
    try:
        futures = [client.submit(_measure_chunk, shipped.key, shipped, chunk, pure=False) for chunk in chunks]
        for future in as_completed(futures):
            yield future.result()
    finally:
        client.cancel([shipped])


class SweepState:
    """One plan's sweep state: its router, patterns, intact tables and channels, built once and reused by every
    case (a case re-routes incrementally from the intact routes)."""

    def __init__(self, plan: Plan):
        topo = build_topology(plan)
        self.router = router_for(plan)
        self.patterns = _Patterns(topo)
        self.base = table_array(topo, self.router.tables().tables)
        self.channels = self.patterns.net.channels

    def measure(self, cases: list[tuple[str, list[str]]]) -> list[CaseResult]:
        return [_measure(self.router, self.patterns, self.base, self.channels, name, failed) for name, failed in cases]


_LOCAL = threading.local()  # a worker thread's (plan key, SweepState): a router is not shared between threads


def _measure_chunk(key: str, plan: Plan, cases: list[tuple[str, list[str]]]) -> list[CaseResult]:
    """A cluster task: `plan` is the worker's copy of the scattered plan, `key` names it."""
    state = getattr(_LOCAL, "state", None)
    if state is None or state[0] != key:
        state = _LOCAL.state = (key, SweepState(plan))
    result: list[CaseResult] = state[1].measure(cases)
    return result


def _measure(
    router: Router, patterns: _Patterns, base: np.ndarray, channels: Channels, name: str, failed: list[str]
) -> CaseResult:
    try:
        rt, _, ch = router.proven_tables(failed, channels)
        deadlock_free = True
    except StageError:
        rt = router.tables(failed)
        ch, deadlock_free = channels.without(rt.topo), False
    lft = table_array(rt.topo, rt.tables)
    loads = {}
    for p in SWEEP_PATTERNS:
        load, lost = patterns.loads(p, lft, ch)
        loads[p] = PatternLoad.of(int(load.max()) if len(load) else 0, patterns.bound(p, ch), lost)
    check = check_routes(rt.topo, rt.tables, ch)
    return CaseResult(
        name,
        failed,
        loads,
        check.unreachable_ca_pairs,
        check.unreachable_switch_lids,
        int(np.count_nonzero(lft != base)),
        deadlock_free,
    )
