"""The Ansible inventory's groups: role, zone, leaf, rack and profile, checked against the plan and against
Ansible's YAML inventory rules (group names are identifiers; every child group lists hosts defined under
`all.hosts`)."""

from __future__ import annotations

import re
from collections import defaultdict

import jinja2
import markupsafe
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ffplan.templating import environment, tojson
from ffplan.render.exports import ansible_inventory


def _groups(plan) -> dict[str, set[str]]:
    inv = yaml.safe_load(ansible_inventory(plan))
    hosts = set(inv["all"]["hosts"])
    groups = {}
    for name, body in inv["all"]["children"].items():
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name), name
        assert set(body) == {"hosts"} and set(body["hosts"]) <= hosts, name
        groups[name] = set(body["hosts"])
    return groups


def test_groups_per_leaf_and_rack_beside_role_zone_and_profile(ff2_plan):
    groups = _groups(ff2_plan)
    want: dict[str, set[str]] = defaultdict(set)
    for n in ff2_plan.nodes:
        want[f"rack_{n.rack}".replace("-", "_")].add(n.hostname)
        for p in n.ports:
            want[f"leaf_{p.leaf}".replace("-", "_")].add(n.hostname)
    assert {g: h for g, h in groups.items() if g.startswith(("leaf_", "rack_"))} == want
    leaves = [s for s in ff2_plan.switches if s.tier == "leaf"]
    assert len([g for g in groups if g.startswith("leaf_")]) == len(leaves) == 80
    assert {g.split("_")[0] for g in groups} == {"role", "zone", "leaf", "rack", "profile"}
    storage = next(n for n in ff2_plan.nodes if n.role == "storage")
    assert sum(storage.hostname in h for g, h in groups.items() if g.startswith("leaf_")) == 2  # dual-homed


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None)
@given(value=_JSON_VALUES, indent=st.none() | st.integers(0, 2))
def test_the_tojson_filter_prints_what_jinjas_own_prints(value, indent):
    # ffplan's faster tojson (strings and integers without jinja's policy lookups) must not change one byte
    ours = environment().from_string("{{ v | tojson(indent) }}").render(v=value, indent=indent)
    jinjas = jinja2.Environment().from_string("{{ v | tojson(indent) }}").render(v=value, indent=indent)
    assert ours == jinjas and type(tojson(value, indent)) is markupsafe.Markup
