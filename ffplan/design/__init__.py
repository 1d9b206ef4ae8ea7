"""Design stage: inventory -> Plan, in steps (DESIGN_STEPS): size, place, cable, address, route, QoS, host profiles.

Public surface: `design(loaded, options) -> Plan`, `DesignOptions`, `DESIGN_STEPS`. They are loaded on first use, so that
importing `ffplan.design.sizing` (as lint does) does not pull in the solver and the routing code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ffplan.design.pipeline import DESIGN_STEPS, DesignOptions, design, design_steps

__all__ = ["DESIGN_STEPS", "DesignOptions", "design", "design_steps"]


def __getattr__(name: str) -> object:
    if name in __all__:
        from ffplan.design import pipeline

        return getattr(pipeline, name)
    raise AttributeError(name)
