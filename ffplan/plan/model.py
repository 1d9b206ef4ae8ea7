"""The plan: the frozen, versioned contract between the designer and every later stage.

Everything render, report, analyze, verify and diff need is here; none of them reads the inventory.
Field order is the on-disk order; lists are kept in a canonical order by the designer.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

PLAN_VERSION = 1


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
    node_guid: str
    lid: int
    guid_placeholder: bool
    rack: str
    u: int


class NodePort(Frozen):
    """One NIC port of a node and where it lands in the fabric."""

    nic: str  # OS device name, mlx5_0
    port: int  # NIC port number (1-based)
    node_guid: str  # the NIC's node GUID
    port_guid: str
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


class Design(Frozen):
    solver: SolverInfo
    balance: list[Balance]
    cable_model: CableModel
    cable_cost: float
    cable_totals: dict[str, int]  # "DAC 2m": count


class Lft(Frozen):
    """A switch's linear forwarding table: `ports[lid]` is the output port for that LID (0 = the switch itself)."""

    switch: str
    ports: list[int]


class Routing(Frozen):
    engine: str
    max_lid: int
    unrouted_port: int  # value in `ports` for a LID the switch does not route (the LID of no port)
    failed: list[str]  # cable labels and switch names avoided
    lfts: list[Lft]


class TrafficClassPlan(Frozen):
    name: str
    sl: int
    vl: int
    weight: int
    priority: Literal["high", "low"]
    source: Literal["ffplan default", "inventory"]
    description: str


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


class Plan(Frozen):
    plan_version: int
    generator: str
    inventory: InventoryRef
    switch_models: list[SwitchModelSpec]
    fabric_switch_model: str
    zones: list[ZoneSpec]
    switches: list[Switch]
    nodes: list[Node]
    cables: list[Cable]
    design: Design
    routing: Routing | None = None
    qos: Qos | None = None
    hosts: list[dict] | None = None  # per node model and role host profiles (NUMA, PCIe, NCCL); see ffplan.design.hosts
