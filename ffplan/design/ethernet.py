"""The Ethernet design step: the physical plan's switches and cables as a routed RoCEv2 fabric: addresses, ASNs, BGP
sessions, ECMP next-hop sets, SONiC port names and the lossless QoS (docs/ethernet.md)."""

from __future__ import annotations

from collections import defaultdict
from typing import NoReturn

from ffplan.codes.design import PINNED_NOT_RENDERABLE
from ffplan.codes.lint import NIC_SPEED_UNSUPPORTED
from ffplan.design.host_checks import host_checks
from ffplan.design.hosts import ETHERNET_NIC_CLASS, numa_nodes, pcie_devices
from ffplan.diagnostics import Collector, InfeasibleError
from ffplan.ethernet import addressing as addr
from ffplan.ethernet.bgp import leaf_asn, pod_asn, spine_asn
from ffplan.ethernet.pinning import PinConflict, pinned_prefixes
from ffplan.ethernet.ports import sonic_port
from ffplan.ethernet.qos import DCQCN_DEFAULTS, DCQCN_SOURCE, buffer_fit, headroom
from ffplan.ethernet.speeds import link_speed, used_nics
from ffplan.inventory import LoadedInventory
from ffplan.inventory.models import RoceBgp
from ffplan.plan.model import (
    BgpNeighbor,
    Cable,
    EcmpGroup,
    EthernetPlan,
    EthernetPort,
    EthernetSwitch,
    HostInterface,
    NicSetting,
    Plan,
    RoceHostChecks,
    RoceHostProfile,
    RoceNicQos,
    RoceQosPlan,
    Setting,
    SourcedInt,
    Switch,
)

QPS_PER_CONNECTION = 4  # ffplan's choice: Meta's QP scaling, more flows for ECMP's hash to spread
ROCE_V2_IPV4_GID = 3  # mlx5's GID table: 0/1 RoCE v1/v2 link-local IPv6, 2/3 RoCE v1/v2 of the first IPv4 address
ECT0 = 2  # ECN field "ECN-capable transport (0)": switches may mark it instead of dropping
FIRST_TABLE = (
    101  # policy-routing table of a host's first fabric NIC (1-252 are free for local use; 253-255 are the kernel's)
)
ARTICLE = "article: RoCE on priority 3, lossless with PFC"
CQ_DEPTH = 8192  # the deeper end of the article's 4096-8192: the NIC must be able to hold it
CQ_DEPTH_SOURCE = "article: CQ depth 4096-8192 (the NIC's max_cqe must hold 8192)"
NVIDIA = "NVIDIA Spectrum lossless RoCE default"
INVENTORY = "inventory"


