"""An as-built fabric made from a plan with deliberate faults, in ibnetdiscover format (ffplan's topology.net
or the simulator's copy), and the findings the audit must report for it: exactly those, nothing else."""

from __future__ import annotations

from dataclasses import dataclass

from ffplan.plan.model import Plan
from ffplan.opensm import build_fabric
from ffplan.opensm.files import topology_model
from ffplan.templating import render_template

NEW_GUID = "0x0002c9ffff000001"


@dataclass
class Faults:
    swapped: tuple[str, str]  # two cables whose leaf ends are exchanged
    missing: str  # a cable that is not there (its node is then not discovered)
    wrong_leaf: str  # a node cable plugged into the leaf port the missing cable left free, on another leaf
    new_guid_host: str  # a node whose NIC has another GUID than planned
    edr: str  # a cable whose link runs at 4xEDR

    def expected(self) -> set[tuple[str, tuple[str, ...]]]:
        return {
            ("swapped", tuple(sorted(self.swapped))),
            ("missing", (self.missing,)),
            ("wrong-switch", (self.wrong_leaf,)),
            ("guid-differs", ()),
            ("wrong-rate", (self.edr,)),
        }


def as_built(plan: Plan, simulator: bool) -> tuple[str, Faults]:
    fab = build_fabric(plan)
    sm = fab.sm_ca().id
    compute = [ca for ca in fab.cas if ca.id != sm and ca.role == "compute"]
    swap_a, swap_b, gone = compute[:3]
    moved = next(ca for ca in compute[3:] if ca.ports[0].leaf != gone.ports[0].leaf)
    renamed, slow = [ca for ca in compute[3:] if ca is not moved][:2]
    cable = {ca.id: f"{ca.ports[0].leaf}-p{ca.ports[0].leaf_port:02d}" for ca in fab.cas}

    def ca_link(ca) -> tuple[str, int, str, int]:
        return (ca.id, 1, ca.ports[0].leaf, ca.ports[0].leaf_port)

    links = set(fab.links)
    for ca in (swap_a, swap_b, gone, moved):
        links.remove(ca_link(ca))
    links.add((swap_a.id, 1, swap_b.ports[0].leaf, swap_b.ports[0].leaf_port))
    links.add((swap_b.id, 1, swap_a.ports[0].leaf, swap_a.ports[0].leaf_port))
    links.add((moved.id, 1, gone.ports[0].leaf, gone.ports[0].leaf_port))
    fab.links = sorted(links)
    fab.cas = [ca for ca in fab.cas if ca is not gone]
    renamed.node_guid = renamed.sysimg_guid = renamed.ports[0].port_guid = NEW_GUID
    model = topology_model(fab, simulator=simulator)
    text = render_template("opensm/topology.net.j2", **model)
    lines = text.splitlines()
    slow_id = f'"{slow.id}"' if simulator else f'"H-{int(slow.node_guid, 16):016x}"'
    for i, line in enumerate(lines):
        leaf_side = line.startswith(f"[{slow.ports[0].leaf_port}]\t{slow_id}")
        ca_side = line.startswith(f"[1]({int(slow.ports[0].port_guid, 16):x}) ")
        if leaf_side or ca_side:
            lines[i] = line.replace("4xHDR", "4xEDR")
    text = "\n".join(lines) + "\n"
    assert text.count("4xEDR") == 2
    return text, Faults(
        (cable[swap_a.id], cable[swap_b.id]), cable[gone.id], cable[moved.id], renamed.id, cable[slow.id]
    )


def with_aggregation_nodes(text: str, plan: Plan) -> str:
    """ibnetdiscover text as a real QM8700 fabric prints it: each switch one port more, holding its SHARP
    Aggregation Node (a CA inside the switch, LIDs 900, 901, ... here)."""
    for i, s in enumerate(plan.switches):
        g, an = int(s.node_guid, 16), int(s.node_guid, 16) + 8
        header = next(ln for ln in text.splitlines() if ln.startswith(f'Switch\t{s.ports} "S-{g:016x}"'))
        text = text.replace(
            header,
            header.replace(f"Switch\t{s.ports}", f"Switch\t{s.ports + 1}")
            + f'\n[{s.ports + 1}]\t"H-{an:016x}"[1]({an:x}) \t\t# "Mellanox Technologies Aggregation Node" lid {900 + i} 4xHDR',
        )
        text += (
            f"\nvendid=0x2c9\ndevid=0xcf09\nsysimgguid=0x{g:x}\ncaguid=0x{an:x}\n"
            f'Ca\t1 "H-{an:016x}"\t\t# "Mellanox Technologies Aggregation Node"\n'
            f'[1]({an:x}) \t"S-{g:016x}"[{s.ports + 1}]\t\t# lid {900 + i} lmc 0 "{s.name}" lid {s.lid} 4xHDR\n'
        )
    return text
