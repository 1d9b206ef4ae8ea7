"""The plan reader builds from libyaml's events; it must read every YAML exactly as PyYAML's loader does."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ffplan.plan.io import _DuplicateKey, _PlanLoader, _read_yaml

GOLDEN_PLANS = sorted((Path(__file__).resolve().parents[1] / "golden" / "expected").glob("*/plan.yaml"))

CASES = [
    "", "a: 1", "a: &x [1, 2]\nb: *x", "a: &x {k: 1}\nb:\n  <<: *x\n  c: 2", "a: !!str 12", "a: !!int '12'",
    "a: '12'\nb: 12\nc: 1.5\nd: null\ne: ~\nf: true\ng: 2024-01-01\nh: 0x1f\ni: ''\nj: .inf\nk: '0x0002c90003000000'",
    "- a\n- b: [1, {c: d}]", "a: 1\n---\nb: 2", "? [1]\n: 2", "a: *y", "a: !!int abc", "&r x", "a: 1\na: 2",
    "x: {a: 1, a: 2}", "!!map {a: 1}", "a: !foo x", "ports: '1 2 3 0 255'\nlid: 0x10", "a: [1, 1, 1]\nb: [yes, no, on]",
]


def _outcome(read, text: str) -> tuple:
    try:
        return ("value", read(text))
    except _DuplicateKey:
        return ("duplicate key",)
    except (yaml.YAMLError, ValueError) as exc:
        return ("error", type(exc).__name__)


@pytest.mark.parametrize("text", CASES)
def test_reads_as_pyyaml_does(text: str) -> None:
    assert _outcome(_read_yaml, text) == _outcome(lambda t: yaml.load(t, Loader=_PlanLoader), text)


@pytest.mark.parametrize("plan", GOLDEN_PLANS, ids=lambda p: p.parent.name)
def test_reads_a_designed_plan_as_pyyaml_does(plan: Path) -> None:
    text = plan.read_text()
    assert _read_yaml(text) == yaml.load(text, Loader=_PlanLoader)
