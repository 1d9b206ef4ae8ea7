"""`ffplan design INVENTORY -o DIR`: size, place, cable and address the fabric; write the plan."""

from __future__ import annotations

import sys
import time
from collections import Counter
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from ffplan.cli.common import out, plan_file, stage_errors, stage_progress
from ffplan.codes.design import CABLE_BEYOND_REACH

if TYPE_CHECKING:
    from ffplan.inventory import LoadedInventory
    from ffplan.plan.model import Plan


class Solver(str, Enum):
    cbc = "cbc"
    highs = "highs"


def design_command(
    inventory: Path = typer.Argument(..., help="Inventory YAML file."),
    output: Path = typer.Option(
        Path("out/plan"), "-o", "--output", metavar="DIR", help="Folder for plan.yaml, cables.csv and bom.csv."
    ),
    solver: Solver = typer.Option(
        Solver.cbc, "--solver", help="ILP solver: pulp's bundled CBC, or HiGHS (pip install highspy)."
    ),
    time_limit: float = typer.Option(
        None, "--time-limit", min=0.1, help="Stop the solver after this many seconds (the plan records the gap)."
    ),
    previous: Path = typer.Option(
        None,
        "--previous",
        help="Re-plan against this plan (plan.yaml or its folder): keep existing ports, LIDs and GUIDs; move as few cables as balance allows.",
    ),
    allow_imbalance: bool = typer.Option(
        False,
        "--allow-imbalance",
        help="Accept a placement whose role balance per leaf is off by more than one (otherwise exit 3).",
    ),
    exclude_link: list[str] = typer.Option(
        [],
        "--exclude-link",
        help="Route around this cable label, switch name or switch[port] (repeatable; adds to fabric.failed_links).",
    ),
    force: bool = typer.Option(False, "--force", help="Replace an output folder that ffplan did not write."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Print nothing but errors."),
) -> None:
    """Design the fabric of INVENTORY and write DIR/plan.yaml (the input of every later command).

    Example: ffplan design inventories/fire-flyer-2.yaml -o out/fire-flyer-2/plan
    """
    from ffplan.design import DesignOptions, design, design_steps
    from ffplan.design.addressing import subnet_manager_choice
    from ffplan.lint.gate import require_clean
    from ffplan.outdir import write_folder
    from ffplan.plan import dump_plan, load_plan
    from ffplan.plan.exports import bom_csv, cables_csv

    with stage_errors():
        started = time.perf_counter()
        loaded = require_clean(inventory)
        old_plan = load_plan(plan_file(previous)) if previous else None
        options = DesignOptions(
            solver=solver.value,
            time_limit=time_limit,
            allow_imbalance=allow_imbalance,
            previous=old_plan,
            exclude_links=tuple(exclude_link),
        )
        with stage_progress(f"designing {loaded.inventory.name}", design_steps(loaded), quiet) as on_stage:
            plan = design(loaded, options, on_stage)
        files = {"plan.yaml": dump_plan(plan), "cables.csv": cables_csv(plan), "bom.csv": bom_csv(plan)}
        write_folder(
            output,
            files,
            kind="plan",
            force=force,
            inputs=[inventory],
            read_inputs=[("--previous", previous)] if previous else [],
        )
        elapsed = time.perf_counter() - started
    warn_beyond_reach(loaded, plan)  # a warning, not progress: printed with --quiet too
    if not quiet:
        print_summary(plan, elapsed)
        if loaded.inventory.fabric.transport == "infiniband" and plan.sm_hosts:  # RoCE has no subnet manager
            print_subnet_managers(plan, subnet_manager_choice(loaded)[1])
        print_failed(plan, set(exclude_link))
        if old_plan is not None:
            print_changes(old_plan, plan)
        out.print(f"wrote {output}/plan.yaml, cables.csv, bom.csv")


def print_summary(plan: Plan, elapsed: float) -> None:
    zones = Table(title=f"{plan.inventory.name}: ports per zone", title_justify="left")
    zones.add_column("zone")
    zones.add_column("spines x leaves", justify="right")
    roles = sorted({r for z in plan.zones for r in z.used_ports})
    for r in roles:
        zones.add_column(r, justify="right")
    zones.add_column("ports", justify="right")
    for z in plan.zones:
        zones.add_row(
            z.name, f"{z.spines} x {z.leaves}", *(str(z.used_ports.get(r, 0)) for r in roles), str(z.endpoint_ports)
        )
    out.print(zones)

    if plan.design.balance:  # rail-optimized placement is a rule, not a balance the ILP reaches
        balance = Table(title="role balance per leaf (all zones)", title_justify="left")
        for col in ("role", "min", "max", "best possible", "balanced"):
            balance.add_column(col, justify="right" if col != "role" else "left")
        for b in plan.design.balance:
            ok = b.min_per_leaf >= b.lower_bound and b.max_per_leaf <= b.upper_bound
            balance.add_row(
                b.role,
                str(b.min_per_leaf),
                str(b.max_per_leaf),
                f"{b.lower_bound}-{b.upper_bound}",
                "yes" if ok else "[red]no[/]",
            )
        out.print(balance)

    cables = Table(title="cables", title_justify="left")
    for col in ("kind", "DAC", "AOC", "total"):
        cables.add_column(col, justify="right" if col != "kind" else "left")
    counts = Counter((c.kind, c.type) for c in plan.cables)
    for kind in ("node-leaf", "leaf-spine", "inter-zone"):
        dac, aoc = counts.get((kind, "DAC"), 0), counts.get((kind, "AOC"), 0)
        cables.add_row(kind, str(dac), str(aoc), str(dac + aoc))
    out.print(cables)
    s = plan.design.solver
    if plan.placement == "rail-optimized":  # no ILP was built: say what placed the nodes, not an empty solver run
        out.print(
            f"placement {plan.placement}: by rule (NIC i of every node of a scalable unit on the unit's rail-i "
            f"leaf), no solver; design took {elapsed:.2f} s"
        )
        return
    out.print(
        f"solver {s.solver}: {s.status}, objective {s.objective:g}, gap {s.gap:.2%}, "
        f"{s.variables} variables, {s.constraints} constraints; design took {elapsed:.2f} s"
    )


def warn_beyond_reach(loaded: LoadedInventory, plan: Plan) -> None:
    """FF156 on stderr for every optical run longer than every medium of the fabric's speed reaches
    (ffplan.plan.optics), located at its first end's rack."""
    from ffplan.diagnostics import Collector
    from ffplan.diagnostics.formats import format_text
    from ffplan.plan.optics import beyond_reach, fabric_speed, longest

    speed = fabric_speed(plan)
    if speed is None:  # a RoCE plan: Ethernet media and their reach are not modelled (yet)
        return
    long_runs = beyond_reach(plan.cables, speed)
    if not long_runs:
        return
    reach = longest(speed)
    rack_of = {s.name: s.rack for s in plan.switches} | {n.hostname: n.rack for n in plan.nodes}
    c = Collector(loaded.source.file, loaded.source.positions)
    for cable in long_runs:
        a, b = rack_of[cable.a.device], rack_of[cable.b.device]
        c.warning(
            CABLE_BEYOND_REACH,
            loaded.resolved.rack_paths.get(a, ("racks",)),
            f"cable {cable.label} ({cable.kind}, {cable.type}) runs {cable.length_m:g} m from rack {a} to rack {b}, "
            f"beyond the {reach.reach_m:g} m a {speed} {reach.name} run reaches ({reach.source})",
            "move the racks closer, or plan longer-reach optics for this run (and say so in the catalog)",
        )
    sys.stderr.write(format_text(c.items))


def print_subnet_managers(plan: Plan, why: str) -> None:
    """Which hosts run the subnet managers, and why them (the master's ports take the top LID block)."""
    roles = ["master"] + ["standby"] * (len(plan.sm_hosts) - 1)
    hosts = ", ".join(f"{host} ({role})" for host, role in zip(plan.sm_hosts, roles))
    out.print(f"subnet managers: {hosts}: {why}")


def print_failed(plan: Plan, excluded: set[str]) -> None:
    """The cables and switches the routes avoid, and which of them only this command line failed."""
    from ffplan.plan.diff import failed_link_text

    failed = plan.routing.failed if plan.routing else []
    if not failed:
        return
    out.print(f"failed links, routed around ({len(failed)}):")
    for item in failed:
        origin = (
            "now failed by --exclude-link; add it to fabric.failed_links to keep it failed in later designs"
            if item in excluded
            else "fabric.failed_links"
        )
        out.print(f"  {failed_link_text(plan, item)} [{origin}]", markup=False)


def print_changes(old: Plan, new: Plan) -> None:
    """How many cables move against the previous plan, and why each one had to."""
    from ffplan.plan.diff import diff_plans

    d = diff_plans(old, new)
    out.print(
        f"against the previous plan: {len(d.cables_moved)} cables move, {len(d.cables_added)} added, "
        f"{len(d.cables_removed)} removed (`ffplan diff` lists them)"
    )
    new_ports = {(n.hostname, p.nic): p for n in new.nodes for p in n.ports}
    zone_down = {z.name: z.down_ports for z in new.zones}
    switches = {s.name for s in new.switches}
    for m in d.cables_moved:
        old_leaf_port, nic = m.old.b.port, m.new.a.port
        if m.old.kind != "node-leaf" or not isinstance(old_leaf_port, int) or not isinstance(nic, str):
            # A switch-to-switch cable: end b is a spine (or another zone's leaf), not a node's leaf port.
            reason = "the switch-to-switch wiring changed"
        elif m.old.b.device not in switches or old_leaf_port > zone_down.get(m.old.zone, 0):
            reason = "its leaf port no longer exists"
        elif m.old.zone != m.new.zone:
            reason = "even split over zones"
        else:
            reason = "role balance per leaf"
        port = new_ports.get((m.new.a.device, nic)) if isinstance(nic, str) else None
        out.print(
            f"  move {m.new.a.device}/{nic}: {m.old.b.device}:{old_leaf_port} -> "
            f"{port.leaf if port else m.new.b.device}:{m.new.b.port} ({reason})"
        )


def register(app: typer.Typer) -> None:
    app.command("design")(design_command)
