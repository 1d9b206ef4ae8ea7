"""The Jinja2 environment: templates print, they never compute.

StrictUndefined turns a missing value into an error instead of an empty string; XML and HTML templates are
autoescaped; every other target escapes through the explicit filters below.
"""

from __future__ import annotations

import shlex
from functools import lru_cache
from typing import Iterator

import jinja2

from ffplan.resources import templates_dir


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(enabled_extensions=("xml", "html", "svg"), default_for_string=False),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["shell"] = shlex.quote
    return env


def render_template(name: str, **context: object) -> str:
    return environment().get_template(name).render(**context)


def stream_template(name: str, **context: object) -> Iterator[str]:
    """The same text as render_template, in pieces as the template is run: with lazy values in `context`, a file
    far larger than memory is never held whole."""
    return environment().get_template(name).generate(**context)
