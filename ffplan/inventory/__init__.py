"""Inventory stage: load YAML with positions, validate against the schema, resolve inheritance.

Public surface: `load_inventory(path) -> LoadedInventory`, `inventory_json_schema()` (ffplan.inventory.load), the
models (ffplan.inventory.models), the resolved hosts (ffplan.inventory.resolve).
"""

from ffplan.inventory.load import SCHEMA_RULES, LoadedInventory, inventory_json_schema, load_inventory
from ffplan.inventory.models import Inventory
from ffplan.inventory.resolve import ResolvedHost, ResolvedInventory

__all__ = [
    "Inventory",
    "LoadedInventory",
    "ResolvedHost",
    "ResolvedInventory",
    "inventory_json_schema",
    "load_inventory",
    "SCHEMA_RULES",
]
