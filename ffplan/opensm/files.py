"""The text of every OpenSM file of a (sub-)fabric: opensm.conf (file routing engine + QoS), the LFT file,
guid2lid, the QoS policy, partitions, the ftree GUID files and variant config, the topology in ibnetdiscover
format and a node-name map. Render writes them into the output folder (`ffplan.render.opensm`); verify boots
them in ibsim and reroute rewrites the LFT file.

Everything is computed here into plain view models; the templates in `templates/opensm/` only print them.

Facts about the formats (see docs/render-opensm.md and ../shared/reference/opensm-and-ibsim.md):
- the `file` engine reads `Unicast lids ... guid 0x<switch node GUID> ...` headers and `0x<lid> <port> ...
  portguid 0x<dest port GUID>` entries; a switch missing from the file ends up with an empty LFT, so every
  switch gets a block; the portguid lets OpenSM remap an entry when a port's LID differs from the plan;
- guid2lid is OpenSM's osm_db format: one `0x<port GUID> 0x<lid> 0x<lid>` record, then an empty line;
- topology.net is what `ibnetdiscover` prints for the planned fabric; ibsim reads the same format, but
  derives a CA's port GUID as node GUID + port, so only its copy (simulator_topology) adjusts `caguid=`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Callable, Collection, Iterator, TypeVar

import numpy as np

from ffplan.codes.render import PLAN_VALUE_NOT_RENDERABLE
from ffplan.diagnostics import Collector, InputError
from ffplan.opensm.conf import QOS_PREFIX, ROLES, directions, expected_conf, qos_classes
from ffplan.opensm.layout import (
    CN_GUIDS,
    CONF,
    DEFAULT_PREFIX,
    FTREE_CONF,
    GUID2LID,
    IO_GUIDS,
    LFTS,
    NODE_NAME_MAP,
    PARTITIONS,
    QOS_POLICY,
    ROOT_GUIDS,
    TOPOLOGY,
    SmInstance,
    View,
)
from ffplan.opensm.subnet import Subnet, build_fabric, ibsim_ca_guid, link_rate, unwritable
from ffplan.plan.model import Plan
from ffplan.templating import render_template

_SAFE_PATH = re.compile(r"^/[A-Za-z0-9._/+-]*$")


def _hex(value: str) -> str:
    """A GUID or id as ibnetdiscover prints it in `switchguid=`, `vendid=`, port GUIDs: no zero padding."""
    return f"{int(value, 16):x}"


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
            return (
                f'"{node_id[name]}"[{rport}]({_hex(ca_port_guid[name])}) ',
                f'"{name}" lid {lid_of[(name, rport)]} {rate}',
            )
        return f'"{node_id[name]}"[{rport}]', f'"{name}" lid {lid_of[(name, 0)]} {rate}'

    records = []
    for s in fab.switches:
        model = switch_model[s.model]
        lines = []
        for port, rname, rport in sorted(by_node[s.name]):
            end, comment = remote(rname, rport)
            lines.append(f"[{port}]\t{end}\t\t# {comment}")
        records.append(
            {
                "vendid": f"0x{_hex(model.vendor_id)}",
                "devid": f"0x{_hex(model.device_id)}",
                "sysimgguid": f"0x{_hex(s.sysimg_guid)}",
                "guid_line": f"switchguid=0x{_hex(s.node_guid)}({_hex(s.port_guid)})",
                "header": f'Switch\t{s.ports} "{node_id[s.name]}"\t\t# "{s.name}" enhanced port 0 lid {s.lid} lmc 0',
                "ports": lines,
            }
        )
    for ca in fab.cas:
        own = ca.ports[0]  # an mlx5 device has one port
        lines = []
        for port, rname, rport in sorted(by_node[ca.id]):
            end, comment = remote(rname, rport)
            lines.append(f"[{port}]({_hex(own.port_guid)}) \t{end}\t\t# lid {own.lid} lmc 0 {comment}")
        guid = ibsim_ca_guid(own.port_guid) if simulator else ca.node_guid
        records.append(
            {
                "vendid": f"0x{_hex(ca.vendor_id)}",
                "devid": f"0x{_hex(ca.device_id)}",
                "sysimgguid": f"0x{_hex(ca.sysimg_guid)}",
                "guid_line": f"caguid=0x{_hex(guid)}",
                "header": f'Ca\t{ca.nports} "{node_id[ca.id]}"\t\t# "{ca.id}"',
                "ports": lines,
            }
        )
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
    records = [
        {"guid": guid, "lid": f"0x{lid:04x}", "name": name} for lid, (guid, name) in sorted(fab.lid_owner.items())
    ]
    return {"records": records}


# An LFT entry's port as dump_fts prints it (three digits), as bytes: row i is the i-th digit of every port 0-255.
_PORT_DIGITS = np.array([list(f"{port:03d}".encode()) for port in range(256)], dtype=np.uint8).T.copy()


def lft_entry(lid: int, port: int, port_guid: str) -> str:
    """One entry of the LFT file, all that OpenSM's file engine reads: LID, port, and the destination's port GUID,
    which lets OpenSM remap the entry if the destination's LID differs from the plan. No description after it
    (dump_fts prints one; the file engine skips it): it would double the file (docs/render-opensm.md)."""
    return f"0x{lid:04x} {port:03d} portguid {port_guid}\n"


ENTRY_BYTES = len(lft_entry(0, 0, "0x" + "0" * 16))  # every entry: LIDs < 0xC000, canonical GUIDs
PORT_AT = len("0x0000 ")  # where an entry's three port digits are


def lfts_chunks(fab: Subnet) -> LftChunks:
    """The file engine's input for this (sub-)fabric: entries only for the LIDs of its ports. OpenSM 3.3.23 writes
    file entries unchecked into a table that ends with the 64-LID block of the highest LID present; the design
    puts the SM hosts' ports in the top block, so the running SM's port keeps every entry inside it
    (docs/operations.md). In pieces, one switch's block at a time, its entries a numpy buffer written as it is (the
    file of a 16,384-endpoint subnet is 0.88 GB): no str of them is ever made."""
    plan = fab.plan
    routing = plan.routing
    assert routing is not None
    lfts = {lft.switch: lft.ports for lft in routing.lfts}
    missing = [s.name for s in fab.switches if s.name not in lfts]
    if missing:
        raise unwritable(
            f"the plan's routing has no table for switch(es) {', '.join(missing[:5])}",
            "re-run `ffplan design` so every switch is routed",
            ("routing", "lfts"),
        )
    lids = np.array(sorted(fab.lid_owner), dtype=np.int64)
    max_lid = int(lids[-1]) if lids.size else 0
    # Only the three digits of the port differ between switches, and every entry has the same length: every LID's
    # entry is encoded once, and a switch's block is a copy of the entries of the LIDs it lists with their ports'
    # digits put in place: numpy per switch, no Python per entry (22.6 M entries on 16,384 endpoints).
    text = "".join(lft_entry(lid, 0, fab.lid_owner[lid][0]) for lid in lids.tolist())
    entries = np.frombuffer(text.encode("ascii"), dtype=np.dtype((np.void, ENTRY_BYTES)))
    yield render_template(
        "opensm/lfts.dump.j2", title=plan.inventory.name, engine=routing.engine, view=fab.view.describe()
    ).encode()
    for s in fab.switches:
        table = lfts[s.name]
        present = lids < len(table)
        ports = np.full(len(lids), routing.unrouted_port, dtype=np.uint8)
        ports[present] = table[lids[present]]
        listed = ports != routing.unrouted_port
        block = entries[listed].view(np.uint8).reshape(-1, ENTRY_BYTES)  # a copy: one entry per row
        ports = ports[listed]
        for i, digits in enumerate(_PORT_DIGITS):  # a column at a time: numpy's fastest way here
            block[:, PORT_AT + i] = digits.take(ports)
        yield f"\nUnicast lids [0x0-0x{max_lid:x}] of switch Lid {s.lid} guid {s.node_guid} ({s.name}):\n".encode()
        yield block.reshape(-1).data if len(block) else b"\n"  # no entries: an empty line, as dump_fts prints
        yield f"# {len(block)} lids listed\n".encode()


def lfts_text(fab: Subnet) -> str:
    """lfts_chunks as one string."""
    return b"".join(lfts_chunks(fab)).decode("ascii")


_CONF_GROUPS = [
    ("The port this OpenSM manages its subnet through", ("guid",)),
    (
        "Routing: the tables come from the plan; never fall back to another engine",
        ("routing_engine", "lfts_file", "root_guid_file", "cn_guid_file", "io_guid_file"),
    ),
    ("Addressing", ("lmc", "reassign_lids", "honor_guid2lid_file")),
    ("Sweeps", ("sweep_interval", "sweep_on_trap")),
    ("Virtual lanes in operation (4 = VL0-7)", ("max_op_vls",)),
    ("Partitions and node names", ("partition_config_file", "node_name_map_name")),
    (
        "Logging: flushed per line, so 'SUBNET UP' is visible at once",
        ("log_flags", "force_log_flush", "log_file", "log_max_size", "accum_log_file", "dump_files_dir"),
    ),
    (
        "QoS: the policy file maps PathRecord queries to SLs; SL2VL and VL arbitration follow per port class",
        ("qos", "qos_policy_file"),
    ),
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
    titles = {
        "guid": f"Subnet {instance.subnet}: one OpenSM per subnet, bound to {instance.port}; run it with "
        f"OSM_CACHE_DIR={cache}"
        if instance
        else "",
        "lmc": f"Addressing: the planned LIDs are pinned by guid2lid (copy it to {cache}/guid2lid)",
    }
    groups = []
    for title, keys in _CONF_GROUPS:
        title = titles.get(keys[0], title)
        items = [{"key": k, "value": kv[k]} for k in keys if k in kv]
        if items:
            groups.append({"title": title, "items": items})
    for cls, title in _QOS_TITLES.items():
        pfx = QOS_PREFIX[cls]
        items = [
            {"key": k, "value": v}
            for k, v in kv.items()
            if k.startswith(pfx)
            and k.count("_") - pfx.count("_") <= 1
            and k[len(pfx) :] in ("max_vls", "high_limit", "vlarb_high", "vlarb_low", "sl2vl")
        ]
        if items:
            groups.append({"title": title, "items": items})
    variant = (
        "OpenSM's own fat-tree engine with ffplan's GUID files (LIDs still pinned by guid2lid)"
        if engine == "ftree"
        else "routing tables precomputed by ffplan (file engine)"
    )
    title = f"{plan.inventory.name} subnet {instance.subnet}" if instance else plan.inventory.name
    return {"title": title, "variant": variant, "groups": groups}


def _chunks(items: list[str], n: int) -> list[str]:
    return [", ".join(items[i : i + n]) for i in range(0, len(items), n)]


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
    levels = [
        {
            "name": "DEFAULT",
            "use": f"unmatched queries: {qc['default'].name if qc['default'] else 'SL 0'}",
            "sl": qc["default"].sl if qc["default"] else 0,
        }
    ]
    for c in qc["classes"]:
        levels.append({"name": c.name, "use": _one_line(c.description), "sl": c.sl})
    rules = []
    for c in qc["classes"]:
        rules.append(
            {
                "use": f"{c.name}: applications that ask for QoS class {c.sl}",
                "match": [("qos-class", str(c.sl))],
                "level": c.name,
            }
        )
    for (a, b), c in qc["pairs"].items():
        if not (role_groups[a] and role_groups[b]):
            continue
        for src, dst in directions(a, b):
            rules.append(
                {
                    "use": f"{c.name}: {src} -> {dst} ports",
                    "level": c.name,
                    "match": [("source", ", ".join(role_groups[src])), ("destination", ", ".join(role_groups[dst]))],
                }
            )
    return {"title": plan.inventory.name, "groups": groups, "levels": levels, "rules": rules}


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
# partitions.conf's `rate=` takes, for the 4x links of each speed. 800 Gb/s is 23 from OpenSM 3.3.24 on (commit
# bf850acd "Support NDR devices"); 3.3.23 accepts the value but knows rates up to 600 Gb/s only.
IB_RATE_CODE = {"EDR": (100, 16), "HDR": (200, 17), "NDR": (400, 21), "XDR": (800, 23)}
# IPoIB's broadcast group MTU: code 4 = 2048 bytes (IB MTU enum 1..5 = 256..4096 = 128 << code), the IPoIB
# datagram default.
IPOIB_MTU_CODE = 4


def ipoib_rate(plan: Plan) -> tuple[int, int]:
    """(Gb/s, rate code) of the fabric's links (4x at the fabric switch model's speed): OpenSM creates the IPoIB
    broadcast group with rate 3 (10 Gb/s) otherwise, which caps IPoIB multicast far below the links."""
    speed = next(m.speed for m in plan.switch_models if m.name == plan.fabric_switch_model)
    assert speed is not None, "OpenSM files are rendered for InfiniBand plans only"
    return IB_RATE_CODE[speed]


def partitions_model(fab: Subnet) -> dict:
    gbps, rate = ipoib_rate(fab.plan)
    return {
        "title": fab.plan.inventory.name,
        "ports": sum(len(ca.ports) for ca in fab.cas),
        "rate": rate,
        "gbps": gbps,
        "mtu": IPOIB_MTU_CODE,
        "mtu_bytes": 128 << IPOIB_MTU_CODE,
    }


def check_prefix(prefix: str) -> str:
    if not _SAFE_PATH.fullmatch(prefix) or "//" in prefix:
        c = Collector("--prefix")  # a bad option is a usage error (exit 2), not a plan finding
        c.error(
            PLAN_VALUE_NOT_RENDERABLE,
            (),
            f"--prefix {prefix!r} is not an absolute path of plain characters",
            "use a path like /etc/opensm (letters, digits, . _ / + -)",
        )
        raise InputError(c.items)
    return prefix.rstrip("/") or "/"


def require_complete(plan: Plan) -> None:
    missing = [name for name in ("routing", "qos") if getattr(plan, name) is None]
    if missing:
        raise unwritable(
            f"the plan has no {' and no '.join(missing)}: OpenSM files need the routing tables and the QoS plan",
            "re-run `ffplan design` with a version of ffplan that routes and plans QoS",
            (missing[0],),
        )
    assert plan.qos is not None, "refused above when missing"
    unknown = [c.name for c in plan.qos.classes if c.carries is None]
    if unknown:
        raise unwritable(
            f"the plan does not say what traffic classes {', '.join(unknown)} carry (written by an older ffplan)",
            "re-run `ffplan design`: the QoS policy is built from what each class carries",
            ("qos", "classes"),
        )


def opensm_files(
    plan: Plan,
    prefix: str = DEFAULT_PREFIX,
    view: View = View(),
    engines: Collection[str] = ("file", "ftree"),
    subnet: str | None = None,
) -> dict[str, str]:
    """File name (no folder) -> text for the given view of the plan. `subnet` names the subnet when `plan` is
    one subnet's view of a plan with several: its opensm.conf then binds to the SM port in that subnet."""
    prefix = check_prefix(prefix)
    require_complete(plan)
    return subnet_files(build_fabric(plan, view), prefix, engines, subnet, lfts_text)


