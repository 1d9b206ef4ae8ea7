"""QoS as installed: SL2VL and VLArb tables sampled per port class, and the SL the SA answers per traffic class."""

from __future__ import annotations

from ffplan.plan.model import Plan, VlArbEntry
from ffplan.opensm import Ca, Subnet, expected_path_sls
from ffplan.verify import parse as P
from ffplan.verify.report import Check, new_check
from ffplan.verify.sim import SimError, Simulation


def _expected_vlarb(entries: list[VlArbEntry], cap: int) -> list[tuple[int, int]]:
    return [(e.vl, e.weight) for e in entries][:cap]


def _vlarb_matches(want: list[tuple[int, int]], got: list[tuple[int, int]]) -> bool:
    n = len(want)
    return got[:n] == want and all(w == 0 for _, w in got[n:])


def check_qos(plan: Plan, fab: Subnet, sim: Simulation) -> list[Check]:
    """The QoS checks of the running simulation against the plan's QoS."""
    qos = plan.qos
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
            planned = _expected_vlarb(entries, len(got) or 8)
            if not _vlarb_matches(planned, got):
                items_vlarb.append(f"{arb_class} {label} port {port} {which}: plan {planned}, installed {got}")

    by_role: dict[str, Ca] = {}
    for ca in fab.cas:
        by_role.setdefault(ca.role, ca)
    for ca in by_role.values():
        sample("ca", ca.ports[0].lid, ca.ports[0].port, f"{ca.id} (LID {ca.ports[0].lid})", [0], "ca")
    for sw in (next((s for s in fab.switches if s.tier == tier), None) for tier in ("leaf", "spine", "core")):
        if sw is None:
            continue
        ports = sorted({p for a, pa, b, pb in fab.links for n, p in ((a, pa), (b, pb)) if n == sw.name})
        outs = sorted({0, ports[0], ports[-1]}) if ports else [0]
        sample("switch", sw.lid, outs[-1], f"{sw.name} (LID {sw.lid}) out ports {outs}", outs, "swe")
        sample("switch", sw.lid, 0, f"{sw.name} (LID {sw.lid})", [], "sw0")
    limits = {cls: pc.high_limit for cls, pc in pcs.items()}
    checks = [
        new_check(
            "SL2VL per port class",
            not items_sl2vl,
            "CA ports per role; leaf, spine and core: every in port to out ports 0, first and last (in 0 -> out 0 "
            f"is sw0, the rest swe); sampled {len(sampled)}: " + "; ".join(sampled),
            items_sl2vl,
        ),
        new_check(
            "VLArb per port class",
            not items_vlarb,
            "high and low tables (entries beyond the plan's must weigh 0)",
            items_vlarb,
        ),
        new_check(
            "VLHighLimit",
            None,
            "not checkable in ibsim (its PortInfo Set ignores the field; it reads back 0); plan: "
            + ", ".join(f"{k} {v}" for k, v in limits.items()),
        ),
    ]
    # Path SLs through the SA (OpenSM is running).
    items = []
    asked = expected_path_sls(fab)
    for q in asked:
        args = ["saquery", "-p", "--src-to-dst", f"{q['src']}:{q['dst']}"]
        if q["qos_class"] is not None:
            args += ["--qos_class", str(q["qos_class"])]
        try:
            sl = P.parse_path_sl(sim.diag(args, timeout=30))
        except SimError as exc:
            items.append(f"{q['what']}: {str(exc).splitlines()[0]}")
            continue
        if sl != q["sl"]:
            items.append(f"{q['what']} LID {q['src']} -> {q['dst']}: policy SL {q['sl']}, SA answered {sl}")
    checks.append(
        new_check(
            "path SLs per traffic class",
            not items and bool(asked),
            f"{len(asked) - len(items)}/{len(asked)} PathRecord queries answered with the class's SL",
            items,
        )
    )
    return checks
