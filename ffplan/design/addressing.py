"""The addressing step: GUIDs and LIDs of every NIC port, LIDs of every switch.

With a previous plan (re-planning), every surviving port keeps its LID and GUID, switches keep theirs, and new
ports take unused LIDs. LIDs are per subnet (a plane, or all zones together).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Iterator

from ffplan.codes.design import LID_SPACE_EXHAUSTED
from ffplan.design.guids import KIND_CA, ca_guids_per_host, hca_port_guids, synthetic_guid
from ffplan.design.placement import PlacedPort, Placement, PortSlot
from ffplan.design.sizing import SizedFabric, SizingError, subnet_of_zone
from ffplan.diagnostics import Collector, InfeasibleError
from ffplan.inventory import LoadedInventory
from ffplan.inventory.models import Role
from ffplan.plan.model import LID_BLOCK, MAX_LID, Node, NodePort, Plan, Switch

SUBNET_MANAGERS = 2  # master and standby


@dataclass(frozen=True)
class Addressing:
    """The addressing step's result: the switches with their LIDs, the nodes with their ports' GUIDs, LIDs and leaf
    ports, and the subnet manager hosts (master first)."""

    switches: list[Switch]
    nodes: list[Node]
    sm_hosts: list[str]


def address(
    loaded: LoadedInventory, sized: SizedFabric, placement: Placement, previous: Plan | None = None
) -> Addressing:
    """Number the switches and the placed ports of every subnet; the subnet manager hosts' ports take the top block."""
    sm_hosts = subnet_manager_hosts(loaded)
    switches, nodes = _address(loaded, list(sized.switches), placement.ports, previous, sm_hosts)
    return Addressing(switches, nodes, sm_hosts)


def subnet_manager_hosts(loaded: LoadedInventory) -> list[str]:
    """The subnet manager hosts, master first (subnet_manager_choice). On planes each runs one SM per plane, on its
    port in that plane."""
    return subnet_manager_choice(loaded)[0]


def subnet_manager_choice(loaded: LoadedInventory) -> tuple[list[str], str]:
    """The subnet manager hosts and why them: those fabric.subnet_managers names (UFM appliances), else the first two
    management nodes (inventory order), else the first two nodes."""
    named = loaded.inventory.fabric.subnet_managers
    if named:
        return list(named), "named by fabric.subnet_managers"
    hosts = sorted(loaded.resolved.hosts, key=lambda h: h.order)
    managers = [h.hostname for h in hosts if h.role == Role.MANAGEMENT][:SUBNET_MANAGERS]
    if managers:
        return managers, "the first management nodes (no fabric.subnet_managers)"
    return (
        [h.hostname for h in hosts[:SUBNET_MANAGERS]],
        "no management node and no fabric.subnet_managers: the first nodes in inventory order",
    )


