"""Diagrams of a plan, drawn for the engineer who cables and checks the fabric, readable at 100 % on a laptop
screen (1,400 px wide):

- `diagram-<zone>.svg`: the spines as one block, the leaves grouped by rack, each leaf with a bar of its
  down-ports (compute, storage, management, inter-zone, free: one cell per port), one bundle per leaf rack to
  the spines with its link count, and the inter-zone links listed in their own colour.
- `elevation-<zone>.svg`: every rack that holds the zone's switches, U by U, each switch at its U position with
  every port (what it connects to, by colour; the peer on hover).
- `racks/<rack>.svg`: one rack of nodes, U by U, for the crew at that rack: each node with the leaf port of every
  NIC.

Every coordinate is computed here; the SVG template only prints shapes (`Shapes`), autoescaped.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable, NamedTuple

from ffplan.plan.model import Node, Plan, Switch
from ffplan.templating import render_template

WIDTH = 1400  # a laptop screen at 100 %
MARGIN = 24
CHAR_W = 7  # average width of a 12 px sans-serif character, for laying out labels
SMALL_W = 6.5  # the same at 11 px
DOWN_KINDS = ("compute", "storage", "management", "inter-zone", "free")
COLORS = {
    "compute": "#4e79a7",
    "storage": "#f28e2b",
    "management": "#59a14f",
    "inter-zone": "#d62728",
    "free": "#ffffff",
    "uplink": "#9aa7b8",
    "downlink": "#c5b0d5",
}
OUTLINES = {"free": "#999999"}  # a free port is an empty cell
LETTERS = {"compute": "C", "storage": "S", "management": "M", "inter-zone": "I", "free": "F"}
INK, MUTED, LINE = "#222222", "#555555", "#34495e"  # INK and 12 px: the SVG root's defaults (diagram.svg)
UNIT_H = 16  # px per rack unit in the elevation
DEFAULT_RACK_UNITS = 42  # the plan records U positions, not rack heights: a rack is drawn at least this tall


# The SVG template (templates/exports/diagram.svg) unpacks these tuples in their fields' order.
class Rect(NamedTuple):
    x: float
    y: float
    w: float
    h: float
    fill: str
    stroke: str
    title: str  # shown on hover
    rx: int  # corner radius


class Polyline(NamedTuple):
    points: str  # "x1,y1 x2,y2 ..."
    color: str
    width: int
    title: str


class Label(NamedTuple):
    x: float
    y: float
    text: str
    size: int
    weight: str
    anchor: str
    fill: str
    on_line: bool  # sits on a line, on a white ground of its own (a badge)


@dataclass
class Shapes:
    """What the SVG template prints: rectangles, lines (polylines) and texts, in drawing order. (Tuples, not dicts:
    Jinja reads their fields three times faster, which counts for a thousand rack sheets.)"""

    width: int = WIDTH
    height: int = 0
    title: str = ""
    rects: list[Rect] = field(default_factory=list)
    lines: list[Polyline] = field(default_factory=list)
    texts: list[Label] = field(default_factory=list)

    def rect(
        self, x: float, y: float, w: float, h: float, fill: str, stroke: str = "none", title: str = "", rx: int = 0
    ) -> None:
        self.rects.append(Rect(x, y, w, h, fill, stroke, title, rx))

    def line(self, points: Iterable[tuple[float, float]], color: str, width: int, title: str = "") -> None:
        self.lines.append(Polyline(" ".join(f"{x},{y}" for x, y in points), color, width, title))

    def text(
        self,
        x: float,
        y: float,
        text: str,
        size: int = 12,
        weight: str = "normal",
        anchor: str = "start",
        fill: str = INK,
        on_line: bool = False,
    ) -> None:
        self.texts.append(Label(x, y, text, size, weight, anchor, fill, on_line))

    def badge(self, cx: float, cy: float, text: str, color: str) -> None:
        """A label on a line: white ground so the line never crosses the text."""
        w = len(text) * CHAR_W + 12
        self.rect(cx - w // 2, cy - 10, w, 20, "#ffffff", color, rx=4)
        self.text(cx, cy + 4, text, anchor="middle", fill=color, on_line=True)

    def legend(self, y: float, kinds: Iterable[str]) -> None:
        x = MARGIN
        for kind in kinds:
            self.rect(x, y, 12, 12, COLORS[kind], OUTLINES.get(kind, "none"))
            label = f"{LETTERS[kind]} {kind}" if kind in LETTERS else kind
            self.text(x + 17, y + 11, label)
            x += 17 + len(label) * CHAR_W + 18

    def svg(self) -> str:
        return render_template("exports/diagram.svg", d=self)


@dataclass(frozen=True)
class PortUse:
    kind: str  # compute | storage | management | inter-zone | uplink | downlink | free
    peer: str  # what the cable goes to


def port_uses(plan: Plan) -> dict[str, dict[int, PortUse]]:
    """Switch name -> port number -> what is cabled to it."""
    uses: dict[str, dict[int, PortUse]] = defaultdict(dict)
    for n in plan.nodes:
        for p in n.ports:
            uses[p.leaf][p.leaf_port] = PortUse(n.role, f"{n.hostname} {p.nic}")
    for c in plan.cables:
        if c.kind == "inter-zone":
            uses[c.a.device][int(c.a.port)] = PortUse("inter-zone", f"{c.b.device} port {c.b.port}")
            uses[c.b.device][int(c.b.port)] = PortUse("inter-zone", f"{c.a.device} port {c.a.port}")
        elif c.kind in ("leaf-spine", "spine-core"):  # a is the lower end: the leaf, or the spine under a core
            uses[c.a.device][int(c.a.port)] = PortUse("uplink", f"{c.b.device} port {c.b.port}")
            uses[c.b.device][int(c.b.port)] = PortUse("downlink", f"{c.a.device} port {c.a.port}")
    return uses


def _rack_groups(switches: list[Switch]) -> list[tuple[str, list[Switch]]]:
    """Switches by rack, racks in the order of their first switch."""
    groups: dict[str, list[Switch]] = {}
    for s in sorted(switches, key=lambda s: s.index):
        groups.setdefault(s.rack, []).append(s)
    return list(groups.items())


def _plural(n: int, word: str, plural: str = "") -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


def _counts_text(counts: Counter) -> str:
    return " ".join(f"{LETTERS[k]}{counts[k]}" for k in DOWN_KINDS if counts.get(k))


# ---------------------------------------------------------------- zone view


def zone_view(plan: Plan, zone: str, uses: dict[str, dict[int, PortUse]] | None = None) -> Shapes:
    spec = next(z for z in plan.zones if z.name == zone)
    spines = sorted((s for s in plan.switches if s.zone == zone and s.tier == "spine"), key=lambda s: s.index)
    cores = sorted((s for s in plan.switches if s.zone == zone and s.tier == "core"), key=lambda s: s.index)
    leaves = [s for s in plan.switches if s.zone == zone and s.tier == "leaf"]
    uses = uses if uses is not None else port_uses(plan)
    down = spec.down_ports

    def leaf_counts(leaf: Switch) -> Counter:
        counts = Counter(uses[leaf.name][p].kind if p in uses[leaf.name] else "free" for p in range(1, down + 1))
        return counts

    counts = {leaf.name: leaf_counts(leaf) for leaf in leaves}
    total = sum(counts.values(), Counter())
    groups = _rack_groups(leaves)
    uplinks = Counter(c.a.device for c in plan.cables if c.kind == "leaf-spine" and c.zone == zone)

    d = Shapes()
    d.title = (
        f"{plan.inventory.name}, zone {zone}: "
        + (f"{_plural(len(cores), 'core')}, " if cores else "")
        + f"{_plural(len(spines), 'spine')}, "
        f"{_plural(len(leaves), 'leaf', 'leaves')} in {_plural(len(groups), 'rack')}"
    )
    d.text(MARGIN, 30, d.title, size=17, weight="bold")
    d.text(
        MARGIN,
        52,
        f"leaf down-ports ({down} per leaf, {down * len(leaves)} in all): "
        + ", ".join(f"{k} {total[k]}" for k in DOWN_KINDS if total.get(k)),
        fill=MUTED,
    )
    d.legend(64, DOWN_KINDS)

    # Spines (and cores above them in a three-layer tree): one block across the width each, a cell per switch.
    spine_y = 96
    leaf_links = f"{spec.links_per_leaf_spine} link{'s' if spec.links_per_leaf_spine != 1 else ''} from every leaf to every spine"
    if cores:
        spine_core = sum(1 for c in plan.cables if c.kind == "spine-core" and c.zone == zone)
        _tier_block(
            d, spine_y, "cores", cores, "spine position j of every pod to the cores of group j", switch_ids(plan)
        )
        spine_y += BLOCK_H + 50
        d.line(
            [(WIDTH // 2, spine_y), (WIDTH // 2, spine_y - 50)], COLORS["uplink"], 8, f"{spine_core} spine-core links"
        )
        d.badge(WIDTH // 2, spine_y - 25, _plural(spine_core, "link"), LINE)
        leaf_links += f" of its pod ({_plural(spec.pods, 'pod')})"
    _tier_block(d, spine_y, "spines", spines, leaf_links, switch_ids(plan))
    spine_h = BLOCK_H

    # Leaf racks: one panel each, a row per leaf with a cell per down-port.
    cell = max(3, min(14, 140 // max(down, 1)))  # 7 px for 20 down-ports
    label_w = round(max(len(s.name) for s in leaves) * SMALL_W) + 8 if leaves else 0
    counts_w = round(max(len(_counts_text(c)) for c in counts.values()) * SMALL_W) + 6 if counts else 0
    panel_w = max(20 + label_w + down * cell + 8 + counts_w, 40 * CHAR_W)  # wide enough for its heading
    # Rows below the first send their bundles up the gutter left of their column: the gutters widen with the rows.
    gap, n_rows = 16, 1
    while True:
        per_row = max(1, (WIDTH - 2 * max(MARGIN, gap) + gap) // (panel_w + gap))
        n_rows = -(-len(groups) // per_row)
        needed = min(48, 12 + 3 * (n_rows - 1))
        if needed <= gap:
            break
        gap = needed
    step = (gap - 10) / max(n_rows - 2, 1)  # between the bundles of successive rows in one gutter
    rows = [groups[start : start + per_row] for start in range(0, len(groups), per_row)]
    row_h, head_h = 18, 30
    spines_bottom = spine_y + spine_h
    y = spines_bottom + 70
    grid_x = (WIDTH - (min(per_row, len(groups)) * (panel_w + gap) - gap)) // 2  # every row on the first row's columns
    bundle_max = max((sum(uplinks[s.name] for s in g) for _, g in groups), default=1)
    for row_index, row in enumerate(rows):
        for column, (rack, group) in enumerate(row):
            x = grid_x + column * (panel_w + gap)
            links = sum(uplinks[s.name] for s in group)
            heading = f"{rack}: {_plural(len(group), 'leaf', 'leaves')}, {_plural(links, 'uplink')}"
            title = f"rack {heading} to the spines"
            if row_index == 0:  # straight up, as thick as its share, with its count on it
                d.line(
                    [(x + panel_w // 2, y), (x + panel_w // 2, spines_bottom)],
                    COLORS["uplink"],
                    2 + round(10 * links / bundle_max),
                    title,
                )
                d.badge(x + panel_w // 2, (spines_bottom + y) // 2, _plural(links, "link"), LINE)
            else:  # up the gutter left of its column, deeper rows further left so no bundle crosses another
                gutter_x = round(x - 5 - step * (row_index - 1))
                d.line(
                    [(x + panel_w // 2, y), (x + panel_w // 2, y - 8), (gutter_x, y - 8), (gutter_x, spines_bottom)],
                    COLORS["uplink"],
                    3,
                    title,
                )
                d.badge(x + panel_w // 2, y - 8, _plural(links, "link"), LINE)  # on its own elbow: gutters are shared
            _leaf_panel(d, x, y, panel_w, heading, group, uses, counts, down, cell, label_w, head_h, row_h)
        y += head_h + max(len(g) for _, g in row) * row_h + 8 + gap

    inter = [c for c in plan.cables if c.kind == "inter-zone" and zone in (c.zone, _zone_of(plan, c.b.device))]
    if inter:
        d.text(
            MARGIN,
            y + 4,
            f"inter-zone links ({len(inter)}), highlighted in the port bars:",
            weight="bold",
            fill=COLORS["inter-zone"],
        )
        for i, c in enumerate(inter):
            d.text(
                MARGIN + 16,
                y + 24 + 18 * i,
                f"{c.label}: {c.a.device} port {c.a.port}  <->  {c.b.device} port {c.b.port}"
                f"  ({c.type} {c.length_m:g} m)",
                fill=COLORS["inter-zone"],
            )
        y += 24 + 18 * len(inter)
    d.height = y + MARGIN
    return d


BLOCK_H = 64


def switch_ids(plan: Plan) -> dict[str, str]:
    """How the hover text names each switch's address: its LID, or on a RoCE plan its ASN and loopback."""
    if plan.ethernet is None:
        return {s.name: f"LID {s.lid}" for s in plan.switches}
    return {s.name: f"AS {s.asn}, {s.loopback}" for s in plan.ethernet.switches}


