"""Design stage: inventory -> Plan. Size the zones, place ports (ILP), cable, address, route, QoS, hosts.

Public surface: `design(loaded, options) -> Plan`, `DesignOptions`. They are loaded on first use, so that
importing `ffplan.design.sizing` (as lint does) does not pull in the solver and the routing code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ffplan.design.pipeline import DesignOptions, design

__all__ = ["DesignOptions", "design"]


def __getattr__(name: str) -> object:
    if name in __all__:
        from ffplan.design import pipeline

        return getattr(pipeline, name)
    raise AttributeError(name)
