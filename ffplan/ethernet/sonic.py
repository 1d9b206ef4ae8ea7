"""The SONiC and FRR views of a RoCE plan: one config_db.json and one frr.conf per switch. Every value comes from the
plan (its `ethernet` section); this module only lays it out in SONiC's tables and the FRR template's model.

Table and field names follow SONiC's YANG models and their sample (sonic-net/sonic-buildimage,
src/sonic-yang-models/tests/files/sample_config_db.json; tests/ethernet/test_sonic.py checks them).
"""

from __future__ import annotations

from json.encoder import encode_basestring_ascii as _quoted  # C: what json.dumps spells a str with

from ffplan.ethernet.ports import sonic_port
from ffplan.plan.model import EthernetPlan, EthernetSwitch, HostInterface, Plan, Switch
from ffplan.templating import render_template

MAPS = "ROCE"  # the name of the one DSCP/TC/queue/PG map every port uses
LOSSLESS_WRED = "ROCE_LOSSLESS"
SCHEDULERS = {"roce": "scheduler.roce", "cnp": "scheduler.cnp", "default": "scheduler.default"}
DEFAULT_TC = 0
SONIC_ROLE = {"leaf": "ToRRouter", "spine": "LeafRouter", "core": "SpineRouter"}  # SONiC's names for tiers 1, 2, 3
FRAME_OVERHEAD_BYTES = 18


def _pg_profile(speed_gbps: int, cable_m: float) -> str:
    """SONiC's name for a lossless PG profile: pg_lossless_<speed in Mb/s>_<cable length>m_profile."""
    return f"pg_lossless_{speed_gbps * 1000}_{cable_m:g}m_profile"


def config_db(eth: EthernetPlan, sw: EthernetSwitch, tier: str) -> dict:
    q = eth.qos
    roce_tc, cnp_tc = q.roce_priority.value, q.cnp_priority.value
    lossless = q.lossless_priorities
    xon = 2 * (q.switch_mtu.value + FRAME_OVERHEAD_BYTES)
    total_headroom = sum(p.headroom_bytes for p in sw.ports) * len(lossless)
    dscp = {str(d): str(DEFAULT_TC) for d in range(64)}
    dscp[str(q.roce_dscp.value)] = str(roce_tc)
    dscp[str(q.cnp_dscp.value)] = str(cnp_tc)
    pfc = ",".join(map(str, lossless))
    speed = str(eth.link_gbps * 1000)  # Mb/s
    queues = {roce_tc: "roce", cnp_tc: "cnp", DEFAULT_TC: "default"}
    # the entries every port shares are one object each: config_db_text writes each once
    qos_map = {
        "dscp_to_tc_map": MAPS,
        "tc_to_queue_map": MAPS,
        "tc_to_pg_map": MAPS,
        "pfc_enable": pfc,
        "pfcwd_sw_enable": pfc,
    }
    queue = {
        tc: {"scheduler": SCHEDULERS[kind]} | ({"wred_profile": LOSSLESS_WRED} if tc in lossless else {})
        for tc, kind in sorted(queues.items())
    }
    buffer_queue = {
        tc: {"profile": "egress_lossless_profile" if tc in lossless else "egress_lossy_profile"} for tc in queue
    }
    lossy_pg = {"profile": "ingress_lossy_profile"}
    lossless_pg: dict[str, dict[str, str]] = {}
    pfc_wd = {
        "action": q.pfc_watchdog_action,
        "detection_time": str(q.pfc_watchdog_detection_ms.value),
        "restoration_time": str(q.pfc_watchdog_restoration_ms.value),
    }
    db: dict[str, dict] = {
        "DEVICE_METADATA": {
            "localhost": {
                "hostname": sw.name,
                "bgp_asn": str(sw.asn),
                "type": SONIC_ROLE[tier],
                "docker_routing_config_mode": "unified",
                "buffer_model": "traditional",
            }
        },
        "PORT": {},
        "INTERFACE": {},
        "LOOPBACK_INTERFACE": {"Loopback0": {}, f"Loopback0|{sw.loopback}": {}},
        "BGP_NEIGHBOR": {
            n.address: {"asn": str(n.asn), "name": n.name, "local_addr": n.local_address, "admin_status": "up"}
            for n in sw.neighbors
        },
        "DSCP_TO_TC_MAP": {MAPS: dscp},
        "TC_TO_QUEUE_MAP": {MAPS: {str(tc): str(tc) for tc in range(8)}},
        "TC_TO_PRIORITY_GROUP_MAP": {MAPS: {str(tc): str(tc if tc in lossless else DEFAULT_TC) for tc in range(8)}},
        "PORT_QOS_MAP": {},
        "WRED_PROFILE": {
            LOSSLESS_WRED: {
                "ecn": "ecn_all",
                "wred_green_enable": "true",
                "green_min_threshold": str(q.ecn_min_bytes.value),
                "green_max_threshold": str(q.ecn_max_bytes.value),
                "green_drop_probability": str(q.ecn_probability.value),
            }
        },
        "SCHEDULER": {
            SCHEDULERS["roce"]: {"type": "DWRR", "weight": str(q.roce_weight.value)},
            SCHEDULERS["default"]: {"type": "DWRR", "weight": str(q.default_weight.value)},
            SCHEDULERS["cnp"]: {"type": "STRICT"},
        },
        "QUEUE": {},
        "BUFFER_POOL": {
            "ingress_lossless_pool": {
                "type": "ingress",
                "mode": "dynamic",
                "size": str(q.buffer_bytes.value - total_headroom),
                "xoff": str(total_headroom),
            },
            "egress_lossless_pool": {"type": "egress", "mode": "dynamic", "size": str(q.buffer_bytes.value)},
            "egress_lossy_pool": {
                "type": "egress",
                "mode": "dynamic",
                "size": str(q.buffer_bytes.value - total_headroom),
            },
        },
        "BUFFER_PROFILE": {
            "ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "3"},
            "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "dynamic_th": "7"},
            "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": str(xon), "dynamic_th": "3"},
        },
        "BUFFER_PG": {},
        "BUFFER_QUEUE": {},
        "PFC_WD": {},
    }
    for p in sw.ports:
        db["PORT"][p.name] = {
            "lanes": sonic_port(p.port, eth.breakout)[1],
            "speed": speed,
            "mtu": str(q.switch_mtu.value),
            "fec": "rs",
            "admin_status": "up",
            "description": f"{p.peer}:{p.peer_port}",
        }
        db["INTERFACE"][p.name] = {}
        db["INTERFACE"][f"{p.name}|{p.address}"] = {}
        db["PORT_QOS_MAP"][p.name] = qos_map
        for tc in queue:
            db["QUEUE"][f"{p.name}|{tc}"] = queue[tc]
            db["BUFFER_QUEUE"][f"{p.name}|{tc}"] = buffer_queue[tc]
        profile = _pg_profile(eth.link_gbps, p.cable_m)
        db["BUFFER_PROFILE"][profile] = {
            "pool": "ingress_lossless_pool",
            "xon": str(xon),
            "xoff": str(p.headroom_bytes),
            "size": str(xon + p.headroom_bytes),
            "dynamic_th": "0",
        }
        db["BUFFER_PG"][f"{p.name}|{DEFAULT_TC}"] = lossy_pg
        for tc in lossless:
            db["BUFFER_PG"][f"{p.name}|{tc}"] = lossless_pg.setdefault(profile, {"profile": profile})
        db["PFC_WD"][p.name] = pfc_wd
    return db


