"""Codes emitted after lint: by the designer (FF15x, FF6xx), the cost report (FF8xx), plan reading, output
folders and rendering (FF9xx). They are errors of a command, not lint findings, and are registered here so
that `ffplan rules` lists and `ffplan explain` documents every code ffplan can print."""

from __future__ import annotations

from ffplan.codes import analyze, audit, design, plan, render, report
from ffplan.diagnostics import Severity
from ffplan.lint.declare import stage_code

stage_code(
    design.PLACEMENT_INFEASIBLE,
    "design",
    explanation="""
    The placement ILP puts every NIC port and inter-zone link end on a free leaf down-port. When the ports
    outnumber the free leaf ports (with the balance, zone pins and dual homing), it has no solution; lint's
    FF101 usually names the budget first. With --time-limit the solver may also stop before it found any
    placement. Exit code 3.
    """,
    bad="""
    ffplan design inv.yaml -o out --time-limit 0.01   # stops before the first placement
    """,
    good="""
    ffplan design inv.yaml -o out                      # solves to optimality
    """,
)

stage_code(
    design.SOLVER_NOT_INSTALLED,
    "design",
    explanation="""
    HiGHS is an optional solver; pulp reaches it through the `highspy` package, which ffplan does not
    install. CBC (bundled with pulp) is the default and needs nothing. Exit code 2.
    """,
    bad="""
    ffplan design inv.yaml -o out --solver highs       # highspy not installed
    """,
    good="""
    pip install highspy && ffplan design inv.yaml -o out --solver highs
    """,
)

stage_code(
    design.ROLE_IMBALANCE,
    "design",
    explanation="""
    Static routing spreads traffic evenly only when each role has the same number of ports on every leaf
    (within one). When zone pins or counts make that impossible, the design stops with the best split it
    found and the even share it wanted, and exits 3; --allow-imbalance accepts the placement.
    """,
    bad="""
    groups:
      - {name: gpu, role: compute, model: gpu-node, count: 18, settings: {zone: za}}   # all in one zone
    """,
    good="""
    groups:
      - {name: gpu, role: compute, model: gpu-node, count: 18}   # the planner splits them over the zones
    """,
)

stage_code(
    design.RACK_FULL_FOR_SWITCHES,
    "design",
    explanation="""
    Switches go into the zone's leaf_racks and spine_racks from the top down, around the hosts already in
    those racks. When a rack has no free run of U for the next switch, the design stops (exit 3) naming the
    rack and the switch.
    """,
    bad="""
    racks: [{name: net1, row: 1, slot: 1, units: 4}]      # 12 switches do not fit in 4 U
    fabric: {zones: [{name: za, leaf_racks: [net1], spine_racks: [net1]}]}
    """,
    good="""
    racks: [{name: net1, row: 1, slot: 1}, {name: net2, row: 1, slot: 2}]
    fabric: {zones: [{name: za, leaf_racks: [net1], spine_racks: [net2]}]}
    """,
)

stage_code(
    design.RACK_POWER_FOR_SWITCHES,
    "design",
    explanation="""
    Switches go into their tier's racks an even share each; when a rack's peak draw (its hosts and the
    switches placed so far) plus the switch would exceed its power_kw or its cooling limit, the next rack
    of the list takes the switch. When no rack of the list has room in its budget, the design stops (exit
    3) naming the switch, the rack and its limit (FF215, FF216 check the racks lint can see).
    """,
    bad="""
    racks: [{name: net1, row: 1, slot: 1, power_kw: 0.5}]   # 12 switches of 60 W need 0.72 kW
    fabric: {zones: [{name: za, leaf_racks: [net1], spine_racks: [net1]}]}
    """,
    good="""
    racks: [{name: net1, row: 1, slot: 1, power_kw: 0.5}, {name: net2, row: 1, slot: 2, power_kw: 0.5}]
    fabric: {zones: [{name: za, leaf_racks: [net1, net2], spine_racks: [net2, net1]}]}
    """,
)

stage_code(
    design.CABLE_BEYOND_REACH,
    "design",
    explanation="""
    The floor model rounds each run up to a standard length, and an optical run takes the first medium of
    its speed that reaches it (ffplan/plan/optics.py, each figure with its source): EDR and HDR active
    optical cables to 100 m; NDR multimode twin-port transceivers to 50 m (OM4), single-mode 2xDR4 to 500 m;
    XDR single-mode to 500 m (an assumption). bom.csv lists each run's medium and the transceivers per cage
    of it. A run beyond every medium of the speed is still planned, but `ffplan design` warns (exit 0) with
    the cable, its length, its ends' racks and the reach it exceeds: move the racks closer or plan other optics.
    """,
    bad="""
    racks: [{name: net1, row: 1, slot: 1}, {name: r9, row: 45, slot: 1}]   # 108 m of tray between them
    """,
    good="""
    racks: [{name: net1, row: 1, slot: 1}, {name: r9, row: 5, slot: 1}]
    """,
    severity=Severity.WARNING,
)