def design_ethernet(loaded: LoadedInventory, plan: Plan) -> EthernetPlan:
    inv = loaded.inventory
    roce = inv.fabric.roce
    speed = link_speed(inv, used_nics(inv))
    model = inv.models.switches[inv.fabric.switch_model]
    if speed is None or model.ethernet is None:  # lint's FF707/FF709 refuse such an inventory before design
        c = Collector(loaded.source.file, loaded.source.positions)
        c.error(
            NIC_SPEED_UNSUPPORTED,
            ("fabric", "switch_model"),
            "no link speed both the switch and the NICs take",
            "run `ffplan lint` for the details",
        )
        raise InfeasibleError(c.items)
    if roce.path_selection == "pinned" and inv.fabric.topology == "three-layer-fat-tree":
        _refuse_pinned(
            loaded, "a three-tier tree with parallel links would give a pod spine two next hops for one host"
        )
    zones = {z.name: z for z in plan.zones}
    zone_index = {z.name: i for i, z in enumerate(plan.zones)}
    pools = addr.pools(roce.addressing)
    leaves = [sw for sw in plan.switches if sw.tier == "leaf"]
    leaf_number = {sw.name: i for i, sw in enumerate(leaves)}
    down_ports = plan.zones[0].down_ports
    block = addr.host_block_size(down_ports)

    asn = {sw.name: _asn(roce.bgp, sw, leaf_number, zone_index, zones[sw.zone].pods) for sw in plan.switches}
    loopback = {sw.name: addr.nth(pools["loopbacks"], i + 1) for i, sw in enumerate(plan.switches)}
    ports: dict[str, list[EthernetPort]] = defaultdict(list)
    neighbors: dict[str, list[BgpNeighbor]] = defaultdict(list)
    uplinks: dict[str, list[str]] = defaultdict(list)  # leaf or spine -> the upper tier's addresses
    downlinks: dict[tuple[str, str], list[str]] = defaultdict(list)  # (upper, lower switch) -> the lower's addresses
    hosts: list[HostInterface] = []
    mtu = roce.switch_mtu

    def port(
        switch: str, number: int, address: str, peer: str, peer_port: str, peer_address: str, cable: Cable
    ) -> None:
        name = sonic_port(number, speed.breakout)[0]
        ports[switch].append(
            EthernetPort(
                port=number,
                name=name,
                address=address,
                peer=peer,
                peer_port=peer_port,
                peer_address=peer_address,
                cable=cable.label,
                cable_m=cable.length_m,
                headroom_bytes=headroom(speed.gbps, cable.length_m, mtu).bytes,
            )
        )

    link = 0
    host_ends: dict[tuple[str, str], tuple[str, str, str]] = {}
    for cable in plan.cables:
        if cable.kind in ("leaf-spine", "spine-core"):  # a: the lower tier's end
            lower, upper = cable.a, cable.b
            low, high = addr.nth(pools["links"], 2 * link), addr.nth(pools["links"], 2 * link + 1)
            link += 1
            port(lower.device, int(lower.port), f"{low}/31", upper.device, str(upper.port), str(high), cable)
            port(upper.device, int(upper.port), f"{high}/31", lower.device, str(lower.port), str(low), cable)
            neighbors[lower.device].append(
                BgpNeighbor(address=str(high), asn=asn[upper.device], name=upper.device, local_address=str(low))
            )
            neighbors[upper.device].append(
                BgpNeighbor(address=str(low), asn=asn[lower.device], name=lower.device, local_address=str(high))
            )
            uplinks[lower.device].append(str(high))
            downlinks[(upper.device, lower.device)].append(str(low))
        elif cable.kind == "node-leaf":
            host, leaf = cable.a, cable.b
            base = leaf_number[leaf.device] * block + 2 * (int(leaf.port) - 1)
            gateway, host_address = addr.nth(pools["hosts"], base), addr.nth(pools["hosts"], base + 1)
            port(leaf.device, int(leaf.port), f"{gateway}/31", host.device, str(host.port), str(host_address), cable)
            host_ends[(host.device, str(host.port))] = (f"{host_address}/31", str(gateway), leaf.device)
        else:  # lint's FF710: inter-zone cables are InfiniBand-only so far
            raise AssertionError(f"{cable.kind} cable {cable.label} in a RoCE plan")
    for node in plan.nodes:
        for i, p in enumerate(node.ports):
            interface, via, leaf_name = host_ends[(node.hostname, p.nic)]
            hosts.append(
                HostInterface(
                    hostname=node.hostname,
                    nic=p.nic,
                    address=interface,
                    gateway=via,
                    leaf=leaf_name,
                    mtu=roce.host_mtu,
                    table=FIRST_TABLE + i,
                )
            )

    children = _children(plan, downlinks)
    under = _leaves_under(plan, leaves, children)
    zone_leaves: dict[str, list[str]] = defaultdict(list)
    for sw in leaves:
        zone_leaves[sw.zone].append(sw.name)
    switches = []
    for sw in plan.switches:
        peers = sorted(ports[sw.name], key=lambda p: p.port)
        ecmp = _ecmp_groups(sw, zone_leaves[sw.zone], under, children, uplinks, downlinks)
        if sw.tier == "leaf":
            host_block = f"{addr.nth(pools['hosts'], leaf_number[sw.name] * block)}/{32 - (block - 1).bit_length()}"
            paths = zones[sw.zone].up_ports
        else:
            host_block = None
            paths = max((len(group.next_hops) for group in ecmp), default=1)
        switches.append(
            EthernetSwitch(
                name=sw.name,
                asn=asn[sw.name],
                loopback=f"{loopback[sw.name]}/32",
                host_block=host_block,
                ports=peers,
                neighbors=neighbors[sw.name],
                ecmp=ecmp,
                maximum_paths=paths,
            )
        )
    if roce.path_selection == "pinned":
        try:
            pins = pinned_prefixes(switches)
        except PinConflict as exc:
            _refuse_pinned(loaded, f"{exc}, so it would need two next hops for one host")
        switches = [sw.model_copy(update={"pinned": pins.get(sw.name, [])}) for sw in switches]
    qos = _qos(loaded, speed.radix, switches)
    return EthernetPlan(
        link_gbps=speed.gbps,
        breakout=speed.breakout,
        asic=model.ethernet.asic,
        spine_asns={z.name: spine_asn(roce.bgp, i) for i, z in enumerate(plan.zones)},
        switches=switches,
        hosts=hosts,
        qos=qos,
        host_profiles=_host_profiles(loaded, plan, len(zones), qos, speed.gbps),
        host_pool=str(pools["hosts"]),
        nic_qos=_nic_qos(qos),
        path_selection=roce.path_selection,
    )


