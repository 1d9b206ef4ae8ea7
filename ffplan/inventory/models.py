"""The inventory schema: one set of pydantic models serves the loader, the JSON Schema and the docs.

Every string that can reach a rendered file is constrained here by a safe pattern, so no inventory value
can break a shell script, an XML file or an OpenSM config.
"""

from __future__ import annotations

import re
import string
from enum import Enum
from typing import Annotated, Literal

from pydantic import ConfigDict, Field, StringConstraints, model_validator

from ffplan.frozen import Frozen
from ffplan.inventory import failed_items

INVENTORY_VERSION: Literal[1] = 1

# Names that end up in hostnames, file names, OpenSM node descriptions, XML attributes and shell words.
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$"
HOSTNAME_PATTERN = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"
# `{index}` / `{index:04d}` are the only placeholders; the rest must be hostname-safe.
HOSTNAME_TEMPLATE_PATTERN = r"^[a-z0-9{]([a-z0-9{}:d-]{0,80})$"
GUID_PATTERN = r"^0x[0-9a-fA-F]{16}$"
BUS_ID_PATTERN = r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$"
DEVICE_PATTERN = r"^[A-Za-z0-9_]{1,32}$"
TEXT_PATTERN = r"^[A-Za-z0-9 ._,:;()/+%@#=-]{0,200}$"
PATH_PATTERN = r"^/[A-Za-z0-9._/-]{0,200}$"
IPV4_PREFIX_PATTERN = r"^([0-9]{1,3}\.){3}[0-9]{1,3}/[0-9]{1,2}$"
# FF013's hint for each pattern: the character set it really allows (other patterns: the pattern itself).
PATTERN_HINTS = {
    NAME_PATTERN: "names: letters, digits, '.', '_' and '-', starting with a letter or digit, at most 63 characters",
    HOSTNAME_PATTERN: "hostnames: lower-case letters, digits and '-' (not first or last), at most 63 characters",
    HOSTNAME_TEMPLATE_PATTERN: "hostname patterns: lower-case letters, digits, '-' and the placeholder {index} or {index:04d}",
    GUID_PATTERN: "GUIDs: 0x and 16 hex digits, e.g. 0x0002c90300aa0001",
    BUS_ID_PATTERN: "PCI bus ids: lower-case hex domain:bus:device.function, e.g. 0000:18:00.0",
    DEVICE_PATTERN: "device names: letters, digits and '_' (mlx5_0, gpu0), at most 32 characters",
    TEXT_PATTERN: "descriptions: letters, digits, spaces and . _ , : ; ( ) / + % @ # = -, at most 200 characters",
    PATH_PATTERN: "paths: absolute, letters, digits, '.', '_', '/' and '-' only",
    IPV4_PREFIX_PATTERN: "IPv4 networks: address and prefix length, e.g. 10.1.0.0/16",
}

Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
Hostname = Annotated[str, StringConstraints(pattern=HOSTNAME_PATTERN)]
Guid = Annotated[str, StringConstraints(pattern=GUID_PATTERN)]
BusId = Annotated[str, StringConstraints(pattern=BUS_ID_PATTERN)]
DeviceName = Annotated[str, StringConstraints(pattern=DEVICE_PATTERN)]
Text = Annotated[str, StringConstraints(pattern=TEXT_PATTERN)]
SafePath = Annotated[str, StringConstraints(pattern=PATH_PATTERN)]
# Prices, watts and lengths: finite and not negative (YAML's .inf and .nan are floats too).
Amount = Annotated[float, Field(ge=0, allow_inf_nan=False)]
# InfiniBand NodeInfo ids as ibnetdiscover prints them (vendid=0x2c9, devid=0xd2f0): lowercase hex, no padding needed.
IbVendorId = Annotated[str, StringConstraints(pattern=r"^0x[0-9a-f]{1,6}$")]
IbDeviceId = Annotated[str, StringConstraints(pattern=r"^0x[0-9a-f]{1,4}$")]


