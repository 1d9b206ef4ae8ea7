"""FF4xx: QoS. Service levels, virtual lanes and arbitration weights must be what InfiniBand hardware takes."""

from __future__ import annotations

from typing import Iterator

from ffplan.codes import lint as codes
from ffplan.design.qos import carries_of, purpose_conflicts
from ffplan.diagnostics import Severity, duplicates
from ffplan.inventory.models import TrafficClass
from ffplan.lint.context import LintContext
from ffplan.lint.helpers import out_of_range
from ffplan.lint.declare import Finding, rule

MANAGEMENT_VL = 15


def _traffic_classes(ctx: LintContext) -> Iterator[tuple[int, TrafficClass]]:
    return enumerate(ctx.inventory.traffic_classes or [])


def _data_vl_limit(ctx: LintContext) -> tuple[int, str] | None:
    """The fewest data VLs among the fabric's switch model and the NIC models in use, and who has them."""
    limits = []
    if ctx.switch_model is not None:
        limits.append((ctx.switch_model.data_vls, f"switch model '{ctx.inventory.fabric.switch_model}'"))
    for name in ctx.used_nic_models:
        if (nic := ctx.inventory.models.nics.get(name)) is not None:
            limits.append((nic.data_vls, f"NIC model '{name}'"))
    return min(limits, key=lambda limit: limit[0]) if limits else None


@rule(
    codes.SL_OUT_OF_RANGE,
    Severity.ERROR,
    bad="""
    traffic_classes:
      - {name: nccl, sl: 16}
    """,
    good="""
    traffic_classes:
      - {name: nccl, sl: 1}
    """,
)
def sl_out_of_range(ctx: LintContext) -> Iterator[Finding]:
    """
    An InfiniBand service level is a 4-bit field in the packet's local route header: 0-15. OpenSM's
    SL-to-VL tables have exactly 16 entries, one per SL.
    """
    for i, tc in _traffic_classes(ctx):
        if finding := out_of_range(
            ("traffic_classes", i, "sl"),
            f"traffic class '{tc.name}' SL",
            tc.sl,
            0,
            15,
            "service levels are 4 bits: use 0-15",
        ):
            yield finding


@rule(
    codes.VL_INVALID,
    Severity.ERROR,
    bad="""
    # QM8700 and CX6 support 8 data VLs: VL0-VL7
    traffic_classes:
      - {name: storage, sl: 2, vl: 8}
    """,
    good="""
    traffic_classes:
      - {name: storage, sl: 2, vl: 2}
    """,
)
def vl_invalid(ctx: LintContext) -> Iterator[Finding]:
    """
    An SL maps to a data virtual lane. Switches and NICs support a number of data VLs (`data_vls`,
    VL0 to VLn-1, typically 8 on HDR hardware); a VL at or beyond the smallest such number in the fabric
    does not exist on some port and OpenSM would fold it onto VL0. VL15 is reserved for subnet
    management packets and never carries data.
    """
    limit = _data_vl_limit(ctx)
    for i, tc in _traffic_classes(ctx):
        path = ("traffic_classes", i, "vl")
        if tc.vl is None:
            continue
        if tc.vl == MANAGEMENT_VL:
            yield Finding(
                path,
                f"traffic class '{tc.name}' uses VL15, which is reserved for subnet management",
                "use a data VL (VL0 up to the data VLs of the hardware)",
            )
        elif tc.vl < 0:
            yield Finding(path, f"traffic class '{tc.name}' VL {tc.vl} is negative", "VLs count from 0")
        elif limit is not None and tc.vl >= limit[0]:
            yield Finding(
                path,
                f"traffic class '{tc.name}' uses VL{tc.vl}, but {limit[1]} supports "
                f"{limit[0]} data VLs (VL0-VL{limit[0] - 1})",
                f"use VL0-VL{limit[0] - 1}, or models with more data_vls",
            )


