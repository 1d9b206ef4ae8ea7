"""`ffplan reroute PLAN (--fabric IBNETDISCOVER | --failed ITEM...) -o LFTS_FILE [--hup PID]`: live re-routing."""

from __future__ import annotations

import contextlib
import json
import sys
from enum import Enum
from pathlib import Path

import typer
from rich.markup import escape

from typing import TYPE_CHECKING

from ffplan.cli import complete
from ffplan.cli.common import EXIT_FINDINGS, EXIT_OK, err, fail, kept_until_exit, out, stage_errors

if TYPE_CHECKING:
    from ffplan.reroute import Missing, Rerouted


class Format(str, Enum):
    table = "table"
    json = "json"


def reroute_command(
    plan: Path = typer.Argument(..., help="plan.yaml, or the folder `ffplan design` wrote it to."),
    fabric: Path = typer.Option(
        None, "--fabric", help="`ibnetdiscover` output of the live subnet: what the plan has and this lacks is failed."
    ),
    failed: list[str] = typer.Option(
        None, "--failed", help="A failed cable label, switch name or switch[port] (repeatable)."
    ),
    output: Path = typer.Option(
        ...,
        "-o",
        "--output",
        help="The LFT file OpenSM reads (opensm.conf's lfts_file), or its folder (then lfts.dump in it).",
    ),
    plane: str = typer.Option(
        None,
        "--plane",
        autocompletion=complete.planes,
        help="A plan with planes: the plane (subnet) to re-route; required there (each plane has its own OpenSM and LFT file).",
    ),
    hup: int = typer.Option(
        None,
        "--hup",
        help="PID of the running OpenSM that reads the -o file: send it SIGHUP so a heavy sweep loads it.",
    ),
    fmt: Format = typer.Option(Format.table, "--format", help="table or json."),
) -> None:
    """Re-route PLAN around what is down now and atomically replace the LFT file OpenSM reads.

    The file lists only the LIDs of ports that are up. A --fabric file that is not ibnetdiscover output is
    refused at its line (FF930, as in `ffplan audit`). Exit 0 when every CA pair and every switch LID of the degraded fabric is
    reachable, 1 when some are not (the file is written all the same: it is the best routing left), 2 on bad input,
    when nothing is written: among it an -o that is a symlink, FIFO or device, and a --hup PID that is not the
    opensm process reading that very file (its -U, or lfts_file in its -F configuration).

    A plan with planes: re-route one plane with --plane NAME and write that plane's LFT file
    (/etc/opensm/NAME/lfts.dump), then SIGHUP that plane's OpenSM.

    Example: ibnetdiscover > now.txt; ffplan reroute out/fire-flyer-2/plan --fabric now.txt -o /etc/opensm/lfts.dump --hup $(pidof opensm)
    """
    from ffplan.live_file import UnsafeTarget, check_target, replacing
    from ffplan.opensm.files import lfts_chunks
    from ffplan.sm_process import NotOurOpenSM, subnet_manager_reading

    if (fabric is None) == (not failed):
        fail(
            "give the fabric as it is now: either --fabric IBNETDISCOVER_OUTPUT or --failed ITEM (not both)",
            "ffplan reroute out/fire-flyer-2/plan --failed z1-leaf05-p21 -o /etc/opensm/lfts.dump",
        )
    try:
        target = check_target(output / "lfts.dump" if output.is_dir() else output)
    except UnsafeTarget as exc:
        fail(escape(f"{exc}; nothing was written"), "-o names the regular file OpenSM reads (lfts_file) or its folder")
    sm = None
    if hup is not None:  # before anything is written: a wrong PID is bad input, not a half-done re-route
        try:
            sm = subnet_manager_reading(hup, target.path)
        except NotOurOpenSM as exc:
            fail(
                escape(f"--hup {hup}: {exc}; nothing was written"),
                "pass the PID of the opensm process whose lfts_file (or -U) is the file -o names",
            )
    try:
        # What the re-route makes is kept to the end or freed by its reference counts: the cyclic collector is
        # paused, where it walked the plan, the discovery and the router's arrays to free nothing (1 s of a
        # 16,384-endpoint re-route around a core switch; the peak is the same)
        with kept_until_exit():
            result, missing = _reroute(plan, plane, fabric, list(failed or []))
        try:
            with replacing(target, lfts_chunks(result.fab)):
                checks = result.checks  # while a thread writes the file (it is written whatever they find)
        except UnsafeTarget as exc:
            fail(escape(str(exc)), "check who else can write that folder")
        except OSError as exc:
            fail(
                escape(f"cannot write {target.path}: {exc.strerror or exc}"),
                "run it as the user that owns OpenSM's files",
            )
        if target.others_can_write_folder():
            err.print(
                f"warning: {target.folder} is writable by other users: they can change the routes OpenSM "
                "installs; make it writable by OpenSM's user only",
                markup=False,
            )
        signalled = ""
        if sm is not None:
            held, sm = sm, None
            try:
                held.request_heavy_sweep()
            except NotOurOpenSM as exc:
                fail(
                    escape(f"wrote {target.path}, but cannot signal OpenSM: {exc}"),
                    "send SIGHUP to the opensm process yourself",
                )
            signalled = f"sent SIGHUP to OpenSM (PID {hup}): its heavy sweep loads the file"
    finally:
        if sm is not None:
            sm.release()
    summary = {
        "failed": result.failed,
        "missing": None
        if missing is None
        else {"switches": missing.switches, "cables": missing.cables, "ca_ports": missing.ca_ports},
        "unexpected_links": [] if missing is None else missing.unexpected,
        "routes_changed": {"entries": checks.entries_changed, "switches": checks.switches_changed},
        "unreachable": {
            "ca_pairs": checks.ca_pairs.broken,
            "of_ca_pairs": checks.ca_pairs.pairs,
            "switch_lid_pairs": checks.switch_lids.broken,
            "of_switch_lid_pairs": checks.switch_lids.pairs,
        },
        "examples": checks.ca_pairs.failures[:4] + checks.switch_lids.failures[:4],
        "route_s": round(result.route_s, 3),
        "written": str(target.path),
        "opensm": signalled or "not signalled (pass --hup PID, or send SIGHUP yourself)",
    }
    if fmt is Format.json:
        sys.stdout.write(json.dumps(summary, indent=1) + "\n")
    else:
        _print(summary)
    ok = checks.ca_pairs.broken == 0 and checks.switch_lids.broken == 0
    raise typer.Exit(EXIT_OK if ok else EXIT_FINDINGS)


