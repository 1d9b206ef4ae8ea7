"""Located findings shared by every stage: what went wrong, where (file:line:col and YAML path), and a hint.

Public surface (ffplan.diagnostics.diagnostic): `Diagnostic`, `Severity`, `Collector`, the errors a stage raises at
its barrier (`StageError`, `InputError`, `InfeasibleError`, `option_error`) and the path and wording helpers;
ffplan.diagnostics.formats prints them.
"""

from ffplan.diagnostics.diagnostic import (
    COMMAND_LINE,
    NO_POSITION,
    Collector,
    Diagnostic,
    InfeasibleError,
    InputError,
    Severity,
    StageError,
    YamlPath,
    did_you_mean,
    duplicates,
    format_yaml_path,
    option_error,
    plural,
    printable,
    unknown_name,
    validation_message,
)

__all__ = [
    "COMMAND_LINE",
    "NO_POSITION",
    "Collector",
    "Diagnostic",
    "InfeasibleError",
    "InputError",
    "Severity",
    "StageError",
    "YamlPath",
    "did_you_mean",
    "duplicates",
    "format_yaml_path",
    "option_error",
    "plural",
    "printable",
    "unknown_name",
    "validation_message",
]