@rule(
    codes.WEIGHT_OUT_OF_RANGE,
    Severity.ERROR,
    bad="""
    traffic_classes:
      - {name: hfreduce, sl: 0, vl: 0, weight: 300}
    """,
    good="""
    traffic_classes:
      - {name: hfreduce, sl: 0, vl: 0, weight: 255}
    """,
)
def weight_out_of_range(ctx: LintContext) -> Iterator[Finding]:
    """
    VL arbitration tables give each VL a weight: an 8-bit count of 64-byte units it may send before the
    next VL's turn, so 0-255 (0 skips the entry). OpenSM rejects the whole `qos_*_vlarb` line otherwise.
    """
    for i, tc in _traffic_classes(ctx):
        if finding := out_of_range(
            ("traffic_classes", i, "weight"),
            f"traffic class '{tc.name}' weight",
            tc.weight,
            0,
            255,
            "weights are 8 bits (units of 64 bytes): use 0-255",
        ):
            yield finding


@rule(
    codes.DUPLICATE_SL,
    Severity.WARNING,
    bad="""
    traffic_classes:
      - {name: hfreduce, sl: 1}
      - {name: nccl, sl: 1}
    """,
    good="""
    traffic_classes:
      - {name: hfreduce, sl: 0}
      - {name: nccl, sl: 1}
    """,
)
def duplicate_sl(ctx: LintContext) -> Iterator[Finding]:
    """
    Traffic classes exist to separate traffic onto their own VLs (Fire-Flyer 2 keeps HFReduce, NCCL and
    storage apart). Two classes on one SL share everything, so the split is lost. This is a warning
    because merging two classes on purpose is legitimate.
    """
    entries = ((tc.sl, ("traffic_classes", i, "sl")) for i, tc in _traffic_classes(ctx) if tc.sl is not None)
    for sl, path, first in duplicates(entries):
        yield Finding(
            path,
            f"SL {sl} is also used by {ctx.where(first)}: the two classes share their VL",
            "give each traffic class its own SL, or merge the classes",
        )


@rule(
    codes.TRAFFIC_CLASS_WITHOUT_PURPOSE,
    Severity.WARNING,
    bad="""
    traffic_classes:
      - {name: offset-sync, sl: 4}
    """,
    good="""
    traffic_classes:
      - {name: offset-sync, sl: 4, carries: {roles: [[compute, management]]}}
    """,
)
def traffic_class_without_purpose(ctx: LintContext) -> Iterator[Finding]:
    """
    ffplan never guesses a class's purpose from its name (a class named `offset-sync` is not storage
    traffic because its name contains "fs"). The defaults `other`, `hfreduce`, `nccl` and `storage`
    carry what docs/routing.md states; any other class carries only what its `carries:` names: the
    software whose host files get its SL (`nccl`, `hfreduce`, `ucx`, `3fs`), the role pairs whose
    PathRecord queries OpenSM answers with it, or the unmatched traffic. Without `carries:` the class
    serves only applications that ask for its QoS class by number; write `carries: {}` if that is meant.
    """
    for i, tc in _traffic_classes(ctx):
        if carries_of(tc) is None:
            yield Finding(
                ("traffic_classes", i),
                f"traffic class '{tc.name}' does not say what it carries: it gets only "
                "applications that ask for its QoS class by number",
                "add `carries: {software: [...], roles: [[compute, storage]]}` (or `carries: {}` if that is meant)",
            )


@rule(
    codes.TRAFFIC_CLASS_PURPOSE_CONFLICT,
    Severity.ERROR,
    bad="""
    traffic_classes:
      - {name: nccl, sl: 2}
      - {name: collectives, sl: 5, carries: {software: [nccl]}}   # nccl already carries NCCL
    """,
    good="""
    traffic_classes:
      - {name: nccl, sl: 2, carries: {software: []}}
      - {name: collectives, sl: 5, carries: {software: [nccl]}}
    """,
)
def traffic_class_purpose_conflict(ctx: LintContext) -> Iterator[Finding]:
    """
    A piece of software reads one SL, a PathRecord query gets one answer, and OpenSM's DEFAULT level is
    one class: a second class claiming the same would be ignored by one consumer and used by another.
    Default classes claim their built-in purposes (docs/routing.md) unless they set `carries:`.
    """
    classes = [(tc.name, carries_of(tc)) for tc in ctx.inventory.traffic_classes or []]
    for i, field, message, hint in purpose_conflicts(classes):
        yield Finding(("traffic_classes", i, "carries", field), message, hint)
