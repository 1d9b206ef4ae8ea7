"""Plans for the render tests: the OpenSM tests' (tests/opensm/planfix.py), designed from the shipped inventories
once per session."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _planfix():
    spec = importlib.util.spec_from_file_location("ffplan_tests_planfix", ROOT / "tests" / "opensm" / "planfix.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_PLANFIX = _planfix()
design_file = _PLANFIX.design_file
designed = _PLANFIX.designed
