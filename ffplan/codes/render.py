"""Output folders (`design`, `render`) and plan values a rendered file cannot hold."""

from ffplan.codes.code import Code

OUTPUT_FOLDER_REFUSED = Code(
    "FF904",
    "output-folder-refused",
    "the output folder cannot be replaced safely (not ffplan's, edited, of the other kind, or not a folder)",
)
PLAN_VALUE_NOT_RENDERABLE = Code(
    "FF920",
    "plan-value-not-renderable",
    "a plan value cannot be written safely to an OpenSM file or a Kubernetes label (name, GUID, missing routes or QoS)",
)
