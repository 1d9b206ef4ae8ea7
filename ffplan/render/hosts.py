"""Host files of a plan: one folder per host profile under hosts/, plus hosts/manifest.csv.

Everything printed was decided by the design step (ffplan.design.hosts); this module only arranges the
profile for the templates (devices per NUMA node, per-host port rows) and adds the checksums the host
check compares installed files with.
"""

from __future__ import annotations

import csv
import hashlib
import io

from ffplan.codes.plan import PLAN_SCHEMA_MISMATCH
from ffplan.design.hosts import INSTALL, THREEFS_CLIENT_TOML, THREEFS_STORAGE_TOML
from ffplan.diagnostics import Collector, InputError
from ffplan.plan.model import HostProfile, Node, Plan
from ffplan.templating import render_template
from ffplan.render.exports import hostlist

# The ibsocket sections of 3FS's client configuration (hf3fs_fuse_main.toml) and of the storage server's
# own clients (storage_main.toml); the server's listener groups are an array of tables (see the template).
THREEFS_CLIENT_SECTIONS = [
    "client.io_worker.ibsocket",
    "storage.net_client.io_worker.ibsocket",
    "storage.net_client_for_updates.io_worker.ibsocket",
]
THREEFS_STORAGE_SECTIONS = [
    "server.client.io_worker.ibsocket",
    "server.forward_client.io_worker.ibsocket",
]

MANIFEST_COLUMNS = [
    "hostname",
    "profile",
    "profile_dir",
    "role",
    "node_model",
    "rack",
    "u",
    "nic",
    "port",
    "zone",
    "leaf",
    "leaf_port",
    "lid",
    "port_guid",
    "node_guid",
    "guid_placeholder",
]

# Render order: host-check.sh comes last because it carries the checksums of the files installed on the host.
_FILES_FIRST = [
    "topo.xml",
    "nccl.conf",
    "hfreduce.env",
    "ucx.conf",
    "3fs-client-sl.toml",
    "3fs-storage-sl.toml",
    "relaxed-ordering.sh",
    "README.md",
]


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _topology_rows(p: HostProfile, numa: int) -> list[dict]:
    """The `<pci>` lines under one NUMA node's `<cpu>`, depth first: each PCIe switch opens, holds its lower
    switches and then its devices, and closes; `pad` is the indent of the row's `<pci>` tag. NICs that are functions
    of one card (a multi-planar NIC's planes) are one `<pci>` (NCCL names a NIC by function 0) with a `<net>` each,
    as NCCL itself writes such a card: `nets` are the row's InfiniBand devices."""
    rows: list[dict] = []
    nets: dict[str, list[str]] = {}
    for d in p.devices:
        if d.kind == "nic":
            nets.setdefault(d.topo_bus_id, []).append(d.name)

    def add(parent: str, depth: int) -> None:
        pad = "  " * depth
        for s in p.pcie_switches:
            if s.parent == parent and (parent or s.numa == numa):
                rows.append({"tag": "switch", "pad": pad, "item": s})
                add(s.name, depth + 1)
                rows.append({"tag": "end", "pad": pad, "item": s})
        for d in p.devices:
            if d.pcie_switch == parent and (parent or d.numa == numa):
                if d.kind != "nic":
                    rows.append({"tag": d.kind, "pad": pad, "item": d})
                elif nets[d.topo_bus_id][0] == d.name:
                    rows.append({"tag": d.kind, "pad": pad, "item": d, "nets": nets[d.topo_bus_id]})

    add("", 2)
    return rows


