"""The Jinja2 environment: templates print, they never compute.

StrictUndefined turns a missing value into an error instead of an empty string; XML and HTML templates are
autoescaped; every other target escapes through the explicit filters below.

Compiling the templates from their source is 0.07 s of every render; the compiled code is kept in the user's cache
folder (`TemplateCache`), under a name that changes with everything the code depends on, so it is never stale.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import stat
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

import jinja2
import markupsafe
from jinja2.bccache import Bucket
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
    home = cache_home()
    if home is not None:
        env.bytecode_cache = TemplateCache(env, home / "ffplan")
    return env


def cache_home() -> Path | None:
    """$XDG_CACHE_HOME, else ~/.cache; None without a home folder."""
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"])
    try:
        return Path.home() / ".cache"
    except RuntimeError:
        return None


class TemplateCache(jinja2.FileSystemBytecodeCache):
    """Jinja's compiled templates in `ROOT/templates-<fingerprint>/`, one file per template, used only when it was
    compiled from the same source (Jinja checks each file's checksum of the template's text) under the same
    fingerprint: the Jinja and Python versions and every environment setting the compiled code depends on (delimiters,
    whitespace control, filter and test names, autoescape per template). Filters themselves are looked up when a
    template runs, never compiled in. A cached file is code: the folder and its files are used only when they are
    the user's own and writable by nobody else. Nothing here can fail a render: a folder that cannot be made or
    written, or a damaged file, and the template is compiled from its source as without a cache."""

    def __init__(self, env: jinja2.Environment, root: Path):
        settings = (
            jinja2.__version__,
            sys.version,
            sys.implementation.cache_tag,
            env.block_start_string,
            env.block_end_string,
            env.variable_start_string,
            env.variable_end_string,
            env.comment_start_string,
            env.comment_end_string,
            env.line_statement_prefix,
            env.line_comment_prefix,
            env.trim_blocks,
            env.lstrip_blocks,
            env.newline_sequence,
            env.keep_trailing_newline,
            env.optimized,
            env.is_async,
            sorted(env.extensions),
            sorted(env.filters),
            sorted(env.tests),
            env.finalize is None,
        )
        self.env = env
        fingerprint = hashlib.sha256(repr(settings).encode()).hexdigest()[:16]
        super().__init__(str(root / f"templates-{fingerprint}"), "%s.jinja")

    def get_cache_key(self, name: str, filename: str | None = None) -> str:
        autoescape = self.env.autoescape(name) if callable(self.env.autoescape) else self.env.autoescape
        return hashlib.sha256(f"{name}|{filename}|{autoescape}".encode()).hexdigest()

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            with open(self._get_cache_filename(bucket), "rb") as fh:
                if _private(os.fstat(fh.fileno())) and _private(os.lstat(self.directory)):
                    bucket.load_bytecode(fh)
        except Exception:  # noqa: BLE001  (absent, unreadable or damaged: compiled from the source)
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        try:
            os.makedirs(self.directory, mode=0o700, exist_ok=True)
            if not _private(os.lstat(self.directory)):
                return
            fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as fh:
                    bucket.write_bytecode(fh)
                os.replace(tmp, self._get_cache_filename(bucket))  # whole or not at all, for a concurrent render
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            pass  # a read-only or full disk: the next render compiles again


def _private(st: os.stat_result) -> bool:
    """The user's own, and writable by nobody else."""
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not stat.S_ISLNK(st.st_mode)


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
    return str.__new__(markupsafe.Markup, text)  # Markup(text) without its Python-level check for an __html__ method


def render_template(name: str, **context: object) -> str:
    return environment().get_template(name).render(**context)
