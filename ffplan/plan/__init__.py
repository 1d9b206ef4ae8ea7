"""Plan stage: the Plan model and its canonical on-disk form (plan.yaml).

Public surface: `Plan`, `PLAN_VERSION`, `dump_plan`, `load_plan`, `read_plan` (the plan and its text); `ffplan.plan.topology` builds
the graph of a plan's fabric (switches, links, CA ports) that routing, analyze, verify and reroute share.
"""

from ffplan.plan.io import dump_plan, load_plan, read_plan
from ffplan.plan.model import PLAN_VERSION, Plan

__all__ = ["PLAN_VERSION", "Plan", "dump_plan", "load_plan", "read_plan"]
