"""Checks of what OpenSM installed in the simulation: its log, the cabling and LIDs it discovered, the tables."""

from __future__ import annotations

import re

from ffplan.fabric.discovery import DiscoveredFabric
from ffplan.opensm import Subnet
from ffplan.verify.boot import Boot
from ffplan.verify.arrays import table_checks
from ffplan.verify.expect import fabric_topo
from ffplan.verify.report import Report
from ffplan.verify.walk import WalkResult, walk_ca_pairs, walk_switch_lids

NO_FALLBACK_NOISE = "Failed to setup routing engine 'no_fallback'"


def check_log(report: Report, log: str, engine: str) -> None:
    err = [ln for ln in log.splitlines() if "ERR " in ln]
    fallback = [ln for ln in log.splitlines() if " 0x01 -> " in ln and NO_FALLBACK_NOISE not in ln]
    configured = [ln.split("-> ", 1)[-1] for ln in log.splitlines() if "tables configured" in ln]
    names = {m.group(1) for ln in configured for m in [re.search(r"(\S+) tables configured", ln)] if m}
    report.add(
        "OpenSM log: no errors",
        not err,
        "no ERR lines" if not err else f"{len(err)} ERR line(s)",
        [ln.split("] ", 1)[-1] for ln in err],
    )
    report.add(
        "OpenSM log: no fallback",
        not fallback,
        "no 0x01-level (fallback) lines" if not fallback else f"{len(fallback)} fallback line(s)",
        [ln.split("] ", 1)[-1] for ln in fallback],
    )
    report.add(
        "OpenSM log: routing engine",
        names == {engine},
        f"'{engine} tables configured'"
        if names == {engine}
        else f"expected '{engine} tables configured', log says: {', '.join(sorted(names)) or 'nothing configured'}",
        configured[:3],
    )


def check_cabling(report: Report, fab: Subnet, topo: DiscoveredFabric) -> None:
    planned = fabric_topo(fab)
    names = dict(planned.desc)
    missing = planned.links - topo.links
    extra = topo.links - planned.links

    def fmt(link: tuple[tuple[str, int], tuple[str, int]]) -> str:
        (a, pa), (b, pb) = link
        return f"{names.get(a, a)}[{pa}] <-> {names.get(b, b)}[{pb}]"

    items = [f"missing: {fmt(ln)}" for ln in sorted(missing)] + [f"unexpected: {fmt(ln)}" for ln in sorted(extra)]
    report.add(
        "cabling",
        not items,
        f"{len(topo.links)} links discovered, {len(planned.links)} planned; "
        f"{len(missing)} missing, {len(extra)} unexpected",
        items,
    )
    lid_diff = [
        f"{names.get(g, g)} port {p}: plan LID {lid}, discovered {topo.port_lid.get((g, p))}"
        for (g, p), lid in planned.port_lid.items()
        if topo.port_lid.get((g, p)) != lid
    ]
    report.add("LIDs", not lid_diff, f"{len(planned.port_lid)} planned LIDs; {len(lid_diff)} differ", lid_diff)


def check_routes(report: Report, fab: Subnet, booted: Boot) -> None:
    """The installed tables against the plan, and every CA pair and switch LID reachable through them (on arrays)."""
    for name, ok, detail, items in table_checks(fab, booted.topo, booted.lft_text):
        report.add(name, ok, detail, items)


def check_reachability(
    report: Report,
    fab: Subnet,
    topo: DiscoveredFabric,
    tables: dict[str, dict[int, int]],
    what: str,
    switch_lids_required: bool = True,
) -> WalkResult:
    res = walk_ca_pairs(topo, tables)
    hops = ", ".join(f"{n} switch{'es' if n > 1 else ''}: {c}" for n, c in sorted(res.hops.items()))
    report.add(
        "every CA pair reachable",
        res.broken == 0,
        f"{res.reachable}/{res.pairs} pairs by walking the {what} ({hops})",
        res.failures,
    )
    sw = walk_switch_lids(topo, tables)
    # OpenSM's up*/down* engines never route a spine's LID from another spine (down then up): info, not a failure
    ok = True if sw.broken == 0 else (False if switch_lids_required else None)
    report.add(
        "every switch LID reachable",
        ok,
        f"{sw.reachable}/{sw.pairs} (source, switch LID) pairs from every other switch and every CA port by "
        f"walking the {what}",
        sw.failures,
    )
    return res
