"""FF90x, FF910: reading a plan, and option values that must name something in it."""

from ffplan.codes.code import Code

NOT_A_PLAN = Code("FF901", "not-a-plan", "the file is not a plan (not YAML, or no plan_version)")
UNSUPPORTED_PLAN_VERSION = Code(
    "FF902", "unsupported-plan-version", "the plan's plan_version is not the one this ffplan reads"
)
PLAN_SCHEMA_MISMATCH = Code(
    "FF903", "plan-schema-mismatch", "the plan does not match the plan schema (edited, damaged or incomplete)"
)
OPTION_VALUE_NOT_IN_PLAN = Code(
    "FF910",
    "option-value-not-in-plan",
    "an option names a zone, plane or failed item the plan does not have, or a plan with planes lacks --plane",
)
