"""Verify stage for RoCE plans: the planned Ethernet fabric booted in Linux network namespaces with the real FRR.

Public entry: `ffplan.verify_ethernet.run.verify_ethernet(target, ...) -> Report` (the report of ffplan.verify). Its
parts: `fabric` (what the plan says: namespaces, veth pairs, sessions, FIBs, pings, reduced next-hop sets after a
failure), `boot` (the running fabric and its read-backs), `netns` (anonymous namespaces and the processes in them),
`reaper` (kills what is left when ffplan dies), `failures` (a cable and a switch down, reconvergence timed).
"""
