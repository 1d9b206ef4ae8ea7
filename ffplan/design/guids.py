"""The GUID scheme: what a switch and an HCA port report as their GUIDs, and the synthetic placeholders ffplan
gives devices whose GUIDs the inventory does not list yet."""

from __future__ import annotations

KIND_SPINE, KIND_LEAF, KIND_CA, KIND_CORE = 1, 2, 3, 4
MIN_CA_GUIDS_PER_HOST = 16  # room for 4 NICs of up to 2 ports: card base GUID at +4*nic, port p at base + p - 1


def synthetic_guid(prefix: str, zone: int, kind: int, index: int) -> str:
    """Placeholder GUID: OUI (24 bits) | zone (8) | kind (8: 1 spine, 2 leaf, 3 CA, 4 core) | index (24)."""
    return f"0x{int(prefix, 16):06x}{zone:02x}{kind:02x}{index:06x}"


def switch_guids(node_guid: str) -> dict[str, str]:
    """A Quantum switch reports its node GUID as the GUID of port 0 and as its system image GUID."""
    return {"node_guid": node_guid, "port_guid": node_guid, "sysimg_guid": node_guid}


def hca_port_guids(card_guid: str, port: int) -> dict[str, str]:
    """An mlx5 port is a device of its own: node GUID = port GUID = the card's base GUID + port - 1, and the
    card's ports share the base as system image GUID. (ibsim's rule, port GUID = node GUID + port, is the
    simulator's alone: see ffplan.opensm.files.simulator_topology.)"""
    port_guid = f"0x{int(card_guid, 16) + port - 1:016x}"
    return {"node_guid": port_guid, "port_guid": port_guid, "sysimg_guid": card_guid}


def ca_guids_per_host(nics: int) -> int:
    """Synthetic CA GUIDs per host of up to `nics` NICs: 4 per NIC (a card's ports), at least 16, a power of two."""
    stride = MIN_CA_GUIDS_PER_HOST
    while stride < 4 * nics:
        stride *= 2
    return stride
