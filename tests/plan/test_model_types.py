"""The static type aliases the plan shares with the inventory agree with the inventory's runtime types."""

from typing import get_args

from ffplan.inventory.models import LinkSpeed, SpeedName


def test_speed_names_are_the_link_speeds():
    # SpeedName is spelled out for the type checker; a speed added to LinkSpeed must be added to it too.
    assert list(get_args(SpeedName)) == [s.value for s in LinkSpeed]
