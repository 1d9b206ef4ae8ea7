"""`ffplan verify`: boot the planned fabric in ibsim, run the real OpenSM on the rendered files, read back what it
installed and compare it with the plan. Checks are questions with a pass/fail answer and a precise detail.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from ffplan.plan.io import load_plan
from ffplan.plan.model import Plan
from ffplan.render import opensm as R
from ffplan.verify import parse as P
from ffplan.verify.lifetime import die_with_parent, work_folder
from ffplan.verify.sim import SimError, Simulation, find_tools, ibsim_limits, signals_raise
from ffplan.verify.walk import WalkResult, walk, walk_switch_lids

NO_FALLBACK_NOISE = "Failed to setup routing engine 'no_fallback'"


@dataclass
class Check:
    name: str
    status: str  # pass | fail | skip | info
    detail: str
    items: list[str] = field(default_factory=list)  # the first differences, one per line


@dataclass
class Comparison:
    """ffplan's routes next to OpenSM's ftree, per fabric case."""

    rows: list[dict] = field(default_factory=list)


@dataclass
class Report:
    target: str
    source: str  # "rendered folder" or "plan (rendered to a temporary folder)"
    view: str
    engine: str
    excluded: list[str]
    checks: list[Check] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    comparison: list[dict] = field(default_factory=list)
    workdir: str = ""

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.status != "fail" for c in self.checks)

    def add(self, name: str, ok: bool | None, detail: str, items: list[str] | None = None) -> Check:
        status = "info" if ok is None else ("pass" if ok else "fail")
        check = Check(name, status, detail, list(items or [])[:12])
        self.checks.append(check)
        return check

    def skip(self, name: str, detail: str) -> None:
        self.checks.append(Check(name, "skip", detail))

    def as_dict(self) -> dict:
        d = asdict(self)
        d["timings"] = {k: (None if v != v else round(v, 4)) for k, v in self.timings.items()}  # NaN is not JSON
        d["ok"] = self.ok
        return d


class VerifyInputError(Exception):
    """Bad arguments or unreadable input: exit code 2."""


# ------------------------------------------------------------------------------------------------ inputs


@dataclass
class Inputs:
    plan: Plan
    files: dict[str, str]  # opensm file name -> text (what OpenSM will read)
    source: str
    fab: R.Fabric


def _find_plan(folder: Path, explicit: Path | None) -> Path | None:
    if explicit:
        return explicit / "plan.yaml" if explicit.is_dir() else explicit
    for cand in (folder / "plan.yaml", folder.parent / "plan.yaml", folder / "plan" / "plan.yaml"):
        if cand.is_file():
            return cand
    return None


def load_inputs(target: Path, plan_path: Path | None, view: R.View) -> Inputs:
    target = Path(target)
    if not target.exists():
        raise VerifyInputError(f"{target} does not exist")
    rendered: Path | None = None
    if target.is_dir():
        for cand in (target / "opensm", target):
            if (cand / R.CONF).is_file():
                rendered = cand
                break
        plan_file = _find_plan(target, plan_path)
        if plan_file is None:
            raise VerifyInputError(
                f"no plan.yaml in or next to {target}: verify compares what OpenSM installs with the plan; "
                f"pass --plan with the plan (or the folder `ffplan design` wrote)")
    else:
        plan_file = _find_plan(target, plan_path) or target
    plan = load_plan(plan_file)
    if plan.routing is not None and plan.routing.failed:
        # Cables the plan routes around are simulated as broken: the tables must not need them.
        labels = {c.label for c in plan.cables}
        view = R.View(zone=view.zone, drop_cables=view.drop_cables | {x for x in plan.routing.failed if x in labels})
    generated = R.opensm_files(plan, R.DEFAULT_PREFIX, view)
    fab = R.build_fabric(plan, view)
    if rendered is None:
        return Inputs(plan, generated, f"plan {plan_file} (rendered to a temporary folder)", fab)
    files = dict(generated)
    whole = view == R.View()
    for name in generated:
        path = rendered / name
        # A sub-fabric's topology, LFTs, LIDs and GUID lists are cut from the plan; the rest comes from the folder.
        if path.is_file() and (whole or name in (R.CONF, R.FTREE_CONF, R.QOS_POLICY, R.PARTITIONS)):
            files[name] = path.read_text()
        elif whole and not path.is_file():
            files.pop(name, None)
    return Inputs(plan, files, f"rendered folder {rendered} (plan {plan_file})", fab)


# --------------------------------------------------------------------------------------- expectations


def fabric_topo(fab: R.Fabric) -> P.Topo:
    """The planned (sub-)fabric with the planned LIDs, as ibnetdiscover reads it back from ibsim: CA node GUIDs
    follow ibsim's rule (R.ibsim_ca_guid); port GUIDs are the plan's."""
    topo = P.Topo()
    guid_of = {s.name: s.node_guid for s in fab.switches}
    guid_of.update({ca.id: R.ibsim_ca_guid(ca.ports[0].port_guid) for ca in fab.cas})
    for s in fab.switches:
        topo.kind[s.node_guid] = "Switch"
        topo.nports[s.node_guid] = s.ports
        topo.desc[s.node_guid] = s.name
        topo.port_lid[(s.node_guid, 0)] = s.lid
    for ca in fab.cas:
        node = guid_of[ca.id]
        topo.kind[node] = "Ca"
        topo.nports[node] = ca.nports
        topo.desc[node] = ca.id
        for p in ca.ports:
            topo.port_lid[(node, p.port)] = p.lid
            topo.port_guid[(node, p.port)] = p.port_guid
    for a, pa, b, pb in fab.links:
        x, y = (guid_of[a], pa), (guid_of[b], pb)
        topo.links.add((min(x, y), max(x, y)))
    return topo


def planned_tables(fab: R.Fabric) -> dict[str, dict[int, int]]:
    routing = fab.plan.routing
    assert routing is not None
    lfts = {lft.switch: lft.ports for lft in routing.lfts}
    out: dict[str, dict[int, int]] = {}
    for s in fab.switches:
        table = lfts.get(s.name, [])
        out[s.node_guid] = {lid: table[lid] for lid in fab.lid_owner
                            if lid < len(table) and table[lid] != routing.unrouted_port}
    return out


def _lid_name(fab: R.Fabric, lid: int) -> str:
    owner = fab.lid_owner.get(lid)
    return f"LID {lid} ({owner[1]})" if owner else f"LID {lid}"


def compare_tables(fab: R.Fabric, expected: dict[str, dict[int, int]], got: dict[str, dict[int, int]],
                   what: str) -> tuple[int, list[str]]:
    names = {s.node_guid: s.name for s in fab.switches}
    diffs = 0
    items: list[str] = []
    for sw, exp in expected.items():
        have = got.get(sw)
        if have is None:
            diffs += max(1, len(exp))
            items.append(f"{names[sw]}: no table in {what}")
            continue
        if exp and not have:
            diffs += len(exp)
            items.append(f"{names[sw]}: EMPTY table in {what} ({len(exp)} planned entries; is its block missing "
                         f"from {R.LFTS}?)")
            continue
        for lid in sorted(set(exp) | set(have)):
            e, h = exp.get(lid), have.get(lid)
            if e != h:
                diffs += 1
                if len(items) < 12:
                    items.append(f"{names[sw]} {_lid_name(fab, lid)}: plan port {e if e is not None else '-'}, "
                                 f"{what} port {h if h is not None else '-'}")
    for sw in got:
        if sw not in expected:
            items.append(f"switch {sw} in {what} is not in the plan")
            diffs += 1
    return diffs, items


# -------------------------------------------------------------------------------------- static checks


def lint_config(report: Report, tools: dict[str, str], workdir: Path, conf_name: str, conf_text: str,
                expected: dict[str, str]) -> None:
    """`opensm -F conf -c effective`: no refused key or value, and the effective values equal the plan's."""
    src = workdir / f"lint-{conf_name}"
    src.write_text(conf_text)
    eff = workdir / f"effective-{conf_name}"
    proc = subprocess.run([tools["opensm"], "-F", str(src), "-c", str(eff)], cwd=workdir, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL, preexec_fn=die_with_parent())
    msgs = P.lint_messages(proc.stdout + proc.stderr)
    lines = P.conf_key_lines(conf_text)
    items = []
    for m in msgs:
        tok = re.search(r'Unrecognized token: "([^"]+)"', m) or re.search(r'field (\w+)', m) or re.search(r'(\w+)\s*=', m)
        where = f"{conf_name} line {lines[tok.group(1)]}: " if tok and tok.group(1) in lines else f"{conf_name}: "
        items.append(where + m)
    report.add(f"config accepted ({conf_name})", not msgs,
               "opensm -F ... -c: every key and value accepted" if not msgs else f"{len(msgs)} refused key(s) or value(s)",
               items)
    if not eff.is_file():
        report.add(f"config effective ({conf_name})", False, "opensm -c wrote no effective configuration")
        return
    got = P.parse_conf(eff.read_text())
    mism = [f"{k}: plan {v!r}, effective {got.get(k)!r}" for k, v in expected.items()
            if k not in ("log_file",) and got.get(k) != v]
    report.add(f"config effective ({conf_name})", not mism,
               f"{len(expected) - len(mism)}/{len(expected)} keys equal the plan's (routing, LIDs, QoS sets, paths)",
               mism)


