"""The OpenSM files in the output folder: one subnet's files in opensm/, several subnets' in opensm/<subnet>/ each
(one OpenSM per subnet) with a README saying which SM host runs which. The files' text is `ffplan.opensm.files`.
"""

from __future__ import annotations

from typing import Callable

from ffplan.opensm.files import LftBody, LftChunks, check_prefix, lfts_chunks, lfts_text, require_complete, subnet_files
from ffplan.opensm.layout import CONF, DEFAULT_PREFIX, GUID2LID, README, subnet_folders
from ffplan.opensm.subnet import Subnet, build_fabric
from ffplan.plan.model import Plan
from ffplan.plan.subnets import subnet_views
from ffplan.templating import render_template


def render_opensm(plan: Plan, prefix: str = DEFAULT_PREFIX) -> dict[str, str]:
    """Relative path under the output folder (`opensm/...`) -> file text: one subnet's files in opensm/, several
    subnets' in opensm/<subnet>/ each (one OpenSM per subnet) with a README saying which SM host runs which."""
    return _render_opensm(plan, prefix, lfts_text)


def render_opensm_chunked(plan: Plan, prefix: str = DEFAULT_PREFIX) -> dict[str, str | LftChunks]:
    """render_opensm with each LFT file as lfts_chunks, made while it is written (`ffplan.outdir.write_folder`)."""
    return _render_opensm(plan, prefix, lfts_chunks)


def _render_opensm(plan: Plan, prefix: str, lfts: Callable[[Subnet], LftBody]) -> dict[str, str | LftBody]:
    prefix = check_prefix(prefix)
    folders = subnet_folders(plan.subnets)
    require_complete(plan)
    if len(folders) == 1:
        one = subnet_files(build_fabric(plan), prefix, ("file", "ftree"), None, lfts)
        return {f"opensm/{name}": text for name, text in sorted(one.items())}
    files: dict[str, str | LftBody] = {}
    instances = []
    for subnet, view in subnet_views(plan):
        where = f"{prefix.rstrip('/')}/{folders[subnet]}"
        fab = build_fabric(view)
        for name, text in subnet_files(fab, where, ("file", "ftree"), subnet, lfts).items():
            files[f"opensm/{folders[subnet]}/{name}"] = text
        instances.append(
            {
                "instance": fab.sm_instance(subnet),
                "prefix": where,
                "standby": [{"port": ca.id, "port_guid": ca.ports[0].port_guid} for ca in fab.standby_sm_cas()],
            }
        )
    files[f"opensm/{README}"] = render_template(
        "opensm/README.md.j2", title=plan.inventory.name, subnets=instances, conf=CONF, guid2lid=GUID2LID
    )
    return dict(sorted(files.items()))
