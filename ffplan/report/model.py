"""The cost report's data: what every output format prints. Templates and tables only read these fields."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from ffplan.catalog import CableKind, CableType
from ffplan.frozen import Frozen
from ffplan.diagnostics import Diagnostic

Basis = Literal["plan", "sizing"]
LAYERS = ("leaf", "spine", "core")


class CableLot(Frozen):
    """Cables of one kind, type and length."""

    kind: CableKind
    type: CableType
    length_m: float
    count: int


class Network(Frozen):
    """One switched network of a design: a set of two-layer zones or one tree."""

    name: str
    topology: str
    basis: Basis
    access_points: int  # NIC ports it connects
    switch_model: str
    radix: int
    switches: dict[str, int]  # per layer: leaf, spine, core
    cables: list[CableLot]


class Money(Frozen):
    """None: a model in it has no price in the catalog (the report lists it under `unpriced`)."""

    switches: float | None
    cables: float
    network: float | None
    servers: float | None
    total: float | None
    per_gpu: float | None
    network_per_endpoint: float | None  # network / NIC ports connected: DeepSeek-V3 Table 3's cost per endpoint


class Power(Frozen):
    """None: a node model in it has no power figure (listed under `unpriced`)."""

    nodes_average_w: float | None
    nodes_peak_w: float | None
    switches_w: float
    average_w: float | None
    peak_w: float | None


class Energy(Frozen):
    years: float
    pue: float
    kwh_price: float
    kwh: float
    cost: float


class BuildCost(Frozen):
    """A transport build's NICs and transceivers, counted and priced (None: unpriced)."""

    transport: str
    nic: str
    nics: int
    switch_optic: str
    switch_optics: int
    nic_optic: str
    nic_optics: int
    nics_price: float | None
    optics_price: float | None


class DesignReport(Frozen):
    key: str
    title: str
    description: str
    basis: Basis
    gpus: int
    nodes: dict[str, int]  # compute node model -> count
    gpus_per_node: int
    fabrics: list[Network]
    endpoints: int  # NIC ports connected, all fabrics
    switches: dict[str, int]  # per layer, all fabrics
    switch_total: int
    switch_links: int  # cables between switches (leaf-spine, spine-core, inter-zone): Table 3's "links"
    cables: dict[str, int]  # per type: DAC, AOC
    cables_by_kind: dict[str, int]
    cable_total: int
    transceivers: int  # optical transceivers: 2 per AOC; NDR/XDR per cage (ffplan.plan.optics)
    cost: Money
    power: Power
    relative_performance: float | None
    cost_performance: float | None  # relative performance / relative server price per GPU (paper Table II)
    cost_performance_total: float | None  # the same with the total price per GPU
    energy: Energy | None
    tco: float | None  # total + energy cost, when both are in the same currency
    build: BuildCost | None = None  # the InfiniBand and RoCE builds only (left out of the others' JSON)

    @model_serializer(mode="wrap")
    def _without_absent_build(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        if self.build is None:
            data.pop("build", None)
        return data


class Ratio(Frozen):
    name: str
    numerator: str
    denominator: str
    computed: float
    paper: float
    paper_basis: str  # which of the paper's numbers


class PaperCheck(Frozen):
    item: str
    paper: str
    computed: str
    reason: str


class SourceLine(Frozen):
    key: str
    value: float
    source: str
    assumption: bool
    note: str


class CostReport(Frozen):
    title: str
    input: str
    inventory: str
    basis: Basis
    gpus: int
    catalog: str
    currency: str
    relative_units: bool
    designs: list[DesignReport]
    ratios: list[Ratio]
    paper_checks: list[PaperCheck]
    notes: list[str]
    unpriced: list[str]  # figures the catalog lacks ("no price for 'LAB8' in catalog 'paper'"): their totals are None
    sources: list[SourceLine]
    warnings: list[Diagnostic] = Field(default=[], exclude=True)  # `unpriced`, located: the CLI prints them on stderr
