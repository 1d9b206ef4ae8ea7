"""QoS plan: traffic classes -> service level (SL) -> virtual lane (VL), VL arbitration and SL2VL tables per
OpenSM port class (default `qos_*`, CA ports `qos_ca_*`, switch external ports `qos_swe_*`, switch port 0
`qos_sw0_*`).

The Fire-Flyer paper says the four traffic classes (HFReduce, NCCL, 3FS storage, other) get different SLs mapped
to VLs "with configured proportions", but gives no numbers. The defaults below are ffplan's own choice, labelled
`source: ffplan default` in the plan (see docs/routing.md for the reasoning); an inventory's `traffic_classes`
replaces them (fields it leaves out come from the default of the same name) and is labelled `source: inventory`
when it sets any of sl, vl, weight, priority or carries (a class it only names or describes keeps `ffplan default`).

What each class carries (software, role pairs, unmatched traffic) is decided here, once, and recorded in the plan;
the OpenSM QoS policy and the host files read it from there and never look at a class's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Literal, Sequence

from ffplan.codes.design import QOS_NOT_BUILDABLE
from ffplan.diagnostics import Collector, StageError
from ffplan.inventory import LoadedInventory
from ffplan.inventory.models import Carries, Role, TrafficClass

if TYPE_CHECKING:  # lint imports this module for carries_of: it need not load the plan model (and numpy)
    from ffplan.plan.model import Plan, PortClass, PortClassQos, Qos, TrafficClassPlan

NUM_SLS = 16


@dataclass(frozen=True)
class DefaultClass:
    name: str
    sl: int
    vl: int
    weight: int  # VL arbitration weight in 64-byte units; multiples of 64 so one 4 KB packet fits one turn
    priority: Literal["high", "low"]
    description: str
    carries: Carries


# ffplan defaults, NOT from the paper. Weights: 192:192:128:64 gives the two collective libraries three
# eighths of a congested link each, storage a quarter, and everything else (IPoIB, SA, MPI control) an eighth;
# arbitration is work-conserving, so an idle class's share goes to the others. What each carries is stated here
# and in docs/routing.md: render and the host files read it from the plan, never from a class's name.
_TO_STORAGE = [(role, Role.STORAGE) for role in Role]
DEFAULT_CLASSES = (
    DefaultClass(
        "other",
        0,
        0,
        64,
        "low",
        "everything without its own class: IPoIB, SA queries, control traffic",
        Carries(software=["ucx"], unmatched=True),
    ),
    DefaultClass(
        "hfreduce",
        1,
        1,
        192,
        "low",
        "HFReduce all-reduce between nodes (gradient reduction)",
        Carries(software=["hfreduce"]),
    ),
    DefaultClass(
        "nccl",
        2,
        2,
        192,
        "low",
        "NCCL collectives and point-to-point (pipeline and expert parallelism)",
        Carries(software=["nccl"]),
    ),
    DefaultClass(
        "storage",
        3,
        3,
        128,
        "low",
        "3FS storage traffic (reads, writes, checkpoints)",
        Carries(software=["3fs"], roles=_TO_STORAGE),
    ),
)
DEFAULT_BY_NAME = {d.name: d for d in DEFAULT_CLASSES}


def default_classes(placement: str, has_storage: bool) -> tuple[DefaultClass, ...]:
    """The classes of an inventory without traffic_classes. Fire-Flyer's own software is not assumed on a
    rail-optimized (DGX SuperPOD-style) fabric: no HFReduce class, and no 3FS storage class unless storage nodes
    are on the fabric (the reference architecture puts storage on a fabric of its own); no class, no host file."""
    if placement != "rail-optimized":
        return DEFAULT_CLASSES
    dropped = {"hfreduce"} | (set() if has_storage else {"storage"})
    return tuple(d for d in DEFAULT_CLASSES if d.name not in dropped)


def carries_of(tc: TrafficClass) -> Carries | None:
    """What an inventory class carries: its own `carries`, else its default's; None for a class that says
    nothing and has no default (it serves only applications that ask for its QoS class by number)."""
    if tc.carries is not None:
        return tc.carries
    default = DEFAULT_BY_NAME.get(tc.name)
    return default.carries if default else None


def purpose_conflicts(classes: Sequence[tuple[str, Carries | None]]) -> Iterator[tuple[int, str, str, str]]:
    """(class index, `carries` field, message, hint) for each claim an earlier class already made: one software,
    one role pair (either order) and unmatched traffic each belong to exactly one class."""
    owner: dict[tuple, str] = {}
    for i, (name, carries) in enumerate(classes):
        if carries is None:
            continue
        claims: list[tuple[str, tuple[str, ...], str]] = [
            ("software", ("software", s), f"software '{s}'") for s in carries.software
        ]
        claims += [
            ("roles", ("roles", *sorted((a.value, b.value))), f"{a.value} <-> {b.value} traffic")
            for a, b in carries.roles
        ]
        claims += [("unmatched", ("unmatched",), "unmatched traffic")] if carries.unmatched else []
        for field, key, what in claims:
            if key in owner and owner[key] != name:
                yield (
                    i,
                    field,
                    f"traffic class '{name}' claims {what}, which class '{owner[key]}' already carries",
                    "each software, role pair and the unmatched traffic belong to one class: remove one claim",
                )
            owner.setdefault(key, name)


def design_qos(loaded: LoadedInventory, plan: Plan) -> Qos:
    from ffplan.plan.model import PortClassQos, Qos, TrafficClassPlan, VlArbEntry

    inv = loaded.inventory
    c = Collector(loaded.source.file, loaded.source.positions)
    switch_vls = next((m.data_vls for m in plan.switch_models if m.name == plan.fabric_switch_model), 8)
    nic_models = {d.model for n in inv.models.nodes.values() for d in n.devices if d.kind == "nic"}
    nic_vls = min((inv.models.nics[m].data_vls for m in nic_models if m in inv.models.nics), default=switch_vls)
    data_vls = min(switch_vls, nic_vls)
    defaults = {d.name: d for d in DEFAULT_CLASSES}
    classes: list[TrafficClassPlan] = []
    if inv.traffic_classes is None:
        has_storage = any(h.role is Role.STORAGE for h in loaded.resolved.hosts)
        for d in default_classes(inv.fabric.placement, has_storage):
            classes.append(
                TrafficClassPlan(
                    name=d.name,
                    sl=d.sl,
                    vl=d.vl,
                    weight=d.weight,
                    priority=d.priority,
                    source="ffplan default",
                    description=d.description,
                    carries=d.carries,
                )
            )
    else:
        for i, tc in enumerate(inv.traffic_classes):
            default = defaults.get(tc.name)
            path = ("traffic_classes", i)
            sl = tc.sl if tc.sl is not None else (default.sl if default else None)
            vl = tc.vl if tc.vl is not None else (default.vl if default else None)
            if sl is None:
                c.error(
                    QOS_NOT_BUILDABLE,
                    path + ("sl",),
                    f"traffic class '{tc.name}' has no SL and no ffplan default",
                    f"give it an SL (0-15); ffplan has defaults only for {', '.join(defaults)}",
                )
                continue
            if vl is None:
                vl = min(sl, data_vls - 1)
            weight = tc.weight if tc.weight is not None else (default.weight if default else 64)
            priority = tc.priority or (default.priority if default else "low")
            # a class the inventory only names (or describes) keeps ffplan's numbers and says so
            own = default is None or any(v is not None for v in (tc.sl, tc.vl, tc.weight, tc.priority, tc.carries))
            classes.append(
                TrafficClassPlan(
                    name=tc.name,
                    sl=sl,
                    vl=vl,
                    weight=weight,
                    priority=priority,
                    source="inventory" if own else "ffplan default",
                    description=tc.description or (default.description if default else ""),
                    carries=carries_of(tc) or Carries(),
                )
            )
        for i, field, message, hint in purpose_conflicts([(tc.name, carries_of(tc)) for tc in inv.traffic_classes]):
            c.error(QOS_NOT_BUILDABLE, ("traffic_classes", i, "carries", field), message, hint)
    _check(c, classes, data_vls, inv.traffic_classes is not None)
    if c.has_errors:
        raise StageError(c.items)
    sl2vl = [0] * NUM_SLS
    for planned in classes:
        sl2vl[planned.sl] = planned.vl
    vl_weight: dict[int, int] = {}
    vl_high: dict[int, bool] = {}
    for planned in classes:
        vl_weight[planned.vl] = max(vl_weight.get(planned.vl, 0), planned.weight)
        vl_high[planned.vl] = vl_high.get(planned.vl, False) or planned.priority == "high"
    high = [VlArbEntry(vl=vl, weight=w) for vl, w in sorted(vl_weight.items()) if vl_high[vl]]
    low = [VlArbEntry(vl=vl, weight=w) for vl, w in sorted(vl_weight.items()) if not vl_high[vl]]
    # high_limit: how much high-priority data (in 4 KB units) may go before one low-priority packet must be
    # allowed; 0 with no high-priority VLs, else 4 (16 KB): high classes stay fast, low ones never starve.
    high_limit = 4 if high else 0
    if not high:
        high = [VlArbEntry(vl=0, weight=0)]  # an empty high table: OpenSM needs a value, 0:0 means "none"
    if not low:
        low = [VlArbEntry(vl=0, weight=0)]
    used = max(vl_weight) + 1 if vl_weight else 1

    def port_class(hw_vls: int) -> PortClassQos:
        # the VLs to configure: the smallest operational-VL step (1, 2, 4, 8, 15) that holds every used VL,
        # within what the hardware of the port class supports
        step = next(n for n in (1, 2, 4, 8, 15) if n >= used)
        return PortClassQos(
            max_vls=min(step, hw_vls), high_limit=high_limit, vlarb_high=high, vlarb_low=low, sl2vl=sl2vl
        )

    ports: dict[PortClass, PortClassQos] = {
        "default": port_class(data_vls),
        "ca": port_class(nic_vls),
        "swe": port_class(switch_vls),
        "sw0": port_class(switch_vls),
    }
    classes.sort(key=lambda tc: (tc.sl, tc.name))
    return Qos(data_vls=data_vls, classes=classes, port_classes=ports)


def _check(c: Collector, classes: list[TrafficClassPlan], data_vls: int, from_inventory: bool) -> None:
    """What the design cannot build (lint reports the same ranges earlier, with more context)."""
    vl_of_sl: dict[int, tuple[int, str]] = {}
    for i, tc in enumerate(classes):
        path = ("traffic_classes", i) if from_inventory else ("traffic_classes",)
        if not 0 <= tc.sl < NUM_SLS:
            c.error(
                QOS_NOT_BUILDABLE, path + ("sl",), f"traffic class '{tc.name}' SL {tc.sl} is not 0-15", "use SL 0-15"
            )
        if not 0 <= tc.vl < data_vls:
            c.error(
                QOS_NOT_BUILDABLE,
                path + ("vl",),
                f"traffic class '{tc.name}' VL {tc.vl} is not a data VL of this fabric (VL0-VL{data_vls - 1})",
                f"use VL0-VL{data_vls - 1}",
            )
        if not 0 <= tc.weight <= 255:
            c.error(
                QOS_NOT_BUILDABLE,
                path + ("weight",),
                f"traffic class '{tc.name}' weight {tc.weight} is not 0-255",
                "use 0-255 (64-byte units)",
            )
        prev = vl_of_sl.get(tc.sl)
        if prev is not None and prev[0] != tc.vl:
            c.error(
                QOS_NOT_BUILDABLE,
                path + ("vl",),
                f"SL {tc.sl} maps to VL{tc.vl} here but to VL{prev[0]} in class '{prev[1]}'",
                "an SL maps to exactly one VL: give the classes different SLs or the same VL",
            )
        vl_of_sl.setdefault(tc.sl, (tc.vl, tc.name))
