import pytest

from ffplan.design.sizing import SizingError, size_three_layer, size_two_layer


@pytest.mark.parametrize("k", [36, 40, 64, 128])
def test_full_two_layer_zone_matches_formula(k):
    size = size_two_layer(k)
    assert size.endpoint_ports == k * k // 2
    assert size.switches == 3 * k // 2
    assert size.leaves * size.up_ports == size.spines * k


def test_fire_flyer_zone():
    size = size_two_layer(40)
    assert (size.leaves, size.down_ports, size.spines, size.endpoint_ports) == (40, 20, 20, 800)


def test_partial_zone_keeps_equal_parallel_links():
    size = size_two_layer(8, 1.0, 16)
    assert (size.leaves, size.spines, size.links_per_leaf_spine) == (4, 2, 2)


def test_oversubscribed_zone():
    size = size_two_layer(40, 3.0)
    assert (size.down_ports, size.up_ports) == (30, 10)
    assert size.endpoint_ports == 40 * 30


def test_too_many_ports_names_what_fits():
    with pytest.raises(SizingError) as exc:
        size_two_layer(40, 1.0, 801)
    assert "800" in exc.value.hint


@pytest.mark.parametrize("k", [8, 40, 64])
def test_full_three_layer_matches_formula(k):
    size = size_three_layer(k, k**3 // 4)
    assert size.switches == 5 * k * k // 4


def test_paper_three_layer_counts():
    assert size_three_layer(40, 1600).switches == 200
    assert (size_three_layer(40, 10000).cores, size_three_layer(40, 10000).switches) == (250, 1250)
