"""The plan: the frozen, versioned contract between the designer and every later stage.

Everything render, report, analyze, verify and diff need is here; none of them reads the inventory.
Field order is the on-disk order; lists are kept in a canonical order by the designer.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, PlainSerializer

from ffplan.inventory.models import Carries, Catalog

# 2: GUIDs as the hardware reports them (mlx5 port: node GUID = port GUID; system image GUIDs; NIC models with
#    their NodeInfo ids). A version 1 plan's CA node GUIDs follow ibsim's rule instead: re-run design.
PLAN_VERSION = 2


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class InventoryRef(Frozen):
    name: str
    file: str
    sha256: str


class SwitchModelSpec(Frozen):
    name: str
    ports: int
    speed: str
    data_vls: int
    power_w: float
    rack_units: int
    vendor_id: str  # InfiniBand NodeInfo VendorID (OUI), as ibnetdiscover prints it: 0x2c9
    device_id: str  # NodeInfo DeviceID: 0xd2f0 (Quantum)


class NicModelSpec(Frozen):
    """A NIC model as the fabric sees each of its ports (every mlx5 port is a device of its own)."""

    name: str
    vendor_id: str  # NodeInfo VendorID (OUI): 0x2c9
    device_id: str  # NodeInfo DeviceID, the PCI device ID: 0x101b (ConnectX-6)


class NodeModelSpec(Frozen):
    """A node model of the inventory, as far as later stages need it (the cost report: GPUs, power, size)."""

    name: str
    gpus: int  # GPU devices of the model
    gpu_model: str | None  # model of its first GPU; None without GPUs
    power_w: float  # average under load; 0 when the inventory gives none
    peak_power_w: float  # 0 when the inventory gives none
    rack_units: int


class ZoneSpec(Frozen):
    name: str
    leaves: int
    spines: int
    down_ports: int  # per leaf
    up_ports: int  # per leaf
    links_per_leaf_spine: int
    endpoint_ports: int
    used_ports: dict[str, int]  # per role, plus "inter-zone" and "free"


class Switch(Frozen):
    name: str
    zone: str
    tier: Literal["leaf", "spine"]
    index: int  # 1-based within its zone and tier
    model: str
    ports: int
    # A Quantum switch reports one GUID as node GUID, port GUID (of its management port 0) and system image GUID.
    node_guid: str
    port_guid: str
    sysimg_guid: str
    lid: int
    guid_placeholder: bool
    rack: str
    u: int


class NodePort(Frozen):
    """One NIC port of a node and where it lands in the fabric."""

    nic: str  # OS device name, mlx5_0
    nic_model: str
    port: int  # NIC port number (1-based)
    # mlx5 (ConnectX-4 and later): every port is a device of its own whose node GUID is its port GUID;
    # the ports of one card share a system image GUID (the card's base GUID, that of port 1).
    node_guid: str
    port_guid: str
    sysimg_guid: str
    guid_placeholder: bool
    lid: int
    zone: str
    leaf: str
    leaf_port: int
    cable: str  # label of the cable


class Node(Frozen):
    hostname: str
    group: str
    role: Literal["compute", "storage", "management"]
    model: str
    rack: str
    u: int
    ports: list[NodePort]


class CableEnd(Frozen):
    device: str
    port: int | str  # switch port number, or the NIC name for a node end


class Cable(Frozen):
    label: str
    kind: Literal["node-leaf", "leaf-spine", "inter-zone"]
    a: CableEnd
    b: CableEnd
    length_m: float
    type: Literal["DAC", "AOC"]
    zone: str  # zone of end a


class SolverInfo(Frozen):
    solver: str
    status: str
    objective: float
    gap: float
    variables: int
    constraints: int


class Balance(Frozen):
    """Per-role spread of ports over leaves (all zones): min and max per leaf, and the feasible bounds."""

    role: str
    min_per_leaf: int
    max_per_leaf: int
    lower_bound: int
    upper_bound: int


class CableModel(Frozen):
    rack_pitch_m: float
    row_pitch_m: float
    rack_unit_m: float
    tray_drop_m: float
    slack_m: float
    copper_max_m: float
    standard_lengths_m: list[float]
    prices: str  # catalog preset (currency) the cable costs come from


class Design(Frozen):
    solver: SolverInfo
    balance: list[Balance]
    cable_model: CableModel
    cable_cost: float
    cable_totals: dict[str, int]  # "DAC 2m": count


def _parse_ports(value: object) -> object:
    return [int(p) for p in value.split()] if isinstance(value, str) else value


# On disk an LFT is one string of space-separated ports: YAML parsing 300,000 integer scalars one by one
# takes seconds, splitting 120 strings takes milliseconds.
PortList = Annotated[
    list[int],
    BeforeValidator(_parse_ports),
    PlainSerializer(lambda ports: " ".join(map(str, ports)), return_type=str, when_used="json"),
]


class Lft(Frozen):
    """A switch's linear forwarding table: `ports[lid]` is the output port for that LID (0 = the switch itself)."""

    switch: str
    ports: PortList


