"""The compiled-template cache (ffplan.templating.TemplateCache): the same files with a cold, a warm and no usable
cache; never the code of another template text or other environment settings; never a cached file that is damaged
or in a folder others can write; and no render fails because the cache cannot be written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest

from ffplan.templating import TemplateCache

ROOT = Path(__file__).resolve().parents[2]


def _environment(templates: Path, cache_root: Path, **settings: object) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        **settings,
    )  # type: ignore[arg-type]
    env.bytecode_cache = TemplateCache(env, cache_root)
    return env


@pytest.fixture
def compiles(monkeypatch):
    """The template names compiled from their source (not taken from the cache)."""
    compiled: list[str] = []
    original = jinja2.Environment.compile

    def counting(self, source, name=None, filename=None, raw=False, defer_init=False):
        compiled.append(name)
        return original(self, source, name, filename, raw, defer_init)

    monkeypatch.setattr(jinja2.Environment, "compile", counting)
    return compiled


def test_a_template_is_compiled_once_and_recompiled_when_its_text_changes(tmp_path, compiles):
    templates, cache = tmp_path / "templates", tmp_path / "cache"
    templates.mkdir()
    (templates / "a.txt").write_text("{% for i in items %}A{{ i }}\n{% endfor %}")
    assert _environment(templates, cache).get_template("a.txt").render(items=[1, 2]) == "A1\nA2\n"
    assert _environment(templates, cache).get_template("a.txt").render(items=[1, 2]) == "A1\nA2\n"
    assert compiles == ["a.txt"]  # the second environment (a later process) took the cached code
    (templates / "a.txt").write_text("{% for i in items %}B{{ i }}\n{% endfor %}")
    assert _environment(templates, cache).get_template("a.txt").render(items=[1, 2]) == "B1\nB2\n"
    assert compiles == ["a.txt", "a.txt"]


def test_other_settings_never_share_compiled_code(tmp_path, compiles):
    templates, cache = tmp_path / "templates", tmp_path / "cache"
    templates.mkdir()
    (templates / "a.txt").write_text("{% if x %}\nyes\n{% endif %}\n")
    assert _environment(templates, cache).get_template("a.txt").render(x=True) == "\nyes\n\n"
    assert _environment(templates, cache, trim_blocks=True).get_template("a.txt").render(x=True) == "yes\n"
    escaping = _environment(templates, cache, autoescape=True)
    (templates / "b.txt").write_text("{{ x }}")
    assert escaping.get_template("b.txt").render(x="<") == "&lt;"
    assert _environment(templates, cache).get_template("b.txt").render(x="<") == "<"
    assert compiles == ["a.txt", "a.txt", "b.txt", "b.txt"]
    assert len(list(cache.iterdir())) == 2  # a folder per environment fingerprint


def test_a_damaged_cache_file_is_compiled_again(tmp_path, compiles):
    templates, cache = tmp_path / "templates", tmp_path / "cache"
    templates.mkdir()
    (templates / "a.txt").write_text("A{{ x }}")
    _environment(templates, cache).get_template("a.txt")
    [cached] = list(cache.glob("*/*.jinja"))
    cached.write_bytes(cached.read_bytes()[:40])
    assert _environment(templates, cache).get_template("a.txt").render(x=1) == "A1"
    assert compiles == ["a.txt", "a.txt"]


def test_a_folder_others_can_write_is_not_used(tmp_path, compiles):
    templates, cache = tmp_path / "templates", tmp_path / "cache"
    templates.mkdir()
    (templates / "a.txt").write_text("A{{ x }}")
    _environment(templates, cache).get_template("a.txt")
    [folder] = list(cache.iterdir())
    folder.chmod(0o777)  # anyone could have put code there
    assert _environment(templates, cache).get_template("a.txt").render(x=1) == "A1"
    assert compiles == ["a.txt", "a.txt"]


def _render(plan_dir: Path, out: Path, cache_home: Path) -> dict[str, bytes]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"XDG_CACHE_HOME": str(cache_home)}
    subprocess.run(
        [sys.executable, "-m", "ffplan", "render", str(plan_dir), "-o", str(out), "-q"], cwd=ROOT, env=env, check=True
    )
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_render_is_the_same_with_a_cold_a_warm_and_an_unwritable_cache(tmp_path, lab_plan):
    from ffplan.plan import dump_plan

    plan_dir = tmp_path / "plan"
    plan_dir.mkdir()
    (plan_dir / "plan.yaml").write_text(dump_plan(lab_plan))
    cold = _render(plan_dir, tmp_path / "cold", tmp_path / "cache")
    assert list((tmp_path / "cache" / "ffplan").glob("templates-*/*.jinja"))
    warm = _render(plan_dir, tmp_path / "warm", tmp_path / "cache")
    (tmp_path / "a-file").write_text("")
    unwritable = _render(plan_dir, tmp_path / "none", tmp_path / "a-file")  # no folder can be made under a file
    assert cold == warm == unwritable
