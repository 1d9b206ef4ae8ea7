"""`ffplan verify` of a RoCE plan: boot the fabric (or a plane or zone of it) in network namespaces with FRR on the
rendered files, compare what it does with the plan, and optionally fail a cable and a switch and time the
reconvergence. Entry: `verify_ethernet(target, ...) -> Report` (docs/verify.md, "RoCE plans").
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import time
from pathlib import Path
from typing import Callable

from ffplan.plan.io import load_plan
from ffplan.plan.model import Plan
from ffplan.plan.subnets import check_plane
from ffplan.verify.inputs import plan_file_of
from ffplan.verify.lifetime import die_with_parent, kill_process, work_folder
from ffplan.verify.report import Report, VerifyInputError
from ffplan.verify.sim import signals_raise
from ffplan.verify_ethernet.boot import POLL_S, Fabric, find_tools
from ffplan.verify_ethernet.fabric import Part, fib_differences, part_of, ping_pairs, planned_fib
from ffplan.verify_ethernet.netns import arp_stat

DRYRUN_AT_ONCE = 8
SETTLE_S = 5.0  # a FIB unchanged this long has converged to what it will be (routes arrive within 1-3 s here)


def is_roce_plan(plan_file: Path) -> bool:
    """A plan with an Ethernet section (ffplan writes it as the top-level `ethernet:` key; a cheap look before the
    InfiniBand verify's tools are looked for)."""
    try:
        with open(plan_file, encoding="utf-8", errors="replace") as fh:
            return any(line.startswith("ethernet:") for line in fh)
    except OSError:
        return False


def rendered_files(target: Path, plan: Plan) -> tuple[dict[str, str], str]:
    """The SONiC, FRR and host files verify loads: from the rendered folder when `target` is one, else rendered
    from the plan now. Returns (relative path -> text, a description of the source)."""
    from ffplan.ethernet.sonic import render_switches

    generated = render_switches(plan)
    if not target.is_dir():
        return generated, f"plan {target} (rendered to a temporary folder)"
    files = {}
    for name in generated:
        if name.startswith(("sonic/", "hosts/")) and name.endswith(("frr.conf", "config_db.json", "roce-net.sh")):
            path = target / name
            if not path.is_file():
                raise VerifyInputError(
                    f"{path} is missing: verify loads the rendered files unchanged "
                    f"(run `ffplan render` into {target}, or pass the plan)"
                )
            files[name] = path.read_text()
    return files, f"rendered folder {target}"


def select_part(plan: Plan, plane: str | None, zone: str | None) -> Part:
    if plane is not None:
        check_plane(plan, plane)
        return part_of(plan, [z.name for z in plan.zones if z.subnet == plane], f"plane {plane}")
    if zone is not None:
        names = [z.name for z in plan.zones]
        if zone not in names:
            raise VerifyInputError(f"--zone {zone}: no such zone (zones: {', '.join(names)})")
        return part_of(plan, [zone], f"zone {zone}")
    return part_of(plan, None, "the whole plan")


def verify_ethernet(
    target: Path,
    *,
    plan_path: Path | None = None,
    plane: str | None = None,
    zone: str | None = None,
    timeout: float = 60.0,
    keep: Path | None = None,
    failures: bool = False,
    progress: Callable[[str], None] = lambda s: None,
) -> Report:
    tools = find_tools()
    plan_file = plan_file_of(Path(target), plan_path)
    plan = load_plan(plan_file)
    if plan.ethernet is None:
        raise VerifyInputError(f"{plan_file} is not a RoCE plan")
    files, source = rendered_files(Path(target), plan)
    part = select_part(plan, plane, zone)
    report = Report(
        target=str(target),
        source=f"{source} (plan {plan_file})",
        view=part.describe,
        engine="frr",
        excluded=part.excluded,
    )
    started = time.monotonic()
    try:
        base = work_folder(keep)
    except OSError as exc:
        raise VerifyInputError(f"--keep {keep}: {exc.strerror or exc}") from None
    report.workdir = str(base) if keep else ""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # a descriptor per namespace
    try:
        with signals_raise():
            check_configs(report, part, files, tools["vtysh"], base)
            with Fabric(part, files, base, tools, remove_workdir=not keep, progress=progress) as fab:
                fab.build()
                report.timings["boot s"] = round(time.monotonic() - started, 3)
                run_checks(report, fab, plan, timeout, progress)
                if failures and report.ok:  # on a fabric that works as planned
                    from ffplan.verify_ethernet.failures import measure_failures

                    measure_failures(report, fab, timeout, progress)
    finally:
        report.timings["total s"] = round(time.monotonic() - started, 3)
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    return report


def check_configs(report: Report, part: Part, files: dict[str, str], vtysh: str, base: Path) -> None:
    """FRR's own parser on each switch's frr.conf (`vtysh --dryrun`), before anything is started."""
    refused = []
    folder = base / "dryrun"
    folder.mkdir()
    names = [sw.name for sw in part.switches]
    for first in range(0, len(names), DRYRUN_AT_ONCE):
        running = []
        try:
            for name in names[first : first + DRYRUN_AT_ONCE]:
                conf = folder / f"{name}.conf"
                conf.write_text(files[f"sonic/{name}/frr.conf"])
                running.append(
                    (
                        name,
                        subprocess.Popen(
                            [vtysh, "--dryrun", "-f", str(conf)],
                            stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT,
                            text=True,
                            preexec_fn=die_with_parent(),
                        ),
                    )
                )
            for name, proc in running:
                out = proc.communicate(timeout=60)[0]
                if proc.returncode != 0 or out.strip():
                    refused.append(f"sonic/{name}/frr.conf: {' '.join(out.split())[:300]}")
        finally:
            for _, proc in running:
                kill_process(proc)
    report.add(
        "frr.conf accepted (vtysh --dryrun)",
        not refused,
        f"{len(names) - len(refused)} of {len(names)} switches' files",
        refused,
    )


def run_checks(report: Report, fab: Fabric, plan: Plan, timeout: float, progress: Callable[[str], None]) -> None:
    part = fab.part
    eth = plan.ethernet
    assert eth is not None
    failed_hosts = [
        f"{h}: " + "; ".join(ln.strip() for ln in fab.host_output[h].splitlines() if ln.startswith("FAIL"))
        for h in fab.host_failed
    ]
    report.add(
        "host network (roce-net.sh --apply)",
        not failed_hosts,
        f"{len(part.hosts) - len(failed_hosts)} of {len(part.hosts)} hosts' rendered scripts applied and checked "
        "clean in their namespaces",
        failed_hosts,
    )
    t0 = time.monotonic()
    pending = {sw.name for sw in part.switches}
    sessions: dict[str, dict] = {}

    def established() -> bool:
        sessions.update(fab.vtysh(sorted(pending), "show bgp summary json"))
        pending.difference_update([name for name in pending if not session_problems(part, name, sessions[name])])
        return not pending

    waited = fab.wait_until(established, timeout, every=0.2)
    problems = [p for sw in part.switches for p in session_problems(part, sw.name, sessions.get(sw.name, {}))]
    planned = sum(1 for sw in part.switches for n in sw.neighbors if n.name in part.by_name)
    report.add(
        "BGP sessions == plan",
        not problems,
        f"{planned} planned sessions Established after {waited:.2f} s, no unplanned one"
        if waited is not None
        else f"not all Established after {timeout:g} s (--timeout)",
        problems,
    )
    if waited is not None:
        report.timings["sessions s"] = round(waited, 3)
    check_addresses(report, fab)
    check_mtus(report, fab, plan)
    expected = planned_fib(part)
    fibs: dict[str, dict[str, set[str]]] = {}
    took = settle(fab, expected, fibs, timeout)
    diffs = fib_differences(expected, fibs)
    prefixes = sum(len(v) for v in expected.values())
    report.add(
        "kernel FIB == plan's ECMP sets",
        not diffs,
        f"{prefixes} (switch, prefix) routes, each with exactly the planned next hops"
        if not diffs
        else f"{len(diffs)} of {prefixes} (switch, prefix) routes differ",
        diffs,
    )
    if not diffs and took is not None:
        report.timings["FIB s"] = round(time.monotonic() - t0, 3)
    pairs = ping_pairs(part)
    mtu = eth.qos.host_mtu.value
    progress(f"ping: {len(pairs)} pairs at MTU {mtu}")
    lost = fab.ping(pairs, mtu)
    report.add(
        f"ping at MTU {mtu} with don't-fragment",
        not lost,
        f"{len(pairs) - len(lost)} of {len(pairs)} host pairs on different leaves of one plane reply "
        f"(ping -M do -s {mtu - 28})",
        lost,
    )
    refused = arp_stat()[1] - fab.arp_fulls
    report.add(
        "kernel ARP table never full",
        not refused,
        fab.neighbours
        if not refused
        else f"{refused:,} new neighbours refused during the run (dmesg: `neighbor table overflow!`): sessions, "
        f"routes and pings above may fail for that alone; {fab.neighbours}",
    )
    pss = fab.memory()
    n = max(len(part.switches), 1)
    report.add(
        "FRR memory",
        None,
        f"zebra {pss['zebra'] / n:.1f} MiB + bgpd {pss['bgpd'] / n:.1f} MiB per switch "
        f"(proportional set size), {sum(pss.values()):.0f} MiB for {len(part.switches)} switches",
    )
    report.timings["FRR PSS MiB"] = round(sum(pss.values()), 1)


def settle(
    fab: Fabric, expected: dict[str, dict[str, set[str]]], fibs: dict[str, dict[str, set[str]]], timeout: float
) -> float | None:
    """Read every FIB into `fibs` until it equals `expected` (the seconds it took), or has not changed for SETTLE_S
    (eBGP here sends updates at once: advertisement-interval 0), or `timeout` passes (both: None)."""
    started = time.monotonic()
    last: dict[str, dict[str, set[str]]] = {}
    since = started
    while True:
        fibs.update(fab.routes(list(expected)))
        now = time.monotonic()
        if not fib_differences(expected, fibs):
            return now - started
        if fibs != last:
            last, since = {k: dict(v) for k, v in fibs.items()}, now
        if now - since > SETTLE_S or now - started > timeout:
            return None
        time.sleep(POLL_S)


def session_problems(part: Part, switch: str, summary: dict) -> list[str]:
    """Every planned session not Established, every unplanned one, and an ASN other than the plan's."""
    sw = part.by_name[switch]
    in_part = set(part.by_name)
    uni = summary.get("ipv4Unicast", {})
    if not uni:
        return [f"{switch}: bgpd answers no IPv4 unicast summary (is `router bgp` configured?)"]
    found = []
    if uni.get("as") != sw.asn:
        found.append(f"{switch}: runs AS {uni.get('as')}, plan {sw.asn}")
    peers = uni.get("peers", {})
    for n in sw.neighbors:
        if n.name not in in_part:
            continue
        peer = peers.get(n.address)
        if peer is None:
            found.append(f"{switch}: no neighbor {n.address} ({n.name}, AS {n.asn}) configured")
            continue
        if peer.get("remoteAs") != n.asn:
            found.append(f"{switch}: neighbor {n.address} ({n.name}) remote-as {peer.get('remoteAs')}, plan {n.asn}")
        if peer.get("state") != "Established":
            found.append(f"{switch}: session to {n.name} ({n.address}) {peer.get('state')}, not Established")
    planned = {n.address for n in sw.neighbors}
    for address in sorted(set(peers) - planned):
        found.append(f"{switch}: unplanned neighbor {address} (state {peers[address].get('state')})")
    return found


def check_addresses(report: Report, fab: Fabric) -> None:
    diffs = []
    tables = fab.ip_json([sw.name for sw in fab.part.switches], ["-4", "addr", "show"])
    for sw in fab.part.switches:
        have: dict[str, set[str]] = {}
        for link in tables[sw.name]:
            have[link["ifname"]] = {
                f"{a['local']}/{a['prefixlen']}" for a in link.get("addr_info", []) if a.get("family") == "inet"
            }
        want = {"Loopback0": {sw.loopback}} | {
            p.name: {p.address} for p in sw.ports if (sw.name, p.name) in fab_ends(fab)
        }
        for name, addresses in want.items():
            got = have.get(name, set())
            if got != addresses:
                diffs.append(
                    f"{sw.name} {name}: {', '.join(sorted(got)) or 'no address'}, plan {', '.join(sorted(addresses))}"
                )
    report.add(
        "addresses == plan",
        not diffs,
        f"every port and loopback of {len(fab.part.switches)} switches"
        if not diffs
        else f"{len(diffs)} interfaces differ",
        diffs,
    )


def fab_ends(fab: Fabric) -> set[tuple[str, str]]:
    """(switch, port) of every booted cable end on a switch."""
    ends = {(v.a, v.a_if) for v in fab.part.veths}
    return ends | {(v.b, v.b_if) for v in fab.part.veths if v.between_switches}


def check_mtus(report: Report, fab: Fabric, plan: Plan) -> None:
    eth = plan.ethernet
    assert eth is not None
    diffs = []
    ends = fab_ends(fab)
    want_switch = eth.qos.switch_mtu.value
    links = fab.ip_json([sw.name for sw in fab.part.switches] + list(fab.part.hosts), ["link", "show"])
    for sw in fab.part.switches:
        mtu = {link["ifname"]: link.get("mtu") for link in links[sw.name]}
        for p in sw.ports:
            if (sw.name, p.name) in ends and mtu.get(p.name) != want_switch:
                diffs.append(f"{sw.name} {p.name} ({p.cable}): MTU {mtu.get(p.name)}, plan {want_switch}")
    for host, nics in fab.part.hosts.items():
        mtu = {link["ifname"]: link.get("mtu") for link in links[host]}
        for h in nics:
            name = fab.part.ifname[(host, h.nic)]
            if mtu.get(name) != h.mtu:
                diffs.append(f"{host} {h.nic} ({name}): MTU {mtu.get(name)}, plan {h.mtu}")
    report.add(
        "MTU == plan",
        not diffs,
        f"switch ports {want_switch}, host NICs {eth.qos.host_mtu.value}"
        if not diffs
        else f"{len(diffs)} interfaces differ",
        diffs,
    )


__all__ = ["verify_ethernet", "is_roce_plan"]
