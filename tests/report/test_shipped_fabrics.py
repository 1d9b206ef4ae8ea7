"""The shipped inventories beyond Fire-Flyer 2, designed for real and reported from their plans with the preset
they name (`catalog.preset: deepseek-v3`): inventories/deepseek-v3-mpft.yaml reproduces DeepSeek-V3 Table 3's MPFT
row, inventories/dgx-superpod-4k.yaml the DGX SuperPOD reference counts for 16 scalable units. Designing both
takes about 20 s, once per session."""

import pytest

from ffplan.catalog import fabric_reference
from ffplan.design import design
from ffplan.inventory import load_inventory
from ffplan.report import designs as d
from ffplan.report.catalog import resolve_catalog
from ffplan.report.cost import build_report
from ffplan.report.output import render

TABLE_3 = fabric_reference()["deepseek_v3_table_3"]
SUPERPOD_16_SU = next(size for size in fabric_reference()["dgx_superpod"]["sizes"] if size["sus"] == 16)


def report_of(root, name: str):
    plan = design(load_inventory(root / "inventories" / f"{name}.yaml"))
    assert plan.catalog is not None and plan.catalog.preset == "deepseek-v3"
    report = build_report(plan, resolve_catalog(plan))  # the inventory's preset, carried by the plan
    assert report.catalog == "deepseek-v3"
    return report


@pytest.fixture(scope="session")
def mpft_report(request):
    return report_of(request.config.rootpath, "deepseek-v3-mpft")


@pytest.fixture(scope="session")
def superpod_report(request):
    return report_of(request.config.rootpath, "dgx-superpod-4k")


def own(report):
    return next(r for r in report.designs if r.key == d.FIRE_FLYER)


def test_mpft_plan_reproduces_table_3s_mpft_row(mpft_report):
    plan, row = own(mpft_report), TABLE_3["mpft"]
    assert plan.title == "this plan: 8 two-layer planes of 2,048 ports"
    assert (plan.endpoints, plan.switch_total, plan.switch_links) == (row["endpoints"], row["switches"], row["links"])
    assert plan.switches == {"leaf": 512, "spine": 256, "core": 0}
    assert round(plan.cost.network_per_endpoint) == row["cost_per_endpoint_usd"]  # $4.39k
    assert abs(plan.cost.network / row["cost_usd"] - 1) < 0.005  # $71.93M, the paper's $72M rounded
    assert not mpft_report.unpriced  # QM9700, the NDR cables and the hgx-h800 node all priced


def test_mpft_plan_equals_the_sized_multi_plane_design(mpft_report):
    """Placement and cabling change nothing a Table 3 row counts: the plan's column is the mpft column."""
    sized = next(r for r in mpft_report.designs if r.key == d.MULTI_PLANE)
    plan = own(mpft_report)
    assert (plan.switches, plan.switch_links, plan.cost.network) == (
        sized.switches,
        sized.switch_links,
        sized.cost.network,
    )
    ratio = next(r for r in mpft_report.ratios if r.numerator == d.FIRE_FLYER)
    assert ratio.computed == pytest.approx(ratio.paper, abs=1e-4)  # $4.39k / $7.5k


def test_superpod_plan_reproduces_the_reference_counts(superpod_report):
    plan = own(superpod_report)
    assert plan.title == "this plan: 1 three-layer zone, 4 pods"
    assert plan.switches == {layer: SUPERPOD_16_SU[layer] for layer in ("leaf", "spine", "core")}  # 128 + 128 + 64
    per_tier = SUPERPOD_16_SU["cables_per_tier"]
    assert plan.cables_by_kind == {"node-leaf": per_tier, "leaf-spine": per_tier, "spine-core": per_tier}
    assert plan.endpoints == SUPERPOD_16_SU["gpus"] == 4096
    assert (
        round(plan.cost.network_per_endpoint) == TABLE_3["ft3"]["cost_per_endpoint_usd"]
    )  # a full three-layer tree: $7.5k
    rail = next(r for r in superpod_report.designs if r.key == d.RAIL_OPTIMIZED)
    assert (rail.switches, rail.switch_links) == (plan.switches, plan.switch_links)


def test_superpod_node_model_is_left_unpriced_with_the_hint(superpod_report):
    """The deepseek-v3 catalog has no source for a DGX H100's price: n/a, not a guess; the network is priced."""
    assert superpod_report.unpriced == ["no price for 'dgx-h100' in catalog 'deepseek-v3'"]
    plan = own(superpod_report)
    assert plan.cost.servers is None and plan.cost.total is None and plan.cost.network is not None
    assert "catalog: {prices: {dgx-h100: ...}}" in " ".join(superpod_report.notes)
    assert "QM9700" not in " ".join(superpod_report.unpriced)


def test_table_of_the_superpod_plan_names_its_layout(superpod_report):
    text = render(superpod_report, "table", width=400)
    assert "this plan: 1 three-layer zone, 4 pods" in text and "Fire-Flyer" not in text.split("Published counts")[0]