LftChunks = Iterator[bytes | memoryview]  # an LFT file in pieces (lfts_chunks), each written as it comes
LftBody = TypeVar("LftBody", str, LftChunks)


def subnet_files(
    fab: Subnet, prefix: str, engines: Collection[str], subnet: str | None, lfts: Callable[[Subnet], LftBody]
) -> dict[str, str | LftBody]:
    plan = fab.plan
    if not fab.cas:
        raise unwritable(f"{fab.view.describe()}: no CA ports to render", "check the zone name")
    instance = fab.sm_instance(subnet) if subnet else None
    files: dict[str, str | LftBody] = {
        TOPOLOGY: render_template("opensm/topology.net.j2", **topology_model(fab)),
        NODE_NAME_MAP: render_template("opensm/node-name-map.j2", **node_name_map_model(fab)),
        GUID2LID: render_template("opensm/guid2lid.j2", **guid2lid_model(fab)),
        QOS_POLICY: render_template("opensm/qos-policy.conf.j2", **qos_policy_model(fab)),
        PARTITIONS: render_template("opensm/partitions.conf.j2", **partitions_model(fab)),
    }
    guids = guid_files_model(fab)
    for fname, key, what in (
        (ROOT_GUIDS, "root", f"{guids['root_tier']} (root) switch node GUIDs"),
        (CN_GUIDS, "cn", "compute node port GUIDs"),
        (IO_GUIDS, "io", "storage and management port GUIDs"),
    ):
        files[fname] = render_template("opensm/guids.txt.j2", what=what, title=plan.inventory.name, entries=guids[key])
    if "file" in engines:
        files[CONF] = render_template("opensm/opensm.conf.j2", **conf_model(plan, prefix, "file", instance))
        files[LFTS] = lfts(fab)
    if "ftree" in engines:
        files[FTREE_CONF] = render_template("opensm/opensm.conf.j2", **conf_model(plan, prefix, "ftree", instance))
    return files
