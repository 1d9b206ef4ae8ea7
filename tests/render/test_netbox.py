"""The NetBox import (exports/netbox/) against NetBox's own import forms: every header a field of the form,
every required field present, every choice value one NetBox offers, and every name a row references created
by an earlier file (NetBox fails a whole file on one unknown header and a row on one missing object).
NetBox itself (PyPI `netbox` 4.7) needs Python >= 3.12, PostgreSQL, Redis and some 800 migrations (about 20
minutes on the 2-core machine), too much for a test, so the forms' field lists are copied here; the lab's
files were imported once into a real NetBox 4.7.3 (docs/render.md)."""

from __future__ import annotations

import csv
import io
import re
from collections import defaultdict

import yaml

from ffplan.render.netbox import FILES, netbox_files

# NetBox 4.6.8 (github.com/netbox-community/netbox, commit 43fe81f9e833), netbox/dcim/forms/bulk_import.py:
# Meta.fields of each import form, plus `id` (utilities CSVModelForm) and NetBoxModelImportForm's `tags`.
FORM_FIELDS = {
    "manufacturers.csv": ("name", "slug", "description", "owner", "comments", "tags"),  # ManufacturerImportForm
    "device-roles.csv": (
        "name",
        "slug",
        "parent",
        "color",
        "vm_role",
        "config_template",
        "description",
        "owner",
        "comments",
        "tags",
    ),  # DeviceRoleImportForm
    "sites.csv": (
        "name",
        "slug",
        "status",
        "region",
        "group",
        "tenant",
        "facility",
        "time_zone",
        "description",
        "physical_address",
        "shipping_address",
        "latitude",
        "longitude",
        "owner",
        "comments",
        "tags",
    ),
    "racks.csv": (
        "site",
        "location",
        "group",
        "name",
        "facility_id",
        "tenant",
        "status",
        "role",
        "rack_type",
        "form_factor",
        "serial",
        "asset_tag",
        "width",
        "u_height",
        "desc_units",
        "outer_width",
        "outer_height",
        "outer_depth",
        "outer_unit",
        "mounting_depth",
        "airflow",
        "weight",
        "max_weight",
        "weight_unit",
        "description",
        "owner",
        "comments",
        "tags",
    ),  # RackImportForm
    "devices.csv": (
        "name",
        "role",
        "tenant",
        "manufacturer",
        "device_type",
        "platform",
        "serial",
        "asset_tag",
        "status",
        "site",
        "location",
        "rack",
        "position",
        "face",
        "latitude",
        "longitude",
        "parent",
        "device_bay",
        "airflow",
        "virtual_chassis",
        "vc_position",
        "vc_priority",
        "cluster",
        "description",
        "config_template",
        "owner",
        "comments",
        "tags",
    ),  # DeviceImportForm
    "interfaces.csv": (
        "device",
        "name",
        "label",
        "parent",
        "bridge",
        "lag",
        "type",
        "speed",
        "duplex",
        "enabled",
        "mark_connected",
        "wwn",
        "vdcs",
        "mtu",
        "mgmt_only",
        "description",
        "poe_mode",
        "poe_type",
        "mode",
        "vlan_group",
        "untagged_vlan",
        "tagged_vlans",
        "qinq_svlan",
        "vrf",
        "rf_role",
        "rf_channel",
        "rf_channel_frequency",
        "rf_channel_width",
        "tx_power",
        "owner",
        "tags",
    ),  # InterfaceImportForm
    "cables.csv": (
        "side_a_site",
        "side_a_device",
        "side_a_power_panel",
        "side_a_type",
        "side_a_name",
        "side_b_site",
        "side_b_device",
        "side_b_power_panel",
        "side_b_type",
        "side_b_name",
        "type",
        "status",
        "profile",
        "tenant",
        "bundle",
        "label",
        "color",
        "length",
        "length_unit",
        "description",
        "owner",
        "comments",
        "tags",
    ),  # CableImportForm
}
# Fields without required=False in those forms (and width/u_height, which RackImportForm.clean requires
# without a rack type; face, which a device with a position needs).
REQUIRED = {
    "manufacturers.csv": {"name", "slug"},
    "device-roles.csv": {"name", "slug"},
    "sites.csv": {"name", "slug", "status"},
    "racks.csv": {"site", "name", "status", "width", "u_height"},
    "devices.csv": {"role", "manufacturer", "device_type", "status", "site", "face"},
    "interfaces.csv": {"device", "name", "type"},
    "cables.csv": {"side_a_type", "side_a_name", "side_b_type", "side_b_name"},
}
# DeviceTypeImportForm's Meta.fields and, for the YAML import (dcim/views.py DeviceTypeImportView
# related_object_forms), InterfaceTemplateImportForm's (dcim/forms/object_import.py; device_type is set by
# the view).
DEVICE_TYPE_FIELDS = {
    "manufacturer",
    "default_platform",
    "model",
    "slug",
    "part_number",
    "u_height",
    "exclude_from_utilization",
    "is_full_depth",
    "subdevice_role",
    "airflow",
    "description",
    "weight",
    "weight_unit",
    "owner",
    "comments",
    "tags",
    "interfaces",
}
INTERFACE_TEMPLATE_FIELDS = {
    "name",
    "label",
    "type",
    "enabled",
    "mgmt_only",
    "description",
    "poe_mode",
    "poe_type",
    "rf_role",
}
# netbox/dcim/choices.py (same commit).
CHOICES = {
    ("sites.csv", "status"): {"planned", "staging", "active", "decommissioning", "retired"},  # SiteStatusChoices
    ("racks.csv", "status"): {"reserved", "available", "planned", "active", "deprecated"},  # RackStatusChoices
    ("racks.csv", "width"): {"10", "19", "21", "23"},  # RackWidthChoices
    ("devices.csv", "status"): {
        "offline",
        "active",
        "planned",
        "staged",
        "failed",
        "inventory",
        "decommissioning",
    },  # DeviceStatusChoices
    ("devices.csv", "face"): {"front", "rear"},  # DeviceFaceChoices
    ("cables.csv", "type"): {
        "cat3",
        "cat5",
        "cat5e",
        "cat6",
        "cat6a",
        "cat7",
        "cat7a",
        "cat8",
        "mrj21-trunk",
        "dac-active",
        "dac-passive",
        "coaxial",
        "rg-6",
        "rg-8",
        "rg-11",
        "rg-59",
        "rg-62",
        "rg-213",
        "lmr-100",
        "lmr-200",
        "lmr-400",
        "mmf",
        "mmf-om1",
        "mmf-om2",
        "mmf-om3",
        "mmf-om4",
        "mmf-om5",
        "smf",
        "smf-os1",
        "smf-os2",
        "aoc",
        "power",
        "usb",
    },  # CableTypeChoices
    ("cables.csv", "status"): {"connected", "planned", "decommissioning"},  # LinkStatusChoices
    ("cables.csv", "length_unit"): {"km", "m", "cm", "mi", "ft", "in"},  # CableLengthUnitChoices
    ("cables.csv", "side_a_type"): {"dcim.interface"},  # CABLE_TERMINATION_MODELS: the one ffplan uses
    ("cables.csv", "side_b_type"): {"dcim.interface"},
}
# InterfaceTypeChoices, the InfiniBand types.
IB_INTERFACE_TYPES = {
    "infiniband-sdr",
    "infiniband-ddr",
    "infiniband-qdr",
    "infiniband-fdr10",
    "infiniband-fdr",
    "infiniband-edr",
    "infiniband-hdr",
    "infiniband-ndr",
    "infiniband-xdr",
}
# InterfaceTypeChoices, the pluggable Ethernet types a RoCE plan uses (netbox-community/netbox, netbox/dcim/choices.py
# at commit 7f2e159e36ee: TYPE_100GE_QSFP28, TYPE_200GE_QSFP56, TYPE_400GE_OSFP, TYPE_800GE_OSFP).
ETHERNET_INTERFACE_TYPES = {"100gbase-x-qsfp28", "200gbase-x-qsfp56", "400gbase-x-osfp", "800gbase-x-osfp"}
INTERFACE_TYPES = IB_INTERFACE_TYPES | ETHERNET_INTERFACE_TYPES
SLUG = re.compile(r"^[-a-zA-Z0-9_]+$")
COLOR = re.compile(r"^[0-9a-f]{6}$")  # utilities/validators.py ColorValidator


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _check(files: dict[str, str]) -> dict[str, list[dict[str, str]]]:
    """Every check NetBox's import makes on these files, in import order; the parsed rows."""
    assert [name for name, _ in FILES] + ["README.md"] == list(files)
    rows = {name: _rows(text) for name, text in files.items() if name.endswith(".csv")}
    for name, table in rows.items():
        header = next(csv.reader(io.StringIO(files[name])))
        assert set(header) <= set(FORM_FIELDS[name]), (name, set(header) - set(FORM_FIELDS[name]))
        assert REQUIRED[name] <= set(header), name
        for row in table:
            assert all(row[f] != "" for f in REQUIRED[name]), (name, row)
            for (file, field), allowed in CHOICES.items():
                if file == name:
                    assert row[field] in allowed, (name, field, row[field])
    for row in rows["manufacturers.csv"] + rows["device-roles.csv"] + rows["sites.csv"]:
        assert SLUG.match(row["slug"]), row
    assert all(COLOR.match(row["color"]) for row in rows["device-roles.csv"])

    manufacturers = {r["name"] for r in rows["manufacturers.csv"]}
    types = {}
    for doc in yaml.safe_load_all(files["device-types.yaml"]):
        assert set(doc) <= DEVICE_TYPE_FIELDS and {"manufacturer", "model", "slug"} <= set(doc), doc
        assert doc["manufacturer"] in manufacturers and SLUG.match(doc["slug"])
        for t in doc.get("interfaces", []):
            assert set(t) <= INTERFACE_TEMPLATE_FIELDS and t["type"] in INTERFACE_TYPES, t
        types[(doc["manufacturer"], doc["model"])] = doc
    roles = {r["name"] for r in rows["device-roles.csv"]}
    sites = {r["name"] for r in rows["sites.csv"]}
    racks = {(r["site"], r["name"]): int(r["u_height"]) for r in rows["racks.csv"]}
    assert {site for site, _ in racks} <= sites

    interfaces: dict[tuple[str, str], str] = {}  # (device, name) -> where it comes from
    occupied: dict[tuple[str, str], set[int]] = defaultdict(set)
    device_site = {}
    for d in rows["devices.csv"]:
        assert d["role"] in roles and d["site"] in sites and (d["site"], d["rack"]) in racks, d
        doc = types[(d["manufacturer"], d["device_type"])]
        units = set(range(int(d["position"]), int(d["position"]) + doc["u_height"]))
        assert max(units) <= racks[(d["site"], d["rack"])], d
        assert not units & occupied[(d["site"], d["rack"])], f"{d['name']} overlaps another device"
        occupied[(d["site"], d["rack"])] |= units
        device_site[d["name"]] = d["site"]
        for t in doc.get("interfaces", []):
            interfaces[(d["name"], t["name"])] = "template"
    for i in rows["interfaces.csv"]:
        assert i["device"] in device_site and i["type"] in INTERFACE_TYPES, i
        assert (i["device"], i["name"]) not in interfaces, i
        interfaces[(i["device"], i["name"])] = "interfaces.csv"
    cabled = set()
    for c in rows["cables.csv"]:
        for side in ("side_a", "side_b"):
            end = (c[f"{side}_device"], c[f"{side}_name"])
            assert end in interfaces, f"{c['label']}: {end} does not exist when cables.csv is imported"
            assert device_site[end[0]] == c[f"{side}_site"]
            assert end not in cabled, f"{end} takes two cables"
            cabled.add(end)
    return rows


