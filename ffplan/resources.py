"""Where ffplan's Jinja templates are, for render, report and verify alike."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def templates_dir() -> Path:
    """The templates folder: `ffplan/_templates` in an installed wheel (pyproject.toml maps the repository's
    top-level `templates/` there), else `templates/` beside the package in a source checkout or an editable
    install."""
    packaged = files("ffplan") / "_templates"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[1] / "templates"
