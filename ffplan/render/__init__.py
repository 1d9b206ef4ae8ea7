"""Render stage: plan -> every file a deployment needs.

Public surface: `render_plan(plan, prefix) -> {relative path: text}`: the OpenSM files (opensm/), the host
profiles (hosts/), the exports (exports/) and the plan they came from (plan.yaml, so `ffplan verify OUT`
and later diffs have it at hand). Pure and deterministic: identical plans give byte-identical
files, with no timestamps. Writing them (atomically, with a manifest) is `ffplan.outdir.write_folder`'s job;
`render_plan_chunked` gives it the LFT files as chunks made while they are written (0.88 GB for one
16,384-endpoint subnet).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Mapping, TypeVar

from ffplan.progress import StageCallback, no_progress
from ffplan.opensm.layout import DEFAULT_PREFIX

if TYPE_CHECKING:
    from ffplan.opensm.files import LftChunks
    from ffplan.plan.model import Plan

__all__ = ["render_plan", "render_plan_chunked", "DEFAULT_PREFIX"]

Body = TypeVar("Body", str, "str | LftChunks")


def render_plan(plan: Plan, prefix: str = DEFAULT_PREFIX, on_stage: StageCallback = no_progress) -> dict[str, str]:
    """Relative path under the output folder -> file text, sorted by path; `on_stage` is told each of
    RENDER_STAGES as it starts."""
    from ffplan.render.opensm import render_opensm

    return _render(plan, lambda: render_opensm(plan, prefix), on_stage)


def render_plan_chunked(
    plan: Plan, prefix: str = DEFAULT_PREFIX, on_stage: StageCallback = no_progress, plan_text: str | None = None
) -> dict[str, str | LftChunks]:
    """render_plan, each LFT file an iterator of its bytes' pieces, made as `ffplan.outdir.write_folder` writes it
    (so the "OpenSM files" stage leaves the LFT files' work to the writing). `plan_text`: the file `plan` was read
    and validated from (`ffplan.plan.read_plan`), written as plan.yaml as it is instead of writing the plan again
    (29 MB for a 16k-GPU RoCE plan: 5 s)."""
    from ffplan.render.opensm import render_opensm_chunked

    return _render(plan, lambda: render_opensm_chunked(plan, prefix), on_stage, plan_text)


def _render(
    plan: Plan, opensm: Callable[[], Mapping[str, Body]], on_stage: StageCallback, plan_text: str | None = None
) -> dict[str, Body]:
    # Imported here: the CLI imports this package for DEFAULT_PREFIX, and `ffplan lint` need not load jinja2.
    from ffplan.plan import dump_plan
    from ffplan.render.exports import render_exports
    from ffplan.render.hosts import render_hosts

    files: dict[str, Body] = {"plan.yaml": dump_plan(plan) if plan_text is None else plan_text}
    parts: tuple[tuple[str, Callable[[], Mapping[str, Body]]], ...] = (
        ("OpenSM files", opensm),
        ("host profiles", lambda: render_hosts(plan)),
        ("exports", lambda: render_exports(plan)),
    )
    if plan.ethernet is not None:  # RoCE: SONiC and FRR per switch instead of OpenSM and the InfiniBand host files
        from ffplan.ethernet.sonic import render_switches

        parts = (("SONiC and FRR files", lambda: render_switches(plan)), ("exports", lambda: render_exports(plan)))
    for stage, render_part in parts:
        on_stage(stage)
        for path, text in render_part().items():
            if path in files:
                raise ValueError(f"two renderers produce {path}")
            files[path] = text
    return dict(sorted(files.items()))