# A cable label, a switch name or switch[port]: an item of `fabric.failed_links` (and of the plan's routing.failed).
FailedItem = Annotated[str, StringConstraints(pattern=failed_items.PATTERN)]
# The names of LinkSpeed's members, as the plan stores a speed ("HDR"); tests/inventory checks the two agree.
SpeedName = Literal["EDR", "HDR", "NDR", "XDR"]


class Strict(Frozen):
    model_config = ConfigDict(populate_by_name=True)  # a key written by its alias or its name


class LinkSpeed(str, Enum):
    EDR = "EDR"
    HDR = "HDR"
    NDR = "NDR"
    XDR = "XDR"  # 800 Gb/s per 4x port: Quantum-X800 switches, ConnectX-8 NICs

    @property
    def gbps(self) -> int:
        return {"EDR": 100, "HDR": 200, "NDR": 400, "XDR": 800}[self.value]


class Role(str, Enum):
    COMPUTE = "compute"
    STORAGE = "storage"
    MANAGEMENT = "management"


# ---------------------------------------------------------------- hardware models


# Ethernet port speeds in Gb/s (IEEE 802.3 rates used in GPU fabrics) and the ASIC families ffplan knows buffers of.
EthernetGbps = Literal[25, 50, 100, 200, 400, 800]
Breakout = Literal[1, 2, 4, 8]


class EthernetSwitch(Strict):
    """What a RoCE fabric needs to know of an Ethernet switch: its ports' speed, how they split, its packet buffer."""

    speed_gbps: EthernetGbps = Field(description="Speed of each of the model's `ports` (the cage's full rate), Gb/s.")
    breakout: list[Breakout] = Field(
        default=[1],
        min_length=1,
        description="Ways a port may be split: 2 gives two "
        "ports of half the speed (an 800G port as 2x400G); 1 is the port unsplit.",
    )
    buffer_mb: float = Field(
        gt=0,
        le=1024,
        allow_inf_nan=False,
        description="Shared packet buffer of the ASIC in MB (10^6 bytes), as the vendor publishes it.",
    )
    asic: Name = Field(description="ASIC family (spectrum-4, tomahawk-5, ...): written into the switch's metadata.")


class SwitchModel(Strict):
    ports: int = Field(
        ge=4, le=256, description="External ports (radix); for an Ethernet switch, its cages at speed_gbps."
    )
    speed: LinkSpeed = LinkSpeed.HDR
    data_vls: int = Field(default=8, ge=1, le=15, description="Data virtual lanes the switch supports (VL0..n-1).")
    power_w: float = Field(default=0, ge=0, allow_inf_nan=False, description="Typical power draw in watts.")
    rack_units: int = Field(default=1, ge=1, le=48)
    form_factor: Literal["1U", "2U", "chassis"] = "1U"
    vendor_part: Text = ""
    vendor_id: IbVendorId = Field(
        default="0x02c9", description="NodeInfo VendorID (IEEE OUI) the switch reports: Mellanox/NVIDIA 0x02c9."
    )
    device_id: IbDeviceId = Field(
        default="0xd2f0", description="NodeInfo DeviceID the switch reports: Quantum (QM8700/QM8790) 0xd2f0."
    )
    ethernet: EthernetSwitch | None = Field(
        default=None, description="The switch as an Ethernet switch (RoCE fabrics)."
    )


class PcieLink(Strict):
    gen: int = Field(default=4, ge=1, le=6)
    lanes: int = Field(default=16, ge=1, le=32, description="Lanes; a root port (host bridge) may have 32.")


