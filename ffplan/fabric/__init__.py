"""The middle floor: a fabric (the plan's, or one discovered on the wire) as a switch graph every stage shares.

- `items`: the one failed-item grammar and parser (cable label, switch name, `switch[port]`).
- `discovery`: the one `ibnetdiscover` parser and the GUID rule.
- `lft`: the one reader of LFT dumps (`dump_fts`, OpenSM's `opensm-lfts.dump`, ffplan's `lfts.dump`).
- `arrays`: the one array form of a fabric (per switch and port: the next switch and the channel), built from a plan's
  topology or a discovered fabric, and forwarding tables as arrays.
- `walk`: the one vectorised walk over those arrays (hops, reached, where it ended, the channels it used).
- `deadlock`, `reach`: the deadlock proof and the reach checks over the tables.

An InfiniBand LFT is the single-next-hop case of a forwarding table: one port per (switch, destination). Next-hop
sets (Ethernet ECMP) will be a second table form beside it, walked by the same array form.

This module imports nothing, so the inventory's models can use `items` without pulling the plan in.
"""
