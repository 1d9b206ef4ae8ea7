"""The catalog a cost report prices with (preset, the plan's models, the inventory's `catalog:` block, `--catalog
FILE`), and where the report's errors point (`Location`: the plan file or the inventory).
"""

from __future__ import annotations

import re
from collections.abc import Set
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ffplan.catalog import (
    CatalogOverride,
    Figure,
    NodeEntry,
    PriceCatalog,
    SwitchEntry,
    apply_override,
    load_preset,
    read_override_file,
)
from ffplan.diagnostics import Collector, InputError
from ffplan.inventory.source import read_text
from ffplan.plan.io import MAX_PLAN_BYTES
from ffplan.plan.model import Plan

DEFAULT_PRESET = "paper"
ROCE_DEFAULT_PRESET = "list-price"  # a RoCE plan's InfiniBand and RoCE builds: the preset that has both (`builds`)


def resolve_catalog(
    plan: Plan, preset: str | None = None, override_file: Path | None = None, plan_file: Path | None = None
) -> PriceCatalog:
    """Preset, then the plan's model data, then the inventory's `catalog:` block (as the plan carries it),
    then `--catalog FILE`.

    The preset is the one named on the command line, else in the file, else in the plan's catalog block, else
    `paper` (`list-price` for a RoCE plan). `plan_file` is where the plan was read from: errors in its catalog block are located there.
    """
    loaded = read_override_file(override_file) if override_file else None
    default = ROCE_DEFAULT_PRESET if plan.ethernet is not None else DEFAULT_PRESET
    chosen = preset or (loaded and loaded[0].preset) or (plan.catalog and plan.catalog.preset) or default
    catalog = _with_model_power(load_preset(chosen), plan)
    known = {"known_nodes": {m.name for m in plan.node_models}, "known_switches": {m.name for m in plan.switch_models}}
    if plan.catalog:
        # The designer refuses a bad block (ffplan.design.floor): this fails only for an edited plan.
        where, origin = plan_location(plan, plan_file), f"inventory {plan.inventory.file}"
        trial = Collector(where.file)
        updated = apply_override(catalog, plan.catalog, origin, trial, ("catalog",), **known)
        if trial.has_errors:  # locate them: the plan file is scanned for positions only now
            located = Collector(where.file, where.positions())
            apply_override(catalog, plan.catalog, origin, located, ("catalog",), **known)
            raise InputError(located.items)
        catalog = updated
    return _with_override_file(catalog, override_file, loaded, **known)


def resolve_preset(preset: str | None = None, override_file: Path | None = None) -> PriceCatalog:
    """No plan: the preset named on the command line, else in `--catalog FILE`, else `paper`; then the file."""
    loaded = read_override_file(override_file) if override_file else None
    catalog = load_preset(preset or (loaded and loaded[0].preset) or DEFAULT_PRESET)
    return _with_override_file(catalog, override_file, loaded)


def _with_override_file(
    catalog: PriceCatalog,
    override_file: Path | None,
    loaded: tuple[CatalogOverride, Collector] | None,
    known_nodes: Set[str] = frozenset(),
    known_switches: Set[str] = frozenset(),
) -> PriceCatalog:
    """`--catalog FILE`, read into `loaded`, applied last; its errors are located in that file."""
    if loaded is None:
        return catalog
    override, collector = loaded
    catalog = apply_override(
        catalog,
        override,
        f"--catalog {override_file}",
        collector,
        (),
        known_nodes=known_nodes,
        known_switches=known_switches,
    )
    if collector.has_errors:
        raise InputError(collector.items)
    return catalog


def _with_model_power(catalog: PriceCatalog, plan: Plan) -> PriceCatalog:
    """The inventory describes its own hardware (the plan carries its models): its power figures beat the preset's."""
    nodes, switches = dict(catalog.nodes), dict(catalog.switches)
    for node in plan.node_models:
        update = {
            field: Figure(value=getattr(node, field), source=f"inventory models.nodes.{node.name}.{field}")
            for field in ("power_w", "peak_power_w")
            if getattr(node, field) > 0
        }
        if update:
            nodes[node.name] = nodes.get(node.name, NodeEntry()).model_copy(update=update)
    for switch in plan.switch_models:
        if switch.power_w > 0:
            figure = Figure(value=switch.power_w, source=f"inventory models.switches.{switch.name}.power_w")
            switches[switch.name] = switches.get(switch.name, SwitchEntry()).model_copy(update={"power_w": figure})
    return catalog.model_copy(update={"nodes": nodes, "switches": switches})


@dataclass(frozen=True)
class Location:
    """Where the report's errors point: a file, its positions (computed only when there is an error) and the
    YAML path of a node or switch model in it."""

    file: str
    positions: Callable[[], dict[tuple, tuple[int, int]]]
    model_path: Callable[[str, str], tuple]  # ("nodes" | "switches", model name) -> YAML path


def plan_location(plan: Plan, plan_file: Path | None) -> Location:
    """Errors located in the plan file (or, for a plan designed in-process, named after its inventory)."""
    sections = {"nodes": "node_models", "switches": "switch_models"}

    def model_path(kind: str, name: str) -> tuple:
        names = [m.name for m in plan.node_models] if kind == "nodes" else [m.name for m in plan.switch_models]
        index = names.index(name) if name in names else None
        return (sections[kind], index) if index is not None else ()

    def positions() -> dict:
        return plan_positions(plan_file, ("catalog", "node_models", "switch_models")) if plan_file else {}

    return Location(str(plan_file) if plan_file else f"plan of {plan.inventory.file}", positions, model_path)


def inventory_location(file: str, positions: dict) -> Location:
    """Errors located in the inventory a plan was just designed from (its model names are the plan's)."""
    return Location(file, lambda: positions, lambda kind, name: ("models", kind, name))


_FLOW_KEY = re.compile(r"[{,]\s*([^{},:\s][^{},:]*?):\s")


def plan_positions(path: Path, sections: tuple[str, ...]) -> dict[tuple, tuple[int, int]]:
    """Line and column of a few top-level sections of a canonical plan (see ffplan.plan.io), found by scanning
    its text: plans are read without the position-tracking loader, which is too slow for their size."""
    try:
        lines = read_text(Path(path), MAX_PLAN_BYTES).split("\n")
    except InputError:
        return {}
    out: dict[tuple, tuple[int, int]] = {}
    section, item = None, -1
    for number, line in enumerate(lines, 1):
        if line and not line[0].isspace() and not line.startswith(("-", "#")):
            section = line.split(":", 1)[0]
            section, item = (section, -1) if section in sections else (None, -1)
            if section:
                out[(section,)] = (number, 1)
            continue
        if section is None:
            continue
        if line.startswith("- "):  # a list item (canonical lists sit at the key's indent)
            item += 1
            out[(section, item)] = (number, 3)
        elif line.startswith("  ") and not line.startswith("   "):  # a key of a mapping section
            key, _, rest = line.strip().partition(":")
            out[(section, key)] = (number, 3)
            for m in _FLOW_KEY.finditer(rest):
                out[(section, key, m.group(1))] = (number, len(line) - len(rest) + m.start(1) + 1)
    return out
