"""`ffplan diff` is complete (issue 26 item 6): in 47 of 358 mutated plans it said "no differences" while the rendered
files differed (switch port and system image GUIDs, CA system image GUIDs, a NIC model reference, the order of
nccl.conf lines, of lfts.dump and of the NetBox rows). Every change of a plan's data, every reordered list, shows."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "security"))
from tampering import lab_data  # noqa: E402

from ffplan.plan.diff import diff_plans, format_text  # noqa: E402
from ffplan.plan.model import Plan  # noqa: E402

BASE = lab_data()
PLAN = Plan.model_validate(BASE)


def _leaves(node, path=()):
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else None
    if items is None:
        yield path, node
        return
    for key, value in items:
        yield from _leaves(value, path + (key,))


def _lists(node, path=()):
    if isinstance(node, list) and len(node) >= 2 and node[0] != node[1]:
        yield path
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, value in items:
        yield from _lists(value, path + (key,))


def _changed(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1 if value < 255 else value - 1
    if isinstance(value, float):
        return value + 0.5
    if isinstance(value, str):
        if value.startswith("0x") and len(value) == 18:  # a GUID
            return value[:-1] + ("1" if value[-1] != "1" else "2")
        if value and value[-1].isdigit():  # a port list of an LFT: its last entry
            return value[:-1] + ("1" if value[-1] != "1" else "2")
        return value + "x" if value else "x"
    return None


def _at(data, path):
    for key in path[:-1]:
        data = data[key]
    return data


def _plan(data) -> Plan | None:
    try:
        return Plan.model_validate(data)
    except ValidationError:
        return None  # a value the schema refuses: load would too


def _first_of_each_field(paths):
    """One path per field of the model (list positions left out): nodes[0].ports[0].lid stands for every port's."""
    seen: dict[tuple, tuple] = {}
    for path in paths:
        seen.setdefault(tuple("*" if isinstance(k, int) else k for k in path), path)
    return list(seen.values())


LEAVES = _first_of_each_field(p for p, v in _leaves(BASE) if _changed(v) is not None)
REORDERABLE = _first_of_each_field(_lists(BASE))


@pytest.mark.parametrize("path", LEAVES, ids=lambda p: ".".join(map(str, p)))
def test_every_changed_field_is_a_difference(path):
    data = copy.deepcopy(BASE)
    parent = _at(data, path)
    parent[path[-1]] = _changed(parent[path[-1]])
    new = _plan(data)
    if new is None or new == PLAN:
        pytest.skip("the schema refuses the changed value, or it reads back the same")
    assert format_text(diff_plans(PLAN, new)) != "no differences\n", path


@pytest.mark.parametrize("path", REORDERABLE, ids=lambda p: ".".join(map(str, p)) or "<root>")
def test_every_reordered_list_is_a_difference(path):
    data = copy.deepcopy(BASE)
    items = _at(data, path + (0,)) if path else data
    items[0], items[1] = items[1], items[0]
    new = _plan(data)
    if new is None or new == PLAN:
        pytest.skip("not a list the schema keeps in order")
    assert format_text(diff_plans(PLAN, new)) != "no differences\n", path


@pytest.mark.parametrize(
    "path, expected",
    [
        (("switches", 0, "port_guid"), "za-spine01: port_guid"),
        (("switches", 0, "sysimg_guid"), "za-spine01: sysimg_guid"),
        (("nodes", 0, "ports", 0, "sysimg_guid"), "gpu01/mlx5_0: sysimg_guid"),
        (("nodes", 0, "ports", 0, "nic_model"), "gpu01/mlx5_0: nic_model"),
    ],
)
def test_the_fields_the_issue_found_are_named(path, expected):
    data = copy.deepcopy(BASE)
    parent = _at(data, path)
    parent[path[-1]] = "0x0002c90101000099" if "guid" in path[-1] else "CX7"
    assert expected in format_text(diff_plans(PLAN, Plan.model_validate(data)))


def test_reordered_nccl_settings_are_named():
    data = copy.deepcopy(BASE)
    nccl = data["hosts"][0]["nccl"]
    nccl[0], nccl[1] = nccl[1], nccl[0]
    text = format_text(diff_plans(PLAN, Plan.model_validate(data)))
    assert f"hosts[{data['hosts'][0]['name']}].nccl.order: #1 {nccl[1]['name']} -> #1 {nccl[0]['name']}" in text, text
