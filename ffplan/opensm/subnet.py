"""The InfiniBand subnet a plan (or a view of it) describes: its switches, CAs (one per NIC port), links and LID
owners, as OpenSM and ibnetdiscover see them. Every OpenSM file is printed from a `Subnet`
(`ffplan.opensm.files`), and verify, audit and reroute read the same model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ffplan.codes.plan import OPTION_VALUE_NOT_IN_PLAN
from ffplan.codes.render import PLAN_VALUE_NOT_RENDERABLE
from ffplan.diagnostics import Collector, InputError, did_you_mean, option_error
from ffplan.opensm.layout import SmInstance, View
from ffplan.plan.model import Plan

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/+ -]*$")
_GUID = re.compile(r"^0x[0-9a-f]{16}$")


@dataclass
class SubnetPort:
    port: int
    port_guid: str
    lid: int
    leaf: str
    leaf_port: int
    zone: str


@dataclass
class Ca:
    """One InfiniBand CA: an mlx5 NIC port, which is a device of its own with a single port (port 1)."""

    id: str  # node description: "<hostname> <nic>" (port 1 of the card), "<hostname> <nic> p<N>" (port N)
    hostname: str
    nic: str
    role: str
    node_guid: str
    sysimg_guid: str
    vendor_id: str
    device_id: str
    ports: list[SubnetPort] = field(default_factory=list)

    @property
    def nports(self) -> int:
        return max(p.port for p in self.ports)


@dataclass
class Subnet:
    """The (sub-)fabric one rendering describes, with every lookup verify and the templates need."""

    plan: Plan
    view: View
    switches: list  # plan Switch objects
    cas: list[Ca]
    links: list[tuple[str, int, str, int]]  # (node id a, port a, node id b, port b), a < b, sorted
    lid_owner: dict[int, tuple[str, str]]  # lid -> (port GUID, description) of the port that owns it
    excluded: list[str]  # what the view leaves out, in words

    @property
    def switch_names(self) -> set[str]:
        return {s.name for s in self.switches}

    def sm_ca(self) -> Ca:
        """The CA the (master) subnet manager runs on: build_fabric puts it first."""
        return self.cas[0]

    def standby_sm_cas(self) -> list[Ca]:
        """The ports of the plan's other subnet manager hosts in this view, in the plan's order."""
        return [ca for host in self.plan.sm_hosts[1:] for ca in self.cas if ca.hostname == host]

    def sm_instance(self, subnet: str) -> SmInstance:
        """The OpenSM of `subnet` (this fabric, one of several subnets), bound to the master SM's port in it."""
        sm = self.sm_ca()
        return SmInstance(subnet=subnet, port_guid=sm.ports[0].port_guid, port=sm.id)


def unwritable(message: str, hint: str, path: tuple = ()) -> InputError:
    """A plan (or option) these files cannot be written from: bad input, exit 2."""
    c = Collector("plan.yaml")
    c.error(PLAN_VALUE_NOT_RENDERABLE, path, message, hint)
    return InputError(c.items)


def _check_name(kind: str, name: str) -> str:
    # Names reach the topology file inside double quotes and after '#': no quoting exists there, so refuse.
    if not _SAFE_NAME.fullmatch(name) or "#" in name or "@" in name or '"' in name:
        raise unwritable(
            f"{kind} name {name!r} cannot be written to the OpenSM files",
            "names may hold letters, digits and . _ : / + - and spaces; fix the inventory and re-run design",
        )
    return name


def _check_guid(guid: str) -> str:
    if not _GUID.fullmatch(guid):
        raise unwritable(f"GUID {guid!r} is not 0x followed by 16 lowercase hex digits", "re-run `ffplan design`")
    return guid


