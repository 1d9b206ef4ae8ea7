"""Report stage: cost, power and performance of the plan's design (Fire-Flyer zones, planes, a three-layer
tree) against a single three-layer fat-tree and 8-NIC nodes (the catalog's DGX-A100 or HGX-H800, or the plan's
own) on three-layer, rail-optimized and multi-plane fabrics at equal GPU count, with the Fire-Flyer and
DeepSeek-V3 papers' figures beside them.

Public surface: `resolve_catalog` (ffplan.report.catalog: the catalog input), `EnergyOptions` (ffplan.report.pricing),
`build_report` (ffplan.report.cost: the report, with the papers' checks of ffplan.report.checks), `render` and
`FORMATS` (ffplan.report.output), the report model (ffplan.report.model). Loaded module by module, so that a
command loads only what it uses.
"""
