"""Report stage: cost, power and performance of the plan's design (Fire-Flyer zones, planes, a three-layer
tree) against a single three-layer fat-tree and 8-NIC nodes (the catalog's DGX-A100 or HGX-H800, or the plan's
own) on three-layer, rail-optimized and multi-plane fabrics at equal GPU count, with the Fire-Flyer and
DeepSeek-V3 papers' figures beside them.

Public surface: `resolve_catalog`, `build_report`, `EnergyOptions` (ffplan.report.cost), `render` and
`FORMATS` (ffplan.report.output), the report model (ffplan.report.model).
"""