class NicModel(Strict):
    ports: int = Field(default=1, ge=1, le=2)
    planes: int = Field(
        default=1,
        ge=1,
        le=4,
        description="Planes the NIC's cage feeds (a multi-planar NIC such as a "
        "ConnectX-8 SuperNIC as 2 x 400G): each plane's link is a PCI function and InfiniBand device of "
        "its own (0000:19:00.0 mlx5_0, 0000:19:00.1 mlx5_1), listed as a device each, function f in "
        "plane f, each at `speed`; 1 is an ordinary NIC.",
    )
    speed: LinkSpeed = Field(
        default=LinkSpeed.HDR, description="Speed of each port (of each plane's link on a multi-planar NIC)."
    )
    data_vls: int = Field(default=8, ge=1, le=15)
    pcie: PcieLink = PcieLink()
    pci_id: Annotated[str, StringConstraints(pattern=r"^0x[0-9a-f]{4}:0x[0-9a-f]{4}$")] = "0x15b3:0x101b"
    power_w: float = Field(default=0, ge=0, allow_inf_nan=False)
    vendor_id: IbVendorId = Field(
        default="0x02c9",
        description="NodeInfo VendorID (IEEE OUI) each port reports: Mellanox/NVIDIA 0x02c9. "
        "The NodeInfo DeviceID is the PCI device ID of pci_id (ConnectX-6: 0x101b).",
    )
    ethernet_gbps: list[EthernetGbps] = Field(
        default=[],
        description="Ethernet speeds a port takes (RoCE fabrics), e.g. [400, 200, 100]; empty: an InfiniBand-only NIC.",
    )

    @model_validator(mode="after")
    def _one_cage_per_planar_card(self) -> NicModel:
        if self.planes > 1 and self.ports > 1:
            raise ValueError("a multi-planar NIC has one cage (ports: 1): its planes' links are its PCI functions")
        return self


class GpuModel(Strict):
    pcie: PcieLink = PcieLink()
    pci_id: Annotated[str, StringConstraints(pattern=r"^0x[0-9a-f]{4}:0x[0-9a-f]{4}$")] = "0x10de:0x20f1"
    memory_gb: int = Field(default=40, ge=1)
    power_w: float = Field(default=0, ge=0, allow_inf_nan=False)


class Cpu(Strict):
    model: Text = ""
    vendor: Literal["AuthenticAMD", "GenuineIntel"] = "AuthenticAMD"
    family_id: int = Field(default=23, ge=0)
    model_id: int = Field(default=49, ge=0)
    sockets: int = Field(default=2, ge=1, le=8)
    cores_per_socket: int = Field(default=32, ge=1, le=512)
    threads_per_core: int = Field(default=2, ge=1, le=4)
    nps: Literal[0, 1, 2, 4] = Field(
        default=1, description="AMD NUMA nodes per socket (NPS); 0 = one node for the whole system."
    )


class RootPort(Strict):
    name: DeviceName
    numa: int = Field(ge=0, description="NUMA node the root port belongs to.")
    pcie: PcieLink = PcieLink()


class PcieSwitch(Strict):
    """A PCIe switch (HGX boards: one per GPU/NIC pair or two); devices and lower switches hang under it."""

    name: DeviceName
    upstream: DeviceName = Field(description="The root port, or the switch, its upstream port connects to.")
    bus_id: BusId = Field(
        description="Bus id of the switch's upstream port (lspci -D): the bridge NCCL names the switch by."
    )
    pcie: PcieLink = Field(default=PcieLink(), description="The upstream link (gen and lanes).")


class Device(Strict):
    name: DeviceName = Field(description="OS name: mlx5_0 for a NIC, gpu0 for a GPU.")
    kind: Literal["gpu", "nic"]
    model: Name
    root_port: DeviceName | None = Field(default=None, description="The CPU root port it sits on (or pcie_switch).")
    pcie_switch: DeviceName | None = Field(default=None, description="The PCIe switch it hangs under (or root_port).")
    bus_id: BusId

    @model_validator(mode="after")
    def _one_parent(self) -> Device:
        if (self.root_port is None) == (self.pcie_switch is None):
            raise ValueError("a device sits on exactly one of root_port or pcie_switch")
        return self


