"""FF1xx-FF7xx: the checks lint runs on an inventory (ffplan/lint/rules/, one module per topic)."""

from ffplan.codes.code import Code

ZONE_PORT_BUDGET = Code("FF101", "zone-port-budget", "the hosts need more leaf ports than the zones have")
LEAF_SPINE_CAPACITY = Code("FF102", "leaf-spine-capacity", "the switch model cannot build a zone of the requested size")
LINK_SPEED_MISMATCH = Code(
    "FF103", "link-speed-mismatch", "a NIC model runs at another speed than the fabric's switches"
)
EVERY_ZONE_COVERAGE = Code(
    "FF104", "every-zone-coverage", "a host attached to every zone does not have one NIC port per zone"
)
INTER_ZONE_SELF_LINK = Code("FF105", "inter-zone-self-link", "an inter-zone link joins a zone to itself")
INTER_ZONE_LINKS_BEYOND_TWO_ZONES = Code(
    "FF106", "inter-zone-links-beyond-two-zones", "inter-zone links join more than two zones"
)
LID_SPACE_EXCEEDED = Code(
    "FF107", "lid-space-exceeded", "the fabric needs more LIDs than a subnet's unicast range (49,151) holds"
)
ZONES_OR_PLANES = Code("FF108", "zones-or-planes", "the fabric lists both zones and planes, or neither")
LINKS_BETWEEN_TREES = Code("FF109", "links-between-trees", "inter-zone links on planes or on three-layer trees")
RAIL_LAYOUT = Code(
    "FF110",
    "rail-layout",
    "rail-optimized placement does not fit: rails do not divide the leaves, or the units are full",
)
TREE_SHAPE_UNUSED = Code(
    "FF111", "tree-shape-unused", "core racks on a two-layer tree, or a three-layer tree of a single pod"
)
XDR_BEYOND_THE_SIMULATOR = Code(
    "FF112",
    "xdr-beyond-the-simulator",
    "XDR switches: the fabric needs OpenSM >= 3.3.24, and verify cannot check the IPoIB group's rate",
)
STORAGE_BANDWIDTH_PER_GPU = Code(
    "FF113",
    "storage-bandwidth-per-gpu",
    "the storage servers' NIC ports deliver less storage bandwidth per GPU than the target",
)
PLANAR_NIC_BEYOND_PLANES = Code(
    "FF114", "planar-nic-beyond-planes", "a multi-planar NIC feeds more planes than the fabric has"
)
PLANAR_NIC_FUNCTIONS = Code(
    "FF115", "planar-nic-functions", "a multi-planar NIC's cards do not list one device per plane, functions 0 up"
)
DUPLICATE_HOSTNAME = Code("FF201", "duplicate-hostname", "two hosts have the same hostname")
DUPLICATE_GUID = Code("FF202", "duplicate-guid", "two ports or switches have the same GUID")
DUPLICATE_RACK_NAME = Code("FF203", "duplicate-rack-name", "two racks have the same name")
DUPLICATE_RACK_POSITION = Code(
    "FF204", "duplicate-rack-position", "two racks stand at the same floor position (row, slot)"
)
RACK_UNIT_OVERLAP = Code("FF205", "rack-unit-overlap", "two hosts occupy the same rack units")
RACK_HEIGHT_EXCEEDED = Code("FF206", "rack-height-exceeded", "a host reaches past the top of its rack")
GROUP_RACK_OVERFLOW = Code("FF207", "group-rack-overflow", "a group generates more hosts than its racks take")
DUPLICATE_NAME = Code("FF208", "duplicate-name", "two zones, groups or traffic classes have the same name")
UNKNOWN_MODEL = Code("FF210", "unknown-model", "the fabric or a group names a switch or node model that is not defined")
UNKNOWN_RACK = Code("FF211", "unknown-rack", "a zone, group or host names a rack that is not defined")
UNKNOWN_ZONE = Code("FF212", "unknown-zone", "a setting or inter-zone link names a zone that is not defined")
GUID_FOR_UNKNOWN_NIC = Code(
    "FF213", "guid-for-unknown-nic", "a host gives a port GUID for a NIC its node model does not have"
)
NAMES_COLLIDE_WHEN_NORMALISED = Code(
    "FF214",
    "names-collide-when-normalised",
    "two zones or node models differ only in characters that rendering replaces",
)
RACK_OVER_POWER_BUDGET = Code(
    "FF215", "rack-over-power-budget", "a rack's peak draw exceeds its power budget (power_kw)"
)
RACK_OVER_COOLING_LIMIT = Code(
    "FF216", "rack-over-cooling-limit", "a rack's peak draw exceeds what its cooling removes (cooling, cooling_kw)"
)
UNKNOWN_SUBNET_MANAGER = Code(
    "FF217",
    "unknown-subnet-manager",
    "fabric.subnet_managers names a host the inventory lacks, one off the fabric, or one twice",
)
UNKNOWN_ROOT_PORT = Code("FF301", "unknown-root-port", "a device sits on a root port the node model does not define")
UNKNOWN_DEVICE_MODEL = Code("FF302", "unknown-device-model", "a device names a GPU or NIC model that is not defined")
NUMA_NODE_OUT_OF_RANGE = Code(
    "FF303", "numa-node-out-of-range", "a root port is on a NUMA node the CPU configuration does not have"
)
ROOT_PORT_LANES_OVERSUBSCRIBED = Code(
    "FF304", "root-port-lanes-oversubscribed", "the devices on a root port need more PCIe lanes than it has"
)
DUPLICATE_DEVICE_NAME = Code(
    "FF305", "duplicate-device-name", "a node model names two devices, or two root ports or PCIe switches, alike"
)
DUPLICATE_BUS_ID = Code(
    "FF306", "duplicate-bus-id", "two devices (or PCIe switches) of a node model have the same PCI bus id"
)
NVLINK_PAIR_INVALID = Code(
    "FF307", "nvlink-pair-invalid", "an NVLink pair names an unknown device, a non-GPU, or a GPU twice"
)
UNKNOWN_PCIE_SWITCH = Code(
    "FF308",
    "unknown-pcie-switch",
    "a device or PCIe switch hangs under a switch or root port the node model does not define",
)
PCIE_SWITCH_LOOP = Code("FF309", "pcie-switch-loop", "PCIe switches hang under each other in a loop")
PCIE_SWITCH_WITHOUT_DEVICES = Code("FF310", "pcie-switch-without-devices", "a PCIe switch has no GPU or NIC under it")
DRIVER_OLDER_THAN_CUDA_NEEDS = Code(
    "FF311", "driver-older-than-cuda-needs", "a node model declares an NVIDIA driver older than its declared CUDA needs"
)
SL_OUT_OF_RANGE = Code("FF401", "sl-out-of-range", "a traffic class's service level is not 0-15")
VL_INVALID = Code("FF402", "vl-invalid", "a traffic class's VL is VL15 or beyond the data VLs of the switches or NICs")
WEIGHT_OUT_OF_RANGE = Code("FF403", "weight-out-of-range", "a traffic class's VL arbitration weight is not 0-255")
DUPLICATE_SL = Code("FF404", "duplicate-sl", "two traffic classes use the same service level")
TRAFFIC_CLASS_WITHOUT_PURPOSE = Code(
    "FF405",
    "traffic-class-without-purpose",
    "a traffic class that is not one of ffplan's defaults does not say what it carries",
)
TRAFFIC_CLASS_PURPOSE_CONFLICT = Code(
    "FF406",
    "traffic-class-purpose-conflict",
    "two traffic classes claim the same software, role pair or unmatched traffic",
)
GENERATED_NAME_INVALID = Code(
    "FF501", "generated-name-invalid", "a hostname or rack name generated from a pattern is not a safe name"
)
HOSTNAME_PATTERN_COLLISION = Code(
    "FF502", "hostname-pattern-collision", "a group's hostname pattern gives several hosts the same name"
)
ROCE_ASN_COLLISION = Code(
    "FF701", "roce-asn-collision", "the planned ASNs leave the private 4-byte range or two tiers' ASNs collide"
)
ROCE_ADDRESS_POOL = Code(
    "FF702",
    "roce-address-pool",
    "an address pool is no IPv4 network, overlaps another pool or is too small for the fabric",
)
TOO_MANY_LOSSLESS_PRIORITIES = Code(
    "FF703", "too-many-lossless-priorities", "more than two priorities are lossless (PFC)"
)
ECN_THRESHOLDS = Code(
    "FF704",
    "ecn-thresholds",
    "ECN marking starts at or above where it ends, or ends beyond the port's share of the buffer",
)
MTU_MISMATCH = Code("FF705", "mtu-mismatch", "the hosts' MTU is larger than the switch ports'")
PFC_HEADROOM_EXCEEDS_BUFFER = Code(
    "FF706",
    "pfc-headroom-exceeds-buffer",
    "the PFC headroom of every port at the longest cable the floor allows does not fit the switch buffer",
)
NIC_SPEED_UNSUPPORTED = Code(
    "FF707",
    "nic-speed-unsupported",
    "a NIC takes no speed the switch ports (or their breakouts) give, or not the fabric's link speed",
)
ROCE_CLASSES_CONFLICT = Code(
    "FF708",
    "roce-classes-conflict",
    "the RoCE priority is not lossless, CNPs are lossless, or RoCE and CNP share a DSCP or priority",
)
ROCE_SWITCH_NOT_ETHERNET = Code(
    "FF709", "roce-switch-not-ethernet", "a RoCE fabric's switch model has no `ethernet:` block"
)
ROCE_TOPOLOGY_UNSUPPORTED = Code(
    "FF710", "roce-topology-unsupported", "a RoCE fabric of several zones joined by inter-zone links (not planned yet)"
)
ROCE_BLOCK_IGNORED = Code(
    "FF711", "roce-block-ignored", "an InfiniBand fabric has a `roce:` block, which nothing reads"
)
ROCE_DUAL_TOR_UNMET = Code(
    "FF712", "roce-dual-tor-unmet", "dual-ToR is asked for, but a NIC model gives each card one link (one ToR)"
)
ROCE_MULTI_PORT_NIC = Code(
    "FF713",
    "roce-multi-port-nic",
    "a RoCE host uses a NIC model with two ports on one device (each port needs an address of its own)",
)
