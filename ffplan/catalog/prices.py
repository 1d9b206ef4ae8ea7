"""Built-in price and power catalogs, shipped as YAML, and the overrides that change them.

Public surface: `PriceCatalog`, `Figure`, `PRESETS`, `load_preset(name)`, `apply_override(...)`,
`read_override_file(path)`, `paper_reference()`, `fabric_reference()`.

A preset is a full catalog (`paper.yaml`, `list-price.yaml`). An override is the inventory's `catalog:`
block or a `--catalog FILE` with the same keys (`preset`, `currency`, `prices`, `power_w`, `cable`); it
replaces single numbers and marks them with where they came from.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from pydantic import Field, ValidationError, model_validator

from ffplan.codes.report import BAD_CATALOG, UNKNOWN_CATALOG_NAME
from ffplan.diagnostics import Collector, InputError, did_you_mean, validation_message
from ffplan.frozen import Frozen
from ffplan.inventory.models import Catalog as CatalogOverride
from ffplan.inventory.source import load_source


DATA_DIR = Path(__file__).parent


class Preset(str, Enum):
    """The built-in catalogs (catalog/<name>.yaml)."""

    PAPER = "paper"
    LIST_PRICE = "list-price"
    DEEPSEEK_V3 = "deepseek-v3"


PRESETS = tuple(p.value for p in Preset)

CableType = Literal["DAC", "AOC"]  # copper up to a length, active optical beyond


class Figure(Frozen):
    """A number and where it comes from: a source, or an admitted assumption."""

    value: float = Field(ge=0)
    source: str = ""
    assumption: bool = False
    note: str = ""

    @model_validator(mode="after")
    def _sourced(self) -> "Figure":
        if not self.source and not self.assumption:
            raise ValueError("a catalog number needs a `source:` or `assumption: true`")
        return self


@dataclass(frozen=True)
class ReferenceNode:
    """The counts of the catalog's reference node (DGX-A100, HGX-H800) that size the designs without a plan."""

    title: str
    gpus: int
    compute_nics: int
    storage_nics: int


class NodeEntry(Frozen):
    title: str = ""  # how the report names a design of these nodes (the reference node's)
    description: str = ""
    gpus: int | None = None  # only for models the inventory does not describe (the DGX reference)
    gpu_model: str | None = None
    compute_nics: int | None = None
    storage_nics: int | None = None
    price: Figure | None = None
    power_w: Figure | None = None
    peak_power_w: Figure | None = None


class GpuEntry(Frozen):
    node_price_per_gpu: Figure | None = None  # prices a node model the catalog does not list
    gemm_tflops: dict[str, Figure] = {}


class SwitchEntry(Frozen):
    ports: int | None = (
        None  # radix: for the catalog's `fabric_switch` (designs sized without a plan) and a build's switch
    )
    price: Figure | None = None
    power_w: Figure | None = None


class PartEntry(Frozen):
    """A NIC or a transceiver: what one costs and draws."""

    title: str = ""
    price: Figure | None = None
    power_w: Figure | None = None


Transport = Literal["infiniband", "roce"]


class TransportBuild(Frozen):
    """What one transport's fabric is built of at one link speed: `ffplan report cost` on a RoCE plan builds the
    plan's layout with each transport's (docs/ethernet.md). Optical runs are fibre between transceivers: one per
    switch cage that carries an optical port, one per optical NIC port."""

    switch: str  # a model of `switches`, whose `ports` is its radix at this speed
    nic: str  # a part of `nics`, one per NIC port
    switch_optic: str  # a part of `optics`
    ports_per_cage: int = Field(ge=1, le=8)  # switch ports one switch_optic serves
    nic_optic: str  # a part of `optics`


CableKind = Literal["node-leaf", "leaf-spine", "spine-core", "inter-zone"]


class CableEntry(Frozen):
    """Price of one cable: base + per_m x length, by type. DAC up to `dac_max_m`, AOC beyond. A price per
    kind (`leaf_spine_price`, ...), when given, prices every cable of that kind whatever its type and length:
    a catalog calibrated to a paper that prices links by what they join (DeepSeek-V3's Table 3 prices the
    switch-to-switch links and leaves the endpoint links out) prices a plan's own cables the same way."""

    dac_max_m: Figure
    dac_base: Figure
    dac_per_m: Figure
    aoc_base: Figure
    aoc_per_m: Figure
    node_leaf_price: Figure | None = None
    leaf_spine_price: Figure | None = None
    spine_core_price: Figure | None = None
    inter_zone_price: Figure | None = None

    def price(self, cable_type: str, length_m: float) -> float:
        if cable_type == "DAC":
            return self.dac_base.value + self.dac_per_m.value * length_m
        return self.aoc_base.value + self.aoc_per_m.value * length_m

    def price_of(self, kind: CableKind, cable_type: str, length_m: float) -> float:
        """One cable of a design: its kind's price when the catalog gives one, else by type and length."""
        by_kind = self.kind_prices().get(kind)
        return self.price(cable_type, length_m) if by_kind is None else by_kind

    def kind_prices(self) -> dict[CableKind, float]:
        """The kinds the catalog prices per cable, and their price."""
        kinds: tuple[CableKind, ...] = get_args(CableKind)
        figures = {kind: getattr(self, f"{kind.replace('-', '_')}_price") for kind in kinds}
        return {kind: figure.value for kind, figure in figures.items() if figure is not None}

    def type_for(self, length_m: float) -> CableType:
        return "DAC" if length_m <= self.dac_max_m.value else "AOC"