def check_lft_file(report: Report, fab: R.Fabric, text: str) -> None:
    parsed = P.parse_lfts(text)
    names = {s.node_guid: s.name for s in fab.switches}
    ports = {s.node_guid: s.ports for s in fab.switches}
    items = []
    missing = [s for s in fab.switches if s.node_guid not in parsed.tables]
    for s in missing:
        items.append(f"no block for switch {s.name} (guid {s.node_guid}): OpenSM would leave its LFT empty")
    for no, line in parsed.duplicates:
        items.append(f"{R.LFTS} line {no}: second block for the same switch: {line[:80]}")
    for no, line in parsed.junk:
        items.append(f"{R.LFTS} line {no}: not an entry OpenSM can read: {line[:80]!r}")
    for sw, table in parsed.tables.items():
        if sw not in names:
            items.append(f"{R.LFTS} line {parsed.lines[sw]}: switch guid {sw} is not in the fabric (OpenSM skips it)")
            continue
        for lid, port in table.items():
            if port > ports[sw]:
                items.append(f"{R.LFTS} line {parsed.entry_lines[(sw, lid)]}: {names[sw]} {_lid_name(fab, lid)} "
                             f"port {port} > {ports[sw]} ports (OpenSM: 'Invalid port', the file engine fails)")
        for lid, pg in parsed.portguids.get(sw, {}).items():
            owner = fab.lid_owner.get(lid)
            if owner and owner[0] != pg:
                items.append(f"{R.LFTS} line {parsed.entry_lines[(sw, lid)]}: LID {lid} names portguid {pg}, "
                             f"the plan gives it to {owner[1]} ({owner[0]})")
    no_guid = sum(1 for sw, t in parsed.tables.items() for lid in t if lid not in parsed.portguids.get(sw, {}))
    if no_guid:
        items.append(f"{no_guid} entries carry no 'portguid 0x...' (OpenSM cannot remap them if a LID moves)")
    expected = planned_tables(fab)
    diffs, diff_items = compare_tables(fab, expected, {k: v for k, v in parsed.tables.items() if k in names}, R.LFTS)
    diff_items = [d for d in diff_items if "EMPTY" not in d and "no table" not in d]
    items += diff_items
    ok = not items
    report.add(f"LFT file ({R.LFTS})", ok,
               f"{len(parsed.tables)}/{len(fab.switches)} switch blocks, {sum(len(t) for t in parsed.tables.values())} "
               f"entries, {diffs} differ from the plan" + ("" if ok else f"; {len(items)} problem(s)"), items)


