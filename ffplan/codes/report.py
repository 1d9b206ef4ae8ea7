"""FF8xx: the cost report's inputs (`ffplan report cost`)."""

from ffplan.codes.code import Code

BAD_CATALOG = Code(
    "FF801", "bad-catalog", "a catalog file or the inventory's catalog block is not a mapping of known keys and numbers"
)
UNKNOWN_CATALOG_NAME = Code(
    "FF802", "unknown-catalog-name", "a catalog override names a model or cable key the catalog does not have"
)
UNPRICED_MODEL = Code(
    "FF803", "unpriced-model", "a model of the plan has no price or power in the chosen catalog (the report shows n/a)"
)
PLAN_WITHOUT_NODE_MODELS = Code(
    "FF804", "plan-without-node-models", "the plan does not describe its node models (written by an older ffplan)"
)
COMPARISON_NOT_BUILDABLE = Code(
    "FF805",
    "comparison-not-buildable",
    "a design named in --compare is unknown, needs an INPUT, or does not fit the switch at --gpus",
)
