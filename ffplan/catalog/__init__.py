"""Built-in price and power catalogs, shipped as YAML, and the overrides that change them (ffplan.catalog.prices).

Public surface: `PriceCatalog` and its entries, `Figure`, `PRESETS`, `load_preset(name)`,
`apply_override(...)`, `read_override_file(path)`, `paper_reference()`, `fabric_reference()`.
"""

from ffplan.catalog.prices import (
    PRESETS,
    CableEntry,
    CableKind,
    CableType,
    Figure,
    NodeEntry,
    PartEntry,
    Preset,
    PriceCatalog,
    ReferenceNode,
    SwitchEntry,
    Transport,
    TransportBuild,
    apply_override,
    fabric_reference,
    load_preset,
    paper_reference,
    read_override_file,
)
from ffplan.inventory.models import Catalog as CatalogOverride

__all__ = [
    "CableEntry",
    "CableKind",
    "CableType",
    "CatalogOverride",
    "Figure",
    "NodeEntry",
    "PartEntry",
    "PRESETS",
    "Preset",
    "PriceCatalog",
    "ReferenceNode",
    "SwitchEntry",
    "Transport",
    "TransportBuild",
    "apply_override",
    "fabric_reference",
    "load_preset",
    "paper_reference",
    "read_override_file",
]