def check_guid2lid(report: Report, fab: R.Fabric, text: str) -> None:
    items = []
    records: dict[str, int] = {}
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 3 or not all(p.startswith("0x") for p in parts):
            items.append(f"{R.GUID2LID} line {i + 1}: not '0x<guid> 0x<lid> 0x<lid>': {line[:60]!r}")
            continue
        if i + 1 < len(lines) and lines[i + 1].strip():
            items.append(f"{R.GUID2LID} line {i + 1}: record not followed by an empty line (OpenSM's database "
                         f"would silently drop the records after it)")
        records[P.guid(parts[0])] = int(parts[1], 16)
    for lid, (g, name) in sorted(fab.lid_owner.items()):
        if records.get(g) != lid:
            items.append(f"{name} ({g}): plan LID {lid}, {R.GUID2LID} {records.get(g)}")
    report.add(f"LID pinning ({R.GUID2LID})", not items, f"{len(records)} records, {len(fab.lid_owner)} planned LIDs", items)


# ------------------------------------------------------------------------------------- simulation


def _rewrite_paths(conf_text: str, workdir: Path) -> str:
    """Point the file-valued keys at the copies in the work folder (keys and other values stay as rendered)."""
    out = []
    for line in conf_text.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2 and parts[0] in R.PATH_KEYS:
            out.append(f"{parts[0]} {workdir / Path(parts[1].strip()).name}")
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def _sizes(fab: R.Fabric) -> list[str]:
    nodes = len(fab.switches) + len(fab.cas)
    ports = sum(s.ports + 1 for s in fab.switches) + sum(ca.nports + 1 for ca in fab.cas)
    return ibsim_limits(nodes, len(fab.switches), ports)


