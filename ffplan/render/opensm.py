"""OpenSM files of a plan: opensm.conf (file routing engine + QoS), the LFT file, guid2lid, the QoS policy,
partitions, the ftree GUID files and variant config, the topology in ibnetdiscover format and a node-name map.

Everything is computed here into plain view models; the templates in `templates/opensm/` only print them.
Public surface: `render_opensm(plan, prefix)`. For verify, reroute and audit: `opensm_files(plan, prefix, view)`
renders a sub-fabric (one zone, or the fabric without some cables), `build_fabric(plan, view)` is its view model
(`Subnet`, `Ca`, `SubnetPort`), and `expected_conf`, `expected_path_sls`, `simulator_topology`, `ibsim_ca_guid` and
`lfts_text` say what OpenSM and ibsim are given. The file names and `View` live in `opensm_layout`.

Facts about the formats (see docs/render-opensm.md and ../shared/reference/opensm-and-ibsim.md):
- the `file` engine reads `Unicast lids ... guid 0x<switch node GUID> ...` headers and `0x<lid> <port> ...
  portguid 0x<dest port GUID>` entries; a switch missing from the file ends up with an empty LFT, so every
  switch gets a block; the portguid lets OpenSM remap an entry when a port's LID differs from the plan;
- guid2lid is OpenSM's osm_db format: one `0x<port GUID> 0x<lid> 0x<lid>` record, then an empty line;
- topology.net is what `ibnetdiscover` prints for the planned fabric; ibsim reads the same format, but
  derives a CA's port GUID as node GUID + port, so only its copy (simulator_topology) adjusts `caguid=`;
- opensm.conf booleans are `TRUE` or anything else (= FALSE, silently).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Callable, Collection, Iterable, Iterator, TypeVar

import numpy as np

from ffplan.diagnostics import Collector, InputError, did_you_mean, option_error
from ffplan.plan.model import Plan, PortClassQos, TrafficClassPlan, VlArbEntry
from ffplan.render.env import render_template, stream_template
from ffplan.plan.subnets import subnet_views
from ffplan.render.opensm_layout import (CN_GUIDS, CONF, DEFAULT_PREFIX, FTREE_CONF, GUID2LID, IO_GUIDS, LFTS,
                                         NODE_NAME_MAP, PARTITIONS, QOS_POLICY, README, ROOT_GUIDS, TOPOLOGY,
                                         SmInstance, View, subnet_folders)

# Port classes of the plan -> opensm.conf key prefix.
QOS_PREFIX = {"default": "qos_", "ca": "qos_ca_", "swe": "qos_swe_", "sw0": "qos_sw0_"}

# max_op_vls encoding: 1 = VL0, 2 = VL0-1, 3 = VL0-3, 4 = VL0-7, 5 = VL0-14.
_OP_VLS = ((1, 1), (2, 2), (4, 3), (8, 4), (15, 5))

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/+ -]*$")
_SAFE_PATH = re.compile(r"^/[A-Za-z0-9._/+-]*$")
_GUID = re.compile(r"^0x[0-9a-f]{16}$")

ROLES = ("compute", "storage", "management")  # port groups of the QoS policy, in this order


# --------------------------------------------------------------------------------------------------- views


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


def _fail(message: str, hint: str, path: tuple = ()) -> InputError:
    """A plan (or option) these files cannot be written from: bad input, exit 2."""
    c = Collector("plan.yaml")
    c.error("FF920", path, message, hint)
    return InputError(c.items)


def _check_name(kind: str, name: str) -> str:
    # Names reach the topology file inside double quotes and after '#': no quoting exists there, so refuse.
    if not _SAFE_NAME.fullmatch(name) or "#" in name or "@" in name or '"' in name:
        raise _fail(f"{kind} name {name!r} cannot be written to the OpenSM files",
                    "names may hold letters, digits and . _ : / + - and spaces; fix the inventory and re-run design")
    return name


def _check_guid(guid: str) -> str:
    if not _GUID.fullmatch(guid):
        raise _fail(f"GUID {guid!r} is not 0x followed by 16 lowercase hex digits", "re-run `ffplan design`")
    return guid


def build_fabric(plan: Plan, view: View = View()) -> Subnet:
    zone = view.zone
    if zone is not None and zone not in {z.name for z in plan.zones}:
        zones = [z.name for z in plan.zones]
        raise option_error("FF910", "--zone", f"zone {zone!r} is not in the plan",
                           " ".join(filter(None, [did_you_mean(zone, zones), "zones: " + ", ".join(zones)])))
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
                raise _fail(f"NIC model {p.nic_model!r} of {node.hostname} {p.nic} is not in the plan's nic_models",
                            "re-run `ffplan design`")
            ca_id = f"{node.hostname} {p.nic}" if p.port == 1 else f"{node.hostname} {p.nic} p{p.port}"
            ca = cas.setdefault(p.node_guid, Ca(id=ca_id, hostname=node.hostname, nic=p.nic, role=node.role,
                                                 node_guid=_check_guid(p.node_guid), sysimg_guid=_check_guid(p.sysimg_guid),
                                                 vendor_id=nic_model.vendor_id, device_id=nic_model.device_id))
            ca.ports.append(SubnetPort(port=1, port_guid=_check_guid(p.port_guid), lid=p.lid, leaf=p.leaf,
                                   leaf_port=p.leaf_port, zone=p.zone))
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
        excluded.append(f"{len(plan.switches) - len(switches)} switches and {skipped_ports} CA ports of "
                        f"zone(s) {', '.join(others)}")
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
    return Subnet(plan=plan, view=view, switches=switches, cas=ordered, links=links, lid_owner=lid_owner,
                  excluded=excluded)


def _subnet_manager_ca(plan: Plan, in_order: list[Ca]) -> Ca | None:
    """The first port of the plan's first SM host in the view (the design gave it a top-block LID), else, for
    plans without sm_hosts or a view without those hosts, the first management port, else the first CA."""
    for host in plan.sm_hosts:
        ca = next((ca for ca in in_order if ca.hostname == host), None)
        if ca:
            return ca
    return next((ca for ca in in_order if ca.role == "management"), in_order[0] if in_order else None)


# ----------------------------------------------------------------------------------------------- models


def link_rate(plan: Plan) -> str:
    """Width and speed as ibnetdiscover prints an active link: 4xHDR."""
    speed = next((m.speed for m in plan.switch_models if m.name == plan.fabric_switch_model), "HDR")
    return f"4x{speed}"


def _hex(value: str) -> str:
    """A GUID or id as ibnetdiscover prints it in `switchguid=`, `vendid=`, port GUIDs: no zero padding."""
    return f"{int(value, 16):x}"


def ibsim_ca_guid(port_guid: str) -> str:
    """The `caguid=` ibsim needs for a CA whose port 1 has this GUID: ibsim makes a CA's port GUID its node
    GUID + port number (real mlx5 ports have node GUID = port GUID), so the simulator's node GUID is one below."""
    return f"0x{int(port_guid, 16) - 1:016x}"