stage_code(
    design.LID_SPACE_EXHAUSTED,
    "design",
    explanation="""
    Every switch and every CA port takes one LID from the unicast range 1-0xBFFF. Lint's LID-space rule
    refuses an inventory that cannot fit; the designer stops too when re-planning with --previous leaves no
    free LID for a new port (the old plan's LIDs are kept). Exit code 3.
    """,
    bad="""
    ffplan design big.yaml -o out --previous old   # old plan's LIDs reach 0xBFFF, new ports need more
    """,
    good="""
    ffplan design big.yaml -o out                  # a fresh design numbers LIDs from 1
    """,
)

stage_code(
    design.PINNED_NOT_RENDERABLE,
    "design",
    explanation="""
    `fabric.roce.path_selection: pinned` renders each switch's choice of one next hop per host /31 as BGP
    policy (docs/ethernet.md, "Rendering pinned paths"): a per-switch, per-prefix table with one entry. The
    pinning rule divides the destination port's rank by the fan-out at every hop, so on a three-tier tree a pod
    spine would need one choice as the second hop and another as the fourth, and a spine that leaves with
    different numbers of next switches reach would need two as well. The designer refuses such a plan (exit 3);
    `ffplan analyze --paths pinned` still compares pinned paths on it.
    """,
    bad="""
    fabric: {topology: three-layer-fat-tree, roce: {path_selection: pinned}}
    """,
    good="""
    fabric: {topology: two-layer-fat-tree, roce: {path_selection: pinned}}
    """,
)

stage_code(
    design.UNKNOWN_FAILED_LINK,
    "design",
    explanation="""
    A failed link names a cable by its label (as in cables.csv), a switch, or a switch port as
    switch[port]. A name that matches none of them would silently route over the cable it was meant to
    avoid, so the design stops.
    """,
    bad="""
    ffplan design inventories/lab.yaml -o out --exclude-link za-leaf01-p99
    """,
    good="""
    ffplan design inventories/lab.yaml -o out --exclude-link za-leaf01-p07
    """,
)

stage_code(
    design.ROUTING_DEADLOCK,
    "design",
    explanation="""
    Every planned route climbs then descends (up*/down*), so the channel dependency graph of the routes
    is acyclic and the fabric cannot deadlock on credits. The designer proves it before writing the plan;
    a cycle means a routing bug or failed links that force a down-up turn, and no plan is written.
    """,
    bad="""
    # routes where some packet goes leaf -> spine -> leaf -> spine: a down-then-up turn
    z1-leaf01: {lid 7: port 21}   z1-spine01: {lid 7: port 2}   z1-leaf02: {lid 7: port 22}
    """,
    good="""
    ffplan design inv.yaml -o out     # every route up*/down*, the proof is in the plan (routing.deadlock)
    """,
)

stage_code(
    design.QOS_NOT_BUILDABLE,
    "design",
    explanation="""
    The designer turns traffic classes into SL2VL and VL arbitration tables. A class without an SL and
    no ffplan default to take it from, an SL or VL out of range for the hardware, an SL mapped to two VLs,
    or two classes claiming one software, role pair or the unmatched traffic cannot be built. Lint reports
    the same cases earlier as FF401-FF406 with more context.
    """,
    bad="""
    traffic_classes:
      - {name: offset-sync}            # not a default class, no SL
    """,
    good="""
    traffic_classes:
      - {name: offset-sync, sl: 4}
    """,
)

stage_code(
    design.ROUTING_UNSUPPORTED,
    "design",
    explanation="""
    Three-layer trees are routed as pure fat trees (up*/down*, docs/routing.md section 5); the router for zones
    joined by inter-zone links is Fire-Flyer 2's two-layer one. The designer refuses the mix instead of writing a
    plan without forwarding tables.
    """,
    bad="""
    fabric: {topology: three-layer-fat-tree, inter_zone_links: [...], ...}
    """,
    good="""
    fabric: {topology: three-layer-fat-tree, planes: [...], ...}
    """,
)

