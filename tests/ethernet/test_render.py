"""The SONiC and FRR files of a RoCE plan, checked against their real consumers: FRR's own parser (`vtysh --dryrun`
from Debian's frr package) and SONiC's table and field names.

SONiC's names come from sonic-net/sonic-buildimage at commit 0008cf710ed3321460c1852b8b31cbe07e6435d0:
src/sonic-yang-models/tests/files/sample_config_db.json (the sample every YANG model is tested with) and the YANG
models next to it (sonic-port.yang, sonic-wred-profile.yang, sonic-scheduler.yang, sonic-pfcwd.yang,
sonic-buffer-*.yang, sonic-bgp-neighbor.yang, sonic-device_metadata.yang: its `type` pattern and the four
`docker_routing_config_mode` values; WRED's eight `ecn` modes and 0-100 probabilities; DWRR weights 1-100).
The PFC watchdog's ranges are sonic-utilities' `pfcwd` command's (detection 100-5000 ms, restoration 100-60000 ms).
"""

import json
import re
import shutil
import subprocess

import pytest

from ffplan.render import render_plan

# table -> the fields SONiC defines for its entries (those ffplan writes must be among them)
SONIC_FIELDS = {
    "DEVICE_METADATA": {
        "hostname",
        "bgp_asn",
        "type",
        "docker_routing_config_mode",
        "buffer_model",
        "hwsku",
        "mac",
        "platform",
        "deployment_id",
    },
    "PORT": {"alias", "lanes", "speed", "mtu", "fec", "admin_status", "description", "index", "autoneg", "tpid"},
    "INTERFACE": set(),
    "LOOPBACK_INTERFACE": set(),
    "BGP_NEIGHBOR": {"asn", "holdtime", "keepalive", "local_addr", "name", "nhopself", "rrclient", "admin_status"},
    "DSCP_TO_TC_MAP": None,
    "TC_TO_QUEUE_MAP": None,
    "TC_TO_PRIORITY_GROUP_MAP": None,  # maps: key -> value
    "PORT_QOS_MAP": {
        "dot1p_to_tc_map",
        "dscp_to_tc_map",
        "tc_to_queue_map",
        "tc_to_pg_map",
        "pfc_to_queue_map",
        "pfc_to_pg_map",
        "pfc_enable",
        "pfcwd_sw_enable",
        "scheduler",
    },
    "WRED_PROFILE": {
        "ecn",
        "wred_green_enable",
        "green_min_threshold",
        "green_max_threshold",
        "green_drop_probability",
        "wred_yellow_enable",
        "yellow_min_threshold",
        "yellow_max_threshold",
        "yellow_drop_probability",
        "wred_red_enable",
        "red_min_threshold",
        "red_max_threshold",
        "red_drop_probability",
    },
    "SCHEDULER": {"type", "weight", "meter_type", "cir", "cbs", "pir", "pbs"},
    "QUEUE": {"scheduler", "wred_profile"},
    "BUFFER_POOL": {"type", "mode", "size", "xoff", "percentage"},
    "BUFFER_PROFILE": {"pool", "size", "xon", "xoff", "xon_offset", "dynamic_th", "static_th"},
    "BUFFER_PG": {"profile"},
    "BUFFER_QUEUE": {"profile"},
    "PFC_WD": {"action", "detection_time", "restoration_time", "POLL_INTERVAL"},
}
ENUMS = {  # (table, field) -> the values the YANG models allow
    ("DEVICE_METADATA", "type"): {"ToRRouter", "LeafRouter", "SpineRouter", "BackEndToRRouter", "BackEndLeafRouter"},
    ("DEVICE_METADATA", "docker_routing_config_mode"): {"separated", "unified", "split", "split-unified"},
    ("DEVICE_METADATA", "buffer_model"): {"traditional", "dynamic"},
    ("PORT", "fec"): {"rs", "fc", "none", "auto"},
    ("PORT", "admin_status"): {"up", "down"},
    ("BGP_NEIGHBOR", "admin_status"): {"up", "down"},
    ("WRED_PROFILE", "ecn"): {
        "ecn_none",
        "ecn_green",
        "ecn_yellow",
        "ecn_red",
        "ecn_green_yellow",
        "ecn_green_red",
        "ecn_yellow_red",
        "ecn_all",
    },
    ("WRED_PROFILE", "wred_green_enable"): {"true", "false"},
    ("SCHEDULER", "type"): {"DWRR", "WRR", "STRICT"},
    ("BUFFER_POOL", "type"): {"ingress", "egress"},
    ("BUFFER_POOL", "mode"): {"static", "dynamic"},
    ("PFC_WD", "action"): {"drop", "forward", "alert"},
}
PRIORITIES = re.compile(r"^[0-7](,[0-7])*$")  # pfc_enable, pfcwd_sw_enable
PORT_NAME = re.compile(r"^Ethernet[0-9]+$")


