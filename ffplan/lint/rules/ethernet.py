"""FF7xx: Ethernet (RoCE). Only for `fabric.transport: roce`: the switch and NIC speeds, the addresses and ASNs the
plan will own, and the lossless QoS arithmetic (ffplan.ethernet: the same functions the designer uses)."""

from __future__ import annotations

from typing import Iterator

from ffplan.codes import lint as codes
from ffplan.design.sizing import ThreeLayerTree, TreeSize
from ffplan.diagnostics import Severity, YamlPath
from ffplan.ethernet.addressing import AddressNeeds, pool_problems
from ffplan.ethernet.bgp import asn_problems
from ffplan.ethernet.qos import buffer_fit, headroom
from ffplan.ethernet.speeds import LinkSpeed, link_speed, nic_speed, switch_speeds, used_nics
from ffplan.inventory.models import Roce
from ffplan.lint.context import LintContext
from ffplan.lint.declare import Finding, rule

ROCE: YamlPath = ("fabric", "roce")
QOS: YamlPath = ROCE + ("qos",)
MAX_LOSSLESS = 2


def _roce(ctx: LintContext) -> Roce | None:
    return ctx.inventory.fabric.roce if ctx.inventory.fabric.transport == "roce" else None


def _speed(ctx: LintContext) -> LinkSpeed | None:
    return link_speed(ctx.inventory, used_nics(ctx.inventory))


def _shape(ctx: LintContext) -> TreeSize | None:
    return ctx.zone_shape if isinstance(ctx.zone_shape, TreeSize) else None


def _given(path: YamlPath, ctx: LintContext) -> YamlPath:
    """`path` when the inventory writes it, else the nearest written parent (a default has no line of its own)."""
    while path and path not in ctx.loaded.source.positions:
        path = path[:-1]
    return path


@rule(
    codes.ROCE_ASN_COLLISION,
    Severity.ERROR,
    bad="""
    fabric:
      transport: roce
      roce: {bgp: {spine_asn: 4200000000, leaf_asn_base: 4200000001}}   # 2 planes: spines take ...001
    """,
    good="""
      roce: {bgp: {spine_asn: 4200000000, leaf_asn_base: 4200001000}}
    """,
)
def roce_asn_collision(ctx: LintContext) -> Iterator[Finding]:
    """
    The plan gives the top tier of plane i (its spines, or a three-tier tree's super-spines) the ASN `spine_asn +
    i`, the spines of pod p of a three-tier tree (over all planes) `pod_asn_base + p`, and leaf j (over all
    planes) `leaf_asn_base + j` (RFC 7938: a tier shares one, every leaf has its own, so eBGP's loop check never
    drops a valid path). Every ASN must be a private 4-byte one (RFC 6996: 4200000000-4294967294), and no two
    tiers may share an ASN: a switch's routes would carry the ASN of the tier it talks to, which would drop them.
    """
    roce = _roce(ctx)
    shape = _shape(ctx)
    if roce is None:
        return
    planes = len(ctx.inventory.fabric.trees)
    leaves = shape.leaves * planes if shape else 0
    pods = shape.pods * planes if isinstance(shape, ThreeLayerTree) else 0
    for field, message, hint in asn_problems(roce.bgp, planes, leaves, pods):
        yield Finding(_given(ROCE + ("bgp", field), ctx), message, hint)


@rule(
    codes.ROCE_ADDRESS_POOL,
    Severity.ERROR,
    bad="""
      roce: {addressing: {loopbacks: 10.0.0.0/16, links: 10.0.0.0/24}}
    """,
    good="""
      roce: {addressing: {loopbacks: 10.0.0.0/16, links: 10.1.0.0/16}}
    """,
)
def roce_address_pool(ctx: LintContext) -> Iterator[Finding]:
    """
    The plan owns every address: a /32 loopback per switch, a /31 per switch-to-switch cable, and per leaf a block of
    /31s (one per down-port, rounded up to a power of two, announced as one prefix). Each pool must be an IPv4
    network (no host bits set), the three must not overlap (an address would be planned twice) and each must
    hold what the fabric needs; the message gives the count.
    """
    roce = _roce(ctx)
    if roce is None:
        return
    shape = _shape(ctx)
    needs = None
    if shape is not None:
        trees = len(ctx.inventory.fabric.trees)
        switches = shape.leaves + shape.spines + (shape.cores if isinstance(shape, ThreeLayerTree) else 0)
        links = shape.leaves * shape.up_ports + (
            shape.spines * shape.spine_up_ports if isinstance(shape, ThreeLayerTree) else 0
        )
        needs = AddressNeeds(
            loopbacks=switches * trees, links=links * trees, leaves=shape.leaves * trees, down_ports=shape.down_ports
        )
    for pool, message, hint in pool_problems(roce.addressing, needs):
        yield Finding(_given(ROCE + ("addressing", pool), ctx), message, hint)


