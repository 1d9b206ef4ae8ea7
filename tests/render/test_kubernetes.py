"""Kubernetes node labels and Kueue's Topology: one label per level, keys and values valid by Kubernetes' own rules,
checked with the regular expressions of k8s.io/apimachinery/pkg/util/validation/validation.go (IsQualifiedName,
IsValidLabelValue, IsDNS1123Subdomain), and by `kubectl label --local` (the real parser) where kubectl is installed."""

import hashlib
import re
import shutil
import subprocess

import pytest
import yaml

from ffplan.design import design
from ffplan.diagnostics import InputError
from ffplan.inventory import load_inventory
from ffplan.render.kubernetes import label_keys, label_value, node_labels, render_kubernetes, topology_name
from tests.conftest import ROOT

# Transcribed from k8s.io/apimachinery/pkg/util/validation/validation.go (not imported from ffplan, so a typo there
# is caught here): qualifiedNameFmt, labelValueFmt, dns1123LabelFmt, dns1123SubdomainFmt and their length limits.
QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")  # name part: at most 63
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")  # at most 63
DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN = re.compile(rf"^{DNS1123_LABEL}(\.{DNS1123_LABEL})*$")  # at most 253


def is_label_key(key: str) -> bool:
    """IsQualifiedName: a name, or a non-empty DNS-subdomain prefix, '/' and a name."""
    parts = key.split("/")
    if len(parts) > 2 or (
        len(parts) == 2 and (not parts[0] or len(parts[0]) > 253 or not DNS1123_SUBDOMAIN.match(parts[0]))
    ):
        return False
    name = parts[-1]
    return 0 < len(name) <= 63 and bool(QUALIFIED_NAME.match(name))


def is_label_value(value: str) -> bool:
    return len(value) <= 63 and bool(LABEL_VALUE.match(value))


def test_the_validators_are_kubernetes_own():
    # the examples Kubernetes' error messages give, and what it refuses
    assert all(is_label_key(k) for k in ("MyName", "my.name", "123-abc", "example.com/MyName"))
    assert not any(is_label_key(k) for k in ("-a", "a-", "Example.com/a", "a/b/c", "x" * 64, "/a"))
    assert all(is_label_value(v) for v in ("MyValue", "my_value", "12345", ""))
    assert not any(is_label_value(v) for v in ("r1-", "_r", "a b", "x" * 64))


@pytest.fixture(scope="module")
def plans():
    names = {
        "lab": ROOT / "inventories" / "lab.yaml",
        "planes": ROOT / "tests" / "golden" / "inventories" / "planes-lab.yaml",
        "three-layer": ROOT / "tests" / "golden" / "inventories" / "three-layer-8.yaml",
    }
    return {name: design(load_inventory(path)) for name, path in names.items()}


@pytest.mark.parametrize("name", ["lab", "planes", "three-layer"])
def test_labels_and_topology_are_valid_and_agree(plans, name):
    plan = plans[name]
    files = render_kubernetes(plan)
    docs = [d for d in yaml.safe_load_all(files["exports/kubernetes/node-labels.yaml"]) if d]
    compute = [n.hostname for n in plan.nodes if n.role == "compute"]
    assert [d["metadata"]["name"] for d in docs] == compute
    keys = label_keys(plan)
    topology = yaml.safe_load(files["exports/kubernetes/kueue-topology.yaml"])
    assert topology["apiVersion"] == "kueue.x-k8s.io/v1alpha1" and topology["kind"] == "Topology"
    assert DNS1123_SUBDOMAIN.match(topology["metadata"]["name"])
    assert [level["nodeLabel"] for level in topology["spec"]["levels"]] == keys + ["kubernetes.io/hostname"]
    for doc in docs:
        labels = doc["metadata"]["labels"]
        assert list(labels) == keys  # one label per level, highest first
        for key, value in labels.items():
            assert isinstance(value, str) and is_label_value(value), (key, value)
            assert is_label_key(key), key
    first = next(n for n in plan.nodes if n.role == "compute")
    assert docs[0]["metadata"]["labels"][keys[2]] == first.ports[0].leaf
    assert docs[0]["metadata"]["labels"][keys[3]] == first.rack


def test_levels_name_the_layout(plans):
    assert label_keys(plans["lab"])[0] == "topology.ffplan.io/zone"
    assert label_keys(plans["planes"])[0] == "topology.ffplan.io/plane"
    groups = {labels[1][1] for _, labels in node_labels(plans["three-layer"])}
    assert groups and all(re.fullmatch(r".+-pod\d+", g) for g in groups)  # a three-layer tree's spine group is a pod
    assert {labels[1][1] for _, labels in node_labels(plans["lab"])} == {"za-spines", "zb-spines"}


def test_names_kubernetes_refuses_are_mended_and_a_clash_is_ff920(plans):
    assert label_value("r1-") == "r1-0" and label_value("r1") == "r1"
    long = "x" * 63
    assert label_value(long + "-pod1") == "x" * 54 + "-" + hashlib.sha256((long + "-pod1").encode()).hexdigest()[:8]
    assert topology_name("Lab_1.") == "lab-1-0" and topology_name("fire-flyer-2") == "fire-flyer-2"
    plan = plans["lab"]
    first, second = [n for n in plan.nodes if n.role == "compute"][:2]
    renamed = {first.hostname: "r1-", second.hostname: "r1-0"}
    bad = plan.model_copy(
        update={
            "nodes": [
                n.model_copy(update={"rack": renamed[n.hostname]}) if n.hostname in renamed else n for n in plan.nodes
            ]
        }
    )
    with pytest.raises(InputError) as err:
        render_kubernetes(bad)
    assert err.value.diagnostics[0].rule == "FF920"
    assert "r1- and r1-0 would share the label topology.ffplan.io/rack=r1-0" in err.value.diagnostics[0].message


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
def test_kubectl_accepts_the_labels(plans, tmp_path):
    node = tmp_path / "node.yaml"
    for name in ("lab", "planes", "three-layer"):
        for hostname, labels in node_labels(plans[name])[:3]:
            node.write_text(f"apiVersion: v1\nkind: Node\nmetadata:\n  name: {hostname}\n")
            r = subprocess.run(
                ["kubectl", "label", "--local", "-f", str(node), "-o", "yaml", *[f"{k}={v}" for k, v in labels]],
                capture_output=True,
                text=True,
            )
            assert r.returncode == 0, r.stderr
            assert yaml.safe_load(r.stdout)["metadata"]["labels"] == dict(labels)
    r = subprocess.run(
        ["kubectl", "label", "--local", "-f", str(node), "-o", "yaml", "topology.ffplan.io/rack=r1-"],
        capture_output=True,
        text=True,
    )
    assert r.returncode != 0 and "invalid label value" in r.stderr  # the check above is not vacuous
