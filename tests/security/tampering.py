"""A designed lab plan as plain data, and a way to write a tampered copy of it (shared by the security tests)."""

from __future__ import annotations

import copy
from functools import lru_cache
from pathlib import Path

import yaml

from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.plan import dump_plan

ROOT = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=1)
def _lab_text() -> str:
    return dump_plan(design(load_inventory(ROOT / "inventories" / "lab.yaml")))


def lab_data() -> dict:
    """A fresh, mutable copy of the lab plan's data."""
    return copy.deepcopy(_lab_data())


@lru_cache(maxsize=1)
def _lab_data() -> dict:
    return yaml.safe_load(_lab_text())


def write_plan_data(folder: Path, data: dict) -> Path:
    """Write `data` as a design folder (plan.yaml) and return the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plan.yaml").write_text(yaml.safe_dump(data, sort_keys=False, width=1 << 16), encoding="utf-8")
    return folder