@pytest.fixture(scope="module")
def files(small_plan):
    return render_plan(small_plan)


def _dbs(files):
    return {path: json.loads(text) for path, text in files.items() if path.endswith("config_db.json")}


def test_one_config_db_and_frr_conf_per_switch_and_no_opensm(files, small_plan):
    names = {sw.name for sw in small_plan.switches}
    assert {p for p in files if p.startswith("sonic/")} == {
        f"sonic/{n}/{f}" for n in names for f in ("config_db.json", "frr.conf")
    }
    assert not any(p.startswith("opensm/") for p in files)
    assert {p for p in files if p.startswith("hosts/")} == {
        "hosts/gpu-node/nccl-roce.conf",
        "hosts/gpu-node/roce-qos.sh",
        "hosts/gpu-node/host-check.sh",
    } | {f"hosts/{n.hostname}/roce-net.sh" for n in small_plan.nodes}


def test_nccl_roce_settings(files):
    """NAME=VALUE lines, as NCCL reads nccl.conf: the rail NICs, the RoCE v2 GID, DSCP 26 as the traffic class byte
    (26 << 2 = 104, plus ECT(0) = 106), 4 QPs a connection; one zone, so no NCCL_CROSS_NIC."""
    lines = files["hosts/gpu-node/nccl-roce.conf"].splitlines()
    assert lines == ["NCCL_IB_HCA==mlx5_0", "NCCL_IB_GID_INDEX=3", "NCCL_IB_TC=106", "NCCL_IB_QPS_PER_CONNECTION=4"]


def test_config_db_tables_and_fields_are_sonics(files):
    for path, db in _dbs(files).items():
        assert set(db) == set(SONIC_FIELDS), path
        for table, entries in db.items():
            for key, fields in entries.items():
                assert all(isinstance(v, str) for v in fields.values()), (path, table, key)  # config_db holds strings
                if SONIC_FIELDS[table] is None:
                    assert all(0 <= int(k) <= 63 and 0 <= int(v) <= 7 for k, v in fields.items()), (table, key)
                else:
                    assert set(fields) <= SONIC_FIELDS[table], (path, table, key, set(fields) - SONIC_FIELDS[table])
                for field, value in fields.items():
                    assert value in ENUMS.get((table, field), {value}), (path, table, field, value)


def test_config_db_values(files, small_plan):
    q = small_plan.ethernet.qos
    for db in _dbs(files).values():
        for name, port in db["PORT"].items():
            assert PORT_NAME.match(name) and port["speed"] == "400000" and port["mtu"] == "9216"
        for qos in db["PORT_QOS_MAP"].values():
            assert PRIORITIES.match(qos["pfc_enable"]) and qos["pfc_enable"] == "3"
        dscp = db["DSCP_TO_TC_MAP"]["ROCE"]
        assert len(dscp) == 64 and dscp["26"] == "3" and dscp["48"] == "6"
        assert {k for k, v in db["QUEUE"].items() if v["scheduler"] == "scheduler.cnp"} == {
            f"{p}|6" for p in db["PORT"]
        }
        assert db["SCHEDULER"]["scheduler.cnp"] == {"type": "STRICT"}
        # sonic-scheduler.yang: DWRR weight 1-100; sonic-wred-profile.yang: drop probability 0-100
        assert all(1 <= int(sch["weight"]) <= 100 for sch in db["SCHEDULER"].values() if "weight" in sch)
        wred = db["WRED_PROFILE"]["ROCE_LOSSLESS"]
        assert int(wred["green_min_threshold"]) == q.ecn_min_bytes.value < int(wred["green_max_threshold"])
        assert 0 <= int(wred["green_drop_probability"]) <= 100
        for wd in db["PFC_WD"].values():
            assert 100 <= int(wd["detection_time"]) <= 5000 and 100 <= int(wd["restoration_time"]) <= 60000
        for key, pg in db["BUFFER_PG"].items():
            assert pg["profile"] in db["BUFFER_PROFILE"] and key.split("|")[0] in db["PORT"]
        # the lossless headroom of every port, in the pool's xoff
        profiles = db["BUFFER_PROFILE"]
        xoff = sum(int(profiles[pg["profile"]]["xoff"]) for key, pg in db["BUFFER_PG"].items() if key.endswith("|3"))
        assert int(db["BUFFER_POOL"]["ingress_lossless_pool"]["xoff"]) == xoff


