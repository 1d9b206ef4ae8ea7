"""Analyze stage: flows per link for traffic patterns over a plan's routes (or OpenSM's own tables).

Public surface: `analyze(plan, patterns, ...) -> list[PatternResult]` (ffplan.analyze.loads), `PATTERNS`,
`read_lfts`. See docs/routing.md for the patterns and the lower bounds.
"""

from ffplan.analyze.loads import LinkStat, PatternResult, analyze, plan_tables, topology_for
from ffplan.analyze.opensm import OpenSmTables, read_lfts
from ffplan.analyze.patterns import PATTERNS

__all__ = [
    "PATTERNS",
    "LinkStat",
    "OpenSmTables",
    "PatternResult",
    "analyze",
    "plan_tables",
    "read_lfts",
    "topology_for",
]
