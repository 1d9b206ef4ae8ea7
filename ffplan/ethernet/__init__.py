"""Ethernet (RoCEv2) as InfiniBand's sibling transport: link speeds and breakout, deterministic addressing, the eBGP
underlay with its ECMP next-hop sets, the lossless QoS model, and the SONiC and FRR views of a plan.

The physical steps (sizing, placement, cabling) are the InfiniBand ones; `ffplan.design.ethernet.design_ethernet`
adds what a routed Ethernet fabric needs on top of them (docs/ethernet.md).
"""