def _address(
    loaded: LoadedInventory,
    switches: list[Switch],
    placed_rows: list[PlacedPort],
    previous: Plan | None,
    sm_hosts: list[str],
) -> tuple[list[Switch], list[Node]]:
    """GUIDs and LIDs. Kept from the previous plan where the device survives; new ones never collide. LIDs are per
    subnet; in each, the ports of the subnet manager hosts take the top LID block (_sm_port_lids)."""
    inv = loaded.inventory
    subnet_of = subnet_of_zone(inv)
    prev_switch = {s.name: s for s in previous.switches} if previous else {}
    prev_port = {(n.hostname, p.nic, p.port): p for n in previous.nodes for p in n.ports} if previous else {}
    lid_of_switch: dict[str, int] = {}
    lid_of: dict[tuple, int] = {}
    sm_rank = {host: i for i, host in enumerate(sm_hosts)}
    for subnet in dict.fromkeys(subnet_of.values()):
        in_subnet = {z for z, s in subnet_of.items() if s == subnet}
        subnet_switches = [sw for sw in switches if sw.zone in in_subnet]
        rows = sorted((r for r in placed_rows if r[0] in in_subnet), key=lambda r: (r[0], r[1].index, r[2]))
        used_lids = {prev_switch[sw.name].lid for sw in subnet_switches if sw.name in prev_switch} | {
            prev_port[r[3].ident].lid for r in rows if r[3].ident in prev_port
        }
        next_lid = _lid_allocator(used_lids, loaded.source.file)
        for sw in subnet_switches:
            old = prev_switch.get(sw.name)
            lid_of_switch[sw.name] = old.lid if old else next(next_lid)
        sm_slots = sorted(
            (slot for _, _, _, slot in rows if slot.host.hostname in sm_rank),
            key=lambda slot: (sm_rank[slot.host.hostname], slot.nic, slot.port),
        )
        subnet_lids: dict[tuple, int] = {}
        for _, _, _, slot in rows:
            if slot.host.hostname not in sm_rank:
                kept_port = prev_port.get(slot.ident)
                subnet_lids[slot.ident] = kept_port.lid if kept_port else next(next_lid)
        taken = {lid_of_switch[sw.name] for sw in subnet_switches} | set(subnet_lids.values())
        subnet_lids.update(_sm_port_lids(sm_slots, taken, used_lids, prev_port))
        lid_of.update(subnet_lids)
    numbered = [sw.model_copy(update={"lid": lid_of_switch[sw.name]}) for sw in switches]

    # Synthetic CA GUIDs index hosts by inventory order; re-planning keeps old ones and appends after them.
    stride = ca_guids_per_host(max((len(h.nics) for h in loaded.resolved.hosts), default=1))
    used_index = {(int(p.node_guid, 16) & 0xFFFFFF) // stride for p in prev_port.values() if p.guid_placeholder}
    fresh_index = iter(i for i in range(1 << 20) if i not in used_index)
    host_index: dict[str, int] = {}
    ports_of: dict[str, list[NodePort]] = defaultdict(list)
    for z, leaf, p, slot in sorted(placed_rows, key=lambda r: (r[0], r[1].index, r[2])):
        old_port = prev_port.get(slot.ident)
        if slot.card_guid:
            card_guid, placeholder = slot.card_guid.lower(), False
        elif old_port is not None and old_port.guid_placeholder:
            card_guid, placeholder = old_port.sysimg_guid, True
        else:
            if previous is None:
                index = slot.host.order
            else:
                index = host_index.setdefault(slot.host.hostname, next(fresh_index))
            card_guid = synthetic_guid(inv.fabric.guid_prefix, 0, KIND_CA, index * stride + slot.nic_index * 4)
            placeholder = True
        ports_of[slot.host.hostname].append(
            NodePort(
                nic=slot.nic,
                nic_model=slot.nic_model,
                port=slot.port,
                guid_placeholder=placeholder,
                **hca_port_guids(card_guid, slot.port + slot.link),
                lid=lid_of[slot.ident],
                zone=z,
                leaf=leaf.name,
                leaf_port=p,
                cable=f"{leaf.name}-p{p:02d}",
            )
        )
    nodes = [
        Node(
            hostname=h.hostname,
            group=h.group,
            role=h.role.value,
            model=h.model,
            rack=h.rack,
            u=h.u,
            ports=sorted(ports_of[h.hostname], key=lambda np: (np.nic, np.port)),
        )
        for h in sorted(loaded.resolved.hosts, key=lambda h: h.order)
    ]
    return numbered, nodes


def _sm_port_lids(
    sm_slots: list[PortSlot], taken: set[int], used: set[int], prev_port: dict[tuple[str, str, int], NodePort]
) -> dict[tuple, int]:
    """LIDs for the subnet manager hosts' ports, all in one 64-LID block at or above the highest other LID.

    OpenSM sizes every switch's LFT from the highest LID present, rounded up to a whole 64-LID block, and its
    file engine writes the file's entries into it unchecked (osm_switch.c alloc_lft, osm_ucast_file.c add_path).
    The running SM's own port is always present, so with it in the top block the table covers every planned LID,
    whatever else is down at a cold start. Re-planning keeps SM ports' LIDs that are already in such a block.
    """
    top = max(taken, default=0) // LID_BLOCK
    previous = {slot.ident: prev_port[slot.ident].lid for slot in sm_slots if slot.ident in prev_port}
    blocks = {lid // LID_BLOCK for lid in previous.values()}
    block = blocks.pop() if len(blocks) == 1 and min(blocks) >= top else top
    kept = {ident: lid for ident, lid in previous.items() if lid // LID_BLOCK == block}
    # never hand out a LID another device had (caches still map it), except these ports' own previous LIDs
    avoid = (taken | used) - set(previous.values())
    free = [
        lid
        for lid in range(block * LID_BLOCK, (block + 1) * LID_BLOCK)
        if lid and lid not in avoid | set(kept.values())
    ]
    fresh = [slot for slot in sm_slots if slot.ident not in kept]
    if len(fresh) > len(free):  # the next block up is empty: move them all there
        block = max(taken | set(kept.values()) | used) // LID_BLOCK + 1
        kept, fresh = {}, sm_slots
        free = list(range(block * LID_BLOCK, min((block + 1) * LID_BLOCK, MAX_LID + 1)))
    if len(fresh) > len(free):
        raise SizingError(
            f"the subnet manager hosts ({', '.join(dict.fromkeys(s.host.hostname for s in sm_slots))}) have "
            f"{len(sm_slots)} ports; they must share one {LID_BLOCK}-LID block at or above every "
            f"other LID, within the unicast LIDs (up to 0x{MAX_LID:X})",
            "give the first two management nodes fewer InfiniBand ports, or the fabric fewer ports",
        )
    return kept | {slot.ident: lid for slot, lid in zip(fresh, free)}


def _lid_allocator(used: set[int], file: str) -> Iterator[int]:
    """Free LIDs of one subnet, lowest first."""
    for lid in range(1, MAX_LID + 1):
        if lid not in used:
            yield lid
    c = Collector(file)
    c.error(
        LID_SPACE_EXHAUSTED,
        ("fabric",),
        f"the fabric needs more LIDs than the {MAX_LID:,} unicast LIDs of a subnet",
        "split the fabric into smaller subnets (fewer zones or ports per zone)",
    )
    raise InfeasibleError(c.items)