class DeadlockProof(Frozen):
    """The channel dependency graph of the routes (see ffplan.design.deadlock and docs/routing.md)."""

    method: str  # "channel dependency graph"
    scope: str  # which routes the graph covers
    channels: int  # directed switch-to-switch links used by some route
    dependencies: int  # (link, next link) pairs used by some route
    acyclic: bool
    valley_turns: int  # dependencies that turn down then up under the updn ranking from the first zone's spines


class Routing(Frozen):
    engine: str
    max_lid: int
    unrouted_port: int  # value in `ports` for a LID the switch does not route (the LID of no port)
    failed: list[str]  # cable labels and switch names avoided
    deadlock: DeadlockProof | None = None
    lfts: list[Lft]


class TrafficClassPlan(Frozen):
    name: str
    sl: int
    vl: int
    weight: int
    priority: Literal["high", "low"]
    source: Literal["ffplan default", "inventory"]
    description: str
    carries: Carries | None = None  # decided by the designer; None only in plans of ffplan before it was recorded


class VlArbEntry(Frozen):
    vl: int
    weight: int


class PortClassQos(Frozen):
    """SL2VL and VL arbitration for one OpenSM port class (ca, swe, sw0)."""

    max_vls: int
    high_limit: int
    vlarb_high: list[VlArbEntry]
    vlarb_low: list[VlArbEntry]
    sl2vl: list[int]  # 16 entries


class Qos(Frozen):
    data_vls: int
    classes: list[TrafficClassPlan]
    port_classes: dict[Literal["default", "ca", "swe", "sw0"], PortClassQos]


# ---------------------------------------------------------------- host profiles (ffplan.design.hosts)


class NumaNode(Frozen):
    """One NUMA node of a node model, as Linux numbers it (see ffplan.design.hosts for the CPU numbering)."""

    id: int
    socket: int
    cpus: str  # Linux cpulist, as /sys/devices/system/node/node<id>/cpulist prints it: "0-15,64-79"
    affinity: str  # Linux cpumap, as /sys/devices/system/node/node<id>/cpumap prints it (NCCL <cpu affinity>)


class PcieDevice(Frozen):
    """A GPU or NIC of a node model with everything the topology XML, the scripts and the README print."""

    name: str  # OS name: mlx5_0, gpu0
    kind: Literal["gpu", "nic"]
    model: str
    bus_id: str  # as the OS shows it: lowercase dddd:bb:dd.f
    topo_bus_id: str  # as NCCL names it in the topology XML (NICs: function 0)
    numa: int
    socket: int
    root_port: str
    root_port_peers: list[str]  # other devices behind the same root port / host bridge
    pci_class: str  # 0x030200 (3D controller) or 0x020700 (InfiniBand controller)
    vendor: str  # 0x10de
    device: str  # 0x20f1
    link_gen: int
    link_speed: str  # NCCL's and sysfs' (kernel >= 5.7) spelling: "16.0 GT/s PCIe"
    link_speed_legacy: str  # sysfs spelling of kernels < 5.7: "16 GT/s"
    link_width: int
    ib_ports: list[int]  # NIC ports (1-based); empty for GPUs
    ib_rate: str  # NICs: the sysfs rate suffix, "4X HDR"; "" for GPUs
    nearest_nic: str  # GPUs: the NIC NCCL pairs it with (same NUMA node first); "" for NICs
    nic_path: str  # GPUs: NCCL path type to that NIC: PHB (same NUMA node) or SYS; "" for NICs
    gdr: bool  # GPUs: GPUDirect RDMA allowed by NCCL_NET_GDR_LEVEL for that path