@dataclass
class Boot:
    topo: P.Topo
    tables: dict[str, dict[int, int]]
    log: str
    timings: dict[str, float]
    qos_checks: list[Check]


def boot(inp: Inputs | None, fab: R.Fabric, tools: dict[str, str], workdir: Path, conf_name: str, timeout: float,
         files: dict[str, str], report: Report | None, sim_hook: Callable[[Simulation], None] | None = None,
         progress: Callable[[str], None] = lambda s: None) -> Boot:
    """Start ibsim + OpenSM with `conf_name`, wait for SUBNET UP, read back; QoS checks go to `report`."""
    workdir.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (workdir / name).write_text(text)
    run_conf = workdir / f"run-{conf_name}"
    run_conf.write_text(_rewrite_paths(files[conf_name], workdir))
    cache = workdir / "cache"
    cache.mkdir(exist_ok=True)
    shutil.copyfile(workdir / R.GUID2LID, cache / "guid2lid")
    timings: dict[str, float] = {}
    sim = Simulation(workdir=workdir, tools=tools, sm_host=fab.sm_ca().id)
    with signals_raise(), sim:
        progress(f"ibsim: {len(fab.switches)} switches, {sum(len(c.ports) for c in fab.cas)} CA ports")
        netfile = workdir / "ibsim.net"
        netfile.write_text(R.simulator_topology(fab))
        timings["ibsim ready s"] = sim.start_ibsim(netfile, _sizes(fab), timeout)
        if sim_hook:
            sim_hook(sim)
        progress(f"OpenSM ({conf_name}) on {sim.sm_host}")
        sim.start_opensm(run_conf, cache, [])
        timings["SUBNET UP s"] = sim.wait_subnet_up(timeout)
        t = time.monotonic()
        progress("reading back: ibnetdiscover, dump_fts")
        topo = P.parse_topology(sim.diag(["ibnetdiscover"]))
        tables = P.parse_lfts(sim.diag(["dump_fts", "-n"])).tables
        qos = Report(target="", source="", view="", engine="", excluded=[])
        if report is not None:
            progress("reading back: SL2VL, VLArb, PathRecord SLs")
            check_qos(qos, inp, fab, sim)
        timings["read-back s"] = time.monotonic() - t
        log = (workdir / "osm.log").read_text(errors="replace")
    timings["route compute s"] = _route_time(log)
    return Boot(topo, tables, log, timings, qos.checks)