# A software version as its tool prints it: 580.82.07, 13.0, 24.10-1.1.4 (DOCA-OFED / MLNX_OFED mlx5_core)
Version = Annotated[str, StringConstraints(pattern=r"^[0-9]{1,6}(\.[0-9]{1,6}){0,3}(-[0-9A-Za-z.]{1,30})?$")]


class Versions(Strict):
    """The software the hosts of a node model run; host-check.sh checks each is at least this (docs/hosts.md)."""

    nvidia_driver: Version | None = Field(
        default=None, description="NVIDIA driver, e.g. 580.82.07 (CUDA 13.x needs >= 580)."
    )
    cuda: Version | None = Field(default=None, description="CUDA toolkit, e.g. 13.0 (/usr/local/cuda/version.json).")
    ofed: Version | None = Field(
        default=None,
        description="MLNX_OFED / DOCA-OFED mlx5_core version, e.g. 24.10-1.1.4 (/sys/module/mlx5_core/version).",
    )


class NodeModel(Strict):
    description: Text = ""
    cpu: Cpu = Cpu()
    memory_gb: int = Field(default=512, ge=1)
    rack_units: int = Field(default=4, ge=1, le=48)
    power_w: float = Field(default=0, ge=0, allow_inf_nan=False, description="Average power under load (W).")
    peak_power_w: float = Field(default=0, ge=0, allow_inf_nan=False)
    root_ports: list[RootPort] = []
    pcie_switches: list[PcieSwitch] = []
    devices: list[Device] = []
    nvlink_pairs: list[tuple[DeviceName, DeviceName]] = []
    versions: Versions = Versions()

    def pcie_switch_loops(self) -> list[list[str]]:
        """Each loop of PCIe switches whose upstream chain comes back to itself, once, from its first-listed member."""
        upstream = {sw.name: sw.upstream for sw in self.pcie_switches}
        loops: list[list[str]] = []
        for sw in self.pcie_switches:
            chain = [sw.name]
            while upstream.get(chain[-1]) in upstream and upstream[chain[-1]] not in chain:
                chain.append(upstream[chain[-1]])
            if upstream.get(chain[-1]) == sw.name and not any(sw.name in loop for loop in loops):
                loops.append(chain)
        return loops


class Models(Strict):
    switches: dict[Name, SwitchModel] = {}
    nics: dict[Name, NicModel] = {}
    gpus: dict[Name, GpuModel] = {}
    nodes: dict[Name, NodeModel] = {}


# ---------------------------------------------------------------- floor and fabric


# How a rack's heat leaves it; each has a default limit in kW (ffplan.design.facility.COOLING_LIMIT_KW).
Cooling = Literal["air", "rear-door", "direct-liquid"]


class RackFacility(Strict):
    """What the room gives a rack: a power budget and a cooling type (with its heat limit). None: not checked."""

    power_kw: float | None = Field(
        default=None,
        gt=0,
        le=1000,
        allow_inf_nan=False,
        description="Power budget of the rack's feeds in kW; its peak draw must stay within it.",
    )
    cooling: Cooling | None = Field(
        default=None,
        description="How the rack is cooled: air, rear-door (heat exchanger) "
        "or direct-liquid (cold plates); its peak draw must stay within the cooling's limit.",
    )
    cooling_kw: float | None = Field(
        default=None,
        gt=0,
        le=1000,
        allow_inf_nan=False,
        description="Heat the cooling removes in kW (default: the cooling type's limit, docs/facility.md).",
    )


class Rack(RackFacility):
    name: Name
    row: int = Field(ge=0, le=999)
    slot: int = Field(ge=0, le=999)
    units: int = Field(default=42, ge=1, le=60)


class RackBlock(RackFacility):
    """A run of racks: `name` with {row} and {slot} placeholders over ranges of rows and slots."""

    name: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9{}:d._-]{1,60}$")]
    rows: tuple[int, int]
    slots: tuple[int, int]
    units: int = Field(default=42, ge=1, le=60)


