"""The Jinja2 environment: templates print, they never compute.

StrictUndefined turns a missing value into an error instead of an empty string; XML and HTML templates are
autoescaped; every other target escapes through the explicit filters below.
"""

from __future__ import annotations

import json
import shlex
from functools import lru_cache
from typing import Iterator

import jinja2
import markupsafe
from jinja2.utils import htmlsafe_json_dumps

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
    env.filters["tojson"] = tojson
    return env


def tojson(value: object, indent: int | None = None) -> markupsafe.Markup:
    """Jinja's `tojson`, text for text, without its per-call policy lookups and keyword arguments for a string or an
    integer (the Ansible inventory quotes 35,000 values of Fire-Flyer 2 with it)."""
    if indent is None and type(value) is str:
        text = json.encoder.encode_basestring_ascii(value)  # what json.dumps does with a string
    elif indent is None and type(value) is int:
        text = int.__repr__(value)  # what json.dumps does with an integer (not a bool)
    else:
        return htmlsafe_json_dumps(value, sort_keys=True, indent=indent)  # jinja's default json.dumps_kwargs
    if "<" in text or ">" in text or "&" in text or "'" in text:
        text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace("'", "\\u0027")
    return markupsafe.Markup(text)


def render_template(name: str, **context: object) -> str:
    return environment().get_template(name).render(**context)


def stream_template(name: str, **context: object) -> Iterator[str]:
    """The same text as render_template, in pieces as the template is run: with lazy values in `context`, a file
    far larger than memory is never held whole."""
    return environment().get_template(name).generate(**context)
