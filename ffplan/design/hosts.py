"""Host profiles: per node model and role, everything host-side the render step prints.

The templates only print; every value that needs a decision or a computation is made here: the NUMA
nodes with their CPU lists and NCCL affinity masks, each device's NUMA node, link speed and width, the
NIC each GPU pairs with and whether GPUDirect RDMA reaches it, the NCCL settings with their reasons,
the service level of every piece of software (from the plan's QoS), and the relaxed-ordering targets.

One profile per (node model, role, host settings that change a file). Hosts of one group normally share
one; a host that overrides a setting (say gdr_level) gets a variant folder of its own.

CPU numbering (an assumption checked on every host by host-check.sh against sysfs): Linux numbers the
first hardware thread of every core first, socket by socket, then the second threads in the same order
(the x86 ACPI/MADT order of AMD EPYC and Intel Xeon boards). With NPS n each socket's cores split into n
equal NUMA nodes in core order.
"""

from __future__ import annotations

from collections import defaultdict

from ffplan.design.host_checks import host_checks
from ffplan.diagnostics import Collector, StageError
from ffplan.inventory import LoadedInventory, node_checks
from ffplan.inventory.models import Device, HostSettings, Inventory, NicModel, NodeModel, PcieLink, RootPort
from ffplan.inventory.node_checks import NodeCheck
from ffplan.inventory.resolve import ResolvedHost
from ffplan.plan.model import (
    HostProfile,
    NumaNode,
    NvlinkPair,
    PcieDevice,
    PcieSwitchSpec,
    Plan,
    ProfileFile,
    RelaxedOrdering,
    Setting,
    SlSetting,
)

__all__ = [
    "design_hosts",
    "cross_nic",
    "cpulist",
    "cpumap",
    "nccl_family_id",
    "numa_nodes",
    "pcie_devices",
    "PCIE_SPEED",
    "HFREDUCE_SL_VAR",
]

# PCIe generation -> link speed as NCCL's dictionary (kvDictPciGen) and sysfs (kernel >= 5.7) spell it.
PCIE_SPEED = {
    1: "2.5 GT/s PCIe",
    2: "5.0 GT/s PCIe",
    3: "8.0 GT/s PCIe",
    4: "16.0 GT/s PCIe",
    5: "32.0 GT/s PCIe",
    6: "64.0 GT/s PCIe",
}
# The spelling of kernels < 5.7 (also accepted by NCCL).
PCIE_SPEED_LEGACY = {1: "2.5 GT/s", 2: "5 GT/s", 3: "8 GT/s", 4: "16 GT/s", 5: "32 GT/s", 6: "64 GT/s"}
PCI_CLASS = {
    "gpu": "0x030200",
    "nic": "0x020700",
    "bridge": "0x060400",
}  # 3D controller; InfiniBand controller; PCI bridge
ETHERNET_NIC_CLASS = "0x020000"  # a RoCE NIC is an Ethernet controller
# NCCL path types in order (src/graph/paths.cc), for the GDR decision.
PATH_ORDER = ["LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS"]

# ffplan's name for the SL variable of HFReduce-style collective libraries (HFReduce itself is not public:
# the library has to be wired to read it).
HFREDUCE_SL_VAR = "HFREDUCE_IB_SL"

# Where each file goes on a host (topo.xml's path is the topo_file setting).
INSTALL = {
    "nccl.conf": "/etc/nccl.conf",
    "ucx.conf": "/etc/ucx/ucx.conf",
    "hfreduce.env": "/etc/ffplan/hfreduce.env",
}
# The 3FS configuration the host check reads to compare the SLs (3FS's documented install location).
THREEFS_CLIENT_TOML = "/opt/3fs/etc/hf3fs_fuse_main.toml"
THREEFS_STORAGE_TOML = "/opt/3fs/etc/storage_main.toml"


# The settings that change a rendered host file; hosts that differ in them need different profiles.
PROFILE_SETTINGS = ("relaxed_ordering", "gdr_level", "nccl_socket_ifname", "topo_file")


# ---------------------------------------------------------------- CPU numbering


