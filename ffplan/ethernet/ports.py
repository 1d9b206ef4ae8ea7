"""SONiC's names for a switch's ports: the design names them, the SONiC files and NetBox print them."""

from __future__ import annotations

LANES_PER_CAGE = 8  # OSFP and QSFP-DD cages: 8 electrical lanes; SONiC names a port after its first lane


def sonic_port(port: int, breakout: int) -> tuple[str, str]:
    """(SONiC name, lanes) of the plan's port number: cage (port-1)//breakout, split into equal lane groups."""
    cage, sub = divmod(port - 1, breakout)
    width = LANES_PER_CAGE // breakout
    first = cage * LANES_PER_CAGE + sub * width
    return f"Ethernet{first}", ",".join(str(lane) for lane in range(first, first + width))
