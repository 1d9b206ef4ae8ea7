"""What a traffic class carries is decided once, by the designer, from the inventory (or ffplan's stated
defaults), recorded in the plan, and read from there by the OpenSM QoS policy and the host files: never
guessed from a class's name."""

from __future__ import annotations

import re

import pytest

from ffplan.design import design
from ffplan.diagnostics import InputError, StageError
from ffplan.inventory import load_inventory
from ffplan.lint import lint_file
from ffplan.opensm import build_fabric, expected_path_sls
from ffplan.opensm.files import qos_policy_model
from ffplan.render.opensm import render_opensm


def designed_with(tmp_path, root, classes: str):
    """The lab inventory with these `traffic_classes` lines appended, designed (lint is not asked)."""
    path = tmp_path / "lab.yaml"
    path.write_text((root / "inventories" / "lab.yaml").read_text() + "traffic_classes:\n" + classes)
    return path, design(load_inventory(path))


def _rules(plan) -> list[tuple[str, list]]:
    return [(r["level"], r["match"]) for r in qos_policy_model(build_fabric(plan))["rules"]]


def _host_sl(plan, software: str) -> tuple[str, int]:
    setting = next(s for p in plan.hosts for s in p.sls if s.software == software)
    return setting.traffic_class, setting.sl


def test_offset_sync_is_not_storage(tmp_path, root):
    path, plan = designed_with(tmp_path, root, "  - {name: other}\n  - {name: nccl}\n  - {name: offset-sync, sl: 3}\n")
    rules = _rules(plan)
    # offset-sync serves only applications that ask for its QoS class; no traffic is sent to it by role
    assert [level for level, match in rules if match[0][0] != "qos-class"] == []
    assert ("offset-sync", [("qos-class", "3")]) in rules
    assert _host_sl(plan, "3FS client") == ("other", 0)  # 3FS falls to the class of unmatched traffic
    assert "no class of the plan carries 3FS client" in next(
        s.comment for p in plan.hosts for s in p.sls if s.software == "3FS client"
    )
    policy = render_opensm(plan)["opensm/qos-policy.conf"]
    assert not re.search(r"(source|destination): storage-", policy)
    assert {d.rule for d in lint_file(path).diagnostics} == {"FF405"}


def test_a_class_with_any_name_carries_what_it_says(tmp_path, root):
    _, plan = designed_with(
        tmp_path,
        root,
        "  - {name: other}\n  - {name: bulk, sl: 5, carries: {software: [3fs], roles: [[storage, compute]]}}\n",
    )
    rules = [(level, dict(match)) for level, match in _rules(plan) if match[0][0] != "qos-class"]
    assert rules == [
        ("bulk", {"source": "compute-za, compute-zb", "destination": "storage-za, storage-zb"}),
        ("bulk", {"source": "storage-za, storage-zb", "destination": "compute-za, compute-zb"}),
    ]
    assert _host_sl(plan, "3FS storage server") == ("bulk", 5)
    probes = {p["what"]: p["sl"] for p in expected_path_sls(build_fabric(plan))}
    assert probes["compute -> storage (bulk)"] == probes["storage -> compute (bulk)"] == 5
    assert probes["storage -> management (DEFAULT: other)"] == 0


def test_the_plan_records_the_defaults(tmp_path, root):
    _, plan = designed_with(tmp_path, root, "  - {name: storage, description: 3FS}\n")
    (storage,) = plan.qos.classes
    assert storage.source == "ffplan default" and storage.carries.software == ["3fs"]
    assert sorted(tuple(r.value for r in pair) for pair in storage.carries.roles) == [
        ("compute", "storage"),
        ("management", "storage"),
        ("storage", "storage"),
    ]


def test_two_classes_claiming_one_software_are_refused_by_the_designer(tmp_path, root):
    with pytest.raises(StageError) as exc:
        designed_with(tmp_path, root, "  - {name: nccl}\n  - {name: collectives, sl: 5, carries: {software: [nccl]}}\n")
    (d,) = exc.value.diagnostics
    assert d.rule == "FF603" and d.yaml_path == "traffic_classes[1].carries.software"
    assert "'collectives' claims software 'nccl', which class 'nccl' already carries" in d.message


def test_a_plan_without_purposes_is_not_rendered(tmp_path, root):
    _, plan = designed_with(tmp_path, root, "  - {name: other}\n")
    qos = plan.qos.model_copy(update={"classes": [c.model_copy(update={"carries": None}) for c in plan.qos.classes]})
    with pytest.raises(InputError) as exc:
        render_opensm(plan.model_copy(update={"qos": qos}))
    assert "does not say what traffic classes other carry" in exc.value.diagnostics[0].message