def _refuse_pinned(loaded: LoadedInventory, why: str) -> NoReturn:
    c = Collector(loaded.source.file, loaded.source.positions)
    c.error(
        PINNED_NOT_RENDERABLE,
        ("fabric", "roce", "path_selection"),
        f"pinned paths are rendered on two-tier fabrics whose leaves reach the same spines only: {why} "
        "(docs/ethernet.md, 'Rendering pinned paths')",
        "use `path_selection: ecmp` (the default); `ffplan analyze --paths pinned` compares pinned paths on any plan",
    )
    raise InfeasibleError(c.items)


def _asn(bgp: RoceBgp, sw: Switch, leaf_number: dict[str, int], zone_index: dict[str, int], pods: int) -> int:
    """RFC 7938's ASN of a switch: its own for a leaf, its pod's for a three-tier tree's spine, the plane's for the
    top tier (two-tier spines, three-tier super-spines)."""
    if sw.tier == "leaf":
        return leaf_asn(bgp, leaf_number[sw.name])
    if sw.tier == "spine" and sw.pod is not None:
        return pod_asn(bgp, zone_index[sw.zone] * pods + sw.pod - 1)
    return spine_asn(bgp, zone_index[sw.zone])


def _children(plan: Plan, downlinks: dict[tuple[str, str], list[str]]) -> dict[str, list[str]]:
    """Each switch's lower-tier neighbors, in plan order."""
    order = {sw.name: i for i, sw in enumerate(plan.switches)}
    children: dict[str, list[str]] = defaultdict(list)
    for upper, lower in sorted(downlinks, key=lambda pair: (order[pair[0]], order[pair[1]])):
        children[upper].append(lower)
    return children


def _leaves_under(plan: Plan, leaves: list[Switch], children: dict[str, list[str]]) -> dict[str, list[str]]:
    """Each switch's leaves: a leaf itself, a spine the leaves it links down to, a super-spine its spines' leaves."""
    under = {leaf.name: [leaf.name] for leaf in leaves}
    for tier in ("spine", "core"):
        for sw in plan.switches:
            if sw.tier == tier:
                under[sw.name] = [leaf for child in children[sw.name] for leaf in under[child]]
    return under


def _ecmp_groups(
    sw: Switch,
    zone_leaves: list[str],
    under: dict[str, list[str]],
    children: dict[str, list[str]],
    uplinks: dict[str, list[str]],
    downlinks: dict[tuple[str, str], list[str]],
) -> list[EcmpGroup]:
    """The next-hop sets of one switch: the leaves below each lower-tier neighbor over the links to it, then every
    other leaf of its plane over all its uplinks (equal-cost through the tier above, RFC 7938 section 6.1)."""
    groups = [
        EcmpGroup(destinations=under[child], next_hops=downlinks[(sw.name, child)]) for child in children[sw.name]
    ]
    below = set(under[sw.name])
    others = [leaf for leaf in zone_leaves if leaf not in below]
    if others and uplinks[sw.name]:
        groups.append(EcmpGroup(destinations=others, next_hops=uplinks[sw.name]))
    return groups