@rule(
    codes.TOO_MANY_LOSSLESS_PRIORITIES,
    Severity.ERROR,
    bad="""
      roce: {qos: {lossless_priorities: [3, 4, 5]}}
    """,
    good="""
      roce: {qos: {lossless_priorities: [3]}}
    """,
)
def too_many_lossless_priorities(ctx: LintContext) -> Iterator[Finding]:
    """
    Every lossless priority needs its own headroom on every port (what still arrives after PAUSE), so switch
    buffers are sized for one or two lossless classes (SONiC's and the vendors' lossless profiles take two: 3
    and 4). A third either does not fit the buffer or takes the shared pool from the lossy traffic.
    """
    roce = _roce(ctx)
    if roce is not None and len(set(roce.qos.lossless_priorities)) > MAX_LOSSLESS:
        yield Finding(
            _given(QOS + ("lossless_priorities",), ctx),
            f"{len(set(roce.qos.lossless_priorities))} lossless priorities "
            f"({', '.join(map(str, sorted(set(roce.qos.lossless_priorities))))}); at most {MAX_LOSSLESS} fit a switch's headroom",
            "keep PFC on the RoCE priority (3) and at most one more",
        )


@rule(
    codes.ECN_THRESHOLDS,
    Severity.ERROR,
    bad="""
      roce: {qos: {ecn_min_kb: 800, ecn_max_kb: 400}}
    """,
    good="""
      roce: {qos: {ecn_min_kb: 250, ecn_max_kb: 600}}
    """,
)
def ecn_thresholds(ctx: LintContext) -> Iterator[Finding]:
    """
    WRED marks ECN from Kmin (probability 0) up to Kmax (ecn_probability), per queue. Kmin must be below Kmax,
    and Kmax within the port's share of the switch buffer (buffer / ports at the link speed): a threshold the
    queue never reaches marks nothing, PFC pauses first, and pauses spread (the article: a PFC storm when ECN
    is set too high).
    """
    roce = _roce(ctx)
    speed = _speed(ctx)
    if roce is None or speed is None:
        return
    fit = buffer_fit(ctx.inventory, speed.radix, [])
    if fit.ecn_min_bytes >= fit.ecn_max_bytes:
        yield Finding(
            _given(QOS + ("ecn_min_kb",), ctx),
            f"ECN marking starts at {fit.ecn_min_bytes:,} bytes, not below where it ends ({fit.ecn_max_bytes:,})",
            "make ecn_min_kb smaller than ecn_max_kb",
        )
    elif fit.ecn_max_bytes > fit.port_buffer_bytes:
        yield Finding(
            _given(QOS + ("ecn_max_kb",), ctx),
            f"ECN marking ends at {fit.ecn_max_bytes:,} bytes, beyond the port's share of the buffer "
            f"({fit.port_buffer_bytes:,} bytes: {fit.buffer_bytes:,} over {speed.radix} ports)",
            f"use at most {fit.port_buffer_bytes // 1000} KB (the article: Kmin at 20-30 % of it)",
        )


@rule(
    codes.MTU_MISMATCH,
    Severity.ERROR,
    bad="""
      roce: {switch_mtu: 4200, host_mtu: 9000}
    """,
    good="""
      roce: {switch_mtu: 9216, host_mtu: 9000}
    """,
)
def mtu_mismatch(ctx: LintContext) -> Iterator[Finding]:
    """
    Every path runs host - leaf - spine - leaf - host, and every switch port has `switch_mtu`; a host sending
    frames larger than that has them dropped at its leaf (routed ports do not fragment RoCE: it sets DF), so
    jobs hang at the first large message while small ones pass.
    """
    roce = _roce(ctx)
    if roce is not None and roce.host_mtu > roce.switch_mtu:
        yield Finding(
            _given(ROCE + ("host_mtu",), ctx),
            f"host MTU {roce.host_mtu} is larger than the switch ports' MTU {roce.switch_mtu}: frames between them are dropped",
            f"lower host_mtu to at most {roce.switch_mtu} or raise switch_mtu (SONiC takes up to 9216)",
        )


