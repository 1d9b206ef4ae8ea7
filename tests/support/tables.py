"""The LFTs OpenSM installed against the plan's, entry by entry on dicts: the reference verify's array
comparison (ffplan.verify.arrays) is tested against."""

from __future__ import annotations

from ffplan.opensm import Subnet
from ffplan.opensm import layout as L
from ffplan.verify.expect import lid_name


def compare_tables(
    fab: Subnet, expected: dict[str, dict[int, int]], got: dict[str, dict[int, int]], what: str
) -> tuple[int, list[str]]:
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
            items.append(
                f"{names[sw]}: EMPTY table in {what} ({len(exp)} planned entries; is its block missing from {L.LFTS}?)"
            )
            continue
        for lid in sorted(set(exp) | set(have)):
            e, h = exp.get(lid), have.get(lid)
            if e != h:
                diffs += 1
                if len(items) < 12:
                    items.append(
                        f"{names[sw]} {lid_name(fab, lid)}: plan port {e if e is not None else '-'}, "
                        f"{what} port {h if h is not None else '-'}"
                    )
    for sw in got:
        if sw not in expected:
            items.append(f"switch {sw} in {what} is not in the plan")
            diffs += 1
    return diffs, items