def _host_profiles(
    loaded: LoadedInventory, plan: Plan, planes: int, qos: RoceQosPlan, gbps: int
) -> list[RoceHostProfile]:
    """Per node model: NCCL's RoCE settings (the NICs it may use, the GID and traffic class of its QPs, QPs per
    connection, and whether a rail may talk to another: with several planes yes, NCCL_CROSS_NIC=1 as the article
    says), and what its host check compares (the PCIe devices, NUMA nodes, link speed, MTU, CQ depth, versions)."""
    inv = loaded.inventory
    dscp = qos.roce_dscp.value
    gdr_level = {h.model: h.settings.gdr_level or "PXB" for h in reversed(loaded.resolved.hosts)}  # the first host's
    by_model: dict[str, list[str]] = {}
    nics: dict[str, list[str]] = {}
    for node in plan.nodes:
        if node.ports:
            by_model.setdefault(node.model, []).append(node.hostname)
            nics.setdefault(node.model, list(dict.fromkeys(p.nic for p in node.ports)))
    profiles = []
    for model, hosts in by_model.items():
        nccl = [
            Setting(
                name="NCCL_IB_HCA",
                value="=" + ",".join(nics[model]),
                comment="the node's fabric NICs, one per rail; '=' matches the names exactly (mlx5_1 is not mlx5_10)",
            ),
            Setting(
                name="NCCL_IB_GID_INDEX",
                value=str(ROCE_V2_IPV4_GID),
                comment="mlx5's RoCE v2 GID of the port's IPv4 address (check with show_gids)",
            ),
            Setting(
                name="NCCL_IB_TC",
                value=str(traffic_class(dscp)),
                comment=f"IP traffic class byte: RoCE DSCP {dscp} shifted left by 2, plus ECT(0) so switches mark ECN",
            ),
            Setting(
                name="NCCL_IB_QPS_PER_CONNECTION",
                value=str(QPS_PER_CONNECTION),
                comment="ffplan's choice: several QPs per connection give ECMP's per-flow hash more flows (Meta)",
            ),
        ]
        if planes > 1:
            nccl.append(
                Setting(
                    name="NCCL_CROSS_NIC",
                    value="1",
                    comment=f"{planes} planes, rail-optimized: let a ring cross rails (the article)",
                )
            )
        node_model = inv.models.nodes[model]
        numa = numa_nodes(node_model)
        devices = [
            d.model_copy(update={"pci_class": ETHERNET_NIC_CLASS, "ib_ports": [], "ib_rate": ""})
            if d.kind == "nic"
            else d
            for d in pcie_devices(inv, node_model, numa, gdr_level[model])
        ]
        has_gpus = any(d.kind == "gpu" for d in devices)
        ib = host_checks(model, node_model, has_gpus)
        checks = RoceHostChecks(
            speed_mbps=gbps * 1000,
            mtu=qos.host_mtu,
            cq_depth=SourcedInt(value=CQ_DEPTH, source=CQ_DEPTH_SOURCE),
            peer_memory=ib.peer_memory,
            max_read_request_min=ib.max_read_request_min,
            versions=ib.versions,
        )
        profiles.append(
            RoceHostProfile(
                node_model=model,
                nccl=nccl,
                hosts=hosts,
                nics=nics[model],
                numa_nodes=numa,
                devices=devices,
                checks=checks,
            )
        )
    return profiles


def traffic_class(dscp: int) -> int:
    """The IP traffic class byte of RoCE packets: the DSCP shifted left by 2, plus ECT(0) so switches mark ECN."""
    return dscp << 2 | ECT0


