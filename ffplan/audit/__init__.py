"""The as-built fabric against the plan: what `ibnetdiscover` prints, compared cable by cable.

Public surface: `audit(plan, topo) -> Audit` (the fabric read by `ffplan.fabric.discovery.read_fabric`), `Finding`,
`End`, `KINDS` (ffplan.audit.findings), and (ffplan.audit.output) the text, json and markdown forms and the
inventory fragment of discovered GUIDs.
"""

from ffplan.audit.findings import KINDS, Audit, End, Finding, audit

__all__ = ["KINDS", "Audit", "End", "Finding", "audit"]
