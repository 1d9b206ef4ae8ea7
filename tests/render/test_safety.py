"""No inventory string can break a rendered file.

1. Hostile strings (quotes, `$(...)`, backticks, `</cpu>`, newlines) are refused at load with FF013, before
   any stage sees them.
2. Any string the schema accepts, generated from the schema's own patterns, renders into scripts that bash
   parses, XML/SVG that parse, nccl.conf lines NCCL reads as NAME=VALUE, and an Ansible inventory that
   reads back the same names.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ncclxml import check_lexical, check_tree
from tests.support.plans import design_file

from ffplan.diagnostics import StageError
from ffplan.inventory import load_inventory
from ffplan.inventory.models import DEVICE_PATTERN, HOSTNAME_PATTERN, NAME_PATTERN, PATH_PATTERN, TEXT_PATTERN
from ffplan.render.exports import render_exports
from tests.support.hostlist import expand_hostlist
from ffplan.render.hosts import render_hosts

ROOT = Path(__file__).resolve().parents[2]
LAB = yaml.safe_load((ROOT / "inventories" / "lab.yaml").read_text())
BASH = shutil.which("bash")

HOSTILE = ['a"b', "a'b", "$(reboot)", "`id`", "</cpu>", "x\ny", "a;b", "a b", "${IFS}", "a\\b", "&amp;"]


def _mutations(value):
    """(YAML path, inventory) pairs with `value` in every kind of string that reaches a rendered file."""

    def put(path, setter):
        inv = yaml.safe_load(yaml.safe_dump(LAB))
        setter(inv)
        return path, inv

    yield put(
        ("groups", 2, "hosts", 0, "hostname"), lambda i: i["groups"][2]["hosts"][0].__setitem__("hostname", value)
    )
    yield put(
        ("models", "nodes", "gpu-node", "devices", 0, "name"),
        lambda i: i["models"]["nodes"]["gpu-node"]["devices"][0].__setitem__("name", value),
    )
    yield put(("defaults", "topo_file"), lambda i: i.__setitem__("defaults", {"topo_file": "/etc/" + value}))
    yield put(("defaults", "nccl_socket_ifname"), lambda i: i.__setitem__("defaults", {"nccl_socket_ifname": value}))
    yield put(("fabric", "zones", 0, "name"), lambda i: i["fabric"]["zones"][0].__setitem__("name", value))
    yield put(("groups", 0, "name"), lambda i: i["groups"][0].__setitem__("name", value))
    yield put(
        ("models", "nodes", "gpu-node", "description"),
        lambda i: i["models"]["nodes"]["gpu-node"].__setitem__("description", value + "$(x)"),
    )


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_strings_are_refused_at_load(tmp_path, value):
    for path, inv in _mutations(value):
        f = tmp_path / "inv.yaml"
        f.write_text(yaml.safe_dump(inv))
        with pytest.raises(StageError) as exc:
            load_inventory(f)
        found = [d for d in exc.value.diagnostics if d.rule == "FF013"]
        assert found, (value, path, [d.message for d in exc.value.diagnostics])


@pytest.mark.parametrize(
    "path, value, allowed",
    [
        (("groups", 2, "hosts", 0, "hostname"), "GPU_01", "lower-case letters, digits and '-'"),
        (("models", "nodes", "gpu-node", "devices", 0, "name"), "mlx5-0", "letters, digits and '_'"),
        (("groups", 0, "name"), "a b", "letters, digits, '.', '_' and '-'"),
    ],
)
def test_the_ff013_hint_names_the_field_s_own_characters(tmp_path, path, value, allowed):
    """The hint said "letters, digits, '.', '_' and '-'" for every field, also where those are refused."""
    mutated = dict(_mutations(value))[path]
    f = tmp_path / "inv.yaml"
    f.write_text(yaml.safe_dump(mutated))
    with pytest.raises(StageError) as exc:
        load_inventory(f)
    (found,) = [d for d in exc.value.diagnostics if d.rule == "FF013"]
    assert allowed in found.hint, found.hint


# ---------------------------------------------------------------- property: anything the schema accepts renders safely


def _from(pattern: str, max_size: int | None = None):
    s = st.from_regex(pattern, fullmatch=True)
    return s.filter(lambda x: len(x) <= max_size) if max_size else s


names = _from(NAME_PATTERN, 20)
devices = _from(DEVICE_PATTERN, 12)
hostnames = _from(HOSTNAME_PATTERN, 20).filter(lambda h: not re.fullmatch(r"gpu\d\d|stor\d", h))


@st.composite
def inventories(draw):
    inv = yaml.safe_load(yaml.safe_dump(LAB))
    zones = draw(st.lists(names, min_size=2, max_size=2, unique_by=str.lower))
    for z, name in zip(inv["fabric"]["zones"], zones):
        z["name"] = name
    inv["fabric"]["inter_zone_links"][0]["zones"] = zones
    devs = draw(st.lists(devices, min_size=5, max_size=5, unique=True))
    node = inv["models"]["nodes"]["gpu-node"]
    rename = dict(zip([d["name"] for d in node["devices"]], devs))
    for d in node["devices"]:
        d["name"] = rename[d["name"]]
    node["nvlink_pairs"] = [[rename[a], rename[b]] for a, b in node["nvlink_pairs"]]
    node["description"] = draw(_from(TEXT_PATTERN, 60))
    node["cpu"]["model"] = draw(_from(TEXT_PATTERN, 40))
    node["cpu"]["nps"] = draw(st.sampled_from([1, 2]))
    inv["description"] = draw(_from(TEXT_PATTERN, 60))
    mgmt = draw(st.lists(hostnames, min_size=2, max_size=2, unique=True))
    for h, name in zip(inv["groups"][2]["hosts"], mgmt):
        h["hostname"] = name
    groups = draw(st.lists(names, min_size=3, max_size=3, unique=True))
    for g, name in zip(inv["groups"], groups):
        g["name"] = name
    inv["defaults"] = {
        "topo_file": draw(_from(PATH_PATTERN, 40)),
        "nccl_socket_ifname": draw(_from(r"^=?[A-Za-z0-9_.-]{1,15}$")),
    }
    new_model = draw(names)
    inv["models"]["nodes"][new_model] = inv["models"]["nodes"].pop("gpu-node")
    inv["groups"][0]["model"] = new_model
    return inv


def _check_rendered(files: dict[str, str], plan) -> None:
    for name, text in files.items():
        assert "\r" not in text and "\0" not in text, name
        if name.endswith(".sh"):
            r = subprocess.run([BASH, "-n"], input=text, text=True, capture_output=True)
            assert r.returncode == 0, f"{name}: {r.stderr}"
        elif name.endswith(".xml"):
            assert check_lexical(text) == [], name
            assert check_tree(ET.fromstring(text)) == [], name
        elif name.endswith(".svg"):
            ET.fromstring(text)
        elif name.endswith("nccl.conf"):
            for line in text.splitlines():
                assert re.fullmatch(r"NCCL_[A-Z0-9_]+=[^\s\"'#]+", line), (name, line)
        elif name.endswith((".env", "ucx.conf")):
            for line in text.splitlines():
                assert line.startswith("#") or re.fullmatch(r"[A-Z][A-Z0-9_]*=[0-9]+", line), (name, line)
        elif name.endswith(".csv"):
            rows = list(csv.reader(io.StringIO(text)))
            assert len({len(r) for r in rows}) == 1, name
    inv = yaml.safe_load(files["exports/ansible-inventory.yaml"])
    assert list(inv["all"]["hosts"]) == [n.hostname for n in plan.nodes]
    compute = {n.hostname for n in plan.nodes if n.role == "compute"}
    listed = set()
    for line in files["exports/topology.conf"].splitlines():
        m = re.fullmatch(r"SwitchName=(\S+) Nodes=(\S+)", line)
        if m:
            listed |= set(expand_hostlist(m.group(2)))
    assert listed == compute


@pytest.mark.skipif(BASH is None, reason="bash not installed")
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture],
)
@given(inv=inventories())
def test_any_string_the_schema_accepts_renders_safely(tmp_path_factory, inv):
    f = tmp_path_factory.mktemp("inv") / "inv.yaml"
    f.write_text(yaml.safe_dump(inv))
    plan = design_file(f)
    files = {**render_hosts(plan), **render_exports(plan)}
    _check_rendered(files, plan)
