"""One grammar for failed items: `za-leaf01[01]` was loaded by the plan, refused by reroute's CLI, and taken as port 1
by the router (27 CA pairs black-holed by OpenSM). Now every stage refuses it, with the same reason."""

import pytest

from ffplan.design.routing import route
from ffplan.diagnostics import InputError, StageError
from ffplan.inventory.failed_items import PortRef, parse_item
from ffplan.plan.io import dump_plan, load_plan
from ffplan.plan.topology import build_topology, resolve_failed
from ffplan.reroute import resolve_items


@pytest.mark.parametrize(
    "text, parsed",
    [
        ("za-leaf01[1]", PortRef("za-leaf01", 1)),
        ("za-leaf01[255]", PortRef("za-leaf01", 255)),
        ("za-spine02", "za-spine02"),
        ("za-leaf01-p21", "za-leaf01-p21"),
        ("za-leaf01[01]", None),
        ("za-leaf01[0]", None),
        ("za-leaf01[256]", None),
        ("za-leaf01[]", None),
        ("za leaf01", None),
        ("[1]", None),
    ],
)
def test_one_grammar(text, parsed):
    assert parse_item(text) == parsed


def test_leading_zero_port_is_unknown_to_the_router(lab_routed):
    topo = build_topology(lab_routed)
    assert resolve_failed(topo, ["za-leaf01[01]", "za-leaf01[1]"])[2] == [0]
    with pytest.raises(StageError) as exc:
        route(lab_routed, ["za-leaf01[01]"])
    assert [d.rule for d in exc.value.diagnostics] == ["FF601"]
    assert "za-leaf01[01]" in exc.value.diagnostics[0].message
    assert resolve_items(lab_routed, ["za-leaf01[01]"]).unknown == ["za-leaf01[01]"]


def test_leading_zero_port_is_refused_by_plan_load(lab_routed, tmp_path):
    routing = lab_routed.routing.model_copy(update={"failed": ["za-leaf01[01]"]})
    path = tmp_path / "plan.yaml"
    path.write_text(dump_plan(lab_routed.model_copy(update={"routing": routing})))
    with pytest.raises(InputError) as exc:
        load_plan(path)
    d = exc.value.diagnostics[0]
    assert d.yaml_path == "routing.failed[0]" and d.line > 1