class NvlinkPair(Frozen):
    a: str
    b: str


class Setting(Frozen):
    """One NAME=VALUE line and why it has that value (the comment goes to the README, never the file)."""

    name: str
    value: str
    comment: str


class SlSetting(Frozen):
    """The IB service level one piece of software uses, in the form that software reads."""

    software: str  # NCCL, UCX, 3FS client, 3FS storage server, HFReduce
    setting: str  # NCCL_IB_SL, UCX_IB_SL, sl, HFREDUCE_IB_SL
    traffic_class: str  # QoS class the SL comes from ("" when the plan has no QoS)
    sl: int
    file: str  # profile file that carries it
    comment: str  # where the SL comes from


class RelaxedOrdering(Frozen):
    """PCIe relaxed ordering on the NICs: the Device Control bit, the ConnectX firmware setting, IOMMU mode."""

    enabled: bool
    nic_bus_ids: list[str]
    devctl_value: str  # setpci value for CAP_EXP+8.w under devctl_mask: "0010" (RO on) or "0000"
    devctl_mask: str  # "0010": Device Control bit 4, Enable Relaxed Ordering
    pci_wr_ordering: int  # mlxconfig PCI_WR_ORDERING: 0 = per_mkey (the application's MR flag decides)
    pci_wr_ordering_name: str  # per_mkey
    iommu_modes: list[str]  # accepted kernel IOMMU modes: iommu=pt (identity domains) or off


class ProfileFile(Frozen):
    name: str  # file name in the profile folder
    install_path: str  # where it goes on the host; "" when it is run in place (scripts) or merged by hand
    purpose: str


class HostProfile(Frozen):
    """Everything host-side for one node model and role (and settings variant): NUMA, PCIe, NCCL, SLs, RO."""

    name: str  # folder name under hosts/: the node model, suffixed with the role and a variant when needed
    node_model: str
    role: Literal["compute", "storage", "management"]
    description: str
    cpu_model: str
    cpu_arch: str  # x86_64
    cpu_vendor: str  # AuthenticAMD / GenuineIntel
    cpu_familyid: int  # NCCL's convention: base family + (extended family << 4) (Rome 143, Milan 175)
    cpu_modelid: int
    sockets: int
    cores_per_socket: int
    threads_per_core: int
    nps: int
    logical_cpus: int
    numa_nodes: list[NumaNode]
    devices: list[PcieDevice]
    nvlink_pairs: list[NvlinkPair]
    topo_file: str | None  # install path of the NCCL topology XML; None without GPUs
    nccl: list[Setting]  # nccl.conf lines in order; empty without GPUs
    sls: list[SlSetting]
    relaxed_ordering: RelaxedOrdering
    files: list[ProfileFile]
    hosts: list[str]  # hostnames using this profile, in plan order


class Plan(Frozen):
    plan_version: int
    generator: str
    inventory: InventoryRef
    switch_models: list[SwitchModelSpec]
    nic_models: list[NicModelSpec]
    node_models: list[NodeModelSpec] = []  # every node model of the inventory, by name; empty in plans of older ffplan
    catalog: Catalog | None = None  # the inventory's `catalog:` block (price/power overrides) as given
    fabric_switch_model: str
    zones: list[ZoneSpec]
    switches: list[Switch]
    nodes: list[Node]
    # hosts that run the subnet manager, master first then standbys; their ports hold the top LID block (the design
    # puts them there so OpenSM's LFT always covers every planned LID, docs/operations.md). Empty in older plans.
    sm_hosts: list[str] = []
    cables: list[Cable]
    design: Design
    routing: Routing | None = None
    qos: Qos | None = None
    hosts: list[HostProfile] | None = None  # per node model and role host profiles (NUMA, PCIe, NCCL); see ffplan.design.hosts

    def node_model(self, name: str) -> NodeModelSpec | None:
        return next((m for m in self.node_models if m.name == name), None)