def topology_model(fab: Subnet, simulator: bool = False) -> dict:
    """Records exactly as `ibnetdiscover` prints them (infiniband-diags 44): every switch, then every CA.

    `simulator=True` is the copy ibsim boots (ffplan verify): node ids are the names (ibsim's console and
    SIM_HOST address nodes by id) and `caguid=` follows ibsim's GUID rule (see ibsim_ca_guid); everything
    else, port GUIDs included, is what the real fabric reports.
    """
    plan = fab.plan
    rate = link_rate(plan)
    switch_model = {m.name: m for m in plan.switch_models}
    by_node: dict[str, list[tuple[int, str, int]]] = defaultdict(list)
    for a, pa, b, pb in fab.links:
        by_node[a].append((pa, b, pb))
        by_node[b].append((pb, a, pa))
    node_id: dict[str, str] = {}
    lid_of: dict[tuple[str, int], int] = {}
    ca_port_guid: dict[str, str] = {}
    for s in fab.switches:
        node_id[s.name] = s.name if simulator else f"S-{int(s.node_guid, 16):016x}"
        lid_of[(s.name, 0)] = s.lid
    for ca in fab.cas:
        node_id[ca.id] = ca.id if simulator else f"H-{int(ca.node_guid, 16):016x}"
        for p in ca.ports:
            lid_of[(ca.id, p.port)] = p.lid
            ca_port_guid[ca.id] = p.port_guid

    def remote(name: str, rport: int) -> tuple[str, str]:
        """The remote end of a port line and the comment's remote part: `"id"[p](guid) ` / `"desc" lid N`."""
        if name in ca_port_guid:
            return (f'"{node_id[name]}"[{rport}]({_hex(ca_port_guid[name])}) ',
                    f'"{name}" lid {lid_of[(name, rport)]} {rate}')
        return f'"{node_id[name]}"[{rport}]', f'"{name}" lid {lid_of[(name, 0)]} {rate}'

    records = []
    for s in fab.switches:
        model = switch_model[s.model]
        lines = []
        for port, rname, rport in sorted(by_node[s.name]):
            end, comment = remote(rname, rport)
            lines.append(f"[{port}]\t{end}\t\t# {comment}")
        records.append({
            "vendid": f"0x{_hex(model.vendor_id)}", "devid": f"0x{_hex(model.device_id)}", "sysimgguid": f"0x{_hex(s.sysimg_guid)}",
            "guid_line": f"switchguid=0x{_hex(s.node_guid)}({_hex(s.port_guid)})",
            "header": f'Switch\t{s.ports} "{node_id[s.name]}"\t\t# "{s.name}" enhanced port 0 lid {s.lid} lmc 0',
            "ports": lines,
        })
    for ca in fab.cas:
        own = ca.ports[0]  # an mlx5 device has one port
        lines = []
        for port, rname, rport in sorted(by_node[ca.id]):
            end, comment = remote(rname, rport)
            lines.append(f"[{port}]({_hex(own.port_guid)}) \t{end}\t\t# lid {own.lid} lmc 0 {comment}")
        guid = ibsim_ca_guid(own.port_guid) if simulator else ca.node_guid
        records.append({
            "vendid": f"0x{_hex(ca.vendor_id)}", "devid": f"0x{_hex(ca.device_id)}", "sysimgguid": f"0x{_hex(ca.sysimg_guid)}",
            "guid_line": f"caguid=0x{_hex(guid)}",
            "header": f'Ca\t{ca.nports} "{node_id[ca.id]}"\t\t# "{ca.id}"',
            "ports": lines,
        })
    sm = fab.sm_ca() if fab.cas else None
    return {
        "title": f"{plan.inventory.name} ({fab.view.describe()})",
        "simulator": simulator,
        "switches": len(fab.switches),
        "ca_ports": sum(len(ca.ports) for ca in fab.cas),
        "links": len(fab.links),
        "from_node": f"{int(sm.node_guid, 16):016x}" if sm else "",
        "from_port": f"{int(sm.ports[0].port_guid, 16):016x}" if sm else "",
        "sm_host": sm.id if sm else "",
        "excluded": fab.excluded,
        "records": records,
    }


