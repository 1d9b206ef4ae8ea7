"""The cabling step (`cable`): every cable, node to leaf, between zones, leaf to spine, spine to core, each laid and
priced by the floor plan (ffplan.design.floor).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ffplan.design.floor import Floor
from ffplan.design.placement import Placement
from ffplan.design.sizing import SizedFabric, ThreeLayerTree
from ffplan.inventory import LoadedInventory
from ffplan.plan.model import Cable, CableEnd, Switch


@dataclass(frozen=True)
class Cabling:
    """The cabling step's result: every cable (spine-core, leaf-spine, inter-zone, node-leaf, each kind by label) and
    their catalog price."""

    cables: list[Cable]
    cost: float


def cable(loaded: LoadedInventory, sized: SizedFabric, placement: Placement, floor: Floor) -> Cabling:
    """Every cable: node to leaf and between zones where placement put them; leaf to spine and (three layers) spine
    to core as sizing.py describes the trees: in a pod, leaf l's up-port u to spine u on its down-port l + 1; spine
    position j of every pod to the cores of group j, pod p on each core's ports p * links_per_spine_core + 1 on."""
    racks = loaded.resolved.racks
    size = sized.size
    cables: list[Cable] = []

    def lay(
        label: str,
        kind: Literal["node-leaf", "leaf-spine", "spine-core", "inter-zone"],
        zone: str,
        a: tuple[str, int | str, str, float],
        b: tuple[str, int, str, float],
    ) -> None:
        length, cable_type, _ = floor.cable(racks[a[2]], a[3], racks[b[2]], b[3])
        cables.append(
            Cable(
                label=label,
                kind=kind,
                a=CableEnd(device=a[0], port=a[1]),
                b=CableEnd(device=b[0], port=b[1]),
                length_m=length,
                type=cable_type,
                zone=zone,
            )
        )

    def end(switch: Switch, port: int) -> tuple[str, int, str, float]:
        return (switch.name, port, switch.rack, switch.u)

    for z, leaf, leaf_port, slot in placement.ports:
        lay(
            f"{leaf.name}-p{leaf_port:02d}",
            "node-leaf",
            z,
            (slot.host.hostname, slot.nic, slot.host.rack, slot.host.u),
            end(leaf, leaf_port),
        )
    for (za, la, pa), (zb, lb, pb) in placement.inter_zone:
        a, b = sized.tier(za, "leaf")[la], sized.tier(zb, "leaf")[lb]
        lay(f"{a.name}-p{pa:02d}", "inter-zone", za, end(a, pa), end(b, pb))
    for z in sized.zones:
        spines = sized.tier(z, "spine")
        for li, leaf in enumerate(sized.tier(z, "leaf")):
            for u in range(size.up_ports):
                port = size.down_ports + u + 1
                if isinstance(size, ThreeLayerTree):  # one cable to each spine of its pod
                    pod, local = divmod(li, size.leaves_per_pod)
                    spine, spine_port = spines[pod * size.spines_per_pod + u], local + 1
                else:
                    spine = spines[u % size.spines]
                    spine_port = li * size.links_per_leaf_spine + u // size.spines + 1
                lay(f"{leaf.name}-p{port:02d}", "leaf-spine", z, end(leaf, port), end(spine, spine_port))
        if isinstance(size, ThreeLayerTree):
            cores = sized.tier(z, "core")
            spine_down = size.radix - size.spine_up_ports
            for si, spine in enumerate(spines):
                pod, position = divmod(si, size.spines_per_pod)
                for x in range(size.spine_up_ports):
                    port = spine_down + x + 1
                    core = cores[position * size.cores_per_group + x % size.cores_per_group]
                    core_port = pod * size.links_per_spine_core + x // size.cores_per_group + 1
                    lay(f"{spine.name}-p{port:02d}", "spine-core", z, end(spine, port), end(core, core_port))
    cables.sort(key=lambda c: (_kind_order(c.kind), c.label))
    return Cabling(cables, round(sum(floor.prices.price(c.type, c.length_m) for c in cables), 2))


def _kind_order(kind: str) -> int:
    return {"spine-core": -1, "leaf-spine": 0, "inter-zone": 1, "node-leaf": 2}[kind]
