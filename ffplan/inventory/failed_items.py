"""Failed items: what an operator names as down. One grammar and one parser for every stage that reads them (the
inventory's `fabric.failed_links`, the plan's `routing.failed`, `design --exclude-link`, `reroute --failed`, analyze,
the routers): a cable label as in cables.csv, a switch name, or `switch[port]` with the port number as the plan
writes it (no leading zero: `za-leaf01[01]` is not `za-leaf01[1]`, it is refused).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NAME = r"[A-Za-z0-9._-]+"
PORT = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]?)"  # 1-255: a port number is one byte, 0 is the switch itself
# the pattern of one item, for the inventory's and the plan's schema
PATTERN = rf"^{NAME}(\[{PORT}\])?$"
_ITEM = re.compile(rf"(?P<name>{NAME})(?:\[(?P<port>{PORT})\])?")


@dataclass(frozen=True)
class PortRef:
    """`switch[port]`: the cable on that switch port."""

    switch: str
    port: int

    def __str__(self) -> str:
        return f"{self.switch}[{self.port}]"


def parse_item(text: str) -> str | PortRef | None:
    """A cable label or switch name (as given), a PortRef, or None for text the grammar refuses."""
    m = _ITEM.fullmatch(text)
    if m is None:
        return None
    return PortRef(m["name"], int(m["port"])) if m["port"] is not None else m["name"]


def item_name(text: str) -> str:
    """The cable label or switch an item names (the switch of `switch[port]`)."""
    item = parse_item(text)
    return item.switch if isinstance(item, PortRef) else text
