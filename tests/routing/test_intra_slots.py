"""intra_slots against its straightforward definition (each CA port takes, of its leaf's slots left, the one its role
and then all roles have used least, ties to the first from the leaf's start), on random zones: sparse, full and
oversubscribed leaves, mixed roles."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from ffplan.design.routing.common import ROLE_ORDER, intra_slots

ROLES = ["compute", "storage", "management", "other"]


def _straightforward(t, zone: str) -> dict[int, int]:
    leaves = t.leaves[zone]
    U = len(t.uplinks[leaves[0]])
    total, per_role, slot, holes_of, P = [0] * U, {}, {}, {}, 0
    for leaf in leaves:
        ports = t.cas[leaf]
        n = len(ports)
        h = (-n) % U
        holes_of[leaf] = {(P + j) % U for j in range(h)}
        start = (P + h) % U
        cap = [0] * U
        for j in range(n):
            cap[(start + j) % U] += 1
        P = start
        by_role: dict[str, list] = {}
        for c in ports:
            by_role.setdefault(c.role, []).append(c)
        for role in sorted(by_role, key=lambda r: (-len(by_role[r]), ROLE_ORDER.get(r, 9), r)):
            counts = per_role.setdefault(role, [0] * U)
            for c in by_role[role]:
                u = min((u for u in range(U) if cap[u] > 0), key=lambda u: (counts[u], total[u], (u - start) % U))
                cap[u] -= 1
                counts[u] += 1
                total[u] += 1
                slot[c.lid] = u
    sw_count = [0] * U
    for i, leaf in enumerate(leaves):
        u = min(range(U), key=lambda u: (u in holes_of[leaf], sw_count[u], (u - i) % U))
        sw_count[u] += 1
        slot[t.lid[leaf]] = u
    return slot


def _zone(rng: np.random.Generator) -> SimpleNamespace:
    U = int(rng.integers(1, 9))
    leaves = [f"leaf{i}" for i in range(int(rng.integers(1, 12)))]
    lid, cas = {}, {}
    for leaf in leaves:
        lid[leaf] = len(lid) + 1000
        roles = rng.choice(ROLES, size=int(rng.integers(0, U + 4)), p=[0.6, 0.2, 0.15, 0.05])
        cas[leaf] = [SimpleNamespace(lid=len(lid) * 100 + j, role=str(r)) for j, r in enumerate(roles)]
    return SimpleNamespace(leaves={"z": leaves}, uplinks={leaf: [None] * U for leaf in leaves}, cas=cas, lid=lid)


@pytest.mark.parametrize("seed", range(40))
def test_intra_slots_equal_the_straightforward_definition(seed):
    t = _zone(np.random.default_rng(seed))
    assert intra_slots(t, "z").slot == _straightforward(t, "z")