def simulator_topology(fab: Subnet) -> str:
    """The net file ibsim boots for `ffplan verify` (never a deliverable: see topology_model)."""
    return render_template("opensm/topology.net.j2", **topology_model(fab, simulator=True))


def node_name_map_model(fab: Subnet) -> dict:
    entries = [{"guid": s.node_guid, "name": s.name} for s in fab.switches]
    entries += [{"guid": ca.node_guid, "name": ca.id} for ca in fab.cas]
    return {"title": fab.plan.inventory.name, "entries": entries}


def guid2lid_model(fab: Subnet) -> dict:
    records = [{"guid": guid, "lid": f"0x{lid:04x}", "name": name} for lid, (guid, name) in sorted(fab.lid_owner.items())]
    return {"records": records}


_PORT_FIELD = [f"{port:03d}" for port in range(256)]  # an LFT entry's port, as dump_fts prints it


def lft_model(fab: Subnet) -> dict:
    """The LFT file's view model; its blocks (one per switch, about a MB each on a 16,384-endpoint subnet) are
    made as the template asks for them."""
    plan = fab.plan
    routing = plan.routing
    assert routing is not None
    lfts = {lft.switch: lft.ports for lft in routing.lfts}
    missing = [s.name for s in fab.switches if s.name not in lfts]
    if missing:
        raise _fail(f"the plan's routing has no table for switch(es) {', '.join(missing[:5])}",
                    "re-run `ffplan design` so every switch is routed", ("routing", "lfts"))
    is_switch = {s.node_guid for s in plan.switches}
    lids = np.array(sorted(fab.lid_owner), dtype=np.int64)
    max_lid = int(lids[-1]) if lids.size else 0
    # Each entry is "LID PORT : (destination)\n", the destination as dump_fts prints it: the portguid lets OpenSM
    # remap a moved LID. The text around the port is the same on every switch, so it is built once per LID, and a
    # switch's entries are those pieces picked by numpy (object arrays of the strings) and joined once.
    before, after = np.empty(len(lids), dtype=object), np.empty(len(lids), dtype=object)
    for i, lid in enumerate(lids.tolist()):
        guid, name = fab.lid_owner[lid]
        kind = "Switch" if guid in is_switch else "Channel Adapter"
        before[i] = f"0x{lid:04x} "
        after[i] = f" : ({kind} portguid {guid}: '{name}')\n"
    port_field = np.array(_PORT_FIELD, dtype=object)

    def blocks() -> Iterator[dict]:
        for s in fab.switches:
            table = lfts[s.name]
            present = np.flatnonzero(lids < len(table))
            ports = table[lids[present]]
            routed = ports != routing.unrouted_port
            listed = present[routed]
            pieces = np.empty(3 * len(listed), dtype=object)
            pieces[0::3], pieces[1::3], pieces[2::3] = before[listed], port_field[ports[routed]], after[listed]
            yield {"header": f"Unicast lids [0x0-0x{max_lid:x}] of switch Lid {s.lid} guid {s.node_guid} ({s.name}):",
                   "entries": "".join(pieces.tolist())[:-1], "count": len(listed)}

    return {"title": plan.inventory.name, "engine": routing.engine, "view": fab.view.describe(), "blocks": blocks()}


