"""The zone diagram and the rack elevation: readable on a laptop screen (1,400 px), one bundle per leaf rack instead
of a line per leaf-spine pair, every leaf port drawn with what it carries, inter-zone links highlighted, no line
through a label, switches at their U positions. Checked on the view model (what the template prints) and the SVG."""

import re
from collections import Counter

import pytest

from ffplan.render.diagrams import COLORS, WIDTH, elevation_view, port_uses, zone_view


def _text_box(t) -> tuple[float, float, float, float]:
    width = len(t.text) * t.size * 0.62
    x0 = t.x - (width / 2 if t.anchor == "middle" else 0)
    return x0, t.y - t.size, x0 + width, t.y + 2


def _segments(line):
    points = [tuple(map(float, p.split(","))) for p in line.points.split()]
    return list(zip(points, points[1:]))


def _crosses(segment, box) -> bool:
    """Whether an axis-parallel segment passes through the inside of a box."""
    (x1, y1), (x2, y2) = segment
    bx0, by0, bx1, by1 = box
    if x1 == x2:
        return bx0 < x1 < bx1 and min(y1, y2) < by1 and max(y1, y2) > by0
    return by0 < y1 < by1 and min(x1, x2) < bx1 and max(x1, x2) > bx0


def test_ff2_zone_diagram_bundles_uplinks_per_leaf_rack(ff2_plan):
    view = zone_view(ff2_plan, "z1")
    assert view.width == WIDTH == 1400
    racks = {s.rack for s in ff2_plan.switches if s.zone == "z1" and s.tier == "leaf"}
    assert len(view.lines) == len(racks) == 4  # was 800 leaf-spine lines
    links = Counter(c.zone for c in ff2_plan.cables if c.kind == "leaf-spine")["z1"]
    badges = [int(t.text.split()[0]) for t in view.texts if t.on_line]
    assert sum(badges) == links == 800
    svg = view.svg()
    assert svg.count("<polyline") == 4 and 'width="1400"' in svg


def test_every_leaf_port_is_drawn_with_what_it_carries(ff2_plan):
    view = zone_view(ff2_plan, "z1")
    cells = {m.group(1, 2): r.fill for r in view.rects if (m := re.match(r"(z1-leaf\d+) port (\d+):", r.title))}
    leaves = [s for s in ff2_plan.switches if s.zone == "z1" and s.tier == "leaf"]
    down = next(z for z in ff2_plan.zones if z.name == "z1").down_ports
    assert len(cells) == len(leaves) * down
    for node in ff2_plan.nodes:
        for p in node.ports:
            if p.zone == "z1":
                assert cells[(p.leaf, str(p.leaf_port))] == COLORS[node.role]
    inter = [c for c in ff2_plan.cables if c.kind == "inter-zone"]
    for c in inter:
        assert cells[(c.a.device, str(c.a.port))] == COLORS["inter-zone"]
        assert any(c.label in t.text and t.fill == COLORS["inter-zone"] for t in view.texts)
    row = next(t.text for t in view.texts if t.text.startswith("C15") and t.fill == COLORS["inter-zone"])
    assert row == "C15 S4 I1"


@pytest.mark.parametrize("leaves_per_rack", [10, 3, 1])
def test_no_line_crosses_a_label_or_a_leaf_panel(ff2_plan, leaves_per_rack):
    # Fire-Flyer 2's four leaf racks fit one row; smaller racks wrap into rows whose bundles run in the gutters.
    switches = [
        s.model_copy(update={"rack": f"n{(s.index - 1) // leaves_per_rack:02d}"}) if s.tier == "leaf" else s
        for s in ff2_plan.switches
    ]
    view = zone_view(ff2_plan.model_copy(update={"switches": switches}), "z1")
    panels = [(r.x, r.y, r.x + r.w, r.y + r.h) for r in view.rects if r.fill == "#fafafa"]
    assert len(panels) == -(-40 // leaves_per_rack)
    assert max(b[2] for b in panels) <= WIDTH
    labels = [_text_box(t) for t in view.texts if not t.on_line]
    for line in view.lines:
        for segment in _segments(line):
            for box in labels + panels:
                assert not _crosses(segment, box), (line.title, segment, box)


def test_elevation_puts_switches_at_their_u_with_every_port(lab_plan):
    view = elevation_view(lab_plan, "za")
    uses = port_uses(lab_plan)
    switches = [s for s in lab_plan.switches if s.rack == "net1"]
    for s in switches:
        cells = [r for r in view.rects if r.title.startswith(f"{s.name} port ")]
        assert len(cells) == s.ports
        for r in cells:
            port = int(r.title.split()[2].rstrip(":"))
            use = uses[s.name].get(port)
            assert r.fill == COLORS[use.kind if use else "free"]
            assert (use.peer if use else "free") in r.title
    # top to bottom: U42 (za-spine01) down to U37 (za-leaf04), then one band for U1-36
    boxes = sorted((r.y, r.title.split(":")[0]) for r in view.rects if re.match(r"za-\w+: (spine|leaf), U\d+", r.title))
    assert [name for _, name in boxes] == [s.name for s in sorted(switches, key=lambda s: -s.u)]
    assert [y2 - y1 for (y1, _), (y2, _) in zip(boxes, boxes[1:])] == [16] * (len(boxes) - 1)
    assert any(t.text == "1-36  empty" for t in view.texts)
    assert "rack net1 (42 U)" in [t.text for t in view.texts]


def test_ff2_elevation_is_one_laptop_screen_wide_and_short(ff2_plan):
    view = elevation_view(ff2_plan, "z1")
    racks = [t.text for t in view.texts if t.text.startswith("rack ")]
    assert racks == [
        "rack n00-05 (42 U)",
        "rack n01-01 (42 U)",
        "rack n01-02 (42 U)",
        "rack n02-01 (42 U)",
        "rack n02-02 (42 U)",
    ]
    assert view.width == 1400 and view.height < 1000  # empty U folded: was 42 rows per rack
    assert max(r.x + r.w for r in view.rects) <= 1400


def test_rack_of_nodes_shows_each_node_at_its_u_with_its_leaf_ports(ff2_plan):
    from ffplan.render.diagrams import rack_view, render_diagrams

    storage = next(n for n in ff2_plan.nodes if n.role == "storage")
    view = rack_view(ff2_plan, storage.rack)
    texts = [t.text for t in view.texts]
    assert storage.hostname in texts  # a 2 U dual-homed server: its name, then both NICs on one line
    assert " | ".join(f"{p.nic} -> {p.leaf} port {p.leaf_port}" for p in storage.ports) in texts
    assert max(r.x + r.w for r in view.rects) <= view.width
    files = render_diagrams(ff2_plan)
    node_racks = {n.rack for n in ff2_plan.nodes} - {s.rack for s in ff2_plan.switches}
    assert {f"exports/racks/{r}.svg" for r in node_racks} == {f for f in files if f.startswith("exports/racks/")}
