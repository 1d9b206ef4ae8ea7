"""The one base of ffplan's pydantic models (inventory, plan, catalog, report): unknown keys refused, immutable once
built. defer_build: a command builds the validators of the models it uses on first use, not all at import (a
plan-reading command shares a few inventory models and needs none of the others)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