def lfts_chunks(fab: Subnet) -> Iterator[str]:
    """The file engine's input for this (sub-)fabric: entries only for the LIDs of its ports. OpenSM 3.3.23 writes
    file entries unchecked into a table that ends with the 64-LID block of the highest LID present; the design
    puts the SM hosts' ports in the top block, so the running SM's port keeps every entry inside it
    (docs/operations.md). In pieces, one switch's block at a time: the file of a 16,384-endpoint subnet is 1.7 GB."""
    return stream_template("opensm/lfts.dump.j2", **lft_model(fab))


def lfts_text(fab: Subnet) -> str:
    """lfts_chunks as one string."""
    return "".join(lfts_chunks(fab))


def _vlarb(entries: Iterable[VlArbEntry]) -> str:
    return ",".join(f"{e.vl}:{e.weight}" for e in entries)


def qos_conf_values(pc: PortClassQos) -> list[tuple[str, str]]:
    """(suffix, value) pairs of one port class, in opensm.conf's order."""
    return [
        ("max_vls", str(pc.max_vls)),
        ("high_limit", str(pc.high_limit)),
        ("vlarb_high", _vlarb(pc.vlarb_high)),
        ("vlarb_low", _vlarb(pc.vlarb_low)),
        ("sl2vl", ",".join(str(v) for v in pc.sl2vl)),
    ]