@rule(
    codes.PFC_HEADROOM_EXCEEDS_BUFFER,
    Severity.ERROR,
    bad="""
    models: {switches: {SW: {ports: 64, ethernet: {speed_gbps: 400, buffer_mb: 4, asic: x}}}}
    """,
    good="""
    models: {switches: {SW: {ports: 64, ethernet: {speed_gbps: 400, buffer_mb: 64, asic: x}}}}
    """,
)
def pfc_headroom_exceeds_buffer(ctx: LintContext) -> Iterator[Finding]:
    """
    Each port needs, per lossless priority, headroom for what arrives after it sends PAUSE: two maximum frames,
    the PAUSE frame, both interface delays, the peer's response time and the cable's round trip at the line rate
    (docs/ethernet.md). Lint takes the longest cable the racks allow (a leaf rack to the farthest host or spine
    rack); the designer uses each cable's real length. All ports together may take `headroom_share` percent of
    the buffer.
    """
    roce = _roce(ctx)
    speed = _speed(ctx)
    if roce is None or speed is None:
        return
    longest = _longest_cable(ctx)
    room = headroom(speed.gbps, longest, roce.switch_mtu).bytes
    fit = buffer_fit(ctx.inventory, speed.radix, [room] * speed.radix)
    if not fit.headroom_fits:
        yield Finding(
            ("models", "switches", ctx.inventory.fabric.switch_model, "ethernet", "buffer_mb"),
            f"PFC headroom of {speed.radix} ports x {len(set(roce.qos.lossless_priorities))} lossless priorities x "
            f"{room:,} bytes ({speed.gbps}G, {longest:g} m cable) is {fit.headroom_total_bytes:,} bytes, over "
            f"{roce.qos.headroom_share} % of the {fit.buffer_bytes:,}-byte buffer",
            "use a switch with a larger buffer, shorter cables (network racks nearer the hosts), fewer lossless "
            "priorities, or a larger headroom_share",
        )


def _longest_cable(ctx: LintContext) -> float:
    """The longest standard cable from a leaf rack to any host rack or spine rack of the inventory."""
    from ffplan.design.floor import floor, raw_length, standard_length
    from ffplan.diagnostics import InputError

    try:
        model = floor(ctx.loaded).model
    except InputError:  # a bad catalog block: FF8xx says so; price nothing, assume the longest standard length
        return 100.0
    racks = ctx.resolved.racks
    ends = {h.rack for h in ctx.resolved.hosts} | {r for t in ctx.inventory.fabric.trees for r in t.spine_racks}
    longest = 0.0
    for tree in ctx.inventory.fabric.trees:
        for leaf in tree.leaf_racks:
            for other in ends:
                if leaf in racks and other in racks:
                    a, b = racks[leaf], racks[other]
                    longest = max(longest, raw_length(model, a, a.units, b, 1))
    return standard_length(model, longest or model.slack_m)


@rule(
    codes.NIC_SPEED_UNSUPPORTED,
    Severity.ERROR,
    bad="""
    models:
      switches: {SW: {ports: 32, ethernet: {speed_gbps: 800, breakout: [1, 2], buffer_mb: 64, asic: x}}}
      nics: {NIC: {ethernet_gbps: [200, 100]}}      # the switch gives 800 and 400
    """,
    good="""
      nics: {NIC: {ethernet_gbps: [400, 200]}}
    """,
)
def nic_speed_unsupported(ctx: LintContext) -> Iterator[Finding]:
    """
    A switch port runs at its cage's speed or, split by a breakout it supports, at a fraction of it (800G as
    2x400G). Every NIC of the fabric must take the fabric's link speed (`fabric.roce.link_gbps`, default: the
    fastest speed every NIC and the switch share); a NIC without `ethernet_gbps` is InfiniBand-only.
    """
    roce = _roce(ctx)
    switch = ctx.switch_model
    if roce is None or switch is None or switch.ethernet is None:
        return
    speeds = sorted(switch_speeds(switch), reverse=True)
    for name in ctx.used_nic_models:
        nic = ctx.inventory.models.nics.get(name)
        if nic is None:
            continue
        where = ("models", "nics", name, "ethernet_gbps")
        if nic_speed(nic, switch) is None:
            yield Finding(
                _given(where, ctx),
                f"NIC model '{name}' takes {', '.join(f'{s}G' for s in nic.ethernet_gbps) or 'no Ethernet speed'}; "
                f"switch model '{ctx.inventory.fabric.switch_model}' gives {', '.join(f'{s}G' for s in speeds)}",
                "use a NIC that takes one of the switch's speeds, or add the breakout that gives the NIC's speed",
            )
        elif roce.link_gbps is not None and roce.link_gbps not in nic.ethernet_gbps:
            yield Finding(
                _given(ROCE + ("link_gbps",), ctx),
                f"link speed {roce.link_gbps}G is not one NIC model '{name}' takes "
                f"({', '.join(f'{s}G' for s in nic.ethernet_gbps)})",
                "set link_gbps to a speed every NIC takes",
            )
    if roce.link_gbps is not None and roce.link_gbps not in speeds:
        yield Finding(
            _given(ROCE + ("link_gbps",), ctx),
            f"link speed {roce.link_gbps}G is not one switch model "
            f"'{ctx.inventory.fabric.switch_model}' gives ({', '.join(f'{s}G' for s in speeds)})",
            "add the breakout that gives it to the switch model, or choose a speed it gives",
        )


