"""The thin command-line layer: parse arguments, call one stage, print. No planning logic lives here."""

import gc

# A plan of 16,384 ports is millions of long-lived objects (pydantic models, tables, names) made in one go: with
# the default thresholds the cyclic collector walks them again and again (15 % of a large design's CPU time).
# Collecting 100 times less often costs no peak memory: a command's data lives until it ends. Set here, before
# the CLI imports typer, rich and pydantic (three dozen collections at the default thresholds).
gc.set_threshold(100_000, 50, 100)