class Zone(Strict):
    """One fat tree: a zone (it shares the subnet with the other zones) or a plane (a subnet of its own)."""

    name: Name
    leaf_racks: list[Name] = Field(
        min_length=1, description="Racks that hold this tree's leaf switches (filled in order)."
    )
    spine_racks: list[Name] = Field(min_length=1, description="Racks that hold this tree's spine switches.")
    core_racks: list[Name] = Field(
        default=[], description="Racks that hold a three-layer tree's core switches (default: the spine racks)."
    )


class InterZoneLinks(Strict):
    zones: tuple[Name, Name]
    count: int = Field(ge=1, le=512)


# RFC 6996: private 4-byte AS numbers.
PRIVATE_ASN_FIRST = 4_200_000_000
PRIVATE_ASN_LAST = 4_294_967_294
Dscp = Annotated[int, Field(ge=0, le=63)]
Priority = Annotated[int, Field(ge=0, le=7)]  # 802.1p priority = SONiC traffic class = queue, one number per class
Ipv4Prefix = Annotated[str, StringConstraints(pattern=IPV4_PREFIX_PATTERN)]


class RoceBgp(Strict):
    """eBGP underlay per RFC 7938: the top tier of a plane shares one ASN, so do the spines of each pod of a
    three-tier tree, and every leaf has its own."""

    spine_asn: int = Field(
        default=PRIVATE_ASN_FIRST,
        description="ASN of the top tier: the spines, or a three-tier "
        "tree's super-spines (one per plane: spine_asn + plane index).",
    )
    pod_asn_base: int = Field(
        default=PRIVATE_ASN_FIRST + 100,
        description="Three-tier trees: ASN of the first pod's "
        "spines; pod i of the fabric (all planes, in order) gets pod_asn_base + i.",
    )
    leaf_asn_base: int = Field(
        default=PRIVATE_ASN_FIRST + 1000,
        description="ASN of the first leaf; leaf i of the fabric (all planes, in order) gets leaf_asn_base + i.",
    )


class RoceAddressing(Strict):
    """IPv4 pools the plan carves deterministically; they must not overlap."""

    loopbacks: Ipv4Prefix = Field(default="10.0.0.0/16", description="One /32 per switch, in plan order.")
    links: Ipv4Prefix = Field(default="10.1.0.0/16", description="One /31 per leaf-spine cable, in plan order.")
    hosts: Ipv4Prefix = Field(default="10.128.0.0/9", description="One /31 per NIC port (leaf side even, host odd).")


class PfcWatchdog(Strict):
    action: Literal["drop", "forward", "alert"] = Field(
        default="drop", description="What SONiC's PFC watchdog does to a queue stuck in PFC pause (a PFC storm)."
    )
    detection_ms: int = Field(
        default=200, ge=100, le=5000, description="Time a queue may stay paused before the action."
    )
    restoration_ms: int = Field(
        default=200, ge=100, le=60000, description="Time without pause before the queue is restored."
    )


class RoceQos(Strict):
    """The lossless QoS intent; every value the plan derives from it carries its source (docs/ethernet.md)."""

    roce_dscp: Dscp = Field(default=26, description="DSCP of RoCE data (NVIDIA's default).")
    roce_priority: Priority = Field(default=3, description="Priority / traffic class / queue of RoCE data; lossless.")
    cnp_dscp: Dscp = Field(default=48, description="DSCP of congestion notification packets (CNP).")
    cnp_priority: Priority = Field(default=6, description="Priority / traffic class / queue of CNPs; strict priority.")
    lossless_priorities: list[Priority] = Field(
        default=[3],
        description="Priorities with PFC (the RoCE one among them). Switch buffers hold headroom for at most two.",
    )
    roce_weight: int = Field(
        default=50,
        ge=1,
        le=99,
        description="ETS (DWRR) weight of the RoCE queue, percent; the "
        "default queue gets 100 minus this (SONiC's DWRR weights are 1-100).",
    )
    ecn_min_kb: int | None = Field(
        default=None,
        ge=1,
        description="WRED/ECN marking starts (Kmin), KB per port "
        "(default: 20 % of the port's share of the buffer, the article's rule).",
    )
    ecn_max_kb: int | None = Field(
        default=None,
        ge=1,
        description="WRED/ECN marks every packet from here (Kmax), KB per "
        "port (default: 50 % of the port's share of the buffer).",
    )
    ecn_probability: int = Field(default=10, ge=1, le=100, description="Marking probability at Kmax, percent.")
    headroom_share: int = Field(
        default=50,
        ge=1,
        le=100,
        description="Percent of the switch buffer the lossless "
        "headroom of all ports may take (the rest is the shared pool).",
    )
    pfc_watchdog: PfcWatchdog = PfcWatchdog()


