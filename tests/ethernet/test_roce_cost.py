"""`ffplan report cost` on a RoCE plan: its InfiniBand and RoCE builds side by side, same nodes and same sizing
rules, priced from the list-price catalog's builds. The dual-plane inventory's figures are counted by hand here."""

import json

import pytest

from ffplan.report.catalog import resolve_catalog
from ffplan.report.cost import ComparisonError, build_report
from ffplan.report.output import to_json, to_markdown


@pytest.fixture(scope="module")
def report(dual_plane_plan):
    return build_report(dual_plane_plan, resolve_catalog(dual_plane_plan))  # default preset for RoCE: list-price


def test_default_is_the_two_builds_side_by_side(report):
    assert report.catalog == "list-price"
    assert [d.key for d in report.designs] == ["roce", "infiniband"]


def test_hand_count(report):
    """512 nodes x 8 NICs = 4,096 ports in 2 planes of 2,048. SN5600 at 400G: 128 ports, 64 down per leaf: 32
    leaves + 16 spines a plane; QM9700: 64 ports: 64 leaves + 32 spines a plane. Node-leaf 7 m and leaf-spine 20 m
    are optical (DAC up to 3 m): 4,096 + 2 x 4,096 optical switch ports in cages of 2 = 6,144 switch transceivers,
    4,096 NIC transceivers, 4,096 NICs. Network (USD): fibre 15/m x 4,096 x (7 + 20) = 1,658,880; optics 6,144 x
    1,300 + 4,096 x 800 = 11,264,000; NICs 4,096 x 2,000 = 8,192,000; switches 96 x 40,000 (RoCE) or 192 x 30,000."""
    roce, ib = report.designs
    assert (roce.switches, ib.switches) == ({"leaf": 64, "spine": 32, "core": 0}, {"leaf": 128, "spine": 64, "core": 0})
    for d in (roce, ib):
        assert (d.endpoints, d.build.nics, d.build.switch_optics, d.build.nic_optics) == (4096, 4096, 6144, 4096)
        assert (d.cost.cables, d.build.optics_price, d.build.nics_price) == (1_658_880, 11_264_000, 8_192_000)
    assert (roce.build.nic, roce.build.switch_optic, ib.build.nic, ib.build.switch_optic) == (
        "ConnectX-7 400GbE",
        "800GbE OSFP 2x400G",
        "ConnectX-7 NDR",
        "NDR twin-port OSFP",
    )
    assert (roce.cost.switches, ib.cost.switches) == (96 * 40_000, 192 * 30_000)
    assert (roce.cost.network, ib.cost.network) == (24_954_880, 26_874_880)


def test_outputs_show_the_parts(report):
    md = to_markdown(report)
    for row in (
        "| Network: NICs |",
        "| Network: switch transceivers |",
        "| Network: NIC transceivers |",
        "| Cost: optics |",
        "| Cost: NICs |",
    ):
        assert row in md
    assert all(d["build"]["transport"] in ("roce", "infiniband") for d in json.loads(to_json(report))["designs"])


def test_an_infiniband_plan_has_no_build_rows_or_key(lab_plan):
    ib = build_report(lab_plan, resolve_catalog(lab_plan))
    assert all("build" not in d for d in json.loads(to_json(ib))["designs"]) and "NICs |" not in to_markdown(ib)
    with pytest.raises(ComparisonError, match="compares a RoCE plan's transports"):
        build_report(lab_plan, resolve_catalog(lab_plan), compare=["infiniband"])


def test_a_catalog_without_builds_is_a_comparison_error(dual_plane_plan):
    with pytest.raises(ComparisonError, match="catalog 'paper' has no roce build at 400G") as exc:
        build_report(dual_plane_plan, resolve_catalog(dual_plane_plan, "paper"))
    assert "--preset list-price" in exc.value.hint
