"""The static type aliases the plan shares with the inventory agree with the inventory's runtime types; the LFT
text reads as its pattern says."""

from typing import get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ffplan.inventory.models import LinkSpeed, SpeedName
from ffplan.plan.model import _PORTS_TEXT, _parse_ports


def test_speed_names_are_the_link_speeds():
    # SpeedName is spelled out for the type checker; a speed added to LinkSpeed must be added to it too.
    assert list(get_args(SpeedName)) == [s.value for s in LinkSpeed]


@pytest.mark.parametrize(
    "text, ports",
    [
        ("255", [255]),
        ("0 1 23 255 007 999", [0, 1, 23, 255, 7, 999]),  # the range is checked after parsing
        ("1 2", [1, 2]),
        ("", None),
        (" 1", None),
        ("1 ", None),
        ("1  2", None),
        ("1\t2", None),
        ("1\n2", None),
        ("1234", None),
        ("1 -2", None),
        ("1 +2", None),
        ("1 x", None),
        ("1 \u0663", None),  # an Arabic-Indic digit: a digit to str.isdigit, not to the plan
    ],
)
def test_lft_text_parses_as_the_pattern_says(text, ports):
    # the vectorised parser accepts exactly what _PORTS_TEXT matches, and reads the numbers fromstring read
    assert bool(_PORTS_TEXT.fullmatch(text)) == (ports is not None)
    if ports is None:
        with pytest.raises(ValueError, match="separated by single spaces"):
            _parse_ports(text)
    else:
        assert _parse_ports(text).tolist() == ports


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="0123456789  \t-x\u0663", max_size=16))
def test_any_lft_text_parses_as_the_pattern_says(text):
    if _PORTS_TEXT.fullmatch(text):
        assert _parse_ports(text).tolist() == [int(number) for number in text.split(" ")]
    else:
        with pytest.raises(ValueError, match="separated by single spaces"):
            _parse_ports(text)