@rule(
    codes.ROCE_CLASSES_CONFLICT,
    Severity.ERROR,
    bad="""
      roce: {qos: {roce_priority: 3, cnp_priority: 3}}
    """,
    good="""
      roce: {qos: {roce_priority: 3, cnp_priority: 6}}
    """,
)
def roce_classes_conflict(ctx: LintContext) -> Iterator[Finding]:
    """
    RoCE data must ride a lossless priority (RDMA's go-back-N retransmission collapses under drops); CNPs must
    not wait behind the data they are about (a strict-priority queue of their own, never paused); both need
    their own DSCP so the switch can tell them apart.
    """
    roce = _roce(ctx)
    if roce is None:
        return
    qos = roce.qos
    if qos.roce_priority not in qos.lossless_priorities:
        yield Finding(
            _given(QOS + ("lossless_priorities",), ctx),
            f"RoCE priority {qos.roce_priority} is not among the "
            f"lossless priorities {sorted(set(qos.lossless_priorities))}",
            f"add {qos.roce_priority} to lossless_priorities",
        )
    if qos.cnp_priority in qos.lossless_priorities or qos.cnp_priority == qos.roce_priority:
        yield Finding(
            _given(QOS + ("cnp_priority",), ctx),
            f"CNP priority {qos.cnp_priority} is lossless or RoCE's own",
            "give CNPs a priority of their own outside lossless_priorities (6 is the common default)",
        )
    if qos.cnp_dscp == qos.roce_dscp:
        yield Finding(
            _given(QOS + ("cnp_dscp",), ctx),
            f"CNP DSCP {qos.cnp_dscp} is RoCE's DSCP too",
            "use distinct DSCPs (RoCE 26, CNP 48 are the common defaults)",
        )


@rule(
    codes.ROCE_SWITCH_NOT_ETHERNET,
    Severity.ERROR,
    bad="""
    models: {switches: {QM8700: {ports: 40}}}
    fabric: {transport: roce, switch_model: QM8700}
    """,
    good="""
    models: {switches: {SN5600: {ports: 64, ethernet: {speed_gbps: 800, breakout: [1, 2], buffer_mb: 160, asic: spectrum-4}}}}
    """,
)
def roce_switch_not_ethernet(ctx: LintContext) -> Iterator[Finding]:
    """
    Sizing, QoS and the SONiC files need the switch's Ethernet speed, breakouts, buffer and ASIC family: an
    InfiniBand model has none of them.
    """
    if _roce(ctx) is not None and ctx.switch_model is not None and ctx.switch_model.ethernet is None:
        yield Finding(
            ("models", "switches", ctx.inventory.fabric.switch_model),
            f"switch model '{ctx.inventory.fabric.switch_model}' has no ethernet block, but the fabric is RoCE",
            "add ethernet: {speed_gbps, breakout, buffer_mb, asic} to the model, or use transport: infiniband",
        )


@rule(
    codes.ROCE_TOPOLOGY_UNSUPPORTED,
    Severity.ERROR,
    bad="""
    fabric:
      transport: roce
      zones: [{name: za, leaf_racks: [net], spine_racks: [net]}, {name: zb, leaf_racks: [net], spine_racks: [net]}]
      inter_zone_links: [{zones: [za, zb], count: 2}]
    """,
    good="""
    fabric:
      transport: roce
      planes: [{name: pa, leaf_racks: [net], spine_racks: [net]}, {name: pb, leaf_racks: [net], spine_racks: [net]}]
    """,
)
def roce_topology_unsupported(ctx: LintContext) -> Iterator[Finding]:
    """
    ffplan plans a RoCE fabric as one zone or as planes, each a two-tier Clos (leaves and spines) or a three-tier
    one (pods of leaves and spines under super-spines, `topology: three-layer-fat-tree`). Zones joined by
    leaf-to-leaf inter-zone links are InfiniBand-only so far: a routed fabric would need ASNs and ECMP sets for
    paths that climb, cross and climb again, which the designer does not plan. For more endpoints use a
    three-tier tree or planes.
    """
    if _roce(ctx) is None:
        return
    fabric = ctx.inventory.fabric
    if fabric.inter_zone_links or len(fabric.zones) > 1:
        yield Finding(
            _given(("fabric", "zones"), ctx),
            "RoCE fabrics are one zone or planes; zones joined by inter-zone links are InfiniBand-only (so far)",
            "use planes (each a Clos of its own), topology: three-layer-fat-tree, or one zone",
        )


