"""Kubernetes exports: node labels for topology-aware scheduling and the matching Kueue `Topology`.

One label per level of the fabric, highest first: the zone (or plane), the spine group (the spines a leaf reaches:
every spine of a two-layer zone, a pod's spines in a three-layer tree), the leaf, the rack; Kueue's lowest level is
`kubernetes.io/hostname`. A node is labelled by its first fabric port (as Slurm's topology.conf lists it): a plane
layout's NIC i sits in plane i at the same place, a rail-optimized node's rail-0 leaf stands for its scalable unit.
Only compute nodes are labelled (they are the ones jobs run on). Keys and values follow Kubernetes' rules
(k8s.io/apimachinery/pkg/util/validation: IsQualifiedName, IsValidLabelValue, IsDNS1123Subdomain). ffplan names
already use the label alphabet; the two ways one can still break the rules are mended so that any inventory renders:
a name ending in '-', '_' or '.' gets a '0' appended, and a value over 63 characters is cut to 54 and followed by 8
hex digits of its SHA-256. Two names that would become one value at a level are refused (FF920).
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from typing import NamedTuple

from ffplan.opensm.subnet import unwritable
from ffplan.plan.model import Plan
from ffplan.templating import render_template

LABEL_PREFIX = "topology.ffplan.io"
HOSTNAME_LABEL = "kubernetes.io/hostname"  # Kueue's lowest level: pods are assigned to nodes
KUEUE_TOPOLOGY_API = "kueue.x-k8s.io/v1alpha1"  # Kueue's Topology (Kueue >= 0.9; the alpha API reference)
# k8s.io/apimachinery/pkg/util/validation/validation.go: labelValueFmt (max 63) and dns1123SubdomainFmt (max 253)
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


class NodeLabels(NamedTuple):
    hostname: str
    labels: list[tuple[str, str]]  # (key, value), highest level first


def label_keys(plan: Plan) -> list[str]:
    """The label of each level, highest first."""
    top = "plane" if plan.layout == "planes" else "zone"
    return [f"{LABEL_PREFIX}/{level}" for level in (top, "spine-group", "leaf", "rack")]


def label_value(name: str) -> str:
    """A name as a label value: itself when it is one (every name of the shipped inventories is)."""
    value = name + "0" if name[-1:] in ("-", "_", ".") else name
    if len(value) > 63:
        value = value[:54] + "-" + hashlib.sha256(name.encode()).hexdigest()[:8]
    assert LABEL_VALUE.fullmatch(value), value  # names use the label alphabet and begin with a letter or digit
    return value


def node_labels(plan: Plan) -> list[NodeLabels]:
    """Every compute node with its labels, in plan order."""
    keys = label_keys(plan)
    pod = {s.name: s.pod for s in plan.switches}
    out = []
    named: dict[tuple[str, str], set[str]] = defaultdict(set)  # (key, value) -> the names that gave it
    for n in plan.nodes:
        if n.role != "compute" or not n.ports:
            continue
        first = n.ports[0]
        group = f"{first.zone}-pod{pod[first.leaf]}" if pod.get(first.leaf) else f"{first.zone}-spines"
        labels = [(key, label_value(name)) for key, name in zip(keys, (first.zone, group, first.leaf, n.rack))]
        for label, name in zip(labels, (first.zone, group, first.leaf, n.rack)):
            named[label].add(name)
        out.append(NodeLabels(n.hostname, labels))
    for (key, value), names in sorted(named.items()):
        if len(names) > 1:
            raise unwritable(
                f"{' and '.join(sorted(names))} would share the label {key}={value}",
                "rename one of them in the inventory (label values end with a letter or digit and hold "
                "at most 63 characters) and re-run design",
            )
    return out


def topology_name(plan_name: str) -> str:
    """The plan's name as a DNS subdomain (the Topology's metadata.name): lower case, '_' and '.' as '-', ending in a
    letter or digit."""
    name = re.sub(r"[^a-z0-9-]", "-", plan_name.lower())
    return name if name[-1].isalnum() else name + "0"


def render_kubernetes(plan: Plan) -> dict[str, str]:
    name = topology_name(plan.inventory.name)
    assert DNS1123_SUBDOMAIN.fullmatch(name), name
    nodes = node_labels(plan)
    keys = label_keys(plan)
    return {
        "exports/kubernetes/node-labels.yaml": render_template(
            "exports/kubernetes-node-labels.yaml", plan_name=name, nodes=nodes, keys=keys
        ),
        "exports/kubernetes/kueue-topology.yaml": render_template(
            "exports/kueue-topology.yaml",
            plan_name=name,
            api=KUEUE_TOPOLOGY_API,
            levels=keys + [HOSTNAME_LABEL],
            compute_count=len(nodes),
        ),
    }
