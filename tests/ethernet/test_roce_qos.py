"""The lossless QoS arithmetic, checked against a hand computation (the worked example of docs/ethernet.md)."""

from ffplan.ethernet.qos import buffer_fit, ecn_thresholds, headroom
from ffplan.inventory import load_inventory
from ffplan.inventory.models import RoceQos


def test_headroom_of_a_400g_port_on_a_7m_cable():
    # frames: 2 x ((9216 + 18) x 8 + 160) = 148,064 BT; PAUSE 672; interface 491,520 and response 463,360 at 400G;
    # cable 2 x 7 m x 5 ns/m x 400 b/ns = 28,000 BT; total 1,131,616 BT = 141,452 bytes
    h = headroom(400, 7.0, 9216)
    assert (h.frames_bt, h.pause_bt, h.interface_bt, h.response_bt, h.cable_bt) == (
        148_064,
        672,
        491_520,
        463_360,
        28_000,
    )
    assert h.bytes == 141_452


def test_headroom_grows_with_the_cable_at_the_line_rate():
    # 93 m more cable at 400G: 2 x 93 x 5 x 400 = 372,000 BT = 46,500 bytes more
    assert headroom(400, 100.0, 9216).bytes - headroom(400, 7.0, 9216).bytes == 46_500


def test_ecn_defaults_are_20_and_50_percent_of_the_port_share():
    # SN5600 at 2 x 400G: 160 MB over 128 ports = 1.25 MB a port
    assert ecn_thresholds(RoceQos(), 1_250_000) == (250_000, 625_000)
    assert ecn_thresholds(RoceQos(ecn_min_kb=300, ecn_max_kb=700), 1_250_000) == (300_000, 700_000)


def test_buffer_fit_counts_every_port_and_lossless_priority(root):
    inv = load_inventory(root / "tests" / "lint" / "roce-base.yaml").inventory  # 8 ports, 16 MB
    fit = buffer_fit(inv, 8, [100_000] * 8)
    assert (fit.buffer_bytes, fit.port_buffer_bytes, fit.headroom_total_bytes, fit.headroom_limit_bytes) == (
        16_000_000,
        2_000_000,
        800_000,
        8_000_000,
    )
    assert fit.headroom_fits