class Roce(Strict):
    """A RoCEv2 fabric: link speed, MTUs, addressing, BGP and QoS intent."""

    link_gbps: EthernetGbps | None = Field(
        default=None,
        description="Speed of every fabric link; default: the fastest "
        "speed of the NICs that the switch ports (or their breakouts) take.",
    )
    switch_mtu: int = Field(default=9216, ge=1500, le=9216, description="MTU of every switch port (L2 payload bytes).")
    host_mtu: int = Field(
        default=9000, ge=1500, le=9216, description="MTU of the hosts' RoCE interfaces; at most switch_mtu."
    )
    bgp: RoceBgp = RoceBgp()
    addressing: RoceAddressing = RoceAddressing()
    qos: RoceQos = RoceQos()
    dual_tor: bool = Field(
        default=False,
        description="Non-stacked dual-ToR (Alibaba HPN): every NIC card's links "
        "(a multi-planar NIC's PCI functions, `planes: 2`) land on different leaves (ToRs), which are "
        "independent (no link, MLAG or stacking between them); lint FF712 refuses a fabric that "
        "cannot guarantee it.",
    )
    path_selection: Literal["ecmp", "pinned"] = Field(
        default="ecmp",
        description="ecmp: every switch hashes each flow onto its equal-cost next hops; pinned: one path "
        "per destination port, as InfiniBand's static routes (an analysis option: SONiC and FRR cannot render it, "
        "docs/ethernet.md).",
    )


Transport = Literal["infiniband", "roce"]


Topology = Literal["two-layer-fat-tree", "three-layer-fat-tree"]
Placement = Literal["balanced", "rail-optimized"]


class Fabric(Strict):
    transport: Transport = Field(
        default="infiniband",
        description="infiniband: OpenSM-routed subnets; roce: RoCEv2 "
        "over a routed Ethernet Clos (eBGP, lossless QoS; the `roce:` block).",
    )
    topology: Topology = Field(
        default="two-layer-fat-tree",
        description="Shape of every zone or plane: leaves and "
        "spines, or pods of leaves and spines joined by core switches.",
    )
    switch_model: Name
    zones: list[Zone] = Field(
        default=[],
        description="Fat trees that share one subnet (one subnet manager), "
        "joined by inter_zone_links. Give zones or planes.",
    )
    planes: list[Zone] = Field(
        default=[],
        description="Fat trees that are independent subnets (one subnet manager "
        "each, no links between them); NIC i of a node goes to plane i. Give zones or planes.",
    )
    ports_per_zone: int | None = Field(
        default=None,
        ge=1,
        description="Endpoint ports per zone or plane; default: what the switch radix gives "
        "(k*k/2 for two layers, k*k*k/4 for three, when non-blocking), or with rail-optimized placement the whole "
        "scalable units the nodes need.",
    )
    oversubscription: float = Field(
        default=1.0, ge=1.0, le=8.0, allow_inf_nan=False, description="Leaf down:up port ratio; 1.0 is non-blocking."
    )
    placement: Placement = Field(
        default="balanced",
        description="balanced: the placement ILP spreads every role "
        "evenly over the leaves; rail-optimized: NIC i of each node of a scalable unit goes "
        "to the unit's rail-i leaf (a unit is as many nodes as a leaf has down-ports).",
    )
    inter_zone_links: list[InterZoneLinks] = []
    guid_prefix: Annotated[str, StringConstraints(pattern=r"^0x[0-9a-f]{6}$")] = Field(
        default="0x0002c9", description="OUI used for synthetic (placeholder) GUIDs."
    )
    switch_guids: dict[Name, Guid] = Field(
        default={}, description="Node GUIDs of installed switches, by switch name (z1-leaf01)."
    )
    failed_links: list[FailedItem] = Field(
        default=[], description="Cable labels or switch names known to be bad; routing avoids them."
    )
    roce: Roce = Field(default=Roce(), description="RoCE settings (used when transport is roce).")
    subnet_managers: list[Hostname] = Field(
        default=[],
        max_length=8,
        description="Hosts that run the subnet managers (UFM appliances or OpenSM hosts), the "
        "master first, then the standbys; default: the first two management nodes, else the first two nodes.",
    )

    @property
    def trees(self) -> list[Zone]:
        """The zones, or the planes: every fat tree of the fabric."""
        return self.planes or self.zones

    @property
    def tree_key(self) -> Literal["zones", "planes"]:
        """The inventory key that lists the trees (for YAML paths in diagnostics)."""
        return "planes" if self.planes else "zones"


