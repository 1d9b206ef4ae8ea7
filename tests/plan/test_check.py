"""The plan's cross-reference check (ffplan.plan.check): its screen of the cable ends, a field at a time over all
cables, passes exactly the cables its loop finds nothing wrong with."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ffplan.plan import load_plan
from ffplan.plan.check import (
    _addresses_right,
    _cable_ends_right,
    _check_cable_ends,
    _check_node_fields,
    _claim_addresses,
    _nodes_right,
    _Problems,
    _subnet_of,
    plan_problems,
)
from ffplan.plan.model import Cable, Plan

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "expected"
# inter-zone and node-leaf cables (lab), spine-core cables (three-layer-8)
PLANS = {name: load_plan(GOLDEN / name / "plan.yaml") for name in ("lab", "three-layer-8")}
FIELDS = ("a.device", "a.port", "b.device", "b.port", "zone", "kind")


def _with(cable: Cable, field: str, donor: Cable) -> Cable:
    """`cable` with one field taken from `donor`: names and ports that exist, in the wrong place."""
    if "." not in field:
        return cable.model_copy(update={field: getattr(donor, field)})
    side, name = field.split(".")
    end = getattr(cable, side).model_copy(update={name: getattr(getattr(donor, side), name)})
    return cable.model_copy(update={side: end})


def _screen_and_loop(plan: Plan, cables: list[Cable]) -> tuple[bool, list]:
    zones = {z.name for z in plan.zones}
    switches = {s.name: s for s in plan.switches}
    nics = {n.hostname: {pt.nic for pt in n.ports} for n in plan.nodes}
    problems = _Problems()
    _check_cable_ends(problems, cables, zones, switches, nics)
    return _cable_ends_right(cables, zones, switches, nics), list(problems)


@pytest.mark.parametrize("name", PLANS)
def test_the_screen_passes_a_designed_plan(name: str) -> None:
    plan = PLANS[name]
    assert _screen_and_loop(plan, plan.cables) == (True, [])


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(sorted(PLANS)),
    st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(FIELDS), st.integers(0, 10**6)), min_size=1, max_size=3),
)
def test_the_screen_passes_what_the_loop_passes(name: str, edits: list) -> None:
    plan = PLANS[name]
    cables = list(plan.cables)
    for at, field, donor in edits:
        cables[at % len(cables)] = _with(cables[at % len(cables)], field, cables[donor % len(cables)])
    right, problems = _screen_and_loop(plan, cables)
    assert right == (not problems), problems


@pytest.mark.parametrize(
    ("section", "field", "what"),
    [("cables", "label", "cable label"), ("nodes", "hostname", "hostname"), ("switches", "name", "switch")],
)
def test_a_name_given_twice_is_reported_at_its_second_place(section: str, field: str, what: str) -> None:
    """The names of a list are compared as a set; a duplicate is then located where it repeats."""
    plan = PLANS["lab"]
    items = list(getattr(plan, section))
    name = getattr(items[1], field)
    items[3] = items[3].model_copy(update={field: name})
    problems = plan_problems(plan.model_copy(update={section: items}))
    assert ((section, 3, field), f"duplicate {what} '{name}'") in problems
    assert not any(path[:2] == (section, 1) and message.startswith("duplicate") for path, message in problems)


NODE_FIELDS = ("hostname", "model")
PORT_FIELDS = ("nic", "port", "nic_model", "zone", "leaf", "leaf_port", "cable", "lid", "node_guid", "port_guid")
PORT_FIELDS += ("sysimg_guid",)


def _with_port_field(plan: Plan, at: int, field: str, donor: int, value: object) -> Plan:
    """`plan` with one field of its `at`th port (or of that port's node) taken from its `donor`th port, or `value`
    where it has the field's type."""
    where = [(i, j) for i, n in enumerate(plan.nodes) for j in range(len(n.ports))]
    (i, j), (di, dj) = where[at % len(where)], where[donor % len(where)]
    nodes = list(plan.nodes)
    item, donor_item = (nodes[i], nodes[di]) if field in NODE_FIELDS else (nodes[i].ports[j], nodes[di].ports[dj])
    if type(value) is not type(getattr(item, field)):
        value = getattr(donor_item, field)
    if field in NODE_FIELDS:
        nodes[i] = item.model_copy(update={field: value})
    else:
        ports = list(nodes[i].ports)
        ports[j] = item.model_copy(update={field: value})
        nodes[i] = nodes[i].model_copy(update={"ports": ports})
    return plan.model_copy(update={"nodes": nodes})


def _node_screen_and_loop(plan: Plan) -> tuple[bool, list]:
    zones = {z.name for z in plan.zones}
    switches = {s.name: s for s in plan.switches}
    names = ({m.name for m in plan.node_models}, {m.name for m in plan.nic_models}, {c.label for c in plan.cables})
    problems = _Problems()
    _check_node_fields(problems, plan, zones, switches, *names)
    return _nodes_right(plan, zones, switches, *names), list(problems)


def _address_screen_and_loop(plan: Plan) -> tuple[bool, list]:
    problems = _Problems()
    _claim_addresses(problems, plan, _subnet_of(plan))
    return _addresses_right(plan, _subnet_of(plan)), list(problems)


# values from elsewhere in the plan: a switch's name as a hostname, a leaf of another zone, a reserved GUID
ODD_VALUES = st.sampled_from([None, None, None, "za-spine01", "z1-spine01", "zb-leaf02", "0x" + "0" * 16, 1, 99, 64])


@pytest.mark.parametrize("name", PLANS)
def test_the_node_and_address_screens_pass_a_designed_plan(name: str) -> None:
    plan = PLANS[name]
    assert _node_screen_and_loop(plan) == (True, [])
    assert _address_screen_and_loop(plan) == (True, [])


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(sorted(PLANS)),
    st.lists(
        st.tuples(st.integers(0, 10**6), st.sampled_from(NODE_FIELDS + PORT_FIELDS), st.integers(0, 10**6), ODD_VALUES),
        min_size=1,
        max_size=3,
    ),
)
def test_the_node_and_address_screens_pass_what_their_loops_pass(name: str, edits: list) -> None:
    """The screens decide on sets over all ports what the loops find port by port: a name, port, LID or GUID moved
    to another port (or another value) is found by both, or by neither."""
    plan = PLANS[name]
    for at, field, donor, value in edits:
        plan = _with_port_field(plan, at, field, donor, value)
    right, problems = _node_screen_and_loop(plan)
    assert right == (not problems), problems
    right, problems = _address_screen_and_loop(plan)
    assert right == (not problems), problems