def expected_conf(plan: Plan, prefix: str, engine: str = "file", instance: SmInstance | None = None) -> dict[str, str]:
    """Every key ffplan sets in opensm.conf with its value, as OpenSM's effective config prints it. With
    `instance` (one subnet of several), the port it binds to and a log and dump folder of its own."""
    qos = plan.qos
    assert qos is not None
    op_vls = next(code for vls, code in _OP_VLS if vls >= min(qos.data_vls, 15))
    p = PurePosixPath(prefix)
    kv: dict[str, str] = {}
    if instance is not None:
        kv["guid"] = instance.port_guid
    if engine == "file":
        kv["routing_engine"] = "file,no_fallback"
        kv["lfts_file"] = str(p / LFTS)
    else:
        kv["routing_engine"] = "ftree,no_fallback"
        kv["root_guid_file"] = str(p / ROOT_GUIDS)
        kv["cn_guid_file"] = str(p / CN_GUIDS)
        if any(n.role != "compute" for n in plan.nodes):  # ftree refuses an I/O GUID file without GUIDs (AB29)
            kv["io_guid_file"] = str(p / IO_GUIDS)
    kv.update({
        "lmc": "0",
        "reassign_lids": "FALSE",
        "honor_guid2lid_file": "TRUE",
        "sweep_interval": "10",
        "sweep_on_trap": "TRUE",
        "max_op_vls": str(op_vls),
        "partition_config_file": str(p / PARTITIONS),
        "node_name_map_name": str(p / NODE_NAME_MAP),
        "log_flags": "0x03",
        "force_log_flush": "TRUE",
        "log_file": instance.log_file if instance else "/var/log/opensm.log",
        "log_max_size": "1024",
        "accum_log_file": "TRUE",
    })
    if instance is not None:
        kv["dump_files_dir"] = instance.dump_dir
    kv.update({
        "qos": "TRUE",
        "qos_policy_file": str(p / QOS_POLICY),
    })
    for cls in ("default", "ca", "swe", "sw0"):
        pc = qos.port_classes.get(cls)
        if pc is None:
            continue
        for suffix, value in qos_conf_values(pc):
            kv[QOS_PREFIX[cls] + suffix] = value
    return kv


_CONF_GROUPS = [
    ("The port this OpenSM manages its subnet through", ("guid",)),
    ("Routing: the tables come from the plan; never fall back to another engine", (
        "routing_engine", "lfts_file", "root_guid_file", "cn_guid_file", "io_guid_file")),
    ("Addressing", (
        "lmc", "reassign_lids", "honor_guid2lid_file")),
    ("Sweeps", ("sweep_interval", "sweep_on_trap")),
    ("Virtual lanes in operation (4 = VL0-7)", ("max_op_vls",)),
    ("Partitions and node names", ("partition_config_file", "node_name_map_name")),
    ("Logging: flushed per line, so 'SUBNET UP' is visible at once", (
        "log_flags", "force_log_flush", "log_file", "log_max_size", "accum_log_file", "dump_files_dir")),
    ("QoS: the policy file maps PathRecord queries to SLs; SL2VL and VL arbitration follow per port class", (
        "qos", "qos_policy_file")),
]
_QOS_TITLES = {
    "default": "QoS default set (used where no class set applies)",
    "ca": "QoS set for CA (HCA) ports",
    "swe": "QoS set for switch external ports",
    "sw0": "QoS set for switch port 0 (the switch's management port)",
}


def conf_model(plan: Plan, prefix: str, engine: str, instance: SmInstance | None = None) -> dict:
    kv = expected_conf(plan, prefix, engine, instance)
    cache = instance.cache_dir if instance else "/var/cache/opensm"
    titles = {"guid": f"Subnet {instance.subnet}: one OpenSM per subnet, bound to {instance.port}; run it with "
                      f"OSM_CACHE_DIR={cache}" if instance else "",
              "lmc": f"Addressing: the planned LIDs are pinned by guid2lid (copy it to {cache}/guid2lid)"}
    groups = []
    for title, keys in _CONF_GROUPS:
        title = titles.get(keys[0], title)
        items = [{"key": k, "value": kv[k]} for k in keys if k in kv]
        if items:
            groups.append({"title": title, "items": items})
    for cls, title in _QOS_TITLES.items():
        pfx = QOS_PREFIX[cls]
        items = [{"key": k, "value": v} for k, v in kv.items() if k.startswith(pfx) and k.count("_") - pfx.count("_") <= 1
                 and k[len(pfx):] in ("max_vls", "high_limit", "vlarb_high", "vlarb_low", "sl2vl")]
        if items:
            groups.append({"title": title, "items": items})
    variant = ("OpenSM's own fat-tree engine with ffplan's GUID files (LIDs still pinned by guid2lid)"
               if engine == "ftree" else "routing tables precomputed by ffplan (file engine)")
    title = f"{plan.inventory.name} subnet {instance.subnet}" if instance else plan.inventory.name
    return {"title": title, "variant": variant, "groups": groups}


