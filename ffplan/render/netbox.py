"""A NetBox import of the planned fabric, in the order NetBox needs it (exports/netbox/).

NetBox's bulk import refuses a whole file on one unknown header, and an object referenced by name (a device
in a cable, a rack in a device) must exist first. So the cables come with everything they reference:
manufacturers, device types with their interface templates (YAML, NetBox's device-type import format),
device roles, the site, racks, devices, the HCA ports no template creates, then the cables. Headers and
choice values are those of NetBox 4's import forms (dcim/forms/bulk_import.py, dcim/choices.py).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import yaml

from ffplan.ethernet.ports import sonic_port
from ffplan.plan.exports import cables_csv, csv_text, interface_name, switch_port_names
from ffplan.plan.model import CableEnd, Plan
from ffplan.templating import render_template

FOLDER = "exports/netbox"
# Switch ports are IB1/1 ... IB1/<radix> and the QM8700's manufacturer is Mellanox in NetBox's community
# device-type library, so a library device type of the same model can stand in for ours.
SWITCH_MANUFACTURER = "Mellanox"
NODE_MANUFACTURER = "Generic"
RACK_WIDTH_INCHES = 19
RACK_HEIGHT_U = 42  # a taller rack when a device sits higher
# Device roles: (name, colour as NetBox stores it, description).
SWITCH_ROLES = {
    "leaf": ("InfiniBand leaf", "76b7b2", "fat-tree leaf switch"),
    "spine": ("InfiniBand spine", "e15759", "fat-tree spine switch"),
    "core": ("InfiniBand core", "b07aa1", "three-layer fat-tree core switch"),
}
NODE_ROLES = {
    "compute": ("compute", "4e79a7", "GPU compute node"),
    "storage": ("storage", "f28e2b", "storage server"),
    "management": ("management", "59a14f", "management node"),
}

MANUFACTURER_COLUMNS = ["name", "slug", "description"]
ROLE_COLUMNS = ["name", "slug", "color", "description"]
SITE_COLUMNS = ["name", "slug", "status", "description"]
RACK_COLUMNS = ["site", "name", "status", "width", "u_height"]
DEVICE_COLUMNS = ["name", "role", "manufacturer", "device_type", "status", "site", "rack", "position", "face"]
INTERFACE_COLUMNS = ["device", "name", "type", "description"]

# The import order, each file with what it creates.
FILES = [
    ("manufacturers.csv", "Devices > Manufacturers > Import (CSV)"),
    ("device-types.yaml", "Devices > Device Types > Import (YAML; creates the switches' IB1/n interface templates)"),
    ("device-roles.csv", "Devices > Device Roles > Import (CSV)"),
    ("sites.csv", "Organization > Sites > Import (CSV)"),
    ("racks.csv", "Racks > Racks > Import (CSV)"),
    ("devices.csv", "Devices > Devices > Import (CSV; switch ports come from the device type)"),
    ("interfaces.csv", "Devices > Interfaces > Import (CSV; the hosts' HCA ports)"),
    ("cables.csv", "Connections > Cables > Import (CSV)"),
]


def slug(name: str) -> str:
    """NetBox slugs allow letters, digits, - and _."""
    return re.sub(r"[^a-z0-9_-]+", "-", name.lower()).strip("-")


def interface_type(speed: str) -> str:
    """NetBox's InterfaceTypeChoices for an InfiniBand port of this speed (infiniband-hdr)."""
    return f"infiniband-{speed.lower()}"


# NetBox's InterfaceTypeChoices for an Ethernet port by link speed (Gb/s): the pluggable module of the cage that
# runs it (netbox-community/netbox, netbox/dcim/choices.py at 7f2e159e36ee, "Pluggable transceivers"). 400G and
# 800G are OSFP, as on Spectrum-4 switches and ConnectX-7 / BlueField-3 NICs.
ETHERNET_INTERFACE_TYPE = {
    100: "100gbase-x-qsfp28",
    200: "200gbase-x-qsfp56",
    400: "400gbase-x-osfp",
    800: "800gbase-x-osfp",
}
ETHERNET_ROLES = {
    "leaf": ("Ethernet leaf", "76b7b2", "RoCE Clos leaf switch"),
    "spine": ("Ethernet spine", "e15759", "RoCE Clos spine switch"),
    "core": ("Ethernet super-spine", "b07aa1", "RoCE Clos third-tier switch"),
}


@dataclass(frozen=True)
class _Fabric:
    """What the import writes differently per transport: switch port names, interface type, switch roles."""

    port_names: list[str]  # the fabric switch model's ports, in port order
    interface: str
    roles: dict[str, tuple[str, str, str]]


def _fabric(plan: Plan, ports: int) -> _Fabric:
    eth = plan.ethernet
    if eth is None:
        speed = next(m.speed for m in plan.switch_models if m.name == plan.fabric_switch_model)
        assert speed is not None, "only a RoCE plan's switch models have no InfiniBand speed"
        return _Fabric([f"IB1/{i}" for i in range(1, ports + 1)], interface_type(speed), SWITCH_ROLES)
    return _Fabric(
        [sonic_port(i, eth.breakout)[0] for i in range(1, ports + 1)],
        ETHERNET_INTERFACE_TYPE[eth.link_gbps],
        ETHERNET_ROLES,
    )