# ---------------------------------------------------------------- nodes


class Attach(str, Enum):
    SINGLE = "single"  # each NIC port lands in one zone, chosen by the planner
    EVERY_ZONE = "every-zone"  # one NIC port in each zone (dual-homed storage)


class HostSettings(Strict):
    """Settings that inherit host -> group -> node model -> built-in defaults."""

    attach: Attach | None = None
    zone: Name | None = Field(default=None, description="Pin single-attached NICs to this zone.")
    relaxed_ordering: bool | None = None
    gdr_level: Literal["LOC", "PIX", "PXB", "PHB", "SYS"] | None = None
    nccl_socket_ifname: Annotated[str, StringConstraints(pattern=r"^=?[A-Za-z0-9_.-]{1,15}$")] | None = None
    topo_file: SafePath | None = None


class Host(Strict):
    hostname: Hostname
    rack: Name
    u: int = Field(ge=1, le=60)
    guids: dict[DeviceName, Guid] = Field(default={}, description="Port GUIDs by NIC name (mlx5_0: 0x...).")
    settings: HostSettings = HostSettings()


class Group(Strict):
    name: Name
    role: Role
    model: Name
    count: int | None = Field(default=None, ge=1, le=100_000)
    hostname: Annotated[str, StringConstraints(pattern=HOSTNAME_TEMPLATE_PATTERN)] | None = Field(
        default=None, description="Hostname pattern with {index} (1-based), e.g. cn{index:04d}."
    )
    racks: list[Name] = Field(default=[], description="Racks the generated hosts fill, in order.")
    per_rack: int | None = Field(default=None, ge=1, le=60)
    first_u: int = Field(default=1, ge=1, le=60)
    hosts: list[Host] = []
    settings: HostSettings = HostSettings()


# ---------------------------------------------------------------- QoS and catalog


# Software whose host files ffplan writes with an SL: NCCL (nccl.conf), HFReduce (hfreduce.env), UCX/MPI
# (ucx.conf) and the 3FS client and storage server (3fs-*-sl.toml).
Software = Literal["nccl", "hfreduce", "ucx", "3fs"]


class Carries(Strict):
    """What a traffic class carries: the purpose ffplan acts on, never guessed from the class's name."""

    software: list[Software] = Field(
        default=[], description="Software whose host settings use this class's SL: nccl, hfreduce, ucx, 3fs."
    )
    roles: list[tuple[Role, Role]] = Field(
        default=[],
        description="Pairs of node roles whose traffic (both directions) "
        "OpenSM's QoS policy answers with this class's SL, e.g. [compute, storage].",
    )
    unmatched: bool = Field(
        default=False, description="The class of PathRecord queries no other rule matches (OpenSM's DEFAULT level)."
    )


