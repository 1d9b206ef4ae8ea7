"""The eBGP underlay of RFC 7938: private 4-byte ASNs (the spines of a plane share one, each leaf has its own, so no
allowas-in is needed), and the ECMP next-hop sets the plan expects every switch's FIB to hold."""

from __future__ import annotations

from ffplan.inventory.models import PRIVATE_ASN_FIRST, PRIVATE_ASN_LAST, RoceBgp


def spine_asn(bgp: RoceBgp, plane_index: int) -> int:
    return bgp.spine_asn + plane_index


def leaf_asn(bgp: RoceBgp, leaf_index: int) -> int:
    return bgp.leaf_asn_base + leaf_index


def asn_problems(bgp: RoceBgp, planes: int, leaves: int) -> list[tuple[str, str, str]]:
    """(field, message, hint) for ASN ranges outside the private 4-byte range or overlapping each other."""
    found = []
    spines = (bgp.spine_asn, bgp.spine_asn + planes - 1)
    leaf_range = (bgp.leaf_asn_base, bgp.leaf_asn_base + max(leaves, 1) - 1)
    for field, (low, high) in (("spine_asn", spines), ("leaf_asn_base", leaf_range)):
        if low < PRIVATE_ASN_FIRST or high > PRIVATE_ASN_LAST:
            found.append((field, f"ASNs {low}-{high} leave the private 4-byte range {PRIVATE_ASN_FIRST}-{PRIVATE_ASN_LAST} "
                          "(RFC 6996)", f"start at or after {PRIVATE_ASN_FIRST} and end by {PRIVATE_ASN_LAST}"))
    if spines[0] <= leaf_range[1] and leaf_range[0] <= spines[1]:
        found.append(("leaf_asn_base", f"leaf ASNs {leaf_range[0]}-{leaf_range[1]} collide with the spine ASNs "
                      f"{spines[0]}-{spines[1]}: a leaf would share an ASN with the spines and drop their routes",
                      f"start the leaves at {spines[1] + 1} or later"))
    return found