stage_code(
    design.SWITCH_ROUTE_LOOP,
    "design",
    explanation="""
    Routes between switches (subnet management, VL15) are not in the channel dependency graph, because VL15
    has no credit flow control, but they must still arrive: the designer follows every switch's route to
    every switch LID and refuses a plan where one comes back to a switch it already passed. It can only
    come from a routing bug, typically under failed links; the plan is not written.
    """,
    bad="""
    z1-leaf01 -> z1-spine01 -> z1-leaf02 -> z1-spine01 ...   # the route to z1-spine02's LID never ends
    """,
    good="""
    z1-leaf01 -> z1-spine01 -> z1-leaf02 -> z1-spine02       # every switch LID reached, no switch twice
    """,
)

stage_code(
    report.BAD_CATALOG,
    "report cost",
    explanation="""
    `--catalog FILE` and the inventory's `catalog:` block override prices and power of the built-in
    preset. Keys are `preset`, `currency`, `prices`, `power_w` and `cable`; values are numbers.
    """,
    bad="""
    prices: {QM8700: cheap}
    """,
    good="""
    prices: {QM8700: 2.71}
    """,
)

stage_code(
    report.UNKNOWN_CATALOG_NAME,
    "report cost",
    explanation="""
    Overrides must name a node or switch model of the plan or the preset, or one of the cable keys
    (dac_max_m, dac_base, dac_per_m, aoc_base, aoc_per_m, ...). A misspelt name would otherwise be ignored
    and the report would silently use the preset's number.
    """,
    bad="""
    prices: {QM8770: 3.0}
    """,
    good="""
    prices: {QM8700: 3.0}
    """,
)

stage_code(
    report.UNPRICED_MODEL,
    "report cost",
    explanation="""
    The cost report prices every switch and compute node model of the plan from the chosen catalog
    (--preset, the inventory's catalog.preset, else `paper`). A model it does not list, and no per-GPU price
    of its GPU model, is unpriced: the report is still written, with every total that needs the figure
    shown as n/a (never a partial sum), the figure named under "Unpriced", and this warning on stderr,
    located at the model. Lint cannot know the catalog a report will be asked for, so it does not check.
    """,
    bad="""
    models: {switches: {LAB8: {ports: 8}}}      # the `paper` catalog has no LAB8
    """,
    good="""
    catalog: {prices: {LAB8: 1.0}, power_w: {LAB8: 60}}
    """,
    severity=Severity.WARNING,
)

stage_code(
    report.PLAN_WITHOUT_NODE_MODELS,
    "report cost",
    explanation="""
    The cost report reads GPUs, power and rack units of each node model from the plan's `node_models`.
    Plans of older ffplan versions lack them; re-running `ffplan design` adds them.
    """,
    bad="""
    node_models: []        # a plan from before node models were recorded
    """,
    good="""
    ffplan design inventories/fire-flyer-2.yaml -o out/fire-flyer-2/plan && ffplan report cost out/fire-flyer-2/plan/plan.yaml
    """,
)

stage_code(
    report.COMPARISON_NOT_BUILDABLE,
    "report cost",
    explanation="""
    `ffplan report cost --compare` takes fire-flyer, pcie-three-layer (both need an inventory or plan as INPUT),
    ft3, rail-optimized and mpft (the catalog's reference node). A design that the switch radix cannot build
    at the GPU count (a three-layer tree holds at most k^3/4 endpoints; a plane of mpft too) is refused with
    the limit. Exit code 2.
    """,
    bad="""
    ffplan report cost --gpus 20000 --compare ft3        # paper preset: 40-port QM8700, at most 16,000
    """,
    good="""
    ffplan report cost --gpus 16000 --compare ft3,mpft
    """,
)

stage_code(
    plan.NOT_A_PLAN,
    "render, report, analyze, verify, diff",
    explanation="""
    Every stage after design reads the plan.yaml that `ffplan design` wrote. A file that is not valid YAML
    (truncated, edited by hand) or has no `plan_version` is refused with its line. Exit code 2.
    """,
    bad="""
    ffplan render inventories/lab.yaml -o out       # an inventory, not a plan
    """,
    good="""
    ffplan render out/lab/plan.yaml -o out/lab-files
    """,
)

stage_code(
    plan.UNSUPPORTED_PLAN_VERSION,
    "render, report, analyze, verify, diff",
    explanation="""
    The plan format is versioned; a plan of another version may hold fields this ffplan would misread.
    Re-run `ffplan design` with this version. Exit code 2.
    """,
    bad="""
    plan_version: 99
    """,
    good="""
    plan_version: 1
    """,
)