def _route_time(log: str) -> float:
    """MASTER -> '<engine> tables configured' in OpenSM's log: LID assignment, route computation, LFT upload."""
    start = end = None
    for line in log.splitlines():
        if start is None and "Entering MASTER state" in line:
            start = P.log_time(line)
        if "tables configured" in line:
            end = P.log_time(line)
            break
    return round(end - start, 4) if start is not None and end is not None else float("nan")


def check_log(report: Report, log: str, engine: str) -> None:
    err = [ln for ln in log.splitlines() if "ERR " in ln]
    fallback = [ln for ln in log.splitlines() if " 0x01 -> " in ln and NO_FALLBACK_NOISE not in ln]
    configured = [ln.split("-> ", 1)[-1] for ln in log.splitlines() if "tables configured" in ln]
    names = {m.group(1) for ln in configured for m in [re.search(r"(\S+) tables configured", ln)] if m}
    report.add("OpenSM log: no errors", not err, "no ERR lines" if not err else f"{len(err)} ERR line(s)",
               [ln.split("] ", 1)[-1] for ln in err])
    report.add("OpenSM log: no fallback", not fallback,
               "no 0x01-level (fallback) lines" if not fallback else f"{len(fallback)} fallback line(s)",
               [ln.split("] ", 1)[-1] for ln in fallback])
    report.add("OpenSM log: routing engine", names == {engine},
               f"'{engine} tables configured'" if names == {engine} else
               f"expected '{engine} tables configured', log says: {', '.join(sorted(names)) or 'nothing configured'}",
               configured[:3])


def check_cabling(report: Report, fab: R.Fabric, topo: P.Topo) -> None:
    planned = fabric_topo(fab)
    names = dict(planned.desc)
    missing = planned.links - topo.links
    extra = topo.links - planned.links

    def fmt(link) -> str:
        (a, pa), (b, pb) = link
        return f"{names.get(a, a)}[{pa}] <-> {names.get(b, b)}[{pb}]"

    items = [f"missing: {fmt(ln)}" for ln in sorted(missing)] + [f"unexpected: {fmt(ln)}" for ln in sorted(extra)]
    report.add("cabling", not items, f"{len(topo.links)} links discovered, {len(planned.links)} planned; "
               f"{len(missing)} missing, {len(extra)} unexpected", items)
    lid_diff = [f"{names.get(g, g)} port {p}: plan LID {lid}, discovered {topo.port_lid.get((g, p))}"
                for (g, p), lid in planned.port_lid.items() if topo.port_lid.get((g, p)) != lid]
    report.add("LIDs", not lid_diff, f"{len(planned.port_lid)} planned LIDs; {len(lid_diff)} differ", lid_diff)


def check_routes(report: Report, fab: R.Fabric, boot_: Boot) -> WalkResult:
    diffs, items = compare_tables(fab, planned_tables(fab), boot_.tables, "installed")
    report.add("LFTs installed == plan", diffs == 0,
               f"{sum(len(t) for t in boot_.tables.values())} entries on {len(boot_.tables)} switches; {diffs} differences",
               items)
    return check_reachability(report, fab, boot_.topo, boot_.tables, "installed tables")


