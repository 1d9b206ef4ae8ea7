"""Failures in the running fabric: a leaf-spine cable down (`ip link set down` on its first end) and a switch down
(its FRR killed and every port set down: a power loss), each timed until no host prefix is black-holed and until
every FIB holds exactly the reduced next-hop sets the plan predicts (ffplan.ethernet.forwarding, the prediction
`ffplan analyze --failed` reports), then restored and timed
back to the planned FIB. The BGP timers in force (FRR's `datacenter` defaults unless the rendered frr.conf sets
them) are read from bgpd and reported: they bound what a failure without a link-down event costs.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from typing import Callable

from ffplan.ethernet.forwarding import Failed
from ffplan.verify.report import Report
from ffplan.verify_ethernet.boot import POLL_S, Fabric
from ffplan.verify_ethernet.fabric import Part, fib_differences, planned_fib, predicted_fib

Fib = dict[str, dict[str, set[str]]]


@dataclass(frozen=True)
class Failure:
    what: str  # "cable pa-leaf01-p03 down", the check's name
    key: str  # its name in the report's timings
    cables: frozenset[str] = frozenset()
    switches: frozenset[str] = frozenset()
    hang: bool = False  # FRR frozen (SIGSTOP), ports up: the peers notice when their hold timer runs out


def chosen_failures(part: Part) -> list[Failure]:
    """The first leaf-spine cable; the first spine of a zone with more than one (else the first leaf), powered off
    (FRR killed, every port down), and the same switch's FRR frozen (SIGSTOP: its ports stay up and its kernel
    keeps forwarding; a crash instead would close its TCP sessions and the peers would withdraw at once, so only a
    hang shows the hold timer)."""
    found = []
    cable = next((v for v in part.veths if v.between_switches), None)
    if cable is not None:
        found.append(Failure(f"cable {cable.cable} down", "cable", cables=frozenset({cable.cable})))
    spines: dict[str, list[str]] = {}
    for sw in part.switches:
        if sw.host_block is None:
            spines.setdefault(part.zone[sw.name], []).append(sw.name)
    spine = next((names[0] for names in spines.values() if len(names) > 1), None)
    switch = spine or next((sw.name for sw in part.switches if sw.host_block), None)
    if switch is not None:
        found.append(Failure(f"switch {switch} down", "switch", switches=frozenset({switch})))
        found.append(Failure(f"FRR of {switch} hung (SIGSTOP)", "FRR hung", switches=frozenset({switch}), hang=True))
    return found


def black_holes(expected: Fib, fibs: Fib) -> int:
    """(switch, prefix) routes that lose traffic: missing while the prefix is reachable, or holding a next hop the
    failure removed."""
    lost = 0
    for switch, routes in expected.items():
        for prefix, hops in routes.items():
            got = fibs.get(switch, {}).get(prefix)
            if hops and (not got or not got <= hops):
                lost += 1
    return lost


def timed(fab: Fabric, expected: Fib, timeout: float) -> tuple[float | None, float | None, list[str]]:
    """(seconds until no black hole, seconds until every FIB == expected, the differences left), polling only the
    switches whose routes change, then checking every switch once."""
    started = time.monotonic()
    watched = sorted(expected)
    no_hole = exact = None
    fibs: Fib = {}
    while time.monotonic() - started < timeout:
        fibs.update(fab.routes(watched))
        now = time.monotonic() - started
        if no_hole is None and not black_holes({s: expected[s] for s in watched}, fibs):
            no_hole = now
        if not fib_differences({s: expected[s] for s in watched}, fibs):
            exact = now
            break
        time.sleep(POLL_S)
    fibs.update(fab.routes(sorted(expected)))
    return no_hole, exact, fib_differences(expected, fibs)


def timers(fab: Fabric, switch: str) -> str:
    neighbors = fab.vtysh([switch], "show bgp neighbors json").get(switch, {})
    n: dict = next(iter(neighbors.values()), {})
    if not n:
        return "unknown (bgpd did not answer)"
    return (
        f"keepalive {n.get('bgpTimerKeepAliveIntervalMsecs', 0) / 1000:g} s, hold {n.get('bgpTimerHoldTimeMsecs', 0) / 1000:g} s, "
        f"advertisement interval {n.get('minBtwnAdvertisementRunsTimerMsecs', 0) / 1000:g} s, "
        f"connect retry {n.get('connectRetryTimer', '?')} s"
    )


def measure_failures(report: Report, fab: Fabric, timeout: float, progress: Callable[[str], None]) -> None:
    part = fab.part
    planned = planned_fib(part)
    first = part.switches[0].name
    report.add(
        "BGP timers",
        None,
        f"{first}: {timers(fab, first)} (FRR `frr defaults datacenter`; the rendered frr.conf sets no timer)",
    )
    for failure in chosen_failures(part):
        predicted = predicted_fib(part, Failed(failure.cables, failure.switches))
        expected = {
            s: {p: predicted.get(s, {}).get(p, set()) for p in planned[s]} for s in planned if s not in failure.switches
        }
        changed = {s: r for s, r in expected.items() if r != planned[s]}
        progress(failure.what)
        set_state(fab, failure, up=False)
        no_hole, exact, diffs = timed(fab, expected, timeout)
        fewer = sum(len(planned[s][p]) - len(h) for s, r in changed.items() for p, h in r.items())
        unreachable = sum(1 for r in changed.values() for h in r.values() if not h)
        progress(f"{failure.what}: restoring")
        set_state(fab, failure, up=True)
        _, back, back_diffs = timed(fab, {s: planned[s] for s in planned}, timeout)
        ok = exact is not None and back is not None and not diffs and not back_diffs
        changes = (
            f"{len(changed)} switches' FIBs change ({fewer} next hops fewer, {unreachable} prefixes unreachable "
            "as predicted)"
        )
        if failure.hang:  # its kernel keeps forwarding: nothing is black-holed, the peers just stop using it
            detail = f"{changes}; the peers drop it after {_s(exact)} (hold timer)"
        else:
            detail = f"{changes}; no host prefix black-holed after {_s(no_hole)}, every FIB == the prediction after {_s(exact)}"
        report.add(failure.what, ok, f"{detail}; restored, FIBs == plan after {_s(back)}", diffs + back_diffs)
        key = failure.key
        report.timings[f"{key} down: no black hole s"] = round(no_hole, 3) if no_hole is not None else float("nan")
        report.timings[f"{key} down: FIB == prediction s"] = round(exact, 3) if exact is not None else float("nan")
        report.timings[f"{key} restored: FIB == plan s"] = round(back, 3) if back is not None else float("nan")


def _s(seconds: float | None) -> str:
    return "never (--timeout)" if seconds is None else f"{seconds:.2f} s"


def set_state(fab: Fabric, failure: Failure, up: bool) -> None:
    part = fab.part
    for cable in sorted(failure.cables):
        v = next(v for v in part.veths if v.cable == cable)
        fab.set_link(v.a, v.a_if, up)
    for switch in sorted(failure.switches):
        ports = [v.a_if for v in part.veths if v.a == switch] + [v.b_if for v in part.veths if v.b == switch]
        if failure.hang:
            for proc in fab.frr[switch].procs:
                os.kill(proc.pid, signal.SIGCONT if up else signal.SIGSTOP)
            continue
        if not up:
            fab.stop_frr(switch)
        fab.ip_many({switch: [f"link set {p} {'up' if up else 'down'}" for p in ports]}, "setting ports")
        if up:
            fab.start_frr([switch])
