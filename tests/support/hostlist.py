"""Reading back the hostlist expressions the exports write."""

from __future__ import annotations

import re


def expand_hostlist(expr: str) -> list[str]:
    """The inverse of ffplan.render.exports.hostlist (to read what Slurm files say): `cn[01-03],x` -> names."""
    names: list[str] = []
    for m in re.finditer(r"([^,\[]+)(?:\[([^\]]+)\])?(?:,|$)", expr):
        prefix, body = m.group(1), m.group(2)
        if body is None:
            names.append(prefix)
            continue
        for part in body.split(","):
            lo, _, hi = part.partition("-")
            hi = hi or lo
            width = len(lo)
            for n in range(int(lo), int(hi) + 1):
                names.append(f"{prefix}{n:0{width}d}")
    return names