@dataclass(frozen=True)
class _DeviceType:
    manufacturer: str
    model: str
    u_height: int
    switch_ports: int  # 0 for node models: their HCA ports are interfaces.csv rows


def _device_types(plan: Plan) -> list[_DeviceType]:
    used_switch = {s.model for s in plan.switches}
    used_node = {n.model for n in plan.nodes}
    types = [
        _DeviceType(SWITCH_MANUFACTURER, m.name, m.rack_units, m.ports)
        for m in plan.switch_models
        if m.name in used_switch
    ]
    types += [_DeviceType(NODE_MANUFACTURER, m.name, m.rack_units, 0) for m in plan.node_models if m.name in used_node]
    return types


def _unique_slugs(kind: str, names: list[str]) -> None:
    clashes = sorted(s for s, n in Counter(slug(name) for name in dict.fromkeys(names)).items() if n > 1)
    if clashes:
        raise ValueError(f"NetBox {kind} slugs collide after normalising: {', '.join(clashes)}")


def device_types_yaml(plan: Plan) -> str:
    """One YAML document per device type, as NetBox's device-type import (and the community library) reads it."""
    docs = []
    for t in _device_types(plan):
        doc = {
            "manufacturer": t.manufacturer,
            "model": t.model,
            "slug": slug(f"{t.manufacturer}-{t.model}"),
            "u_height": t.u_height,
            "is_full_depth": True,
        }
        if t.switch_ports:
            fabric = _fabric(plan, t.switch_ports)
            doc["interfaces"] = [{"name": name, "type": fabric.interface} for name in fabric.port_names]
        docs.append(doc)
    return yaml.safe_dump_all(docs, explicit_start=True, sort_keys=False, default_flow_style=False)


def _rack_heights(plan: Plan) -> dict[str, int]:
    height = {m.name: m.rack_units for m in plan.switch_models} | {m.name: m.rack_units for m in plan.node_models}
    top: dict[str, int] = {}
    for rack, u, model in [(d.rack, d.u, d.model) for d in plan.switches] + [
        (d.rack, d.u, d.model) for d in plan.nodes
    ]:
        top[rack] = max(top.get(rack, RACK_HEIGHT_U), u + height[model] - 1)
    return dict(sorted(top.items()))


def netbox_files(plan: Plan) -> dict[str, str]:
    """File name (no folder) -> text, for every file of exports/netbox/."""
    site = plan.inventory.name
    fabric = _fabric(plan, 0)
    switch_names = switch_port_names(plan)
    types = _device_types(plan)
    manufacturer_of = {t.model: t.manufacturer for t in types}
    manufacturers = sorted({t.manufacturer for t in types})
    _unique_slugs("manufacturer", manufacturers)
    _unique_slugs("device type", [f"{t.manufacturer}-{t.model}" for t in types])
    switch_roles = [fabric.roles[tier] for tier in fabric.roles if any(s.tier == tier for s in plan.switches)]
    node_roles = [NODE_ROLES[role] for role in NODE_ROLES if any(n.role == role for n in plan.nodes)]
    devices = [
        [s.name, fabric.roles[s.tier][0], manufacturer_of[s.model], s.model, "planned", site, s.rack, s.u, "front"]
        for s in plan.switches
    ]
    devices += [
        [n.hostname, NODE_ROLES[n.role][0], manufacturer_of[n.model], n.model, "planned", site, n.rack, n.u, "front"]
        for n in plan.nodes
    ]
    interfaces = [
        [
            n.hostname,
            p.nic,
            fabric.interface,
            f"port {p.port} to {p.leaf} {interface_name(CableEnd(device=p.leaf, port=p.leaf_port), switch_names)}",
        ]
        for n in plan.nodes
        for p in n.ports
    ]
    files = {
        "manufacturers.csv": csv_text([[m, slug(m), ""] for m in manufacturers], MANUFACTURER_COLUMNS),
        "device-types.yaml": device_types_yaml(plan),
        "device-roles.csv": csv_text(
            [[name, slug(name), color, text] for name, color, text in switch_roles + node_roles], ROLE_COLUMNS
        ),
        "sites.csv": csv_text(
            [[site, slug(site), "planned", f"planned by ffplan from {plan.inventory.file}"]], SITE_COLUMNS
        ),
        "racks.csv": csv_text(
            [[site, rack, "planned", RACK_WIDTH_INCHES, u] for rack, u in _rack_heights(plan).items()], RACK_COLUMNS
        ),
        "devices.csv": csv_text(devices, DEVICE_COLUMNS),
        "interfaces.csv": csv_text(interfaces, INTERFACE_COLUMNS),
        "cables.csv": cables_csv(plan),
    }
    counts = {name: len(text.splitlines()) - 1 for name, text in files.items() if name.endswith(".csv")}
    counts["device-types.yaml"] = len(types)
    files["README.md"] = render_template(
        "exports/netbox-README.md",
        plan_name=plan.inventory.name,
        site=site,
        steps=[{"file": name, "where": where, "rows": counts[name]} for name, where in FILES],
        switch_manufacturer=SWITCH_MANUFACTURER,
        node_manufacturer=NODE_MANUFACTURER,
        port_names=("`IB1/1` ... `IB1/<n>`" if plan.ethernet is None else "as SONiC names them (`Ethernet0`, ...)"),
    )
    return files


def render_netbox(plan: Plan) -> dict[str, str]:
    return {f"{FOLDER}/{name}": text for name, text in netbox_files(plan).items()}