def _tier_block(d: Shapes, y: float, tier: str, switches: list[Switch], note: str, ids: dict[str, str]) -> None:
    """One tier of a zone's upper switches as a block across the width, a cell per switch (hover: name, U, and its
    LID or ASN and loopback)."""
    d.rect(MARGIN, y, WIDTH - 2 * MARGIN, BLOCK_H, "#eef2f7", LINE, rx=6)
    racks = ", ".join(rack for rack, _ in _rack_groups(switches))
    model = switches[0].model if switches else ""
    d.text(MARGIN + 10, y + 20, f"{tier}: {len(switches)} x {model} (rack {racks}); {note}", weight="bold")
    if switches:
        cell = min(48, (WIDTH - 2 * MARGIN - 20) // len(switches))
        for i, s in enumerate(switches):
            x = MARGIN + 10 + i * cell
            d.rect(x, y + 30, max(cell - 3, 1), 24, "#ffffff", LINE, title=f"{s.name} (U{s.u}, {ids[s.name]})", rx=3)
            if cell >= 22:
                d.text(x + (cell - 3) / 2, y + 46, f"{s.index:02d}", size=11, anchor="middle")


def _zone_of(plan: Plan, switch: str) -> str:
    return next((s.zone for s in plan.switches if s.name == switch), "")


def _leaf_panel(
    d: Shapes,
    x: float,
    y: float,
    w: float,
    heading: str,
    group: list[Switch],
    uses: dict[str, dict[int, PortUse]],
    counts: dict[str, Counter],
    down: int,
    cell: int,
    label_w: int,
    head_h: int,
    row_h: int,
) -> None:
    d.rect(x, y, w, head_h + len(group) * row_h + 8, "#fafafa", LINE, rx=6)
    d.text(x + 10, y + 20, f"rack {heading}", weight="bold")
    for i, leaf in enumerate(group):
        ry = y + head_h + i * row_h
        d.text(x + 10, ry + 11, leaf.name, size=11)
        bx = x + 10 + label_w
        for p in range(1, down + 1):
            use = uses[leaf.name].get(p)
            kind = use.kind if use else "free"
            d.rect(
                bx + (p - 1) * cell,
                ry + 1,
                cell - 1,
                12,
                COLORS[kind],
                OUTLINES.get(kind, "none"),
                title=f"{leaf.name} port {p}: {use.peer + ' (' + kind + ')' if use else 'free'}",
            )
        c = counts[leaf.name]
        d.text(
            bx + down * cell + 8,
            ry + 11,
            _counts_text(c),
            size=11,
            fill=COLORS["inter-zone"] if c.get("inter-zone") else MUTED,
        )


# ---------------------------------------------------------------- rack elevation


def elevation_view(plan: Plan, zone: str, sheet: "_Elevation | None" = None) -> Shapes:
    """The racks that hold the zone's switches, U by U, with every port of every switch."""
    switches = [s for s in plan.switches if s.zone == zone]
    names: list[str] = []
    for tier in ("core", "spine", "leaf"):
        names += [rack for rack, _ in _rack_groups([s for s in switches if s.tier == tier]) if rack not in names]
    sheet = sheet or _Elevation(plan)
    racks = [sheet.layout(name) for name in names]
    d = sheet.heading(
        f"{plan.inventory.name}, zone {zone}: elevation of the switch racks ({', '.join(names)})",
        "each switch at its U with one cell per port (hover: the peer)",
        ("compute", "storage", "management", "inter-zone", "uplink", "downlink", "free"),
    )
    rack_w = max(sheet.width(r) for r in racks)
    gap = 28
    per_row = max(1, (WIDTH - 2 * MARGIN + gap) // (rack_w + gap))
    y = 100
    for start in range(0, len(racks), per_row):
        row = racks[start : start + per_row]
        for column, rack in enumerate(row):
            sheet.draw(d, MARGIN + column * (rack_w + gap), y, rack, rack_w)
        y += 44 + max(len(r.rows) for r in row) * UNIT_H + gap
    d.height = y + MARGIN
    return d


def rack_view(plan: Plan, rack: str, sheet: "_Elevation | None" = None) -> Shapes:
    """One rack, U by U: its switches with every port, its nodes with the leaf port of every NIC."""
    sheet = sheet or _Elevation(plan)
    layout = sheet.layout(rack)
    d = sheet.heading(
        f"{plan.inventory.name}: rack {rack}",
        "each node with the leaf port of every NIC",
        ("compute", "storage", "management"),
    )
    rack_w = sheet.width(layout)
    sheet.draw(d, MARGIN, 100, layout, rack_w)
    d.width = max(MARGIN * 2 + rack_w, 640)  # the subtitle's width
    d.height = 100 + 44 + len(layout.rows) * UNIT_H + MARGIN
    return d


@dataclass(frozen=True)
class _RackLayout:
    """A rack's rows from the top: one per occupied U, and one band for each run of three or more empty U (a
    42 U rack holding ten switches stays short enough to read)."""

    name: str
    height: int  # rack units
    switches: list[Switch]
    nodes: list[Node]
    rows: list[tuple[int, int]]  # (top U, bottom U) of each drawn row
    row_of: dict[int, int]  # U -> index of its row


class _Elevation:
    """Draws racks of one plan: switches with a cell per port, nodes with their NICs' leaf ports."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.units = {m.name: m.rack_units for m in plan.switch_models}
        self.ids = switch_ids(plan)
        self.node_units = {m.name: m.rack_units for m in plan.node_models}
        self.uses = port_uses(plan)
        self.ports = max((s.ports for s in plan.switches), default=0)
        self.cell = max(3, min(14, 280 // max(self.ports, 1)))  # 7 px for 40 ports
        # every port numbered up to 10 ports, else every 5th, 10th, ...: the fewest apart whose numbers do not touch
        # (9 px digits are about 5.5 px wide; 144 ports in 3 px cells: every 10th)
        wide = len(str(self.ports)) * 5.5 + 4
        self.port_label_step = 1 if self.ports <= 10 else next(s for s in (5, 10, 20, 50) if s * self.cell >= wide)
        self.label_w = 30 + round(max((len(s.name) for s in plan.switches), default=8) * SMALL_W)
        self.switches_in: dict[str, list[Switch]] = defaultdict(list)
        self.nodes_in: dict[str, list[Node]] = defaultdict(list)
        for s in plan.switches:
            self.switches_in[s.rack].append(s)
        for n in plan.nodes:
            self.nodes_in[n.rack].append(n)

    @staticmethod
    def heading(title: str, subtitle: str, kinds: tuple[str, ...]) -> Shapes:
        d = Shapes()
        d.title = title
        d.text(MARGIN, 30, title, size=17, weight="bold")
        d.text(MARGIN, 52, f"U1 at the bottom, runs of empty U folded; {subtitle}", fill=MUTED)
        d.legend(64, kinds)
        return d

    def layout(self, rack: str) -> _RackLayout:
        switches, nodes = self.switches_in[rack], self.nodes_in[rack]
        occupied = {u for s in switches for u in range(s.u, s.u + self.units.get(s.model, 1))}
        occupied |= {u for n in nodes for u in range(n.u, n.u + self.node_units.get(n.model, 1))}
        height = max([DEFAULT_RACK_UNITS, *occupied])
        rows: list[tuple[int, int]] = []
        u = height
        while u >= 1:
            if u in occupied:
                rows.append((u, u))
                u -= 1
                continue
            bottom = u
            while bottom - 1 >= 1 and bottom - 1 not in occupied:
                bottom -= 1
            rows += [(u, bottom)] if u - bottom >= 2 else [(v, v) for v in range(u, bottom - 1, -1)]
            u = bottom - 1
        row_of = {v: i for i, (top, bottom) in enumerate(rows) for v in range(bottom, top + 1)}
        return _RackLayout(rack, height, switches, nodes, rows, row_of)

    def _node_lines(self, node: Node) -> list[str]:
        """Its name and a line per NIC port; fewer lines when the node is too few U high for that."""
        ports = [f"{p.nic} -> {p.leaf} port {p.leaf_port}" for p in node.ports]
        room = (self.node_units.get(node.model, 1) * UNIT_H - 3) // 13  # lines of 13 px
        if len(ports) + 1 <= room:
            return [node.hostname, *ports]
        return [node.hostname, " | ".join(ports)] if room >= 2 else [" | ".join([node.hostname, *ports])]

    def width(self, rack: _RackLayout) -> int:
        switches = self.label_w + self.ports * self.cell + 12 if rack.switches else 0
        nodes = max((round(len(line) * SMALL_W) + 40 for n in rack.nodes for line in self._node_lines(n)), default=0)
        return max(switches, nodes, 200)

    def draw(self, d: Shapes, x: float, y: float, rack: _RackLayout, rack_w: int) -> None:
        d.text(x, y + 14, f"rack {rack.name} ({rack.height} U)", weight="bold")
        px = x + self.label_w
        if rack.switches:
            for p in range(1, self.ports + 1, self.port_label_step):  # port numbers above the rack
                d.text(px + (p - 1) * self.cell + self.cell / 2, y + 36, str(p), size=9, anchor="middle", fill=MUTED)
        top = y + 42
        d.rect(x, top, rack_w, len(rack.rows) * UNIT_H, "#ffffff", LINE)
        for i, (u_top, u_bottom) in enumerate(rack.rows):
            uy = top + i * UNIT_H
            if u_top == u_bottom:
                d.text(x + 4, uy + 12, f"{u_top}", size=9, fill=MUTED)
            else:
                d.rect(x + 1, uy + 1, rack_w - 2, UNIT_H - 2, "#f4f4f4")
                d.text(x + 4, uy + 12, f"{u_bottom}-{u_top}  empty", size=9, fill=MUTED)
        for s in rack.switches:
            units = self.units.get(s.model, 1)
            sy = top + rack.row_of[s.u + units - 1] * UNIT_H
            d.rect(
                x + 22,
                sy + 1,
                rack_w - 24,
                units * UNIT_H - 2,
                "#eef2f7",
                LINE,
                title=f"{s.name}: {s.tier}, U{s.u}, {self.ids[s.name]}",
                rx=2,
            )
            d.text(x + 26, sy + 12, s.name, size=11)
            for p in range(1, s.ports + 1):
                use = self.uses[s.name].get(p)
                kind = use.kind if use else "free"
                d.rect(
                    px + (p - 1) * self.cell,
                    sy + 3,
                    self.cell - 1,
                    units * UNIT_H - 6,
                    COLORS[kind],
                    OUTLINES.get(kind, "none"),
                    title=f"{s.name} port {p}: {use.peer + ' (' + kind + ')' if use else 'free'}",
                )
        for n in rack.nodes:
            units = self.node_units.get(n.model, 1)
            ny = top + rack.row_of[n.u + units - 1] * UNIT_H
            lines = self._node_lines(n)
            d.rect(
                x + 22,
                ny + 1,
                rack_w - 24,
                units * UNIT_H - 2,
                COLORS[n.role],
                title=f"{n.hostname}: {n.role}, U{n.u}",
                rx=2,
            )
            for k, line in enumerate(lines):
                d.text(
                    x + 26,
                    ny + 12 + 13 * k,
                    line,
                    size=11,
                    weight="bold" if k == 0 and len(lines) > 1 else "normal",
                    fill="#ffffff",
                )


def render_diagrams(plan: Plan) -> dict[str, str]:
    """Per zone its diagram and the elevation of its switch racks; per rack of nodes its elevation."""
    files = {}
    sheet = _Elevation(plan)
    for z in plan.zones:
        files[f"exports/diagram-{z.name}.svg"] = zone_view(plan, z.name, sheet.uses).svg()
        files[f"exports/elevation-{z.name}.svg"] = elevation_view(plan, z.name, sheet).svg()
    for rack in sorted(sheet.nodes_in.keys() - sheet.switches_in.keys()):  # switch racks: in elevation-<zone>.svg
        files[f"exports/racks/{rack}.svg"] = rack_view(plan, rack, sheet).svg()
    return files
