"""`ffplan reroute PLAN (--fabric IBNETDISCOVER | --failed ITEM...) -o LFTS_FILE [--hup PID]`: live re-routing."""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path

import typer
from rich.markup import escape

from ffplan.cli.common import EXIT_FINDINGS, EXIT_OK, err, fail, out, stage_errors


class Format(str, Enum):
    table = "table"
    json = "json"


def reroute_command(
    plan: Path = typer.Argument(..., help="plan.yaml, or the folder `ffplan design` wrote it to."),
    fabric: Path = typer.Option(None, "--fabric", help="`ibnetdiscover` output of the live subnet: what the plan has and this lacks is failed."),
    failed: list[str] = typer.Option(None, "--failed", help="A failed cable label, switch name or switch\\[port] (repeatable)."),
    output: Path = typer.Option(..., "-o", "--output", help="The LFT file OpenSM reads (opensm.conf's lfts_file), or its folder (then lfts.dump in it)."),
    plane: str = typer.Option(None, "--plane", help="A plan with planes: the plane (subnet) to re-route; required there (each plane has its own OpenSM and LFT file)."),
    hup: int = typer.Option(None, "--hup", help="PID of the running OpenSM: send it SIGHUP so a heavy sweep loads the new file."),
    fmt: Format = typer.Option(Format.table, "--format", help="table or json."),
) -> None:
    """Re-route PLAN around what is down now and atomically replace the LFT file OpenSM reads.

    The file lists only the LIDs of ports that are up. A --fabric file that is not ibnetdiscover output is
    refused at its line (FF930, as in `ffplan audit`). Exit 0 when every CA pair and every switch LID of the degraded fabric is
    reachable, 1 when some are not (the file is written all the same: it is the best routing left), 2 on bad input.

    A plan with planes: re-route one plane with --plane NAME and write that plane's LFT file
    (/etc/opensm/NAME/lfts.dump), then SIGHUP that plane's OpenSM.

    Example: ibnetdiscover > now.txt; ffplan reroute out/fire-flyer-2/plan --fabric now.txt -o /etc/opensm/lfts.dump --hup $(pidof opensm)
    """
    from ffplan.fabric.discovery import read_fabric
    from ffplan.plan import load_plan
    from ffplan.plan.subnets import plane_view
    from ffplan.render.opensm import lfts_chunks
    from ffplan.diagnostics import did_you_mean
    from ffplan.reroute import NotOpenSM, missing_from_discovery, request_heavy_sweep, reroute, resolve_items, write_atomically

    if (fabric is None) == (not failed):
        fail("give the fabric as it is now: either --fabric IBNETDISCOVER_OUTPUT or --failed ITEM (not both)",
             "ffplan reroute out/fire-flyer-2/plan --failed z1-leaf05-p21 -o /etc/opensm/lfts.dump")
    target = output / "lfts.dump" if output.is_dir() else output
    if not target.parent.is_dir():
        fail(escape(f"{target.parent} is not a folder"), "-o names the file OpenSM reads (lfts_file) or its folder")
    with stage_errors():
        loaded = plane_view(load_plan(plan / "plan.yaml" if plan.is_dir() else plan), plane, "reroute")
        if loaded.routing is None:
            fail(escape(f"{plan} has no routing to start from"), "re-run `ffplan design`")
        missing = None
        if fabric is not None:
            topo = read_fabric(fabric)  # audit's reader: file:line errors (FF930), size limit
            missing = missing_from_discovery(loaded, topo)
            if len(missing.switches) == len(loaded.switches):
                placeholders = sum(1 for sw in loaded.switches if sw.guid_placeholder)
                fail(escape(f"{fabric}: none of the plan's {len(loaded.switches)} switch GUIDs is in this fabric"),
                     f"{placeholders} of them are placeholders: put the switches' real GUIDs in the inventory "
                     "(fabric.switch_guids) and re-run design" if placeholders else
                     "is this the discovery of the fabric the plan describes?")
            failed = missing.failed
        unknown = resolve_items(loaded, list(failed)).unknown
        if unknown:
            hint = did_you_mean(unknown[0], [s.name for s in loaded.switches] + [c.label for c in loaded.cables])
            fail(escape(f"--failed {unknown[0]!r} is neither a cable label, a switch nor switch[port] of the plan"),
                 hint or "use a cable label from cables.csv (z1-leaf05-p21), a switch name (z1-spine05) or switch[port]")
        result = reroute(loaded, list(failed))
    try:
        write_atomically(target, lfts_chunks(result.fab))
    except OSError as exc:
        fail(escape(f"cannot write {target}: {exc.strerror or exc}"), "run it as the user that owns OpenSM's files")
    signalled = ""
    if hup is not None:
        try:
            request_heavy_sweep(hup)
        except (NotOpenSM, PermissionError) as exc:
            fail(escape(f"wrote {target}, but cannot signal OpenSM: {exc}"), "send SIGHUP to the opensm process yourself", EXIT_FINDINGS)
        signalled = f"sent SIGHUP to OpenSM (PID {hup}): its heavy sweep loads the file"
    summary = {
        "failed": result.failed,
        "missing": None if missing is None else {"switches": missing.switches, "cables": missing.cables,
                                                 "ca_ports": missing.ca_ports},
        "unexpected_links": [] if missing is None else missing.unexpected,
        "routes_changed": {"entries": result.entries_changed, "switches": result.switches_changed},
        "unreachable": {"ca_pairs": result.ca_pairs.broken, "of_ca_pairs": result.ca_pairs.pairs,
                        "switch_lid_pairs": result.switch_lids.broken, "of_switch_lid_pairs": result.switch_lids.pairs},
        "examples": result.ca_pairs.failures[:4] + result.switch_lids.failures[:4],
        "route_s": round(result.route_s, 3),
        "written": str(target),
        "opensm": signalled or "not signalled (pass --hup PID, or send SIGHUP yourself)",
    }
    if fmt is Format.json:
        sys.stdout.write(json.dumps(summary, indent=1) + "\n")
    else:
        _print(summary)
    ok = result.ca_pairs.broken == 0 and result.switch_lids.broken == 0
    raise typer.Exit(EXIT_OK if ok else EXIT_FINDINGS)


def _print(s: dict) -> None:
    out.print("failed: " + (", ".join(s["failed"]) or "nothing"), markup=False)
    if s["missing"] is not None:
        m = s["missing"]
        out.print(f"  from the discovered fabric: {len(m['switches'])} switch(es), {len(m['cables'])} switch cable(s), "
                  f"{len(m['ca_ports'])} CA port(s) missing", markup=False)
    for link in s["unexpected_links"][:8]:
        err.print(f"warning: unplanned link (not used by the routes): {link}", markup=False)
    rc, un = s["routes_changed"], s["unreachable"]
    out.print(f"routes changed: {rc['entries']} entries on {rc['switches']} switch(es) (routing {s['route_s']:.2f} s)")
    out.print(f"unreachable: {un['ca_pairs']} of {un['of_ca_pairs']} CA pairs, {un['switch_lid_pairs']} of "
              f"{un['of_switch_lid_pairs']} (source, switch LID) pairs")
    for example in s["examples"]:
        out.print(f"  {example}", markup=False)
    out.print(f"wrote {s['written']}; OpenSM: {s['opensm']}", markup=False)


def register(app: typer.Typer) -> None:
    app.command("reroute")(reroute_command)
