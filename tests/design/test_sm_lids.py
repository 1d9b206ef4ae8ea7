"""Where the subnet manager hosts' ports get their LIDs (ffplan.design.addressing._sm_port_lids): one 64-LID block at
or above every other LID, kept on re-planning when already there, moved otherwise."""

from types import SimpleNamespace

import pytest

from ffplan.design.addressing import _sm_port_lids
from ffplan.design.sizing import SizingError


def slots(*hosts: str) -> list:
    return [SimpleNamespace(ident=(h, "mlx5_0", 1), host=SimpleNamespace(hostname=h)) for h in hosts]


def previous(**lids: int) -> dict:
    return {(h, "mlx5_0", 1): SimpleNamespace(lid=lid) for h, lid in lids.items()}


def test_fresh_ports_follow_the_highest_lid_in_its_block():
    assert _sm_port_lids(slots("m1", "m2"), set(range(1, 101)), set(), {}) == {
        ("m1", "mlx5_0", 1): 101,
        ("m2", "mlx5_0", 1): 102,
    }


def test_ports_that_would_straddle_a_block_boundary_all_go_to_the_next_block():
    # LID 127 is the last of block 1: the standby would land in block 2, where a master-only table would end at 127
    assert _sm_port_lids(slots("m1", "m2"), set(range(1, 127)), set(), {}) == {
        ("m1", "mlx5_0", 1): 128,
        ("m2", "mlx5_0", 1): 129,
    }


def test_re_planning_keeps_lids_in_the_top_block_and_moves_the_others():
    taken = set(range(1, 101))
    assert _sm_port_lids(slots("m1", "m2"), taken, taken | {110, 5}, previous(m1=110, m2=5)) == {
        ("m1", "mlx5_0", 1): 110,
        ("m2", "mlx5_0", 1): 101,
    }
    # a fabric that shrank: SM ports already together in a higher block stay there
    assert _sm_port_lids(slots("m1", "m2"), set(range(1, 60)), {200, 201}, previous(m1=200, m2=201)) == {
        ("m1", "mlx5_0", 1): 200,
        ("m2", "mlx5_0", 1): 201,
    }


def test_more_sm_ports_than_a_block_holds_is_a_design_error():
    many = [SimpleNamespace(ident=("m1", f"mlx5_{i}", 1), host=SimpleNamespace(hostname="m1")) for i in range(65)]
    with pytest.raises(SizingError, match="share one 64-LID block"):
        _sm_port_lids(many, {1}, set(), {})


def test_no_room_below_the_multicast_lids_is_a_design_error():
    # 0xBFFF ends the last unicast block; with only it free there, the standby's port would need a multicast LID
    with pytest.raises(SizingError, match="unicast LIDs"):
        _sm_port_lids(slots("m1", "m2"), set(range(0xBFC0, 0xBFFF)), set(), {})