def _context(plan: Plan, p: HostProfile, nodes: dict[str, Node]) -> dict:
    gpus = [d for d in p.devices if d.kind == "gpu"]
    nics = [d for d in p.devices if d.kind == "nic"]
    numa = [{"node": n, "rows": _topology_rows(p, n.id)} for n in p.numa_nodes]
    rate = {d.name: d.ib_rate for d in nics}
    host_ports = []
    for hostname in p.hosts:
        node = nodes[hostname]
        host_ports.append(
            {
                "hostname": hostname,
                "ports": [
                    {
                        "nic": pt.nic,
                        "port": pt.port,
                        "guid": pt.port_guid,
                        "lid": pt.lid,
                        "kind": "placeholder" if pt.guid_placeholder else "inventory",
                        "rate": rate.get(pt.nic, ""),
                    }
                    for pt in node.ports
                ],
            }
        )
    compact = hostlist(p.hosts)
    gdr_level = next((s.value for s in p.nccl if s.name == "NCCL_NET_GDR_LEVEL"), "")
    threefs = [{"path": THREEFS_CLIENT_TOML, "sl": s.sl} for s in p.sls if s.software == "3FS client"]
    threefs += [{"path": THREEFS_STORAGE_TOML, "sl": s.sl} for s in p.sls if s.software == "3FS storage server"]
    return {
        "p": p,
        "plan_name": plan.inventory.name,
        "sls": p.sls,
        "gpus": gpus,
        "nics": nics,
        "numa": numa,
        "install": INSTALL,
        "threefs_client": THREEFS_CLIENT_TOML,
        "threefs_storage": THREEFS_STORAGE_TOML,
        "threefs_client_sections": THREEFS_CLIENT_SECTIONS,
        "threefs_storage_sections": THREEFS_STORAGE_SECTIONS,
        "want_ro": "1" if p.relaxed_ordering.enabled else "0",
        "ro": p.relaxed_ordering,
        "numa_affinity": {n.id: n.affinity for n in p.numa_nodes},
        "host_ports": host_ports,
        "hosts_compact": compact,
        "hosts_summary": compact if len(compact) <= 60 else compact[:57] + "...",
        "gdr_level": gdr_level,
        "threefs": threefs,
        "switch_bus": {s.name: s.bus_id for s in p.pcie_switches},
    }


def render_profile(plan: Plan, p: HostProfile, nodes: dict[str, Node]) -> dict[str, str]:
    """File name inside the profile folder -> text."""
    ctx = _context(plan, p, nodes)
    wanted = {f.name for f in p.files}
    out: dict[str, str] = {}
    for name in _FILES_FIRST:
        if name in wanted:
            out[name] = render_template(f"hosts/{name}", **ctx)
    installed = [{"path": f.install_path, "sha256": _sha256(out[f.name])} for f in p.files if f.install_path]
    out["host-check.sh"] = render_template("hosts/host-check.sh", installed=installed, **ctx)
    return out


def manifest_csv(plan: Plan) -> str:
    profile_of = {h: p.name for p in plan.hosts or [] for h in p.hosts}
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(MANIFEST_COLUMNS)
    for node in plan.nodes:
        profile = profile_of.get(node.hostname, "")
        for pt in node.ports:
            w.writerow(
                [
                    node.hostname,
                    profile,
                    f"hosts/{profile}/" if profile else "",
                    node.role,
                    node.model,
                    node.rack,
                    node.u,
                    pt.nic,
                    pt.port,
                    pt.zone,
                    pt.leaf,
                    pt.leaf_port,
                    pt.lid,
                    pt.port_guid,
                    pt.node_guid,
                    "yes" if pt.guid_placeholder else "no",
                ]
            )
    return buf.getvalue()


def render_hosts(plan: Plan) -> dict[str, str]:
    """Relative path under the output folder -> text, for hosts/."""
    if plan.hosts is None:
        c = Collector("plan.yaml")
        c.error(
            PLAN_SCHEMA_MISMATCH,
            ("hosts",),
            "the plan has no host profiles (it was written by an older ffplan)",
            "re-run `ffplan design` to add them",
        )
        raise InputError(c.items)
    nodes = {n.hostname: n for n in plan.nodes}
    files: dict[str, str] = {}
    for p in plan.hosts:
        for name, text in render_profile(plan, p, nodes).items():
            files[f"hosts/{p.name}/{name}"] = text
    files["hosts/manifest.csv"] = manifest_csv(plan)
    return files
