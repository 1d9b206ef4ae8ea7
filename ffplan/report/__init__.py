"""Report stage: cost, power and performance of the Fire-Flyer design against a single three-layer fat-tree
and a DGX-A100 cluster at equal GPU count.

Public surface: `resolve_catalog`, `build_report`, `EnergyOptions` (ffplan.report.cost), `render` and
`FORMATS` (ffplan.report.output), the report model (ffplan.report.model).
"""
