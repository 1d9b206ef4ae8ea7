"""What verify checks: the plan and the OpenSM files, from a rendered folder or rendered from the plan."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ffplan.plan.io import load_plan
from ffplan.plan.model import Plan
from ffplan.render import opensm_layout as L
from ffplan.render.opensm import Subnet, build_fabric, opensm_files
from ffplan.verify.report import VerifyInputError


@dataclass
class Inputs:
    plan: Plan
    files: dict[str, str]  # opensm file name -> text (what OpenSM will read)
    source: str
    fab: Subnet


def _find_plan(folder: Path, explicit: Path | None) -> Path | None:
    if explicit:
        return explicit / "plan.yaml" if explicit.is_dir() else explicit
    for cand in (folder / "plan.yaml", folder.parent / "plan.yaml", folder / "plan" / "plan.yaml"):
        if cand.is_file():
            return cand
    return None


def load_inputs(target: Path, plan_path: Path | None, view: L.View) -> Inputs:
    target = Path(target)
    if not target.exists():
        raise VerifyInputError(f"{target} does not exist")
    rendered: Path | None = None
    if target.is_dir():
        for cand in (target / "opensm", target):
            if (cand / L.CONF).is_file():
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
        view = L.View(zone=view.zone, drop_cables=view.drop_cables | {x for x in plan.routing.failed if x in labels})
    generated = opensm_files(plan, L.DEFAULT_PREFIX, view)
    fab = build_fabric(plan, view)
    if rendered is None:
        return Inputs(plan, generated, f"plan {plan_file} (rendered to a temporary folder)", fab)
    files = dict(generated)
    whole = view == L.View()
    for name in generated:
        path = rendered / name
        # A sub-fabric's topology, LFTs, LIDs and GUID lists are cut from the plan; the rest comes from the folder.
        if path.is_file() and (whole or name in (L.CONF, L.FTREE_CONF, L.QOS_POLICY, L.PARTITIONS)):
            files[name] = path.read_text()
        elif whole and not path.is_file():
            files.pop(name, None)
    return Inputs(plan, files, f"rendered folder {rendered} (plan {plan_file})", fab)