def _ranges(ids: list[int]) -> str:
    """`0-3,8,10-11`: the Linux cpulist format."""
    runs: list[tuple[int, int]] = []  # (first, last) of each run of consecutive ids
    for i in sorted(ids):
        if runs and i == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return ",".join(f"{first}" if first == last else f"{first}-{last}" for first, last in runs)


def cpulist(ids: list[int]) -> str:
    """Linux cpulist format: `0-15,64-79`."""
    return _ranges(ids)


def cpumap(ids: list[int], nbits: int) -> str:
    """Linux cpumap format (the kernel's `%*pb`): comma-separated 32-bit hex groups, most significant
    first; the first group has only as many digits as its bits need."""
    mask = 0
    for i in ids:
        mask |= 1 << i
    groups = []
    nbits = max(nbits, 1)
    top = nbits % 32 or 32
    for start in range(((nbits + 31) // 32 - 1) * 32, -1, -32):
        width = top if start == ((nbits + 31) // 32 - 1) * 32 else 32
        value = (mask >> start) & ((1 << width) - 1)
        groups.append(f"{value:0{(width + 3) // 4}x}")
    return ",".join(groups)


def nccl_family_id(family: int) -> int:
    """CPUID family as NCCL computes it: base family + (extended family << 4). The AMD convention (and the
    inventory) is base + extended: Rome 23 -> NCCL 143, Milan 25 -> 175; families below 15 are unchanged."""
    if family < 15:
        return family
    return 15 + ((family - 15) << 4)


def numa_nodes(model: NodeModel) -> list[NumaNode]:
    cpu = model.cpu
    sockets, cores, threads = cpu.sockets, cpu.cores_per_socket, cpu.threads_per_core
    total = sockets * cores * threads
    per_socket = 1 if cpu.nps == 0 else cpu.nps
    nodes: list[NumaNode] = []
    if cpu.nps == 0:
        groups = [(0, list(range(sockets * cores)))]
    else:
        groups = []
        for s in range(sockets):
            base, extra = divmod(cores, per_socket)
            first = 0
            for q in range(per_socket):
                n = base + (1 if q < extra else 0)
                groups.append((s, [s * cores + first + c for c in range(n)]))
                first += n
    for node_id, (socket, core_ids) in enumerate(groups):
        ids = [t * sockets * cores + c for t in range(threads) for c in core_ids]
        nodes.append(NumaNode(id=node_id, socket=socket, cpus=cpulist(ids), affinity=cpumap(ids, total)))
    return nodes


# ---------------------------------------------------------------- devices


class _Tree:
    """The PCIe tree of a node model: each device's and switch's parent, and each one's chain of switches up
    to its root port. References are checked first (FF301, FF308, FF309: `_check`)."""

    def __init__(self, model: NodeModel) -> None:
        self.ports = {rp.name: rp for rp in model.root_ports}
        self.switches = {sw.name: sw for sw in model.pcie_switches}
        self.children: dict[str, list[str]] = defaultdict(list)  # root port or switch -> names right under it
        for sw in model.pcie_switches:
            self.children[sw.upstream].append(sw.name)
        for d in model.devices:
            self.children[_parent(d)].append(d.name)

    def chain(self, parent: str) -> list[str]:
        """`parent` and the switches above it, then the root port (only the root port when `parent` is one)."""
        out = [parent]
        while out[-1] in self.switches:
            out.append(self.switches[out[-1]].upstream)
        return out

    def root_port(self, parent: str) -> RootPort:
        return self.ports[self.chain(parent)[-1]]

    def link(self, parent: str, pcie: PcieLink) -> tuple[int, int]:
        """(gen, lanes) of the link to `parent` as sysfs reports it (the lower of both ends): a root port's lanes
        are shared by everything on it; a switch gives each downstream port the width of what it holds."""
        if parent in self.switches:
            return min(pcie.gen, self.switches[parent].pcie.gen), pcie.lanes
        rp = self.ports[parent]
        return min(pcie.gen, rp.pcie.gen), min(pcie.lanes, max(1, rp.pcie.lanes // len(self.children[parent])))

    def path(self, a: str, b: str) -> str:
        """NCCL's path type between two devices given their parents (paths.cc: a hop between two PCI nodes is
        PXB, a hop through a CPU PHB, between CPUs SYS). NCCL skips root ports on its sysfs walk, so two
        switches on one root port meet only at the CPU: PHB."""
        up_a, up_b = self.chain(a), self.chain(b)
        if self.ports[up_a[-1]].numa != self.ports[up_b[-1]].numa:
            return "SYS"
        common = next((s for s in up_a[:-1] if s in up_b[:-1]), None)
        if common is None:
            return "PHB"
        return "PIX" if a == b == common else "PXB"


def _parent(d: Device) -> str:
    return d.pcie_switch or d.root_port or ""


def _switches(tree: _Tree, model: NodeModel) -> list[PcieSwitchSpec]:
    """The switches top-down (each after the one above it), with their upstream link as sysfs reports it."""
    out = []
    for sw in sorted(model.pcie_switches, key=lambda sw: len(tree.chain(sw.upstream))):
        rp = tree.root_port(sw.upstream)
        gen, width = tree.link(sw.upstream, sw.pcie)
        out.append(
            PcieSwitchSpec(
                name=sw.name,
                parent=sw.upstream if sw.upstream in tree.switches else "",
                root_port=rp.name,
                numa=rp.numa,
                bus_id=sw.bus_id.lower(),
                pci_class=PCI_CLASS["bridge"],
                link_speed=PCIE_SPEED[gen],
                link_width=width,
            )
        )
    return out


def _nearest(tree: _Tree, device: Device, others: list[Device]) -> list[Device]:
    """The devices of `others` at the shortest path type from `device` (NCCL's ncclTopoGetLocal; it ranks by
    path bandwidth first, equal here as long as the links on both paths are alike)."""
    ranks = [PATH_ORDER.index(tree.path(_parent(device), _parent(o))) for o in others]
    return [o for o, rank in zip(others, ranks) if rank == min(ranks)]


def _mirror_bits(value: int, pow2: int) -> int:
    """NCCL's mirrorBits (graph/topo.h): `value`'s bits reversed within log2(pow2) bits."""
    mirror, bit, mirrored = 0, 1, pow2 >> 1
    while bit < pow2:
        if value & bit:
            mirror |= mirrored
        bit, mirrored = bit << 1, mirrored >> 1
    return mirror


def _nearest_nic(tree: _Tree, model: NodeModel, gpu: Device) -> Device:
    """The NIC NCCL gives `gpu` on channel 0 (ncclTopoGetLocalNetType): among its nearest NICs, the one its
    CUDA index picks among the GPUs nearest to the first of them, so GPU i and NIC i pair up under one switch.
    CUDA numbers the GPUs in the model's order (PCI bus order, as the model lists them)."""
    gpus = [d for d in model.devices if d.kind == "gpu"]
    local_nics = _nearest(tree, gpu, [d for d in model.devices if d.kind == "nic"])
    local_gpus = _nearest(tree, local_nics[0], gpus)
    index = gpus.index(gpu) % len(local_gpus)
    if len(local_nics) & (len(local_nics) - 1) == 0:
        index = _mirror_bits(index, len(local_nics))
    return local_nics[index % len(local_nics)]


def pcie_devices(inv: Inventory, model: NodeModel, nodes: list[NumaNode], gdr_level: str) -> list[PcieDevice]:
    """Every GPU and NIC of the node model as the host shows it: PCIe address, class, link, NUMA node, NIC pairing."""
    tree = _Tree(model)
    socket_of = {n.id: n.socket for n in nodes}
    nics = [d for d in model.devices if d.kind == "nic"]
    gdr_rank = PATH_ORDER.index(gdr_level)
    devices = []
    for d in model.devices:
        parent = _parent(d)
        rp = tree.root_port(parent)
        spec = inv.models.gpus[d.model] if d.kind == "gpu" else inv.models.nics[d.model]
        vendor, device = spec.pci_id.split(":")
        gen, width = tree.link(parent, spec.pcie)
        bus = d.bus_id.lower()
        nearest = path = ""
        gdr = False
        ib_ports: list[int] = []
        rate = ""
        # devices directly on the same root port share its lanes (under a switch, the switch's uplink)
        peers = [] if d.pcie_switch else [n for n in tree.children[parent] if n != d.name and n not in tree.switches]
        if d.kind == "gpu" and nics:
            nic = _nearest_nic(tree, model, d)
            nearest, path = nic.name, tree.path(parent, _parent(nic))
            gdr = PATH_ORDER.index(path) <= gdr_rank
        if isinstance(spec, NicModel):
            ib_ports = list(range(1, spec.ports + 1))
            rate = f"4X {spec.speed.value}"
        devices.append(
            PcieDevice(
                name=d.name,
                kind=d.kind,
                model=d.model,
                bus_id=bus,
                topo_bus_id=bus[:-1] + "0" if d.kind == "nic" else bus,
                numa=rp.numa,
                socket=socket_of.get(rp.numa, 0),
                root_port=rp.name,
                pcie_switch=d.pcie_switch or "",
                root_port_peers=peers,
                pci_class=PCI_CLASS[d.kind],
                vendor=vendor,
                device=device,
                link_gen=gen,
                link_speed=PCIE_SPEED[gen],
                link_speed_legacy=PCIE_SPEED_LEGACY[gen],
                link_width=width,
                ib_ports=ib_ports,
                ib_rate=rate,
                nearest_nic=nearest,
                nic_path=path,
                gdr=gdr,
            )
        )
    return devices


# ---------------------------------------------------------------- SLs and NCCL


def _sl(plan: Plan, software: str) -> tuple[str, int, bool]:
    """(class, SL, whether the class names the software) from what the plan's classes carry: the class that
    carries the software, else the class of unmatched traffic, else SL 0."""
    classes = plan.qos.classes if plan.qos else []
    for claimed in (True, False):
        for c in classes:
            if c.carries and (software in c.carries.software if claimed else c.carries.unmatched):
                return c.name, c.sl, claimed
    return "", 0, False


def _sl_comment(cls: str, sl: int, claimed: bool, what: str) -> str:
    if not cls:
        return f"SL {sl}: no traffic class of the plan carries {what} or unmatched traffic, so it uses SL 0 (OpenSM's default VL)"
    if not claimed:
        return (
            f"SL {sl} of traffic class '{cls}' (unmatched traffic): no class of the plan carries {what}; "
            "OpenSM maps it to its VL (opensm.conf qos_*_sl2vl)"
        )
    return f"SL {sl} of traffic class '{cls}' in the plan's QoS; OpenSM maps it to its VL (opensm.conf qos_*_sl2vl)"


def cross_nic(layout: str, placement: str, nics: int) -> Setting | None:
    """NCCL_CROSS_NIC for a node with `nics` compute NICs: whether a ring or tree may leave a node on another
    NIC than the one it arrived on (NCCL src/graph/search.cc: 0 keeps the NIC, 1 allows crossing, 2 searches
    aligned rings first and crosses when that finds none better). None with one NIC: NCCL ignores it."""
    if nics <= 1:
        return None
    if layout == "planes":
        return Setting(
            name="NCCL_CROSS_NIC",
            value="0",
            comment="0: on planes NIC i reaches only plane i's NICs on other nodes (a subnet each, no links between "
            "planes), so rings and trees must leave every node on the NIC they arrived on; traffic between "
            "planes moves inside the node over NVLink (PXN)",
        )
    if placement == "rail-optimized":
        return Setting(
            name="NCCL_CROSS_NIC",
            value="0",
            comment="0: rail-optimized placement puts NIC i of every node on the rail-i leaf, so rings that keep "
            "each NIC on its rail stay one leaf hop apart instead of crossing the spines",
        )
    return Setting(
        name="NCCL_CROSS_NIC",
        value="2",
        comment="2 (NCCL's default, stated): one subnet where every NIC reaches every other, and balanced "
        "placement leaves no rails to keep aligned; NCCL searches aligned rings first and crosses NICs "
        "only when that finds more bandwidth",
    )


def _gdr_comment(gpus: list[PcieDevice], nics: list[PcieDevice], level: str) -> str:
    near = sorted({d.name for d in gpus if d.gdr})
    enabled = f"{level} enables it for {', '.join(near) if near else 'no GPU'}. Needs nvidia-peermem or DMA-BUF and IOMMU pt/off"
    if any(n.pcie_switch for n in nics):
        paths = ", ".join(sorted({d.nic_path for d in gpus}, key=PATH_ORDER.index))
        return (
            f"GPUDirect RDMA up to path {level}: GPUs reach their NIC through PCIe switches ({paths}, see the GPU to NIC "
            f"table); {enabled}"
        )
    return (
        f"GPUDirect RDMA up to path {level}: NICs sit on CPU root ports (no PCIe switch), so NCCL's "
        f"default (PXB) would stage all traffic through host memory; {enabled}"
    )


def _nccl(devices: list[PcieDevice], settings: HostSettings, plan: Plan, planes: dict[str, int]) -> list[Setting]:
    """`planes`: the plane of each multi-planar NIC function (its PCI function number)."""
    gpus = [d for d in devices if d.kind == "gpu"]
    nics = [d for d in devices if d.kind == "nic"]
    if not gpus:
        return []
    cls, sl, claimed = _sl(plan, "nccl")
    gdr = settings.gdr_level or "PXB"
    out = [
        Setting(
            name="NCCL_TOPO_FILE",
            value=str(settings.topo_file),
            comment="the PCIe/NUMA tree of this node model (topo.xml here); NCCL keeps the file's tree and fills "
            "in device details from sysfs",
        )
    ]
    if nics:
        cards = list(
            dict.fromkeys(n.topo_bus_id for n in nics)
        )  # a multi-planar card's rail: its place among the cards
        hca = ",".join(
            f"{n.name}:{p}" + (f":{cards.index(n.topo_bus_id)}:{planes[n.name]}" if n.name in planes else "")
            for n in nics
            for p in n.ib_ports
        )
        out.append(
            Setting(
                name="NCCL_IB_HCA",
                value=f"={hca}",
                comment="'=' matches the names exactly (a bare mlx5_1 would also match mlx5_10-19); only the "
                "fabric ports listed here carry NCCL traffic"
                + (
                    "; a multi-planar NIC's functions say their rail (the card) and plane: NCCL "
                    ">= 2.30.7 never connects two planes and keeps rails with NCCL_CROSS_NIC=0 (its "
                    "functions share the card's GUID and port 1, which alone cannot tell them "
                    "apart); older NCCL reads the port and ignores the rest"
                    if planes
                    else ""
                ),
            )
        )
        if crossing := cross_nic(plan.layout, plan.placement, len(nics)):
            out.append(crossing)
    out.append(Setting(name="NCCL_IB_SL", value=str(sl), comment=_sl_comment(cls, sl, claimed, "NCCL")))
    out.append(
        Setting(
            name="NCCL_IB_TIMEOUT",
            value="20",
            comment="ACK timeout 4.096 us x 2^20 = 4.3 s per try (NCCL's default since 2.23, set so older "
            "versions agree); the two-layer fat tree needs no more",
        )
    )
    out.append(
        Setting(
            name="NCCL_IB_RETRY_CNT",
            value="7",
            comment="the maximum IB retry count (NCCL's default), stated explicitly",
        )
    )
    ro = bool(settings.relaxed_ordering)
    out.append(
        Setting(
            name="NCCL_IB_PCI_RELAXED_ORDERING",
            value="1" if ro else "0",
            comment="1 = register memory with relaxed ordering and fail loudly if the verbs API lacks it; pairs "
            "with relaxed-ordering.sh (NIC Device Control bit)"
            if ro
            else "0 = relaxed ordering disabled for this profile (relaxed_ordering: false)",
        )
    )
    out.append(Setting(name="NCCL_NET_GDR_LEVEL", value=gdr, comment=_gdr_comment(gpus, nics, gdr)))
    out.append(
        Setting(
            name="NCCL_P2P_LEVEL",
            value="PHB",
            comment="GPU-to-GPU P2P within a NUMA node; NCCL >= 2.23 defaults to PXB (P2P off through the CPU "
            "with more than 2 GPUs on AMD) and would use shared memory instead. Benchmark against unset",
        )
    )
    if settings.nccl_socket_ifname:
        out.append(
            Setting(
                name="NCCL_SOCKET_IFNAME",
                value=settings.nccl_socket_ifname,
                comment="interface for NCCL's bootstrap and out-of-band sockets ('=' exact name, '^' exclude)",
            )
        )
    return out


def _planes(inv: Inventory, model: NodeModel) -> dict[str, int]:
    """Device -> plane of the functions of multi-planar NICs: function f of a card is its link in plane f."""
    return {
        d.name: int(d.bus_id[-1])
        for d in model.devices
        if d.kind == "nic" and d.model in inv.models.nics and inv.models.nics[d.model].planes > 1
    }


def _sls(plan: Plan, role: str, has_gpus: bool) -> list[SlSetting]:
    wanted = []
    if has_gpus:
        wanted += [("NCCL", "NCCL_IB_SL", "nccl", "nccl.conf")]
        if _runs(plan, "hfreduce"):
            wanted += [("HFReduce", HFREDUCE_SL_VAR, "hfreduce", "hfreduce.env")]
    wanted += [("UCX (MPI)", "UCX_IB_SL", "ucx", "ucx.conf")]
    if _runs(plan, "3fs"):
        wanted += [("3FS client", "sl", "3fs", "3fs-client-sl.toml")]
        if role == "storage":
            wanted.append(("3FS storage server", "sl", "3fs", "3fs-storage-sl.toml"))
    out = []
    for software, setting, carried, file in wanted:
        cls, sl, claimed = _sl(plan, carried)
        out.append(
            SlSetting(
                software=software,
                setting=setting,
                traffic_class=cls,
                sl=sl,
                file=file,
                comment=_sl_comment(cls, sl, claimed, software),
            )
        )
    return out


def _runs(plan: Plan, software: str) -> bool:
    """Fire-Flyer's own software (HFReduce, 3FS) on a rail-optimized (DGX SuperPOD-style) plan gets host files only
    when a traffic class carries it: such plans run neither by default, and host-check.sh would fail on files nobody
    installs. Elsewhere an unclaimed one falls to the class of unmatched traffic, as before."""
    return plan.placement != "rail-optimized" or _sl(plan, software)[2]


def _files(plan: Plan, role: str, topo_file: str | None) -> list[ProfileFile]:
    files = [
        ProfileFile(
            name="README.md", install_path="", purpose="what every file here is for, and why each setting has its value"
        )
    ]
    if topo_file:
        files.append(
            ProfileFile(
                name="topo.xml", install_path=topo_file, purpose="NCCL topology: the node model's PCIe/NUMA tree"
            )
        )
        files.append(
            ProfileFile(name="nccl.conf", install_path=INSTALL["nccl.conf"], purpose="NCCL settings (NAME=VALUE)")
        )
        if _runs(plan, "hfreduce"):
            files.append(
                ProfileFile(
                    name="hfreduce.env",
                    install_path=INSTALL["hfreduce.env"],
                    purpose=f"SL for HFReduce-style libraries ({HFREDUCE_SL_VAR}, ffplan's name)",
                )
            )
    files.append(ProfileFile(name="ucx.conf", install_path=INSTALL["ucx.conf"], purpose="UCX_IB_SL for MPI over UCX"))
    if _runs(plan, "3fs"):
        files.append(
            ProfileFile(
                name="3fs-client-sl.toml",
                install_path="",
                purpose=f"sl of every 3FS client ibsocket section; merge into {THREEFS_CLIENT_TOML}",
            )
        )
    if role == "storage" and _runs(plan, "3fs"):
        files.append(
            ProfileFile(
                name="3fs-storage-sl.toml",
                install_path="",
                purpose=f"sl of every 3FS storage server ibsocket section; merge into {THREEFS_STORAGE_TOML}",
            )
        )
    files.append(
        ProfileFile(
            name="relaxed-ordering.sh",
            install_path="",
            purpose="checks PCIe relaxed ordering, ACS and IOMMU; sets RO only with --apply",
        )
    )
    files.append(
        ProfileFile(
            name="host-check.sh",
            install_path="",
            purpose="read-only comparison of a running host with the plan (pass/fail table)",
        )
    )
    return files


# ---------------------------------------------------------------- profiles


def _profile_key(host: ResolvedHost) -> tuple:
    return (host.model, host.role.value, tuple(getattr(host.settings, k) for k in PROFILE_SETTINGS))


# The node-model checks without which no profile can be built (lint runs these and the rest on every model).
_PROFILE_NEEDS: tuple[NodeCheck, ...] = (
    node_checks.numa_node_out_of_range,
    node_checks.unknown_pcie_switch,
    node_checks.pcie_switch_loop,
    node_checks.unknown_root_port,
    node_checks.unknown_device_model,
)


def _check(loaded: LoadedInventory) -> None:
    """The node models the hosts use, checked as lint checks them (FF301-FF303, FF308, FF309)."""
    c = Collector(loaded.source.file, loaded.source.positions)
    used = {h.model for h in loaded.resolved.hosts}
    for name in sorted(used):
        model = loaded.inventory.models.nodes.get(name)
        if model is None:
            continue  # the fabric step reports unknown node models
        for check in _PROFILE_NEEDS:
            for finding in check(loaded, name, model):
                c.error(finding.code, finding.path, finding.message, finding.hint)
    if c.has_errors:
        raise StageError(c.items)


def design_hosts(loaded: LoadedInventory, plan: Plan) -> list[HostProfile]:
    """One HostProfile per node model, role and settings variant, sorted by name."""
    _check(loaded)
    inv = loaded.inventory
    planned = {n.hostname for n in plan.nodes}
    groups: dict[tuple, list] = {}
    for host in sorted(loaded.resolved.hosts, key=lambda h: h.order):
        if host.hostname in planned and host.model in inv.models.nodes:
            groups.setdefault(_profile_key(host), []).append(host)
    roles_of_model: dict[str, set] = defaultdict(set)
    for model, role, _ in groups:
        roles_of_model[model].add(role)
    names: dict[tuple, str] = {}
    taken: set[str] = set()
    seen: dict[tuple, int] = defaultdict(int)
    for key in groups:
        model, role, _ = key
        base = model if len(roles_of_model[model]) == 1 else f"{model}-{role}"
        seen[(model, role)] += 1
        name = base if seen[(model, role)] == 1 else f"{base}-{seen[(model, role)]}"
        n = seen[(model, role)]
        while name in taken:
            n += 1
            name = f"{base}-{n}"
        taken.add(name)
        names[key] = name

    profiles = []
    for key, hosts in groups.items():
        model_name, role, _ = key
        model = inv.models.nodes[model_name]
        settings = hosts[0].settings
        nodes = numa_nodes(model)
        devices = pcie_devices(inv, model, nodes, settings.gdr_level or "PXB")
        nics = [d for d in devices if d.kind == "nic"]
        has_gpus = any(d.kind == "gpu" for d in devices)
        topo_file = settings.topo_file if has_gpus else None
        ro = bool(settings.relaxed_ordering)
        cpu = model.cpu
        profiles.append(
            HostProfile(
                name=names[key],
                node_model=model_name,
                role=role,
                description=model.description,
                cpu_model=cpu.model,
                cpu_arch="x86_64",
                cpu_vendor=cpu.vendor,
                cpu_familyid=nccl_family_id(cpu.family_id),
                cpu_modelid=cpu.model_id,
                sockets=cpu.sockets,
                cores_per_socket=cpu.cores_per_socket,
                threads_per_core=cpu.threads_per_core,
                nps=cpu.nps,
                logical_cpus=cpu.sockets * cpu.cores_per_socket * cpu.threads_per_core,
                numa_nodes=nodes,
                pcie_switches=_switches(_Tree(model), model),
                devices=devices,
                nvlink_pairs=[NvlinkPair(a=a, b=b) for a, b in model.nvlink_pairs],
                topo_file=topo_file,
                nccl=_nccl(devices, settings, plan, _planes(inv, model)),
                sls=_sls(plan, role, has_gpus),
                relaxed_ordering=RelaxedOrdering(
                    enabled=ro,
                    nic_bus_ids=[d.bus_id for d in nics],
                    devctl_value="0010" if ro else "0000",
                    devctl_mask="0010",
                    pci_wr_ordering=0,
                    pci_wr_ordering_name="per_mkey",
                    iommu_modes=["pt", "off"],
                ),
                files=_files(plan, role, topo_file),
                hosts=[h.hostname for h in hosts],
                checks=host_checks(model_name, model, has_gpus),
            )
        )
    return sorted(profiles, key=lambda p: p.name)