def qos_classes(plan: Plan) -> dict:
    """Levels, the class of unmatched queries and the class of each role pair, as the plan records them (verify
    checks the same facts)."""
    qos = plan.qos
    assert qos is not None
    classes = list(qos.classes)
    default = next((c for c in classes if c.carries and c.carries.unmatched), None)
    pairs: dict[tuple[str, ...], TrafficClassPlan] = {}  # (role, role) in ROLES order -> class; both directions of the pair
    for c in classes:
        for a, b in c.carries.roles if c.carries else ():
            pairs.setdefault(tuple(sorted((a.value, b.value), key=ROLES.index)), c)
    return {"classes": classes, "default": default, "pairs": pairs}


def _directions(a: str, b: str) -> tuple[tuple[str, str], ...]:
    """A role pair carries traffic both ways: a -> b and b -> a (once when a == b)."""
    return ((a, b), (b, a)) if a != b else ((a, b),)


def _chunks(items: list[str], n: int) -> list[str]:
    return [", ".join(items[i:i + n]) for i in range(0, len(items), n)]


def qos_policy_model(fab: Subnet) -> dict:
    plan = fab.plan
    qc = qos_classes(plan)
    groups = []
    by_role_zone: dict[tuple[str, str], list[str]] = defaultdict(list)
    for ca in fab.cas:
        for p in ca.ports:
            by_role_zone[(ca.role, p.zone)].append(p.port_guid)
    zones = [z.name for z in plan.zones if fab.view.zone in (None, z.name)]
    role_groups: dict[str, list[str]] = defaultdict(list)
    for role in ROLES:
        for zone in zones:
            guids = by_role_zone.get((role, zone))
            if not guids:
                continue
            name = f"{role}-{zone}"
            role_groups[role].append(name)
            groups.append({"name": name, "use": f"{role} ports in zone {zone}", "lines": _chunks(guids, 4)})
    levels = [{"name": "DEFAULT", "use": f"unmatched queries: {qc['default'].name if qc['default'] else 'SL 0'}",
               "sl": qc["default"].sl if qc["default"] else 0}]
    for c in qc["classes"]:
        levels.append({"name": c.name, "use": _one_line(c.description), "sl": c.sl})
    rules = []
    for c in qc["classes"]:
        rules.append({"use": f"{c.name}: applications that ask for QoS class {c.sl}", "match": [("qos-class", str(c.sl))],
                      "level": c.name})
    for (a, b), c in qc["pairs"].items():
        if not (role_groups[a] and role_groups[b]):
            continue
        for src, dst in _directions(a, b):
            rules.append({"use": f"{c.name}: {src} -> {dst} ports", "level": c.name,
                          "match": [("source", ", ".join(role_groups[src])), ("destination", ", ".join(role_groups[dst]))]})
    return {"title": plan.inventory.name, "groups": groups, "levels": levels, "rules": rules}


def expected_path_sls(fab: Subnet) -> list[dict]:
    """Sample PathRecord queries and the SL the policy must answer (what verify asks OpenSM's SA)."""
    qc = qos_classes(fab.plan)
    by_role: dict[str, list[Ca]] = defaultdict(list)
    for ca in fab.cas:
        by_role[ca.role].append(ca)
    out = []

    def lid(ca: Ca) -> int:
        return ca.ports[0].lid

    default_sl = qc["default"].sl if qc["default"] else 0
    default_name = qc["default"].name if qc["default"] else "SL 0"
    # every role pair present, each direction: the class that carries the pair, else the unmatched class
    for i, a in enumerate(ROLES):
        for b in ROLES[i:]:
            cls = qc["pairs"].get((a, b))
            for src, dst in _directions(a, b):
                ends = by_role.get(src, []), by_role.get(dst, [])
                if not ends[0] or not ends[1] or (src == dst and len(ends[0]) < 2):
                    continue
                out.append({"what": f"{src} -> {dst} ({cls.name if cls else 'DEFAULT: ' + default_name})",
                            "src": lid(ends[0][0]), "dst": lid(ends[1][-1]), "qos_class": None,
                            "sl": cls.sl if cls else default_sl})
    comp = by_role.get("compute", [])
    if len(comp) >= 2:
        for c in qc["classes"]:
            out.append({"what": f"QoS class {c.sl} ({c.name})", "src": lid(comp[0]), "dst": lid(comp[-1]),
                        "qos_class": c.sl, "sl": c.sl})
    return out


