"""What OpenSM must be told and must answer for a plan: every opensm.conf key ffplan sets (`expected_conf`, which
render prints and verify compares with OpenSM's effective config), the QoS classes per role pair, and the
PathRecord SLs the QoS policy must give (`expected_path_sls`, which verify asks OpenSM's SA).

opensm.conf booleans are `TRUE` or anything else (= FALSE, silently).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import PurePosixPath
from typing import Iterable

from ffplan.opensm.layout import CN_GUIDS, IO_GUIDS, LFTS, NODE_NAME_MAP, PARTITIONS, QOS_POLICY, ROOT_GUIDS, SmInstance
from ffplan.opensm.subnet import Ca, Subnet
from ffplan.plan.model import Plan, PortClassQos, TrafficClassPlan, VlArbEntry

# Port classes of the plan -> opensm.conf key prefix.
QOS_PREFIX = {"default": "qos_", "ca": "qos_ca_", "swe": "qos_swe_", "sw0": "qos_sw0_"}

# max_op_vls encoding: 1 = VL0, 2 = VL0-1, 3 = VL0-3, 4 = VL0-7, 5 = VL0-14.
_OP_VLS = ((1, 1), (2, 2), (4, 3), (8, 4), (15, 5))

ROLES = ("compute", "storage", "management")  # port groups of the QoS policy, in this order


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
    kv.update(
        {
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
        }
    )
    if instance is not None:
        kv["dump_files_dir"] = instance.dump_dir
    kv.update(
        {
            "qos": "TRUE",
            "qos_policy_file": str(p / QOS_POLICY),
        }
    )
    for cls in ("default", "ca", "swe", "sw0"):
        pc = qos.port_classes.get(cls)
        if pc is None:
            continue
        for suffix, value in qos_conf_values(pc):
            kv[QOS_PREFIX[cls] + suffix] = value
    return kv


def qos_classes(plan: Plan) -> dict:
    """Levels, the class of unmatched queries and the class of each role pair, as the plan records them (verify
    checks the same facts)."""
    qos = plan.qos
    assert qos is not None
    classes = list(qos.classes)
    default = next((c for c in classes if c.carries and c.carries.unmatched), None)
    pairs: dict[
        tuple[str, ...], TrafficClassPlan
    ] = {}  # (role, role) in ROLES order -> class; both directions of the pair
    for c in classes:
        for a, b in c.carries.roles if c.carries else ():
            pairs.setdefault(tuple(sorted((a.value, b.value), key=ROLES.index)), c)
    return {"classes": classes, "default": default, "pairs": pairs}


def directions(a: str, b: str) -> tuple[tuple[str, str], ...]:
    """A role pair carries traffic both ways: a -> b and b -> a (once when a == b)."""
    return ((a, b), (b, a)) if a != b else ((a, b),)


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
            for src, dst in directions(a, b):
                ends = by_role.get(src, []), by_role.get(dst, [])
                if not ends[0] or not ends[1] or (src == dst and len(ends[0]) < 2):
                    continue
                out.append(
                    {
                        "what": f"{src} -> {dst} ({cls.name if cls else 'DEFAULT: ' + default_name})",
                        "src": lid(ends[0][0]),
                        "dst": lid(ends[1][-1]),
                        "qos_class": None,
                        "sl": cls.sl if cls else default_sl,
                    }
                )
    comp = by_role.get("compute", [])
    if len(comp) >= 2:
        for c in qc["classes"]:
            out.append(
                {
                    "what": f"QoS class {c.sl} ({c.name})",
                    "src": lid(comp[0]),
                    "dst": lid(comp[-1]),
                    "qos_class": c.sl,
                    "sl": c.sl,
                }
            )
    return out