def _reroute(plan: Path, plane: str | None, fabric: Path | None, failed: list[str]) -> tuple[Rerouted, Missing | None]:
    """Load the plan, find what is down (from --fabric or --failed) and route around it; bad input exits 2."""
    from ffplan.fabric.discovery import reading_fabric
    from ffplan.diagnostics import did_you_mean
    from ffplan.plan import load_plan
    from ffplan.plan.subnets import plane_view
    from ffplan.reroute import aggregation_nodes, failed_items, missing_from_discovery, reroute

    with stage_errors(), contextlib.ExitStack() as stack:
        # audit's reader (file:line errors, FF930; size limit), in a child while the plan loads
        discovered = stack.enter_context(reading_fabric(fabric)) if fabric is not None else None
        loaded = plane_view(load_plan(plan / "plan.yaml" if plan.is_dir() else plan), plane, "reroute")
        if loaded.routing is None:
            fail(escape(f"{plan} has no routing to start from"), "re-run `ffplan design`")
        missing = None
        topo = None
        if discovered is not None:
            topo = discovered()
            missing = missing_from_discovery(loaded, topo)
            if len(missing.switches) == len(loaded.switches):
                placeholders = sum(1 for sw in loaded.switches if sw.guid_placeholder)
                fail(
                    escape(f"{fabric}: none of the plan's {len(loaded.switches)} switch GUIDs is in this fabric"),
                    f"{placeholders} of them are placeholders: put the switches' real GUIDs in the inventory "
                    "(fabric.switch_guids) and re-run design"
                    if placeholders
                    else "is this the discovery of the fabric the plan describes?",
                )
            reasons = missing.beyond_failures()
            if reasons:
                fail(
                    escape(
                        f"{fabric} is not the plan's fabric with parts down; tables for it would black-hole what "
                        "is cabled, so nothing was written:\n    " + "\n    ".join(reasons)
                    ),
                    f"run `ffplan audit {plan} {fabric}` for the work order; fix the cabling, or put replaced "
                    "hardware's GUIDs in the inventory and re-run design",
                )
            failed = missing.failed
        items = failed_items(loaded, failed)  # resolved once: reroute() takes them as they are
        unknown = [item for item in failed if item in items.unknown]  # the router refuses the plan's own
        if unknown:
            hint = did_you_mean(unknown[0], [s.name for s in loaded.switches] + [c.label for c in loaded.cables])
            fail(
                escape(f"--failed {unknown[0]!r} is neither a cable label, a switch nor switch[port] of the plan"),
                hint or "use a cable label from cables.csv (z1-leaf05-p21), a switch name (z1-spine05) or switch[port]",
            )
        return reroute(loaded, items, aggregation_nodes(loaded, topo) if topo is not None else None), missing


def _print(s: dict) -> None:
    out.print("failed: " + (", ".join(s["failed"]) or "nothing"), markup=False)
    if s["missing"] is not None:
        m = s["missing"]
        out.print(
            f"  from the discovered fabric: {len(m['switches'])} switch(es), {len(m['cables'])} switch cable(s), "
            f"{len(m['ca_ports'])} CA port(s) missing",
            markup=False,
        )
    for link in s["unexpected_links"][:8]:
        err.print(f"warning: unplanned link (not used by the routes): {link}", markup=False)
    rc, un = s["routes_changed"], s["unreachable"]
    out.print(f"routes changed: {rc['entries']} entries on {rc['switches']} switch(es) (routing {s['route_s']:.2f} s)")
    out.print(
        f"unreachable: {un['ca_pairs']} of {un['of_ca_pairs']} CA pairs, {un['switch_lid_pairs']} of "
        f"{un['of_switch_lid_pairs']} (source, switch LID) pairs"
    )
    for example in s["examples"]:
        out.print(f"  {example}", markup=False)
    out.print(f"wrote {s['written']}; OpenSM: {s['opensm']}", markup=False)


def register(app: typer.Typer) -> None:
    app.command("reroute")(reroute_command)