def _one_line(text: str) -> str:
    return " ".join(str(text).split()).replace("#", "")[:120]


def guid_files_model(fab: Subnet) -> dict:
    # ftree's roots are the top tier: the spines of a two-layer tree, the cores of a three-layer one
    top = "core" if any(s.tier == "core" for s in fab.switches) else "spine"
    roots = [{"guid": s.node_guid, "name": s.name} for s in fab.switches if s.tier == top]
    cn = [{"guid": p.port_guid, "name": ca.id} for ca in fab.cas if ca.role == "compute" for p in ca.ports]
    io = [{"guid": p.port_guid, "name": ca.id} for ca in fab.cas if ca.role != "compute" for p in ca.ports]
    return {"root": roots, "root_tier": top, "cn": cn, "io": io}


# IB rate enum (IBA PathRecord/MCMemberRecord rate; OpenSM's IB_PATH_RECORD_RATE_* in iba/ib_types.h), which
# partitions.conf's `rate=` takes, for the 4x links of each speed.
IB_RATE_CODE = {"EDR": (100, 16), "HDR": (200, 17), "NDR": (400, 21)}
# IPoIB's broadcast group MTU: code 4 = 2048 bytes (IB MTU enum 1..5 = 256..4096 = 128 << code), the IPoIB
# datagram default.
IPOIB_MTU_CODE = 4


def ipoib_rate(plan: Plan) -> tuple[int, int]:
    """(Gb/s, rate code) of the fabric's links (4x at the fabric switch model's speed): OpenSM creates the IPoIB
    broadcast group with rate 3 (10 Gb/s) otherwise, which caps IPoIB multicast far below the links."""
    speed = next(m.speed for m in plan.switch_models if m.name == plan.fabric_switch_model)
    return IB_RATE_CODE[speed]


def partitions_model(fab: Subnet) -> dict:
    gbps, rate = ipoib_rate(fab.plan)
    return {"title": fab.plan.inventory.name, "ports": sum(len(ca.ports) for ca in fab.cas), "rate": rate,
            "gbps": gbps, "mtu": IPOIB_MTU_CODE, "mtu_bytes": 128 << IPOIB_MTU_CODE}


# ----------------------------------------------------------------------------------------------- render


def check_prefix(prefix: str) -> str:
    if not _SAFE_PATH.fullmatch(prefix) or "//" in prefix:
        c = Collector("--prefix")  # a bad option is a usage error (exit 2), not a plan finding
        c.error("FF920", (), f"--prefix {prefix!r} is not an absolute path of plain characters",
                "use a path like /etc/opensm (letters, digits, . _ / + -)")
        raise InputError(c.items)
    return prefix.rstrip("/") or "/"


def require_complete(plan: Plan) -> None:
    missing = [name for name in ("routing", "qos") if getattr(plan, name) is None]
    if missing:
        raise _fail(f"the plan has no {' and no '.join(missing)}: OpenSM files need the routing tables and the QoS plan",
                    "re-run `ffplan design` with a version of ffplan that routes and plans QoS", (missing[0],))
    assert plan.qos is not None, "refused above when missing"
    unknown = [c.name for c in plan.qos.classes if c.carries is None]
    if unknown:
        raise _fail(f"the plan does not say what traffic classes {', '.join(unknown)} carry (written by an older ffplan)",
                    "re-run `ffplan design`: the QoS policy is built from what each class carries", ("qos", "classes"))