def test_lab_import_is_complete_and_accepted_by_the_forms(lab_plan):
    files = netbox_files(lab_plan)
    rows = _check(files)
    assert len(rows["cables.csv"]) == len(lab_plan.cables)
    assert len(rows["devices.csv"]) == len(lab_plan.switches) + len(lab_plan.nodes)
    assert {r["type"] for r in rows["cables.csv"]} <= {"aoc", "dac-passive"}
    assert {r["description"] for r in rows["cables.csv"]} >= {"ffplan node-leaf, zone za", "ffplan leaf-spine, zone zb"}
    for step, (name, _) in enumerate(FILES, 1):
        assert f"| {step} | `{name}` |" in files["README.md"]


def test_fire_flyer_2_import(ff2_plan):
    files = netbox_files(ff2_plan)
    rows = _check(files)
    counts = {name: len(table) for name, table in rows.items()}
    counts["device-types.yaml"] = len(list(yaml.safe_load_all(files["device-types.yaml"])))
    assert counts == {
        "manufacturers.csv": 2,
        "device-types.yaml": 4,
        "device-roles.csv": 5,
        "sites.csv": 1,
        "racks.csv": 179,
        "devices.csv": 120 + 1388,
        "interfaces.csv": 1568,
        "cables.csv": 3172,
    }
    qm8700 = next(yaml.safe_load_all(files["device-types.yaml"]))
    assert qm8700["model"] == "QM8700" and [i["name"] for i in qm8700["interfaces"]] == [
        f"IB1/{n}" for n in range(1, 41)
    ]
    print(counts)