def build_fabric(plan: Plan, view: View = View()) -> Subnet:
    zone = view.zone
    if zone is not None and zone not in {z.name for z in plan.zones}:
        zones = [z.name for z in plan.zones]
        raise option_error(
            OPTION_VALUE_NOT_IN_PLAN,
            "--zone",
            f"zone {zone!r} is not in the plan",
            " ".join(filter(None, [did_you_mean(zone, zones), "zones: " + ", ".join(zones)])),
        )
    switches = [s for s in plan.switches if zone is None or s.zone == zone]
    for s in switches:
        _check_name("switch", s.name)
        _check_guid(s.node_guid)
    switches = [s for s in switches if s.name not in view.drop_switches]
    names = {s.name for s in switches}
    nic_models = {m.name: m for m in plan.nic_models}
    cas: dict[str, Ca] = {}
    excluded: list[str] = []
    skipped_ports = 0
    for node in plan.nodes:
        _check_name("host", node.hostname)
        for p in node.ports:
            if zone is not None and p.zone != zone:
                skipped_ports += 1
                continue
            if p.cable in view.drop_cables or p.leaf in view.drop_switches:
                continue
            _check_name("NIC", p.nic)
            nic_model = nic_models.get(p.nic_model)
            if nic_model is None:
                raise unwritable(
                    f"NIC model {p.nic_model!r} of {node.hostname} {p.nic} is not in the plan's nic_models",
                    "re-run `ffplan design`",
                )
            ca_id = f"{node.hostname} {p.nic}" if p.port == 1 else f"{node.hostname} {p.nic} p{p.port}"
            ca = cas.setdefault(
                p.node_guid,
                Ca(
                    id=ca_id,
                    hostname=node.hostname,
                    nic=p.nic,
                    role=node.role,
                    node_guid=_check_guid(p.node_guid),
                    sysimg_guid=_check_guid(p.sysimg_guid),
                    vendor_id=nic_model.vendor_id,
                    device_id=nic_model.device_id,
                ),
            )
            ca.ports.append(
                SubnetPort(
                    port=1,
                    port_guid=_check_guid(p.port_guid),
                    lid=p.lid,
                    leaf=p.leaf,
                    leaf_port=p.leaf_port,
                    zone=p.zone,
                )
            )
    links: list[tuple[str, int, str, int]] = []
    inter = 0
    dropped = 0
    for c in plan.cables:
        if c.label in view.drop_cables:
            dropped += 1
            continue
        if c.a.device in view.drop_switches or c.b.device in view.drop_switches:
            continue
        if c.kind == "node-leaf":
            continue  # CA links come from the node ports (a NIC port number, not the NIC name)
        if c.a.device not in names or c.b.device not in names:
            inter += 1
            continue
        a, b = (c.a.device, int(c.a.port)), (c.b.device, int(c.b.port))
        links.append((*min(a, b), *max(a, b)))
    for ca in cas.values():
        for ca_port in ca.ports:
            a, b = (ca.id, ca_port.port), (ca_port.leaf, ca_port.leaf_port)
            links.append((*min(a, b), *max(a, b)))
    links.sort()
    if zone is not None:
        others = [z.name for z in plan.zones if z.name != zone]
        excluded.append(
            f"{len(plan.switches) - len(switches)} switches and {skipped_ports} CA ports of zone(s) {', '.join(others)}"
        )
        excluded.append(f"{inter} inter-zone/cross-zone links")
    if view.drop_cables:
        excluded.append(f"{dropped} cable(s) taken out: {', '.join(sorted(view.drop_cables))}")
    if view.drop_switches:
        excluded.append(f"switch(es) taken out with their cables: {', '.join(sorted(view.drop_switches))}")
    order = {n.hostname: i for i, n in enumerate(plan.nodes)}
    in_order = sorted(cas.values(), key=lambda ca: (order[ca.hostname], ca.nic))
    sm = _subnet_manager_ca(plan, in_order)
    ordered = ([sm] if sm else []) + [ca for ca in in_order if ca is not sm]
    lid_owner: dict[int, tuple[str, str]] = {s.lid: (s.node_guid, s.name) for s in switches}
    for ca in ordered:
        for ca_port in ca.ports:
            lid_owner[ca_port.lid] = (ca_port.port_guid, ca.id)
    return Subnet(
        plan=plan, view=view, switches=switches, cas=ordered, links=links, lid_owner=lid_owner, excluded=excluded
    )


def _subnet_manager_ca(plan: Plan, in_order: list[Ca]) -> Ca | None:
    """The first port of the plan's first SM host in the view (the design gave it a top-block LID), else, for
    plans without sm_hosts or a view without those hosts, the first management port, else the first CA."""
    for host in plan.sm_hosts:
        ca = next((ca for ca in in_order if ca.hostname == host), None)
        if ca:
            return ca
    return next((ca for ca in in_order if ca.role == "management"), in_order[0] if in_order else None)


def link_rate(plan: Plan) -> str:
    """Width and speed as ibnetdiscover prints an active link: 4xHDR."""
    speed = next((m.speed for m in plan.switch_models if m.name == plan.fabric_switch_model), None) or "HDR"
    return f"4x{speed}"


def ibsim_ca_guid(port_guid: str) -> str:
    """The `caguid=` ibsim needs for a CA whose port 1 has this GUID: ibsim makes a CA's port GUID its node
    GUID + port number (real mlx5 ports have node GUID = port GUID), so the simulator's node GUID is one below."""
    return f"0x{int(port_guid, 16) - 1:016x}"
