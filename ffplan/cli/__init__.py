"""The thin command-line layer: parse arguments, call one stage, print. No planning logic lives here."""

import gc
import os

# A plan of 16,384 ports is millions of long-lived objects (pydantic models, tables, names) made in one go: with
# the default thresholds the cyclic collector walks them again and again (15 % of a large design's CPU time).
# Collecting 100 times less often costs no peak memory: a command's data lives until it ends. Set here, before
# the CLI imports typer, rich and pydantic (three dozen collections at the default thresholds).
gc.set_threshold(100_000, 50, 100)

# numpy's OpenBLAS starts a thread per core when numpy is imported, and each spins for about 0.1 s before it sleeps:
# CPU time of every command that loads a plan (render 0.1 s of Fire-Flyer 2's 0.9 s), for no work, as ffplan's
# arrays (tables, indices, sorts) never call BLAS. Set before numpy is imported; a value the user set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
