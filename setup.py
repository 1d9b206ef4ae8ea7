"""Package discovery that pyproject.toml cannot express: the top-level templates/ ships inside the package as
ffplan/_templates (one package per template folder, so setuptools installs their files as package data)."""

from pathlib import Path

from setuptools import find_packages, setup

TEMPLATES = Path(__file__).parent / "templates"

setup(
    packages=find_packages(include=["ffplan", "ffplan.*"])
    + ["ffplan._templates"]
    + sorted(f"ffplan._templates.{d.name}" for d in TEMPLATES.iterdir() if d.is_dir()),
    package_dir={"ffplan._templates": "templates"},
)
