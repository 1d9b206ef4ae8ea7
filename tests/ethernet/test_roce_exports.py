"""The exports of a RoCE plan say Ethernet: the Ansible inventory carries each port's address, gateway, leaf ASN,
table and MTU (no LIDs or GUIDs) and each switch's ASN and loopback; the BOM lists Ethernet optics (a transceiver per switch cage, one per optical NIC
port, fibre between them); the diagrams name switches by ASN and loopback. NetBox's import is checked with the
InfiniBand one in tests/render/test_netbox.py, Slurm's topology.conf by slurmctld in tests/render/test_slurm_topology.py."""

import csv
import io
import re

import yaml

from ffplan.plan.exports import bom_rows
from ffplan.render import render_plan
from ffplan.render.exports import ansible_inventory


def test_ansible_vars_are_the_plans_addresses_and_asns(small_plan):
    inv = yaml.safe_load(ansible_inventory(small_plan))["all"]
    eth = small_plan.ethernet
    asn = {sw.name: sw.asn for sw in eth.switches}
    for h in eth.hosts:
        host = inv["hosts"][h.hostname]
        (port,) = host["ffplan_ports"]
        assert port == {
            "nic": h.nic,
            "port": 1,
            "zone": "za",
            "leaf": h.leaf,
            "leaf_port": port["leaf_port"],
            "address": h.address,
            "gateway": h.gateway,
            "leaf_asn": asn[h.leaf],
            "table": h.table,
            "mtu": h.mtu,
        }
        assert (host["ffplan_address"], host["ffplan_gateway"], host["ffplan_leaf_asn"]) == (
            h.address,
            h.gateway,
            asn[h.leaf],
        )
        assert not {k for k in host if "lid" in k or "guid" in k}
    for name, body in inv["children"].items():
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) and set(body["hosts"]) <= set(inv["hosts"])


def test_ansible_switches_carry_asn_and_loopback(small_plan):
    """The SONiC switches are hosts too, in tier_<tier> groups, with their ASN, loopback and (leaves) host block."""
    inv = yaml.safe_load(ansible_inventory(small_plan))["all"]
    for sw in small_plan.ethernet.switches:
        host = inv["hosts"][sw.name]
        assert (host["ffplan_asn"], host["ffplan_loopback"], host.get("ffplan_host_block")) == (
            sw.asn,
            sw.loopback,
            sw.host_block,
        )
        assert "ffplan_ports" not in host and "ffplan_role" not in host
    assert set(inv["children"]["tier_leaf"]["hosts"]) == {"za-leaf01", "za-leaf02"}
    assert set(inv["children"]["tier_spine"]["hosts"]) == {"za-spine01"}
    assert not any(
        s in body["hosts"]
        for name, body in inv["children"].items()
        if not name.startswith("tier_")
        for s in ("za-leaf01", "za-spine01")
    )


def test_bom_lists_ethernet_optics_per_cage(dual_plane_plan):
    """SN5600 cages split 2 x 400G: one 800G twin-port OSFP per cage with an optical port, a 400G OSFP per optical
    NIC port, fibre for every optical run; no InfiniBand item."""
    rows = bom_rows(dual_plane_plan)
    text = repr(rows)
    assert "HDR" not in text and "QSFP56" not in text
    items = {item: (n, note) for category, item, n, note in rows if category == "transceiver"}
    optical = [end for c in dual_plane_plan.cables if c.type == "AOC" for end in (c.a, c.b)]
    switch_ports = [e for e in optical if isinstance(e.port, int)]
    cages, _ = items["800G OSFP (2 x 400G) (switch)"]
    assert len(switch_ports) / 2 <= cages <= len(switch_ports)
    assert items["400G OSFP (NIC)"][0] == len(optical) - len(switch_ports)
    fibre = sum(n for category, item, n, _ in rows if category == "cable" and item.startswith("fibre"))
    assert fibre == sum(1 for c in dual_plane_plan.cables if c.type == "AOC")
    switches = {item: n for category, item, n, _ in rows if category == "switch"}
    assert switches == {"SN5600": 96}  # 2 planes x (32 leaves + 16 spines)


def test_rendered_exports_name_no_lids(small_plan):
    files = render_plan(small_plan)
    for path in ("exports/diagram-za.svg", "exports/elevation-za.svg"):
        assert "LID" not in files[path] and f"AS {small_plan.ethernet.switches[0].asn}" in files[path]
    bom = list(csv.DictReader(io.StringIO(files["exports/bom.csv"])))
    assert {r["item"] for r in bom if r["category"] == "transceiver"} == {"400G OSFP (switch)", "400G OSFP (NIC)"}


def test_the_plan_claims_no_infiniband_speed(small_plan):
    """A RoCE plan's Ethernet switch model has no InfiniBand speed (it said HDR); its speed is the Ethernet plan's."""
    (model,) = small_plan.switch_models
    assert model.speed is None and small_plan.ethernet.link_gbps == 400
