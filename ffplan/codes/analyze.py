"""`ffplan analyze --sweep`: inputs of a sweep run on a Dask cluster."""

from ffplan.codes.code import Code

SWEEP_INPUT_REFUSED = Code(
    "FF905",
    "sweep-input-refused",
    "the sweep's results file is damaged or of another plan, or its Dask scheduler cannot be reached",
)
