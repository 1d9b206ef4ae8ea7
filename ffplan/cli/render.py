"""`ffplan render PLAN -o OUT`: every file a deployment needs, written atomically with a manifest."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from ffplan.cli.common import kept_until_exit, plan_file, out, stage_errors, stage_progress
from ffplan.progress import RENDER_STAGES, RENDER_WRITING, ROCE_RENDER_STAGES
from ffplan.opensm.layout import DEFAULT_PREFIX


def render_command(
    plan: Path = typer.Argument(..., help="plan.yaml, or the folder `ffplan design` wrote it to."),
    output: Path = typer.Option(
        Path("out/render"), "-o", "--output", metavar="OUT", help="Folder for opensm/, hosts/ and exports/."
    ),
    prefix: str = typer.Option(
        DEFAULT_PREFIX, "--prefix", help="Where the OpenSM files will live on the SM host (paths inside opensm.conf)."
    ),
    force: bool = typer.Option(False, "--force", help="Replace an output folder that ffplan did not write."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Print nothing but errors."),
) -> None:
    """Render the OpenSM configuration, the host profiles (NCCL topology, nccl.conf, SLs, relaxed ordering,
    host check) and the exports (Slurm topology.conf, Ansible inventory, cables, BOM, SVG per zone) of PLAN.

    The folder is replaced all at once and carries manifest.json with a checksum per file; identical plans
    give byte-identical files.

    Example: ffplan render out/fire-flyer-2/plan -o out/fire-flyer-2/files --prefix /etc/opensm
    """
    from ffplan.outdir import write_folder
    from ffplan.plan import read_plan
    from ffplan.render import render_plan_chunked

    with stage_errors():
        started = time.perf_counter()
        with kept_until_exit():
            loaded, text = read_plan(plan_file(plan), needs=("routing", "qos", "hosts"))
        stages = ROCE_RENDER_STAGES if loaded.ethernet is not None else RENDER_STAGES
        with stage_progress(f"rendering {loaded.inventory.name}", stages + (RENDER_WRITING,), quiet) as on_stage:
            files = render_plan_chunked(loaded, prefix, on_stage, plan_text=text)
            on_stage(RENDER_WRITING)
            write_folder(output, files, kind="render", force=force, inputs=[plan])
        elapsed = time.perf_counter() - started
    if not quiet:
        tops: dict[str, int] = {}
        for name in files:
            top = name.split("/", 1)[0] if "/" in name else "."
            tops[top] = tops.get(top, 0) + 1
        summary = ", ".join(f"{top}/ {n}" for top, n in sorted(tops.items()))
        out.print(f"wrote {output}: {len(files)} files ({summary}) and manifest.json in {elapsed:.2f} s")


def register(app: typer.Typer) -> None:
    app.command("render")(render_command)