class TrafficClass(Strict):
    name: Name
    sl: int | None = Field(default=None, description="Service level 0-15.")
    vl: int | None = Field(
        default=None, description="Data VL the SL maps to (below the data VLs of switches and NICs; 15 is reserved)."
    )
    weight: int | None = Field(default=None, description="VL arbitration weight 0-255 (units of 64 bytes).")
    priority: Literal["high", "low"] | None = None
    carries: Carries | None = Field(
        default=None,
        description="What the class carries; default classes (other, hfreduce, "
        "nccl, storage) have built-in values, any other class carries only what it names here.",
    )
    description: Text = ""


class Catalog(Strict):
    """Price/power overrides; the keys are those of the built-in catalog (see `ffplan report cost --help`)."""

    preset: Literal["paper", "list-price", "deepseek-v3"] | None = None  # ffplan.catalog.PRESETS
    currency: Annotated[str, StringConstraints(pattern=r"^[A-Za-z ._-]{1,20}$")] | None = None
    prices: dict[Name, Amount] = {}
    power_w: dict[Name, Amount] = {}
    cable: dict[Annotated[str, StringConstraints(pattern=r"^[a-z_]{1,40}$")], Amount] = {}


class StorageTarget(Strict):
    gib_s_per_gpu: float = Field(
        gt=0,
        le=1000,
        allow_inf_nan=False,
        description="Storage read throughput each GPU "
        "should get, GiB/s (without this block: about 1 GiB/s, the GPU-server hardware guide's).",
    )


class Inventory(Strict):
    inventory_version: Literal[1] = INVENTORY_VERSION
    name: Name
    description: Text = ""
    models: Models
    fabric: Fabric
    racks: list[Rack] = []
    rack_blocks: list[RackBlock] = Field(default=[], description="Runs of racks generated from row/slot ranges.")
    groups: list[Group] = Field(min_length=1)
    traffic_classes: list[TrafficClass] | None = None
    catalog: Catalog | None = None
    defaults: HostSettings = HostSettings()
    storage: StorageTarget | None = Field(default=None, description="Storage bandwidth target (FF113, ffplan analyze).")


# Generated names are DNS labels or rack names (at most 63 characters), so no field needs a wider format;
# `{index:0999999999d}` would build a gigabyte string per name.
MAX_FIELD_WIDTH = 63
_FORMAT_SPEC = re.compile(r"0?(?P<width>\d+)?d?")


def pattern_problem(pattern: str, fields: tuple[str, ...]) -> str | None:
    """Why `pattern` cannot safely be expanded with integer `fields`, or None. Checked before expanding, so a
    width of a billion or `{row.foo}` (attribute access) is a finding, not an exhausted memory or a crash."""
    try:
        parts = list(string.Formatter().parse(pattern))
    except ValueError as exc:
        return str(exc)
    for _, name, spec, conversion in parts:
        if name is None:
            continue
        if name not in fields:
            return f"unknown placeholder {{{name}}}; the placeholders are " + ", ".join(f"{{{f}}}" for f in fields)
        match = _FORMAT_SPEC.fullmatch(spec or "")
        if conversion or not match:
            return f"format '{{{name}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}}' is not a plain width such as {{{name}:02d}}"
        if int(match["width"] or 0) > MAX_FIELD_WIDTH:
            return f"width {int(match['width'])} of {{{name}}} is over {MAX_FIELD_WIDTH} (a name has at most 63 characters)"
    return None


def expand_rack_block(block: RackBlock) -> list[Rack]:
    racks = []
    for row in range(block.rows[0], block.rows[1] + 1):
        for slot in range(block.slots[0], block.slots[1] + 1):
            racks.append(
                Rack(
                    name=block.name.format(row=row, slot=slot),
                    row=row,
                    slot=slot,
                    units=block.units,
                    power_kw=block.power_kw,
                    cooling=block.cooling,
                    cooling_kw=block.cooling_kw,
                )
            )
    return racks
