"""The eBGP underlay of RFC 7938: private 4-byte ASNs (the top tier of a plane shares one: its spines, or a three-tier
tree's super-spines; the spines of each pod of a three-tier tree share one; each leaf has its own, so no allowas-in
is needed), and the ECMP next-hop sets the plan expects every switch's FIB to hold."""

from __future__ import annotations

from ffplan.inventory.models import PRIVATE_ASN_FIRST, PRIVATE_ASN_LAST, RoceBgp


def spine_asn(bgp: RoceBgp, plane_index: int) -> int:
    """The ASN of a plane's top tier: its spines (two tiers) or its super-spines (three tiers)."""
    return bgp.spine_asn + plane_index


def pod_asn(bgp: RoceBgp, pod_index: int) -> int:
    """The ASN of the spines of a three-tier tree's pod (0-based over every plane's pods, in order)."""
    return bgp.pod_asn_base + pod_index


def leaf_asn(bgp: RoceBgp, leaf_index: int) -> int:
    return bgp.leaf_asn_base + leaf_index


def asn_problems(bgp: RoceBgp, planes: int, leaves: int, pods: int = 0) -> list[tuple[str, str, str]]:
    """(field, message, hint) for ASN ranges outside the private 4-byte range or overlapping each other; `pods`:
    the pods of every plane of a three-tier fabric (0 for two tiers)."""
    found = []
    ranges = {
        "spine_asn": ("the top tier's", (bgp.spine_asn, bgp.spine_asn + planes - 1)),
        "leaf_asn_base": ("leaf", (bgp.leaf_asn_base, bgp.leaf_asn_base + max(leaves, 1) - 1)),
    }
    if pods:
        ranges["pod_asn_base"] = ("pod spine", (bgp.pod_asn_base, bgp.pod_asn_base + pods - 1))
    for field, (_, (low, high)) in ranges.items():
        if low < PRIVATE_ASN_FIRST or high > PRIVATE_ASN_LAST:
            found.append(
                (
                    field,
                    f"ASNs {low}-{high} leave the private 4-byte range {PRIVATE_ASN_FIRST}-{PRIVATE_ASN_LAST} "
                    "(RFC 6996)",
                    f"start at or after {PRIVATE_ASN_FIRST} and end by {PRIVATE_ASN_LAST}",
                )
            )
    spines = ranges["spine_asn"][1]
    leaf_range = ranges["leaf_asn_base"][1]
    if spines[0] <= leaf_range[1] and leaf_range[0] <= spines[1]:
        found.append(
            (
                "leaf_asn_base",
                f"leaf ASNs {leaf_range[0]}-{leaf_range[1]} collide with the spine ASNs "
                f"{spines[0]}-{spines[1]}: a leaf would share an ASN with the spines and drop their routes",
                f"start the leaves at {spines[1] + 1} or later",
            )
        )
    if pods:
        low, high = ranges["pod_asn_base"][1]
        for other in ("spine_asn", "leaf_asn_base"):
            what, (o_low, o_high) = ranges[other]
            if low <= o_high and o_low <= high:
                found.append(
                    (
                        "pod_asn_base",
                        f"pod spine ASNs {low}-{high} collide with the {what} ASNs {o_low}-{o_high}: "
                        "two tiers would share an ASN and drop each other's routes",
                        f"move pod_asn_base to a free range of {pods} ASNs",
                    )
                )
    return found