def check_reachability(report: Report, fab: R.Fabric, topo: P.Topo, tables, what: str,
                       switch_lids_required: bool = True) -> WalkResult:
    res = walk(topo, tables)
    hops = ", ".join(f"{n} switch{'es' if n > 1 else ''}: {c}" for n, c in sorted(res.hops.items()))
    report.add("every CA pair reachable", res.broken == 0,
               f"{res.reachable}/{res.pairs} pairs by walking the {what} ({hops})", res.failures)
    sw = walk_switch_lids(topo, tables)
    # OpenSM's up*/down* engines never route a spine's LID from another spine (down then up): info, not a failure
    ok = True if sw.broken == 0 else (False if switch_lids_required else None)
    report.add("every switch LID reachable", ok,
               f"{sw.reachable}/{sw.pairs} (source, switch LID) pairs from every other switch and every CA port by "
               f"walking the {what}", sw.failures)
    return res


# -------------------------------------------------------------------------------------------- QoS


def _expected_vlarb(entries, cap: int) -> list[tuple[int, int]]:
    return [(e.vl, e.weight) for e in entries][:cap]


def _vlarb_matches(want: list[tuple[int, int]], got: list[tuple[int, int]]) -> bool:
    n = len(want)
    return got[:n] == want and all(w == 0 for _, w in got[n:])


def check_qos(report: Report, inp: Inputs, fab: R.Fabric, sim: Simulation) -> None:
    qos = inp.plan.qos
    assert qos is not None
    pcs = qos.port_classes
    items_sl2vl: list[str] = []
    items_vlarb: list[str] = []
    sampled: list[str] = []

    def expect_sl2vl(cls: str, i: int, o: int) -> tuple[str, list[int]] | None:
        # OpenSM programs a switch's SL2VL per output port: the sw0 set only for in 0 -> out 0 (the switch's
        # own traffic), the swe set for every other pair (also external port -> port 0). Seen on OpenSM 3.3.23.
        if cls == "ca":
            which = "ca"
        else:
            which = "sw0" if (i, o) == (0, 0) else "swe"
        pc = pcs.get(which)  # type: ignore[call-overload]
        return (which, list(pc.sl2vl)) if pc is not None else None

    def sample(cls: str, lid: int, port: int, label: str, out_ports: list[int], arb_class: str) -> None:
        sampled.append(f"{arb_class}: {label}")
        for out in out_ports:
            args = ["smpquery", "sl2vl", str(lid)] + ([str(out)] if cls != "ca" else [])
            rows = P.parse_sl2vl(sim.diag(args))
            if not rows:
                items_sl2vl.append(f"{label}: smpquery sl2vl returned no table")
            for (i, o), vls in sorted(rows.items()):
                if cls != "ca" and o != out:
                    continue
                want = expect_sl2vl(cls, i, o)
                if want is not None and vls != want[1]:
                    items_sl2vl.append(f"{want[0]} {label} in {i} out {o}: plan {want[1]}, installed {vls}")
        pc = pcs.get(arb_class)  # type: ignore[call-overload]
        if pc is None:
            return
        arb = P.parse_vlarb(sim.diag(["smpquery", "vlarb", str(lid), str(port)]))
        for which, entries in (("high", pc.vlarb_high), ("low", pc.vlarb_low)):
            got = arb.get(which, [])
            want = _expected_vlarb(entries, len(got) or 8)
            if not _vlarb_matches(want, got):
                items_vlarb.append(f"{arb_class} {label} port {port} {which}: plan {want}, installed {got}")

    by_role: dict[str, R.Ca] = {}
    for ca in fab.cas:
        by_role.setdefault(ca.role, ca)
    for role, ca in by_role.items():
        sample("ca", ca.ports[0].lid, ca.ports[0].port, f"{ca.id} (LID {ca.ports[0].lid})", [0], "ca")
    leaf = next((s for s in fab.switches if s.tier == "leaf"), None)
    spine = next((s for s in fab.switches if s.tier == "spine"), None)
    for sw in (leaf, spine):
        if sw is None:
            continue
        ports = sorted({p for a, pa, b, pb in fab.links for n, p in ((a, pa), (b, pb)) if n == sw.name})
        outs = sorted({0, ports[0], ports[-1]}) if ports else [0]
        sample("switch", sw.lid, outs[-1], f"{sw.name} (LID {sw.lid}) out ports {outs}", outs, "swe")
        sample("switch", sw.lid, 0, f"{sw.name} (LID {sw.lid})", [], "sw0")
    report.add("SL2VL per port class", not items_sl2vl,
               "CA ports per role; leaf and spine: every in port to out ports 0, first and last (in 0 -> out 0 "
               f"is sw0, the rest swe); sampled {len(sampled)}: " + "; ".join(sampled), items_sl2vl)
    report.add("VLArb per port class", not items_vlarb,
               "high and low tables (entries beyond the plan's must weigh 0)", items_vlarb)
    limits = {cls: pc.high_limit for cls, pc in pcs.items()}
    report.add("VLHighLimit", None,
               "not checkable in ibsim (its PortInfo Set ignores the field; it reads back 0); plan: "
               + ", ".join(f"{k} {v}" for k, v in limits.items()))
    # Path SLs through the SA (OpenSM is running).
    items = []
    asked = R.expected_path_sls(fab)
    for q in asked:
        args = ["saquery", "-p", "--src-to-dst", f"{q['src']}:{q['dst']}"]
        if q["qos_class"] is not None:
            args += ["--qos_class", str(q["qos_class"])]
        try:
            sl = P.parse_path_sl(sim.diag(args, timeout=30))
        except SimError as exc:
            sl = None
            items.append(f"{q['what']}: {str(exc).splitlines()[0]}")
            continue
        if sl != q["sl"]:
            items.append(f"{q['what']} LID {q['src']} -> {q['dst']}: policy SL {q['sl']}, SA answered {sl}")
    report.add("path SLs per traffic class", not items and bool(asked),
               f"{len(asked) - len(items)}/{len(asked)} PathRecord queries answered with the class's SL", items)


