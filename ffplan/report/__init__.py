"""Report stage: cost, power and performance of the Fire-Flyer design against a single three-layer fat-tree
and the catalog's reference node (DGX-A100, HGX-H800) on three-layer, rail-optimized and multi-plane fabrics
at equal GPU count, with the Fire-Flyer and DeepSeek-V3 papers' figures beside them.

Public surface: `resolve_catalog`, `build_report`, `EnergyOptions` (ffplan.report.cost), `render` and
`FORMATS` (ffplan.report.output), the report model (ffplan.report.model).
"""
