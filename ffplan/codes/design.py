"""FF15x and FF6xx: what `ffplan design` refuses after lint (placement, racks, LIDs, routing, QoS)."""

from ffplan.codes.code import Code

PLACEMENT_INFEASIBLE = Code(
    "FF150", "placement-infeasible", "the placement solver found no placement (or none within --time-limit)"
)
SOLVER_NOT_INSTALLED = Code("FF151", "solver-not-installed", "`--solver highs` without the highspy package")
ROLE_IMBALANCE = Code("FF152", "role-imbalance", "a role cannot be spread within one port per leaf")
RACK_FULL_FOR_SWITCHES = Code(
    "FF153", "rack-full-for-switches", "a switch rack has no rack units left for the switches of its zone"
)
LID_SPACE_EXHAUSTED = Code(
    "FF154", "lid-space-exhausted", "the design needs more LIDs than a subnet's 49,151 unicast LIDs"
)
RACK_POWER_FOR_SWITCHES = Code(
    "FF155", "rack-power-for-switches", "no switch rack of a tier has power budget or cooling left for the next switch"
)
CABLE_BEYOND_REACH = Code(
    "FF156", "cable-beyond-reach", "an optical run is longer than every medium of the fabric's speed reaches"
)
PINNED_NOT_RENDERABLE = Code(
    "FF157",
    "pinned-not-renderable",
    "pinned paths (fabric.roce.path_selection: pinned) on a three-tier RoCE fabric or one a switch cannot pin",
)
UNKNOWN_FAILED_LINK = Code(
    "FF601",
    "unknown-failed-link",
    "a failed link (--exclude-link or fabric.failed_links) is not a cable or switch of the plan",
)
ROUTING_DEADLOCK = Code(
    "FF602", "routing-deadlock", "the routes have a credit loop (a cycle in the channel dependency graph)"
)
QOS_NOT_BUILDABLE = Code(
    "FF603", "qos-not-buildable", "the traffic classes cannot be built on this fabric (SL, VL, weight or purpose)"
)
SWITCH_ROUTE_LOOP = Code(
    "FF604", "switch-route-loop", "a switch-to-switch route loops (a LID is never reached from some switch)"
)
ROUTING_UNSUPPORTED = Code(
    "FF605", "routing-unsupported", "ffplan cannot route three-layer trees joined by inter-zone links"
)