def opensm_files(plan: Plan, prefix: str = DEFAULT_PREFIX, view: View = View(),
                 engines: Collection[str] = ("file", "ftree"), subnet: str | None = None) -> dict[str, str]:
    """File name (no folder) -> text for the given view of the plan. `subnet` names the subnet when `plan` is
    one subnet's view of a plan with several: its opensm.conf then binds to the SM port in that subnet."""
    prefix = check_prefix(prefix)
    require_complete(plan)
    return _subnet_files(build_fabric(plan, view), prefix, engines, subnet, lfts_text)


LftBody = TypeVar("LftBody", str, Iterator[str])


def _subnet_files(fab: Subnet, prefix: str, engines: Collection[str], subnet: str | None,
                  lfts: Callable[[Subnet], LftBody]) -> dict[str, str | LftBody]:
    plan = fab.plan
    if not fab.cas:
        raise _fail(f"{fab.view.describe()}: no CA ports to render", "check the zone name")
    instance = fab.sm_instance(subnet) if subnet else None
    files: dict[str, str | LftBody] = {
        TOPOLOGY: render_template("opensm/topology.net.j2", **topology_model(fab)),
        NODE_NAME_MAP: render_template("opensm/node-name-map.j2", **node_name_map_model(fab)),
        GUID2LID: render_template("opensm/guid2lid.j2", **guid2lid_model(fab)),
        QOS_POLICY: render_template("opensm/qos-policy.conf.j2", **qos_policy_model(fab)),
        PARTITIONS: render_template("opensm/partitions.conf.j2", **partitions_model(fab)),
    }
    guids = guid_files_model(fab)
    for fname, key, what in ((ROOT_GUIDS, "root", f"{guids['root_tier']} (root) switch node GUIDs"),
                             (CN_GUIDS, "cn", "compute node port GUIDs"),
                             (IO_GUIDS, "io", "storage and management port GUIDs")):
        files[fname] = render_template("opensm/guids.txt.j2", what=what, title=plan.inventory.name, entries=guids[key])
    if "file" in engines:
        files[CONF] = render_template("opensm/opensm.conf.j2", **conf_model(plan, prefix, "file", instance))
        files[LFTS] = lfts(fab)
    if "ftree" in engines:
        files[FTREE_CONF] = render_template("opensm/opensm.conf.j2", **conf_model(plan, prefix, "ftree", instance))
    return files


def render_opensm(plan: Plan, prefix: str = DEFAULT_PREFIX) -> dict[str, str]:
    """Relative path under the output folder (`opensm/...`) -> file text: one subnet's files in opensm/, several
    subnets' in opensm/<subnet>/ each (one OpenSM per subnet) with a README saying which SM host runs which."""
    return _render_opensm(plan, prefix, lfts_text)


def render_opensm_chunked(plan: Plan, prefix: str = DEFAULT_PREFIX) -> dict[str, str | Iterator[str]]:
    """render_opensm with each LFT file as lfts_chunks, made while it is written (`ffplan.outdir.write_folder`)."""
    return _render_opensm(plan, prefix, lfts_chunks)


def _render_opensm(plan: Plan, prefix: str, lfts: Callable[[Subnet], LftBody]) -> dict[str, str | LftBody]:
    prefix = check_prefix(prefix)
    folders = subnet_folders(plan.subnets)
    require_complete(plan)
    if len(folders) == 1:
        one = _subnet_files(build_fabric(plan), prefix, ("file", "ftree"), None, lfts)
        return {f"opensm/{name}": text for name, text in sorted(one.items())}
    files: dict[str, str | LftBody] = {}
    instances = []
    for subnet, view in subnet_views(plan):
        where = f"{prefix.rstrip('/')}/{folders[subnet]}"
        fab = build_fabric(view)
        for name, text in _subnet_files(fab, where, ("file", "ftree"), subnet, lfts).items():
            files[f"opensm/{folders[subnet]}/{name}"] = text
        instances.append({"instance": fab.sm_instance(subnet), "prefix": where,
                          "standby": [{"port": ca.id, "port_guid": ca.ports[0].port_guid}
                                      for ca in fab.standby_sm_cas()]})
    files[f"opensm/{README}"] = render_template("opensm/README.md.j2", title=plan.inventory.name,
                                                subnets=instances, conf=CONF, guid2lid=GUID2LID)
    return dict(sorted(files.items()))