def _nic_qos(qos: RoceQosPlan) -> RoceNicQos:
    """The NICs' half of the lossless QoS: trust DSCP and PFC on the priorities the switches keep lossless, RDMA-CM's
    default ToS, ECN on the RoCE priority, CNPs marked as the switches expect them, NVIDIA's DCQCN defaults."""
    lossless = set(qos.lossless_priorities)
    return RoceNicQos(
        trust="dscp",
        pfc=",".join("1" if prio in lossless else "0" for prio in range(8)),
        roce_tos=SourcedInt(
            value=traffic_class(qos.roce_dscp.value),
            source=f"RoCE DSCP {qos.roce_dscp.value} << 2 plus ECT(0), as NCCL_IB_TC",
        ),
        ecn_priority=qos.roce_priority.value,
        notification_point=[
            NicSetting(name="cnp_dscp", value=qos.cnp_dscp.value, source=qos.cnp_dscp.source),
            NicSetting(name="cnp_802p_prio", value=qos.cnp_priority.value, source=qos.cnp_priority.source),
        ],
        reaction_point=[NicSetting(name=name, value=value, source=DCQCN_SOURCE) for name, value in DCQCN_DEFAULTS],
    )


def _qos(loaded: LoadedInventory, radix: int, switches: list[EthernetSwitch]) -> RoceQosPlan:
    inv = loaded.inventory
    qos = inv.fabric.roce.qos
    given = inv.fabric.roce.model_fields_set | set()
    set_qos = qos.model_fields_set
    worst = max(switches, key=lambda sw: sum(p.headroom_bytes for p in sw.ports))
    fit = buffer_fit(inv, radix, [p.headroom_bytes for p in worst.ports])

    def of(value: int, field: str, default_source: str) -> SourcedInt:
        return SourcedInt(value=value, source=INVENTORY if field in set_qos else default_source)

    return RoceQosPlan(
        roce_dscp=of(qos.roce_dscp, "roce_dscp", NVIDIA),
        roce_priority=of(qos.roce_priority, "roce_priority", ARTICLE),
        cnp_dscp=of(qos.cnp_dscp, "cnp_dscp", NVIDIA),
        cnp_priority=of(qos.cnp_priority, "cnp_priority", NVIDIA + ": CNP on priority 6, strict"),
        lossless_priorities=sorted(set(qos.lossless_priorities)),
        roce_weight=of(qos.roce_weight, "roce_weight", NVIDIA + ": ETS 50 % each for TC3 and TC0"),
        default_weight=SourcedInt(value=100 - qos.roce_weight, source="100 minus the RoCE weight"),
        buffer_bytes=SourcedInt(value=fit.buffer_bytes, source=f"switch model {inv.fabric.switch_model}: buffer_mb"),
        port_buffer_bytes=SourcedInt(value=fit.port_buffer_bytes, source=f"buffer / {radix} ports"),
        ecn_min_bytes=SourcedInt(
            value=fit.ecn_min_bytes,
            source=INVENTORY if qos.ecn_min_kb is not None else "article: Kmin at 20 % of the port's buffer (20-30 %)",
        ),
        ecn_max_bytes=SourcedInt(
            value=fit.ecn_max_bytes,
            source=INVENTORY if qos.ecn_max_kb is not None else "ffplan's choice: Kmax at 50 % of the port's buffer",
        ),
        ecn_probability=of(qos.ecn_probability, "ecn_probability", "ffplan's choice"),
        headroom_share=of(qos.headroom_share, "headroom_share", "ffplan's choice: half the buffer for headroom"),
        max_headroom_bytes=SourcedInt(
            value=max(p.headroom_bytes for sw in switches for p in sw.ports),
            source="802.1Qbb worst case from cable length and speed (docs/ethernet.md)",
        ),
        pfc_watchdog_action=qos.pfc_watchdog.action,
        pfc_watchdog_detection_ms=SourcedInt(
            value=qos.pfc_watchdog.detection_ms,
            source=INVENTORY if "detection_ms" in qos.pfc_watchdog.model_fields_set else "ffplan's choice",
        ),
        pfc_watchdog_restoration_ms=SourcedInt(
            value=qos.pfc_watchdog.restoration_ms,
            source=INVENTORY if "restoration_ms" in qos.pfc_watchdog.model_fields_set else "ffplan's choice",
        ),
        switch_mtu=SourcedInt(
            value=inv.fabric.roce.switch_mtu,
            source=INVENTORY if "switch_mtu" in given else "ffplan's choice: the largest SONiC takes (9216)",
        ),
        host_mtu=SourcedInt(
            value=inv.fabric.roce.host_mtu, source=INVENTORY if "host_mtu" in given else "article: jumbo MTU (9000)"
        ),
    )
