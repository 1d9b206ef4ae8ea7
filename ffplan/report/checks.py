"""What a cost report holds its figures against: the papers' ratios between two designs (`ratios`), the Fire-Flyer
paper's configurations (`paper_checks`) and DeepSeek-V3's Table 3 and the DGX SuperPOD sizes (`fabric_checks`)
recomputed with ffplan's sizing.
"""

from __future__ import annotations

from typing import Callable

from ffplan.catalog import fabric_reference, paper_reference
from ffplan.design.sizing import size_three_layer, size_two_layer
from ffplan.plan.model import Plan
from ffplan.report import designs as d
from ffplan.report.model import DesignReport, Network, PaperCheck, Ratio
from ffplan.report.pricing import Pricer, network_price


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    return None if numerator is None or not denominator else numerator / denominator


def ratios(by_key: dict[str, DesignReport], plan: Plan | None) -> list[Ratio]:
    """The papers' ratios between two designs, for each pair the report has: the Fire-Flyer paper's for a
    Fire-Flyer plan, DeepSeek-V3 Table 3's MPFT / FT3 for the mpft design and for a plan of two-layer planes."""
    paper, table_3 = paper_reference(), fabric_reference()["deepseek_v3_table_3"]
    t2, t3 = paper["table_ii"], paper["table_iii"]
    ff, pcie, ft3, mpft = d.FIRE_FLYER, d.PCIE_THREE_LAYER, d.THREE_LAYER, d.MULTI_PLANE

    def cost(field: str) -> Callable[[DesignReport], float | None]:
        return lambda r: getattr(r.cost, field)

    def power(field: str) -> Callable[[DesignReport], float | None]:
        return lambda r: getattr(r.power, field)

    table_3_ratio = (
        cost("network_per_endpoint"),
        table_3["mpft"]["cost_per_endpoint_usd"] / table_3["ft3"]["cost_per_endpoint_usd"],
        "DeepSeek-V3 Table 3 cost per endpoint $4.39k / $7.5k",
    )
    rows = (
        []
        if plan is not None and not d.is_fire_flyer(plan)
        else [
            (
                "total price",
                ff,
                ft3,
                cost("total"),
                t3["total_price"]["fire_flyer"] / t3["total_price"]["dgx"],
                "Table III total price 11,600 / 23,000",
            ),
            (
                "server price",
                ff,
                ft3,
                cost("servers"),
                t3["server_price"]["fire_flyer"] / t3["server_price"]["dgx"],
                "Table III server price 11,250 / 19,000",
            ),
            (
                "network price",
                ff,
                ft3,
                cost("network"),
                t3["network_price"]["fire_flyer"] / t3["network_price"]["dgx"],
                "Table III network price 350 / 4,000",
            ),
            (
                "network price",
                ff,
                pcie,
                cost("network"),
                t3["network_price"]["fire_flyer"] / t3["network_price"]["pcie_three_layer"],
                "Table III network price 350 / 600",
            ),
            (
                "switches",
                ff,
                ft3,
                lambda r: r.switch_total,
                paper["fire_flyer"]["switches"] / paper["dgx_three_layer"]["switches"],
                "Table III switches 122 / 1,320",
            ),
            (
                "node power",
                ff,
                ft3,
                power("nodes_average_w"),
                t2["power_w"]["fire_flyer"] / t2["power_w"]["dgx"],
                "Table II power 2,500 W / 4,200 W per node",
            ),
            (
                "power with switches",
                ff,
                ft3,
                power("average_w"),
                t2["power_w"]["fire_flyer"] / t2["power_w"]["dgx"],
                "Table II power per node (switches not counted)",
            ),
        ]
    )
    rows.append(("network per endpoint", mpft, ft3, *table_3_ratio))
    if plan is not None and d.is_multi_plane(plan):
        rows.append(("network per endpoint", ff, ft3, *table_3_ratio))
    out = []
    for name, a, b, value, ref, basis in rows:
        if a in by_key and b in by_key and (computed := _ratio(value(by_key[a]), value(by_key[b]))) is not None:
            out.append(Ratio(name=name, numerator=a, denominator=b, computed=computed, paper=ref, paper_basis=basis))
    if ff in by_key and ft3 in by_key and (plan is None or d.is_fire_flyer(plan)):
        figures = [  # the Fire-Flyer design's own figures are already relative to the reference node
            ("relative performance", by_key[ff].relative_performance, "relative_performance", "83 %"),
            ("cost-performance", by_key[ff].cost_performance, "cost_performance", "1.38 (performance / node price)"),
        ]
        for name, computed, key, paper_text in figures:
            if computed is not None:
                basis = f"Table II {name} {paper_text}"
                out.append(
                    Ratio(name=name, numerator=ff, denominator=ft3, computed=computed, paper=t2[key], paper_basis=basis)
                )
    return out


