"""What verify checks: the plan and the OpenSM files, from a rendered folder or rendered from the plan."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ffplan.plan.io import load_plan
from ffplan.plan.model import Plan
from ffplan.plan.subnets import subnet_view
from ffplan.opensm import layout as L
from ffplan.opensm import Subnet, build_fabric
from ffplan.opensm.files import opensm_files
from ffplan.verify.report import VerifyInputError


@dataclass
class Inputs:
    plan: Plan
    files: dict[str, str]  # opensm file name -> text (what OpenSM will read)
    source: str
    fab: Subnet
    instance: L.SmInstance | None = None  # one subnet of several: the OpenSM instance its opensm.conf sets up


def _find_plan(folder: Path, explicit: Path | None) -> Path | None:
    if explicit:
        return explicit / "plan.yaml" if explicit.is_dir() else explicit
    for cand in (folder / "plan.yaml", folder.parent / "plan.yaml", folder / "plan" / "plan.yaml"):
        if cand.is_file():
            return cand
    return None


def plan_file_of(target: Path, plan_path: Path | None) -> Path:
    """The plan verify compares with: --plan, else plan.yaml in or next to the folder, else the target itself."""
    target = Path(target)
    if not target.exists():
        raise VerifyInputError(f"{target} does not exist")
    plan_file = _find_plan(target, plan_path)
    if plan_file is None and target.is_dir():
        raise VerifyInputError(
            f"no plan.yaml in or next to {target}: verify compares what OpenSM installs with the plan; "
            f"pass --plan with the plan (or the folder `ffplan design` wrote)"
        )
    return plan_file or target


def load_inputs(
    target: Path, plan_path: Path | None, view: L.View, subnet: str | None = None, whole_plan: Plan | None = None
) -> Inputs:
    """The inputs of one subnet: `subnet` (with `whole_plan`, loaded once for all of them) when the plan has
    several, whose files are under opensm/<subnet>/; None for a single-subnet plan."""
    target = Path(target)
    plan_file = plan_file_of(target, plan_path)
    plan = whole_plan if whole_plan is not None else load_plan(plan_file)
    folder = L.subnet_folders(plan.subnets)[subnet] if subnet else ""
    if subnet:
        plan = subnet_view(plan, subnet)
    rendered: Path | None = None
    if target.is_dir():
        for cand in (target / "opensm" / folder, target / folder):
            if (cand / L.CONF).is_file():
                rendered = cand
                break
    if plan.routing is not None and plan.routing.failed:
        # Cables the plan routes around are simulated as broken: the tables must not need them.
        labels = {c.label for c in plan.cables}
        view = L.View(zone=view.zone, drop_cables=view.drop_cables | {x for x in plan.routing.failed if x in labels})
    prefix = f"{L.DEFAULT_PREFIX}/{folder}" if folder else L.DEFAULT_PREFIX
    generated = opensm_files(plan, prefix, view, subnet=subnet)
    fab = build_fabric(plan, view)
    instance = fab.sm_instance(subnet) if subnet else None
    if rendered is None:
        return Inputs(plan, generated, f"plan {plan_file} (rendered to a temporary folder)", fab, instance)
    files = dict(generated)
    whole = view == L.View()
    for name in generated:
        path = rendered / name
        # A sub-fabric's topology, LFTs, LIDs and GUID lists are cut from the plan; the rest comes from the folder.
        if path.is_file() and (whole or name in (L.CONF, L.FTREE_CONF, L.QOS_POLICY, L.PARTITIONS)):
            files[name] = path.read_text()
        elif whole and not path.is_file():
            files.pop(name, None)
    return Inputs(plan, files, f"rendered folder {rendered} (plan {plan_file})", fab, instance)
