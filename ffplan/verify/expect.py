"""What the plan expects OpenSM to install on a (sub-)fabric, and how installed tables differ from it."""

from __future__ import annotations

from ffplan.opensm import Subnet, ibsim_ca_guid
from ffplan.fabric.discovery import DiscoveredFabric


def fabric_topo(fab: Subnet) -> DiscoveredFabric:
    """The planned (sub-)fabric with the planned LIDs, as ibnetdiscover reads it back from ibsim: CA node GUIDs
    follow ibsim's rule (ibsim_ca_guid); port GUIDs are the plan's."""
    topo = DiscoveredFabric()
    guid_of = {s.name: s.node_guid for s in fab.switches}
    guid_of.update({ca.id: ibsim_ca_guid(ca.ports[0].port_guid) for ca in fab.cas})
    for s in fab.switches:
        topo.kind[s.node_guid] = "Switch"
        topo.nports[s.node_guid] = s.ports
        topo.desc[s.node_guid] = s.name
        topo.port_lid[(s.node_guid, 0)] = s.lid
    for ca in fab.cas:
        node = guid_of[ca.id]
        topo.kind[node] = "Ca"
        topo.nports[node] = ca.nports
        topo.desc[node] = ca.id
        for p in ca.ports:
            topo.port_lid[(node, p.port)] = p.lid
            topo.port_guid[(node, p.port)] = p.port_guid
    for a, pa, b, pb in fab.links:
        x, y = (guid_of[a], pa), (guid_of[b], pb)
        topo.links.add((min(x, y), max(x, y)))
    return topo


def planned_tables(fab: Subnet) -> dict[str, dict[int, int]]:
    routing = fab.plan.routing
    assert routing is not None
    lfts = {lft.switch: lft.ports.tolist() for lft in routing.lfts}
    out: dict[str, dict[int, int]] = {}
    for s in fab.switches:
        table = lfts.get(s.name, [])
        out[s.node_guid] = {
            lid: table[lid] for lid in fab.lid_owner if lid < len(table) and table[lid] != routing.unrouted_port
        }
    return out


def lid_name(fab: Subnet, lid: int) -> str:
    owner = fab.lid_owner.get(lid)
    return f"LID {lid} ({owner[1]})" if owner else f"LID {lid}"