@rule(
    codes.ROCE_BLOCK_IGNORED,
    Severity.WARNING,
    bad="""
    fabric:
      switch_model: QM8700            # transport: infiniband (the default)
      roce: {link_gbps: 400}
    """,
    good="""
    fabric:
      transport: roce
      roce: {link_gbps: 400}
    """,
)
def roce_block_ignored(ctx: LintContext) -> Iterator[Finding]:
    """
    `fabric.roce` (link speed, MTUs, ASNs, address pools, lossless QoS) is read only when `fabric.transport` is
    roce. On an InfiniBand fabric the designer ignores it, so a forgotten `transport: roce` gives an InfiniBand
    plan with none of the Ethernet settings the block asks for.
    """
    if ctx.inventory.fabric.transport != "roce" and ROCE in ctx.loaded.source.positions:
        yield Finding(
            ROCE,
            "the fabric is InfiniBand (transport: infiniband), so this roce block is ignored",
            "add `transport: roce` to the fabric, or delete the roce block",
        )


@rule(
    codes.ROCE_DUAL_TOR_UNMET,
    Severity.ERROR,
    bad="""
    nics: {CX7-400GE: {ports: 1, ethernet_gbps: [400]}}     # one link per card: one ToR
    fabric: {transport: roce, roce: {dual_tor: true}}
    """,
    good="""
    nics: {CX7-2x200GE: {ports: 1, planes: 2, ethernet_gbps: [200]}}   # functions .0 and .1, a plane (and ToR) each
    fabric: {transport: roce, planes: [{name: pa, ...}, {name: pb, ...}], roce: {dual_tor: true}}
    """,
)
def roce_dual_tor_unmet(ctx: LintContext) -> Iterator[Finding]:
    """
    `dual_tor: true` asks for Alibaba HPN's non-stacked dual-ToR: each NIC card reaches two different leaves
    (ToRs) that share nothing, so one ToR's failure or upgrade leaves every host connected. ffplan guarantees it
    through planes: a dual-port card is a multi-planar NIC model (`planes: 2`, its two PCI functions listed as
    devices), function f lands in plane f (FF114 asks for the planes), so its two links sit on leaves of two
    different planes with no link between them. A card with a single link reaches one ToR only.
    """
    roce = _roce(ctx)
    if roce is None or not roce.dual_tor:
        return
    used = {nic.model for host in ctx.resolved.hosts for nic in host.nics}
    for name, model in ctx.inventory.models.nics.items():
        if name in used and model.planes < 2:
            yield Finding(
                ("models", "nics", name),
                f"NIC model '{name}' gives each card one link, but dual_tor asks for two ToRs per card",
                "model a dual-port card as planes: 2 with its PCI functions .0 and .1 listed as devices (one per "
                "plane and ToR), or set dual_tor: false",
            )


@rule(
    codes.ROCE_MULTI_PORT_NIC,
    Severity.ERROR,
    bad="""
    nics: {CX7-2x200GE: {ports: 2, ethernet_gbps: [200]}}     # one device mlx5_0, two cabled ports
    """,
    good="""
    nics: {CX7-2x200GE: {ports: 1, planes: 2, ethernet_gbps: [200]}}   # functions .0 and .1 listed as devices
    """,
)
def roce_multi_port_nic(ctx: LintContext) -> Iterator[Finding]:
    """
    On Ethernet each port of a ConnectX card is a PCI function with a netdev of its own, and the RoCE design
    gives every netdev one /31, one gateway and one policy-routing table. A `ports: 2` NIC model names one device
    for both cabled ports, so the two links would share one interface's address. Model such a card as `planes: 2`
    with its functions .0 and .1 listed as devices (each lands in a plane of its own), or use `ports: 1`.
    """
    if _roce(ctx) is None:
        return
    used = {nic.model for host in ctx.resolved.hosts for nic in host.nics}
    for name, model in ctx.inventory.models.nics.items():
        if name in used and model.ports > 1:
            yield Finding(
                ("models", "nics", name, "ports"),
                f"NIC model '{name}' has {model.ports} ports on one device, but a RoCE host gives each "
                "device one address",
                "list each port as a device of its own (its PCI function, `planes: 2`), or set ports: 1",
            )
