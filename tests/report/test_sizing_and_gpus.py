"""`--gpus N` sizing, and the three-layer formulas the comparison designs rely on."""

import pytest

from ffplan.design.sizing import SizingError, size_three_layer
from ffplan.report.catalog import resolve_catalog
from ffplan.report.cost import build_report
from ffplan.report.designs import FIRE_FLYER, PCIE_THREE_LAYER, THREE_LAYER


@pytest.mark.parametrize("k", [8, 36, 40, 64])
def test_full_three_layer_holds_k_cubed_over_4_in_5_k_squared_over_4(k):
    full = size_three_layer(k, k**3 // 4)
    assert full.endpoints == k**3 // 4
    # k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 core switches
    assert (full.leaves, full.spines, full.cores) == (k * k // 2, k * k // 2, k * k // 4)
    assert full.switches == 5 * k * k // 4
    with pytest.raises(SizingError):
        size_three_layer(k, k**3 // 4 + 1)


@pytest.fixture(scope="module")
def at_10000(ff2_plan):
    report = build_report(ff2_plan, resolve_catalog(ff2_plan, "paper"), gpus=10000)
    return {d.key: d for d in report.designs}, report


def test_gpus_sizes_from_the_plans_node_models_and_zone_shape(at_10000):
    designs, report = at_10000
    assert report.basis == "sizing" and report.gpus == 10000
    assert all(d.basis == "sizing" for d in designs.values())
    assert designs[FIRE_FLYER].nodes == {"ff2-compute": 1250}


def test_pcie_three_layer_at_10000_gpus_is_about_200_switches(at_10000):
    designs, _ = at_10000
    pcie = designs[PCIE_THREE_LAYER]
    access_points = 1250 + 2 * 180 + 8  # compute + dual-homed storage + management NIC ports
    assert pcie.fabrics[0].access_points == access_points
    assert pcie.fabrics[0].radix == 40
    assert pcie.switch_total == pytest.approx(200, rel=0.05)
    assert pcie.switch_total == size_three_layer(40, access_points).switches


def test_dgx_compute_tree_at_10000_gpus_is_1250_beside_the_papers_1320(at_10000):
    designs, report = at_10000
    compute = designs[THREE_LAYER].fabrics[0]
    assert compute.access_points == 10000
    assert compute.switches == {"leaf": 500, "spine": 500, "core": 250}
    dgx_check = next(c for c in report.paper_checks if c.item.startswith("DGX three-layer"))
    assert "1,320" in dgx_check.paper and "1,250" in dgx_check.computed


def test_fire_flyer_adds_a_zone_when_the_ports_do_not_fit(at_10000):
    designs, report = at_10000
    ff = designs[FIRE_FLYER]
    # 1,250 compute + 360 storage + 8 management + 8 inter-zone ends = 1,626 > 2 x 800
    assert ff.switches == {"leaf": 120, "spine": 60, "core": 0}
    assert any("3 zones" in note for note in report.notes)


def test_gpus_that_fill_whole_nodes_only(ff2_plan):
    report = build_report(ff2_plan, resolve_catalog(ff2_plan, "paper"), gpus=12)
    designs = {d.key: d for d in report.designs}
    assert designs[FIRE_FLYER].nodes == {"ff2-compute": 2}
    assert designs[THREE_LAYER].nodes == {"dgx-a100": 2}