def config_db_text(db: dict) -> str:
    """`json.dumps(db, indent=4, sort_keys=True)` plus a newline, for config_db's tables of string fields. json's C
    encoder does not indent, and its Python one spends 5 s on a 16k-GPU fabric's 75 MB of config_db.json: this
    writes each dictionary of strings as one join, and a dictionary several keys share (config_db's per-port
    entries) once."""
    return _indented(db, "", {}) + "\n"


def _indented(table: dict, pad: str, written: dict[tuple[int, int], str]) -> str:
    if not table:
        return "{}"
    known = written.get((id(table), len(pad)))  # the table is alive in `db` all along: its id is its own
    if known is None:
        inner = pad + "    "
        known = written[(id(table), len(pad))] = (
            "{\n"
            + ",\n".join(
                [
                    f"{inner}{_quoted(key)}: {_quoted(value) if value.__class__ is str else _indented(value, inner, written)}"
                    for key, value in sorted(table.items())
                ]
            )
            + "\n"
            + pad
            + "}"
        )
    return known


def render_switches(plan: Plan) -> dict[str, str]:
    """sonic/<switch>/config_db.json and sonic/<switch>/frr.conf for every switch of a RoCE plan, and
    hosts/<node model>/nccl-roce.conf (NCCL's RoCE settings, the lines of nccl.conf) and roce-qos.sh (the NICs' QoS:
    trust, PFC, RDMA-CM ToS, ECN, DCQCN) and host-check.sh (the article's checklist) for its hosts, and
    hosts/<hostname>/roce-net.sh (each fabric NIC's address, MTU and policy routing) per host."""
    eth = plan.ethernet
    assert eth is not None
    tiers: dict[str, Switch] = {sw.name: sw for sw in plan.switches}
    files = {}
    for sw in eth.switches:
        files[f"sonic/{sw.name}/config_db.json"] = config_db_text(config_db(eth, sw, tiers[sw.name].tier))
        files[f"sonic/{sw.name}/frr.conf"] = render_template(
            "frr/frr.conf.j2",
            sw=sw,
            router_id=sw.loopback.split("/")[0],
            inventory=plan.inventory.file,
            host_pool=eth.host_pool,
            announce_hosts=eth.path_selection == "pinned",  # pinned host /31s need the leaves' more-specifics
        )
    for profile in eth.host_profiles:
        files[f"hosts/{profile.node_model}/nccl-roce.conf"] = render_template("hosts/nccl.conf", p=profile)
        if eth.nic_qos is not None and profile.nics:
            files[f"hosts/{profile.node_model}/roce-qos.sh"] = render_template(
                "hosts/roce-qos.sh", p=profile, q=eth.nic_qos, plan_name=plan.inventory.name
            )
            if profile.checks is not None:
                files[f"hosts/{profile.node_model}/host-check.sh"] = render_template(
                    "hosts/roce-host-check.sh",
                    p=profile,
                    q=eth.nic_qos,
                    plan_name=plan.inventory.name,
                    numa_affinity={n.id: n.affinity for n in profile.numa_nodes},
                )
    by_host: dict[str, list[HostInterface]] = {}
    for interface in eth.hosts:
        by_host.setdefault(interface.hostname, []).append(interface)
    if eth.host_pool is not None:
        for hostname, interfaces in by_host.items():
            files[f"hosts/{hostname}/roce-net.sh"] = render_template(
                "hosts/roce-net.sh",
                hostname=hostname,
                plan_name=plan.inventory.name,
                pool=eth.host_pool,
                interfaces=interfaces,
            )
    return files