def paper_checks(dgx_storage_switches: int | None) -> list[PaperCheck]:
    """The Fire-Flyer paper's own configurations recomputed with ffplan's sizing code, and why they differ."""
    paper = paper_reference()
    k = paper["radix"]
    zone = size_two_layer(k)
    ff = paper["fire_flyer"]
    pcie_ref, dgx_ref = paper["pcie_three_layer"], paper["dgx_three_layer"]
    pcie = size_three_layer(k, pcie_ref["access_points"])
    dgx = size_three_layer(k, dgx_ref["access_points"])

    def layers(core: int, spine: int, leaf: int, total: int) -> str:
        return f"{core} core + {spine} spine + {leaf} leaf = {total:,}"

    checks = [
        PaperCheck(
            item=f"Fire-Flyer 2: {ff['zones']} two-layer zones of {k}-port switches",
            paper=f"{ff['switches']} switches",
            computed=f"{ff['zones']} x ({zone.spines} spine + {zone.leaves} leaf) = {ff['zones'] * zone.switches}",
            reason=f"the paper does not say what the other {ff['switches'] - ff['zones'] * zone.switches} "
            "switches are (inter-zone or management switches are a guess)",
        ),
        PaperCheck(
            item=f"PCIe three-layer tree, {pcie_ref['access_points']:,} access points",
            paper=layers(pcie_ref["core"], pcie_ref["spine"], pcie_ref["leaf"], pcie_ref["switches"]),
            computed=layers(pcie.cores, pcie.spines, pcie.leaves, pcie.switches),
            reason="same" if pcie.switches == pcie_ref["switches"] else "differs from the non-blocking formula",
        ),
        PaperCheck(
            item=f"DGX three-layer tree, {dgx_ref['access_points']:,} access points",
            paper=layers(dgx_ref["core"], dgx_ref["spine"], dgx_ref["leaf"], dgx_ref["switches"]),
            computed=layers(dgx.cores, dgx.spines, dgx.leaves, dgx.switches),
            reason=f"non-blocking core = spines x (k/2) / k = {dgx.spines} x {k // 2} / {k} = {dgx.cores}; "
            f"the paper gives no reason for {dgx_ref['core']}",
        ),
    ]
    if dgx_storage_switches is not None:
        checks.append(
            PaperCheck(
                item="DGX storage fabric (9th NIC, storage servers, management nodes)",
                paper="not counted",
                computed=f"{dgx_storage_switches:,} switches in this report",
                reason="the Fire-Flyer fabric carries storage in-band; the DGX cluster needs its own storage network",
            )
        )
    return checks


def fabric_checks(pricer: Pricer) -> list[PaperCheck]:
    """DeepSeek-V3's Table 3 and the DGX SuperPOD sizes recomputed with the sizing of the mpft, ft3 and
    rail-optimized designs; priced with the catalog when its fabric switch has the same radix."""
    catalog = pricer.catalog
    table_3, pod = fabric_reference()["deepseek_v3_table_3"], fabric_reference()["dgx_superpod"]
    switch = catalog.fabric_switch
    priced = catalog.switches[switch].ports == table_3["radix"]

    def counted(fabric: Network) -> str:
        links = sum(lot.count for lot in fabric.cables if lot.kind != "node-leaf")
        text = f"{sum(fabric.switches.values()):,} switches, {links:,} links"
        switches, cables = network_price([fabric], pricer)
        if priced and switches is not None:
            network = switches + cables
            text += (
                f"; {network:,.0f} {catalog.currency}, {network / fabric.access_points:,.0f} per endpoint "
                f"(catalog {catalog.name})"
            )
        return text

    def published(row: dict) -> str:
        return (
            f"{row['switches']:,} switches, {row['links']:,} links; {row['cost_usd']:,.0f} USD, "
            f"{row['cost_per_endpoint_usd']:,} per endpoint"
        )

    k = table_3["radix"]
    ft2, mpft, ft3 = table_3["ft2"], table_3["mpft"], table_3["ft3"]
    checks = [
        PaperCheck(
            item=f"DeepSeek-V3 Table 3 FT2: two-layer fat-tree, k = {k}, {ft2['endpoints']:,} endpoints",
            paper=published(ft2),
            computed=counted(d.tree("FT2", switch, k, ft2["endpoints"], catalog)),
            reason="k leaves + k/2 spines; links = leaves x k/2 = k^2/2 (switch-to-switch only, as Table 3)",
        ),
        PaperCheck(
            item=f"DeepSeek-V3 Table 3 MPFT: {mpft['planes']} planes of FT2, {mpft['endpoints']:,} endpoints",
            paper=published(mpft),
            computed=counted(d.multi_plane(switch, k, mpft["planes"], mpft["endpoints"] // mpft["planes"], catalog)),
            reason="planes x (3k/2 switches, k^2/2 links)",
        ),
        PaperCheck(
            item=f"DeepSeek-V3 Table 3 FT3: three-layer fat-tree, k = {k}, {ft3['endpoints']:,} endpoints",
            paper=published(ft3),
            computed=counted(d.tree("FT3", switch, k, ft3["endpoints"], catalog, three_layers=True)),
            reason="5k^2/4 switches; links = leaf-spine + spine-core = 2 x k^3/4",
        ),
    ]
    rails = pod["gpus_per_node"]
    for size in pod["sizes"]:
        fabric = d.rail_optimized(switch, pod["radix"], rails, size["nodes"], catalog)
        layers = f"{fabric.switches['leaf']} leaf + {fabric.switches['spine']} spine + {fabric.switches['core']} core"
        checks.append(
            PaperCheck(
                item=f"DGX SuperPOD, rail-optimized: {size['sus']} scalable units, {size['nodes']:,} nodes, {size['gpus']:,} GPUs",
                paper=f"{size['leaf']} leaf + {size['spine']} spine + {size['core']} core",
                computed=layers,
                reason=f"{rails} rail leaves per unit of {pod['su_nodes']} nodes; spines and core as a fat-tree of those leaves",
            )
        )
    return checks