# ----------------------------------------------------------------------------------------------- main


def _static_checks(report: Report, inp: Inputs, fab: R.Fabric, tools, workdir: Path, engine: str) -> None:
    conf_name = R.CONF if engine == "file" else R.FTREE_CONF
    text = inp.files.get(conf_name)
    if text is None:
        report.add(f"config ({conf_name})", False, f"{conf_name} is missing from the rendered folder")
        return
    conf = P.parse_conf(text)
    prefix = str(Path(conf.get("qos_policy_file", f"{R.DEFAULT_PREFIX}/x")).parent)
    lint_config(report, tools, workdir, conf_name, text, R.expected_conf(inp.plan, prefix, engine))
    for name in (R.TOPOLOGY, R.GUID2LID) + ((R.LFTS,) if engine == "file" else (R.ROOT_GUIDS, R.CN_GUIDS, R.IO_GUIDS)):
        if name not in inp.files:
            report.add(f"file {name}", False, f"{name} is missing from the rendered folder")
    if engine == "file" and R.LFTS in inp.files:
        check_lft_file(report, fab, inp.files[R.LFTS])
    if R.GUID2LID in inp.files:
        check_guid2lid(report, fab, inp.files[R.GUID2LID])


def verify(target: Path, *, plan_path: Path | None = None, zone: str | None = None, engine: str = "file",
           timeout: float = 60.0, keep: Path | None = None, compare: bool = True,
           progress: Callable[[str], None] = lambda s: None) -> Report:
    """Run every check; never leaves a process behind (stops by PID on errors, Ctrl-C and SIGTERM)."""
    tools = find_tools()
    view = R.View(zone=zone)
    inp = load_inputs(Path(target), plan_path, view)
    fab = inp.fab
    report = Report(target=str(target), source=inp.source, view=fab.view.describe(), engine=engine, excluded=fab.excluded)
    started = time.monotonic()
    base = work_folder(keep)
    report.workdir = str(base) if keep else ""
    try:
        with signals_raise():
            _static_checks(report, inp, fab, tools, base, engine)
            if any(c.status == "fail" and c.name.startswith("config accepted") for c in report.checks) and engine == "file":
                pass  # still boot: OpenSM ignores refused keys, the run shows what that means
            conf_name = R.CONF if engine == "file" else R.FTREE_CONF
            if conf_name in inp.files and all(n in inp.files for n in (R.TOPOLOGY, R.GUID2LID)):
                try:
                    b = boot(inp, fab, tools, base / engine, conf_name, timeout, inp.files, report, progress=progress)
                except SimError as exc:
                    report.add("SUBNET UP", False, str(exc).splitlines()[0], str(exc).splitlines()[1:])
                else:
                    report.add("SUBNET UP", True, f"after {b.timings['SUBNET UP s']:.2f} s "
                               f"(routes {b.timings['route compute s']:.3f} s)")
                    report.timings.update(b.timings)
                    check_cabling(report, fab, b.topo)
                    if engine == "file":
                        res = check_routes(report, fab, b)
                    else:
                        report.skip("LFTs installed == plan", "ftree computes its own tables (see the comparison)")
                        res = check_reachability(report, fab, b.topo, b.tables, "installed ftree tables",
                                                 switch_lids_required=False)
                    report.checks += b.qos_checks
                    check_log(report, b.log, engine)
                    if engine == "ftree" and compare:
                        ftree_comparison(report, inp, fab, tools, base, timeout, b, res, progress)
    finally:
        report.timings["total s"] = round(time.monotonic() - started, 3)
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    return report