def test_addresses_agree_between_config_db_frr_and_the_plan(files, small_plan):
    for sw in small_plan.ethernet.switches:
        db = json.loads(files[f"sonic/{sw.name}/config_db.json"])
        frr = files[f"sonic/{sw.name}/frr.conf"]
        assert db["DEVICE_METADATA"]["localhost"]["bgp_asn"] == str(sw.asn) and f"router bgp {sw.asn}\n" in frr
        for p in sw.ports:
            assert f"{p.name}|{p.address}" in db["INTERFACE"]
            assert f"interface {p.name}\n" in frr and f" ip address {p.address}\n" in frr
        for n in sw.neighbors:
            assert db["BGP_NEIGHBOR"][n.address]["asn"] == str(n.asn)
            assert f" neighbor {n.address} remote-as {n.asn}\n" in frr


vtysh = pytest.mark.skipif(shutil.which("vtysh") is None, reason="needs vtysh (Debian package frr)")


def _dryrun(path):
    return subprocess.run(["vtysh", "--dryrun", "-f", str(path)], capture_output=True, text=True, timeout=60)


@vtysh
def test_frr_parses_every_rendered_frr_conf(files, tmp_path):
    for path, text in files.items():
        if path.endswith("frr.conf"):
            target = tmp_path / path.replace("/", "_")
            target.write_text(text)
            result = _dryrun(target)
            assert result.returncode == 0 and not result.stdout.strip() and not result.stderr.strip(), (path, result)


@vtysh
def test_frr_dryrun_refuses_a_broken_line(files, tmp_path):
    """The check above is real: the same parser refuses a misspelt command in our file."""
    text = next(t for p, t in files.items() if p.endswith("frr.conf"))
    target = tmp_path / "broken.conf"
    target.write_text(text.replace(" bgp bestpath as-path multipath-relax", " bgp bestpath as-path multipath-relaxed"))
    assert _dryrun(target).returncode != 0


def test_a_roce_plan_reads_back_and_renders_from_the_cli(small_plan, tmp_path, monkeypatch):
    """The plan file holds the ethernet section; `ffplan render` on it writes the SONiC and FRR files (no OpenSM)."""
    from typer.testing import CliRunner

    from ffplan.cli.main import app
    from ffplan.plan import dump_plan, load_plan

    (tmp_path / "plan.yaml").write_text(dump_plan(small_plan))
    assert load_plan(tmp_path / "plan.yaml", needs=("routing", "qos", "hosts")) == small_plan
    result = CliRunner().invoke(app, ["render", str(tmp_path / "plan.yaml"), "-o", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "sonic" / "za-leaf01" / "frr.conf").is_file() and not (
        tmp_path / "out" / "opensm"
    ).exists()


def test_same_inventory_same_plan_and_files(small_plan, files, root):
    from ffplan.design import design
    from ffplan.inventory import load_inventory
    from ffplan.plan import dump_plan

    again = design(load_inventory(root / "tests" / "lint" / "roce-base.yaml"))
    assert dump_plan(again) == dump_plan(small_plan) and render_plan(again) == files


def test_config_db_text_is_what_json_dumps_writes(files):
    """The config_db.json writer is json.dumps(indent=4, sort_keys=True) byte for byte, non-ASCII and empty tables too."""
    from ffplan.ethernet.sonic import config_db_text

    for path, text in files.items():
        if path.endswith("config_db.json"):
            assert text == json.dumps(json.loads(text), indent=4, sort_keys=True) + "\n", path
    odd = {"B": {"x|1": {"z": 'é"\\', "a": "1"}, "e": {}}, "A": {}, "C": {"k": {"v": "\u2028\n"}}}
    assert config_db_text(odd) == json.dumps(odd, indent=4, sort_keys=True) + "\n"
