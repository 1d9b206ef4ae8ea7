"""Diagrams of 144-port switches: port numbers above a rack no longer overlap (every 5th number in 3 px cells ran
into each other), and every leaf rack's bundle of uplinks carries its count (rows below the first had none)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ffplan.render.diagrams import render_diagrams
from tests.support.plans import design_file

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def b300_svgs():
    return render_diagrams(design_file(ROOT / "inventories" / "dgx-superpod-b300.yaml"))


def _texts(svg: str) -> list[tuple[float, str]]:
    return [(float(x), t) for x, t in re.findall(r'<text x="([\d.]+)"[^>]*>([^<]*)</text>', svg)]


def test_port_numbers_do_not_overlap(b300_svgs):
    svg = next(text for name, text in b300_svgs.items() if "elevation" in name)
    numbers = [(x, t) for x, t in _texts(svg) if t.isdigit() and 1 <= int(t) <= 144 and 'size="9"' in svg]
    row = [x for x, t in numbers[:15]]
    assert [t for _, t in numbers[:15]] == [str(p) for p in range(1, 145, 10)]
    assert min(b - a for a, b in zip(row, row[1:])) >= 3 * 5.5 + 4  # three 9 px digits and a gap


def test_every_leaf_rack_bundle_is_labelled(b300_svgs):
    svg = next(text for name, text in b300_svgs.items() if "diagram" in name)
    assert len(re.findall(r">576 links<", svg)) == 8  # the 8 leaf racks, 8 leaves x 72 uplinks each