# ------------------------------------------------------------------------------ ffplan vs OpenSM ftree


def _loads(res: WalkResult) -> dict:
    mx, mean, links = res.load_stats()
    return {"max": mx, "mean": round(mean, 1), "links": links, "reachable": f"{res.reachable}/{res.pairs}"}


def failed_link_case(fab: R.Fabric) -> str | None:
    """The cable the failed-link case takes out: the first leaf's first uplink."""
    leaves = {s.name for s in fab.switches if s.tier == "leaf"}
    spines = {s.name for s in fab.switches if s.tier == "spine"}
    for c in fab.plan.cables:
        if c.kind == "leaf-spine" and c.a.device in leaves | spines and c.b.device in leaves | spines \
                and c.label not in fab.view.drop_cables:
            return c.label
    return None


def ftree_comparison(report: Report, inp: Inputs, fab: R.Fabric, tools, base: Path, timeout: float, b: Boot,
                     ftree_res: WalkResult, progress) -> None:
    from ffplan.verify import compare as C

    rows = C.compare_case("intact", inp.plan, fab, b, ftree_res)
    cable = failed_link_case(fab)
    if cable:
        view = R.View(zone=fab.view.zone, drop_cables=fab.view.drop_cables | {cable})
        sub = R.build_fabric(inp.plan, view)
        files = dict(inp.files)
        files.update({k: v for k, v in R.opensm_files(inp.plan, R.DEFAULT_PREFIX, view, engines=()).items()
                      if k in (R.TOPOLOGY, R.GUID2LID, R.ROOT_GUIDS, R.CN_GUIDS, R.IO_GUIDS)})
        progress(f"failed-link case: without {cable}")
        try:
            b2 = boot(inp, sub, tools, base / "ftree-failed", R.FTREE_CONF, timeout, files, None, progress=progress)
        except SimError as exc:
            report.add(f"ftree without {cable}", False, str(exc).splitlines()[0])
        else:
            res2 = walk(b2.topo, b2.tables)
            rows += C.compare_case(f"without {cable}", inp.plan, sub, b2, res2, failed=cable)
    report.comparison = rows