def test_roce_import_has_ethernet_ports_and_sonic_names(roce_plan):
    """A RoCE plan's import: OSFP Ethernet interfaces (switch templates and NIC rows), SONiC port names that every
    cable end finds, Ethernet switch roles."""
    from ffplan.render.netbox import ETHERNET_INTERFACE_TYPE

    assert set(ETHERNET_INTERFACE_TYPE.values()) <= ETHERNET_INTERFACE_TYPES
    files = netbox_files(roce_plan)
    rows = _check(files)
    assert {r["type"] for r in rows["interfaces.csv"]} == {"400gbase-x-osfp"}
    docs = list(yaml.safe_load_all(files["device-types.yaml"]))
    switch = next(doc for doc in docs if "interfaces" in doc)
    assert {t["type"] for t in switch["interfaces"]} == {"400gbase-x-osfp"}
    assert switch["interfaces"][:2] == [
        {"name": "Ethernet0", "type": "400gbase-x-osfp"},
        {"name": "Ethernet8", "type": "400gbase-x-osfp"},
    ]
    ends = {r["side_a_name"] for r in rows["cables.csv"]} | {r["side_b_name"] for r in rows["cables.csv"]}
    assert not any(e.startswith("IB1/") for e in ends) and "mlx5_0" in ends
    assert {r["name"] for r in rows["device-roles.csv"]} == {"Ethernet leaf", "Ethernet spine", "compute"}
    assert "as SONiC names them" in files["README.md"]