stage_code(
    plan.PLAN_SCHEMA_MISMATCH,
    "render, report, analyze, verify, diff",
    explanation="""
    A plan is validated against its schema when it is read: a missing, extra or mistyped field means it
    was edited or damaged, and no later stage should trust it. Exit code 2.
    """,
    bad="""
    switches:
      - {name: z1-leaf01, lid: "one"}
    """,
    good="""
    ffplan design inventories/fire-flyer-2.yaml -o out/fire-flyer-2/plan    # a fresh plan
    """,
)

stage_code(
    render.OUTPUT_FOLDER_REFUSED,
    "design, render",
    explanation="""
    Output folders are swapped in one step. A folder without ffplan's manifest may hold someone's work and is
    never replaced; one with files not in its manifest, files changed since written, or the other command's
    output is refused unless --force is given, which replaces only what ffplan wrote and keeps the rest. A
    folder that contains the input or the current directory, a symbolic link, or a path that is a file is
    always refused (docs/outputs.md).
    """,
    bad="""
    ffplan render out/fire-flyer-2/plan -o ~/Documents
    """,
    good="""
    ffplan render out/fire-flyer-2/plan -o out/fire-flyer-2/files
    """,
)

stage_code(
    analyze.SWEEP_INPUT_REFUSED,
    "analyze --sweep",
    explanation="""
    `ffplan analyze --sweep --results FILE` appends every finished case to FILE and skips the cases it holds when
    run again. A file whose first line does not name this plan's plan.yaml (its SHA-256: the plan was designed
    again since) or with a line that is not a case ffplan wrote is refused with its line, never half-used. A line
    cut short by a stopped run is not an error: that case is measured again. `--scheduler ADDRESS` that does not
    answer within 20 s is refused too. Exit code 2.
    """,
    bad="""
    ffplan design inv.yaml -o out/plan --force && ffplan analyze out/plan --sweep --results old-sweep.jsonl
    """,
    good="""
    ffplan analyze out/plan --sweep --results sweep-$(sha256sum < out/plan/plan.yaml | cut -c1-12).jsonl
    """,
)

stage_code(
    plan.OPTION_VALUE_NOT_IN_PLAN,
    "verify, reroute, audit, analyze",
    explanation="""
    `ffplan verify --zone` boots one zone of the plan, `--plane` one plane. A zone or plane the plan does not
    have is a mistake in the command line, reported with the plan's zones or planes and exit code 2. Each
    plane is a subnet of its own, so `reroute` and `audit` of a plan with several planes need `--plane`.
    `ffplan analyze --failed` on a RoCE plan names a cable label, a switch or switch[port] of the plan.
    """,
    bad="""
    ffplan verify out/fire-flyer-2/files --zone z3        # Fire-Flyer 2 has z1 and z2
    """,
    good="""
    ffplan verify out/fire-flyer-2/files --zone z1
    """,
)

stage_code(
    render.PLAN_VALUE_NOT_RENDERABLE,
    "render, verify",
    explanation="""
    OpenSM's files have no quoting: a node name with '#', '@' or a quote, or a GUID that is not 0x and 16
    hex digits, would change the meaning of the file. Plans without routing tables or QoS cannot give
    OpenSM its configuration either. The plan was edited or written by an older ffplan. Kubernetes label
    values hold at most 63 characters and end in a letter or digit: ffplan mends a name that does not
    (docs/kubernetes.md), and refuses two names that would become the same label.
    """,
    bad="""
    switches:
      - {name: "z1-leaf01 # comment", node_guid: "0x1"}
    """,
    good="""
    switches:
      - {name: z1-leaf01, node_guid: "0x0002c90000010001"}
    """,
)

stage_code(
    audit.FABRIC_NOT_IBNETDISCOVER_OUTPUT,
    "audit",
    explanation="""
    `ffplan audit PLAN FABRIC` and `ffplan reroute PLAN --fabric FABRIC` read the text that `ibnetdiscover`
    prints for the live subnet. A file that is not that text (an iblinkinfo dump, a binary cache from
    `ibnetdiscover --cache`), or not the whole, consistent text of one fabric (a copy cut short, two dumps merged,
    a record forged with another node's GUID, numbers longer than ibnetdiscover prints, control characters) is
    refused at the first line that shows it, with exit code 2; reroute writes nothing. docs/audit.md lists each case.
    """,
    bad="""
    ibnetdiscover --cache fabric.cache && ffplan audit out/plan fabric.cache
    """,
    good="""
    ibnetdiscover > fabric.txt && ffplan audit out/plan fabric.txt
    """,
)
