"""FF0xx: reading and schema, reported by the inventory loader (and lint's suppression comments)."""

from ffplan.codes.code import Code

YAML_SYNTAX = Code("FF001", "yaml-syntax", "the file is not valid YAML")
DUPLICATE_KEY = Code("FF002", "duplicate-key", "a mapping has the same key twice")
UNREADABLE_INPUT = Code(
    "FF003", "unreadable-input", "the file is missing, not UTF-8, too large, or expands past the node budget"
)
UNKNOWN_RULE_IN_SUPPRESSION = Code(
    "FF004", "unknown-rule-in-suppression", "a `# ffplan: disable=` comment names a rule that does not exist"
)
UNSUPPRESSIBLE_RULE = Code(
    "FF005", "unsuppressible-rule", "a `# ffplan: disable=` comment names a rule that cannot be suppressed"
)
UNKNOWN_KEY = Code("FF010", "unknown-key", "a key the inventory format does not have")
MISSING_KEY = Code("FF011", "missing-key", "a required key is missing")
BAD_VALUE = Code("FF012", "bad-value", "a value has the wrong type or is out of range")
UNSAFE_STRING = Code("FF013", "unsafe-string", "a string that reaches config files does not match its safe pattern")
NOT_A_MAPPING = Code("FF014", "not-a-mapping", "a mapping was expected (key: value pairs)")
PATTERN_EXPANSION = Code(
    "FF020", "pattern-expansion", "a hostname or rack-name pattern cannot be expanded, or would generate too much"
)
EMPTY_GROUP = Code("FF021", "empty-group", "a group has neither a count nor a hosts list")