class SizedLengths(Frozen):
    """Cable lengths assumed for designs that are sized, not placed."""

    node_leaf_m: Figure
    leaf_spine_m: Figure
    spine_core_m: Figure


class PriceCatalog(Frozen):
    name: str
    description: str = ""
    currency: str
    relative_units: bool
    reference_node: str
    fabric_switch: str  # sizes the designs when there is no plan (`ffplan report cost --gpus N`)
    nodes: dict[str, NodeEntry]
    gpus: dict[str, GpuEntry]
    switches: dict[str, SwitchEntry]
    cables: CableEntry
    sized_lengths: SizedLengths
    nics: dict[str, PartEntry] = {}
    optics: dict[str, PartEntry] = {}
    builds: dict[Transport, dict[int, TransportBuild]] = {}  # per transport, per link speed (Gb/s)

    @model_validator(mode="after")
    def _builds_are_complete(self) -> "PriceCatalog":
        for transport, speeds in self.builds.items():
            for gbps, b in speeds.items():
                switch = self.switches.get(b.switch)
                missing = (
                    ([f"switch '{b.switch}' with `ports`"] if switch is None or not switch.ports else [])
                    + ([f"nic '{b.nic}'"] if b.nic not in self.nics else [])
                    + [f"optic '{o}'" for o in (b.switch_optic, b.nic_optic) if o not in self.optics]
                )
                if missing:
                    raise ValueError(f"builds.{transport}.{gbps} names no {', '.join(missing)}")
        return self

    @model_validator(mode="after")
    def _reference_is_complete(self) -> "PriceCatalog":
        ref = self.nodes.get(self.reference_node)
        if ref is None or None in (ref.gpus, ref.gpu_model, ref.compute_nics, ref.storage_nics, ref.price, ref.power_w):
            raise ValueError(
                f"reference_node '{self.reference_node}' needs gpus, gpu_model, compute_nics, storage_nics, price and power_w"
            )
        switch = self.switches.get(self.fabric_switch)
        if switch is None or not switch.ports:
            raise ValueError(f"fabric_switch '{self.fabric_switch}' needs an entry with `ports`")
        return self

    @property
    def reference(self) -> ReferenceNode:
        """The reference node's counts, which `_reference_is_complete` guarantees."""
        ref = self.nodes[self.reference_node]
        assert ref.gpus is not None and ref.compute_nics is not None and ref.storage_nics is not None
        return ReferenceNode(ref.title or self.reference_node, ref.gpus, ref.compute_nics, ref.storage_nics)

    @property
    def fabric_radix(self) -> int:
        """The fabric switch's ports, which `_reference_is_complete` guarantees."""
        ports = self.switches[self.fabric_switch].ports
        assert ports is not None
        return ports

    def figures(self) -> list[tuple[str, Figure]]:
        """Every number with its catalog path, for the report's list of sources."""
        out: list[tuple[str, Figure]] = []
        for name, node in self.nodes.items():
            out += [(f"nodes.{name}.{k}", f) for k in ("price", "power_w", "peak_power_w") if (f := getattr(node, k))]
        for name, gpu in self.gpus.items():
            if gpu.node_price_per_gpu:
                out.append((f"gpus.{name}.node_price_per_gpu", gpu.node_price_per_gpu))
            out += [(f"gpus.{name}.gemm_tflops.{k}", f) for k, f in gpu.gemm_tflops.items()]
        for name, sw in self.switches.items():
            out += [(f"switches.{name}.{k}", f) for k in ("price", "power_w") if (f := getattr(sw, k))]
        for kind, parts in (("nics", self.nics), ("optics", self.optics)):
            for name, part in parts.items():
                out += [(f"{kind}.{name}.{k}", f) for k in ("price", "power_w") if (f := getattr(part, k))]
        out += [(f"cables.{k}", f) for k in CableEntry.model_fields if (f := getattr(self.cables, k))]
        out += [(f"sized_lengths.{k}", getattr(self.sized_lengths, k)) for k in SizedLengths.model_fields]
        return out


