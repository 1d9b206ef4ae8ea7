"""The rule modules, one per topic; importing them registers their rules."""

from ffplan.lint.rules import ethernet, facility, fabric, naming, nodes, qos, reading, references, stages  # noqa: F401
