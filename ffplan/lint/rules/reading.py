"""FF0xx: reading and schema. The loader reports these; they are registered here for docs and suppression."""

from __future__ import annotations

from ffplan.codes import inventory as codes
from ffplan.diagnostics import Severity
from ffplan.lint.declare import loader_rule

loader_rule(
    codes.YAML_SYNTAX,
    Severity.ERROR,
    explanation="""
    The file cannot be parsed as YAML, so nothing else can be checked. The location points at the
    token where the parser gave up; the mistake is often just before it (an unclosed bracket or quote,
    a tab, or a wrongly indented line). ffplan exits with code 2, as for any unreadable input.
    """,
    bad="""
    groups:
      - name: compute
        racks: [r1, r2
    """,
    good="""
    groups:
      - name: compute
        racks: [r1, r2]
    """,
)

loader_rule(
    codes.DUPLICATE_KEY,
    Severity.ERROR,
    explanation="""
    PyYAML, like most YAML libraries, silently keeps the last of two equal keys, so half of what was
    written is lost without a word. The classic case is a host or model pasted twice with edits.
    ffplan reads the node graph itself and reports the second key with the line of the first.
    """,
    bad="""
    models:
      switches:
        QM8700: {ports: 40}
        QM8700: {ports: 36}
    """,
    good="""
    models:
      switches:
        QM8700: {ports: 40}
        SB7800: {ports: 36}
    """,
)

loader_rule(
    codes.UNREADABLE_INPUT,
    Severity.ERROR,
    explanation="""
    ffplan refuses input it cannot or should not read: a missing path, a file that is not UTF-8 text,
    a file over 8 MiB, or a document whose aliases expand past two million nodes (a "billion laughs"
    bomb). These are refused before the document is built, and ffplan exits with code 2.
    """,
    bad="""
    a: &a [x, x, x, x, x, x, x, x, x]
    b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
    c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]   # ... nine levels: 10^9 nodes
    """,
    good="""
    groups:
      - {name: compute, role: compute, model: gpu-node, count: 1200, hostname: "cn{index:04d}"}
    """,
)

loader_rule(
    codes.UNKNOWN_RULE_IN_SUPPRESSION,
    Severity.WARNING,
    explanation="""
    An inline suppression that names an unknown rule id suppresses nothing, which is usually a typo that
    leaves the intended finding in place (or, worse, a stale comment after a rule was renamed).
    Use the ids that `ffplan rules` lists.
    """,
    bad="""
    - {hostname: cn01, rack: r1, u: 1}   # ffplan: disable=FF2O1
    """,
    good="""
    - {hostname: cn01, rack: r1, u: 1}   # ffplan: disable=FF201
    """,
)

loader_rule(
    codes.UNSUPPRESSIBLE_RULE,
    Severity.WARNING,
    explanation="""
    Reading, schema, safety (FF0xx, FF5xx) and reference errors (a model, rack, zone, NIC, root port or
    device that does not exist) describe an inventory nothing can be built from, or a string that would
    reach a shell script or config file unchecked. Their findings are reported whatever the comments
    say; the comment itself is reported with this warning so that it is removed rather than trusted.
    Other error rules may be hidden from lint's report, but `ffplan design` still refuses the
    inventory with the hidden finding unless the rule only concerns the physical layout (rack positions
    and units, PCIe lanes): `ffplan explain` says which applies to a rule.
    """,
    bad="""
    - {hostname: "mgmt2$(reboot)", rack: r1, u: 1}   # ffplan: disable=FF013
    """,
    good="""
    - {hostname: mgmt2, rack: r1, u: 1}
    """,
)

loader_rule(
    codes.UNKNOWN_KEY,
    Severity.ERROR,
    explanation="""
    Every mapping in an inventory has a fixed set of keys (`ffplan schema` prints them). An unknown key
    is almost always a misspelling whose value would otherwise be ignored, so it is an error, reported
    with the closest allowed key.
    """,
    bad="""
    fabric:
      switch_modle: QM8700
    """,
    good="""
    fabric:
      switch_model: QM8700
    """,
)

loader_rule(
    codes.MISSING_KEY,
    Severity.ERROR,
    explanation="""
    Some keys have no sensible default (a group's name, role and model; a rack's row and slot; the
    fabric's switch model and zones). The finding points at the mapping that lacks the key.
    """,
    bad="""
    racks:
      - {name: r1, row: 1}
    """,
    good="""
    racks:
      - {name: r1, row: 1, slot: 4}
    """,
)

loader_rule(
    codes.BAD_VALUE,
    Severity.ERROR,
    explanation="""
    The value does not fit the key: a string where a number belongs, a number outside its range (for
    example switch ports 4-256), or a word outside a fixed set (role: compute, storage or management).
    """,
    bad="""
    models:
      switches:
        QM8700: {ports: forty}
    """,
    good="""
    models:
      switches:
        QM8700: {ports: 40}
    """,
)

loader_rule(
    codes.UNSAFE_STRING,
    Severity.ERROR,
    explanation="""
    Names, hostnames, GUIDs, bus ids and paths end up in hostnames, OpenSM files, NCCL XML and shell
    scripts. Each has a strict pattern (hostnames: lower-case letters, digits and '-', at most 63
    characters; GUIDs: 0x and 16 hex digits), checked at load so that no inventory value can break or
    inject into a rendered file.
    """,
    bad="""
    hosts:
      - {hostname: "cn01; rm -rf /", rack: r1, u: 1}
    """,
    good="""
    hosts:
      - {hostname: cn01, rack: r1, u: 1}
    """,
)

loader_rule(
    codes.NOT_A_MAPPING,
    Severity.ERROR,
    explanation="""
    The inventory itself and each model, rack, zone, group and host are mappings. A list or a plain
    value in their place usually means a misplaced dash or a missing indentation level.
    """,
    bad="""
    models:
      switches:
        - QM8700
    """,
    good="""
    models:
      switches:
        QM8700: {ports: 40}
    """,
)

loader_rule(
    codes.PATTERN_EXPANSION,
    Severity.ERROR,
    explanation="""
    Groups generate hostnames from a pattern with `{index}` (1-based, optionally with a width such as
    `{index:04d}`), and rack blocks generate rack names with `{row}` and `{slot}`. A pattern with another
    placeholder, a bad format, or a group with a count but no pattern cannot be expanded. Patterns and
    counts are checked before anything is generated: a width is at most 63 (a name's length), a rack
    block's ranges are [first, last] with first <= last, all blocks generate at most 10,000 racks and
    an inventory has at most 100,000 hosts.
    """,
    bad="""
    groups:
      - {name: compute, role: compute, model: gpu-node, count: 8, hostname: "cn{idx}"}
    """,
    good="""
    groups:
      - {name: compute, role: compute, model: gpu-node, count: 8, hostname: "cn{index:02d}"}
    """,
)

loader_rule(
    codes.EMPTY_GROUP,
    Severity.ERROR,
    explanation="""
    A group generates `count` hosts from its hostname pattern, or lists its hosts. One with neither (or
    with `count: null`) contributes nothing, so its model, racks and settings are silently unused and the
    nodes someone meant to plan are missing from every file.
    """,
    bad="""
    groups:
      - {name: compute, role: compute, model: gpu-node, hostname: "cn{index:04d}"}
    """,
    good="""
    groups:
      - {name: compute, role: compute, model: gpu-node, count: 8, hostname: "cn{index:04d}"}
    """,
)