@cache
def load_preset(name: str) -> PriceCatalog:
    """A built-in catalog. Its files ship with the package, so a bad one is a bug, not user input."""
    data = yaml.safe_load((DATA_DIR / f"{name}.yaml").read_text(encoding="utf-8"))
    return PriceCatalog.model_validate(data)


@cache
def paper_reference() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DATA_DIR / "paper-reference.yaml").read_text(encoding="utf-8"))
    return data


@cache
def fabric_reference() -> dict[str, Any]:
    """DeepSeek-V3's Table 3 and the DGX SuperPOD counts, as published."""
    data: dict[str, Any] = yaml.safe_load((DATA_DIR / "fabric-reference.yaml").read_text(encoding="utf-8"))
    return data


def read_override_file(path: Path | str) -> tuple[CatalogOverride, Collector]:
    """Read a `--catalog FILE` (the keys of an inventory's `catalog:` block). Raises InputError, located."""
    source = load_source(path)
    collector = source.collector
    if collector.has_errors:
        raise InputError(collector.items)
    if not isinstance(source.data, dict):
        collector.error(
            BAD_CATALOG,
            (),
            "a catalog file is a YAML mapping",
            "write keys such as `preset:`, `prices:`, `power_w:` and `cable:`",
        )
        raise InputError(collector.items)
    try:
        return CatalogOverride.model_validate(source.data), collector
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            loc = tuple(err["loc"])
            if err["type"] == "extra_forbidden":
                allowed = list(CatalogOverride.model_fields)
                hint = did_you_mean(str(loc[-1]), allowed) or "allowed: " + ", ".join(allowed)
                collector.error(BAD_CATALOG, loc, f"unknown key '{loc[-1]}'", hint)
            else:
                collector.error(
                    BAD_CATALOG,
                    loc,
                    f"{validation_message(err).lower()} (got {err.get('input')!r})",
                    "prices and power are numbers; see docs/report.md for the keys",
                )
        raise InputError(collector.items) from None


def apply_override(
    catalog: PriceCatalog,
    override: CatalogOverride,
    origin: str,
    collector: Collector,
    path: tuple = (),
    known_nodes: Set[str] = frozenset(),
    known_switches: Set[str] = frozenset(),
) -> PriceCatalog:
    """The catalog with the override's numbers in place; unknown names become located errors.

    `known_nodes` / `known_switches` are the inventory's model names: an override may price a model the
    catalog does not list yet. `path` is where the override sits in its file (for the error location).
    """
    nodes = dict(catalog.nodes)
    switches = dict(catalog.switches)
    node_names = set(nodes) | set(known_nodes)
    switch_names = set(switches) | set(known_switches)

    def mine(value: float) -> Figure:
        return Figure(value=value, source=origin)

    for field, updates in (("price", override.prices), ("power_w", override.power_w)):
        key = "prices" if field == "price" else "power_w"
        for name, value in updates.items():
            if name in switch_names:
                switches[name] = switches.get(name, SwitchEntry()).model_copy(update={field: mine(value)})
            elif name in node_names:
                entry = nodes.get(name, NodeEntry())
                nodes[name] = entry.model_copy(update={field: mine(value)})
            else:
                names = sorted(node_names | switch_names)
                hint = did_you_mean(
                    name, names
                ) or "name a node or switch model of the inventory or the catalog: " + ", ".join(names)
                collector.error(
                    UNKNOWN_CATALOG_NAME, path + (key, name), f"no node or switch model named '{name}'", hint
                )
    cable_updates: dict[str, Figure] = {}
    length_updates: dict[str, Figure] = {}
    for name, value in override.cable.items():
        if name in CableEntry.model_fields:
            cable_updates[name] = mine(value)
        elif name in SizedLengths.model_fields:
            length_updates[name] = mine(value)
        else:
            allowed = list(CableEntry.model_fields) + list(SizedLengths.model_fields)
            collector.error(
                UNKNOWN_CATALOG_NAME,
                path + ("cable", name),
                f"unknown cable key '{name}'",
                did_you_mean(name, allowed) or "allowed: " + ", ".join(allowed),
            )
    update: dict = {
        "nodes": nodes,
        "switches": switches,
        "cables": catalog.cables.model_copy(update=cable_updates),
        "sized_lengths": catalog.sized_lengths.model_copy(update=length_updates),
    }
    if override.currency:
        update["currency"] = override.currency
        update["relative_units"] = False
    return catalog.model_copy(update=update)
