"""Stage progress as an observer: a stage names each step as it starts; whoever runs it (the CLI) decides whether
and how to show it. The stage packages never print."""

from __future__ import annotations

from typing import Callable

StageCallback = Callable[[str], None]

# the design's stages are its steps: ffplan.design.DESIGN_STEPS
RENDER_STAGES = ("OpenSM files", "host profiles", "exports")
ROCE_RENDER_STAGES = ("SONiC and FRR files", "exports")  # a RoCE plan's
# then the CLI's own step: the folder is written, the LFT files made as they are written (most of a large subnet's)
RENDER_WRITING = "writing the files"


def no_progress(stage: str) -> None:
    """The observer when nobody watches."""
