"""The README and docs match the tool: every command and option they show exists, and the files they say
`design` and `render` write are the files these commands write."""

import re
import shlex

import pytest
import typer

from ffplan.cli.main import app
from ffplan.plan import load_plan
from ffplan.plan.exports import cables_csv
from ffplan.render import render_plan
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = {path.name: path.read_text(encoding="utf-8") for path in sorted((ROOT / "docs").glob("*.md"))}
COMMANDS_DOC = DOCS["commands.md"]  # every command's examples and what each writes; the README shows one each


def _shown_command_lines(text: str) -> list[str]:
    """`ffplan ...` lines of the sh code blocks, comments dropped, continuation lines joined."""
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            for part in re.split(r"&&|\|", line):
                part = part.split(" #")[0].strip()
                if part.startswith("ffplan "):
                    lines.append(part)
    return lines


def _commands() -> dict[tuple[str, ...], set[str]]:
    """Command path -> every option string it takes (with the global ones)."""
    root = typer.main.get_command(app)
    found: dict[tuple[str, ...], set[str]] = {}

    def walk(cmd, path):
        opts = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts) if o.startswith("-")}
        found[path] = opts | {"--help", "-h"}
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, (*path, name))

    walk(root, ())
    return found


COMMANDS = _commands()
SHOWN = [(name, line) for name, text in [("README.md", README), *DOCS.items()] for line in _shown_command_lines(text)]


def test_every_command_has_an_example_in_the_readme_or_the_docs():
    shown = set()
    for _, line in SHOWN:
        words, path = shlex.split(line)[1:], ()
        while words and (*path, words[0]) in COMMANDS:
            path = (*path, words.pop(0))
        shown.add(path)
    commands = {path for path in COMMANDS if path and not any(p[: len(path)] == path and p != path for p in COMMANDS)}
    assert sorted(commands - shown) == []


def test_readme_stays_short_and_shows_one_example_per_command():
    assert len(README.splitlines()) <= 220
    headings = re.findall(r"^### `ffplan ([a-z ]+?)(?: [A-Z\[]|`)", README, flags=re.M)
    shown = [line for name, line in SHOWN if name == "README.md"]
    for heading in headings:
        assert sum(1 for line in shown if line.startswith(f"ffplan {heading} ") or line == f"ffplan {heading}") >= 1, (
            heading
        )


@pytest.mark.parametrize("where, line", SHOWN, ids=[f"{n}: {line[:60]}" for n, line in SHOWN])
def test_every_shown_command_and_option_exists(where, line):
    words = shlex.split(line)[1:]
    path: tuple[str, ...] = ()
    while words and (*path, words[0]) in COMMANDS:
        path = (*path, words.pop(0))
    assert path, f"{where}: `{line}` names no ffplan command"
    for word in words:
        option = word.split("=")[0]
        if option.startswith("-") and option != "-":
            assert option in COMMANDS[path], f"{where}: `ffplan {' '.join(path)}` has no option {option}"


@pytest.fixture(scope="module")
def rendered(lab_plan_dir) -> dict[str, str]:
    return render_plan(load_plan(lab_plan_dir / "plan.yaml"))


def _render_row(folder: str) -> str:
    return next(line for line in COMMANDS_DOC.splitlines() if line.startswith(f"| `{folder}"))


def _file_names(cell_text: str) -> set[str]:
    """Backticked file names of a README table row (`opensm.conf`, `root_guids.txt`, `guid2lid`...)."""
    names = set(re.findall(r"`([\w.<>-]+)`", cell_text))
    return {n for n in names if "." in n or n in ("guid2lid", "node-name-map")} - {"file,no_fallback"}


def test_commands_doc_names_every_opensm_file_render_writes_and_no_other(rendered):
    written = {path.split("/", 1)[1] for path in rendered if path.startswith("opensm/")}
    shown = {n for n in _file_names(_render_row("opensm/")) if not n.startswith("opensm/")}
    assert shown == written


def test_commands_doc_host_and_export_files_are_written(rendered):
    host_files = {path.rsplit("/", 1)[1] for path in rendered if path.startswith("hosts/")}
    for name in _file_names(_render_row("hosts/")):
        if name.endswith((".toml",)):
            continue  # "3FS SL snippets" are named in docs/render.md
        assert name in host_files, name
    exports = {path.rsplit("/", 1)[1] for path in rendered if path.startswith("exports/")}
    row = _render_row("exports/")
    for name in ("topology.conf", "cables.csv", "bom.csv"):
        assert f"`{name}`" in row and name in exports
    assert "Ansible inventory" in row and "ansible-inventory.yaml" in exports
    assert "SVG" in row and any(name.endswith(".svg") for name in exports)


def test_readme_output_folders_are_those_make_run_writes():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    plan_dir = re.search(r"FFPLAN\) design inventories/fire-flyer-2.yaml -o \$\(OUT\)/(\S+)", makefile).group(1)
    files_dir = re.search(r"FFPLAN\) render \$\(OUT\)/\S+ -o \$\(OUT\)/(\S+)", makefile).group(1)
    assert f"out/{plan_dir}" in README and f"out/{files_dir}" in README
    shown_outputs = set(re.findall(r"\bout/[\w./-]+", README))
    assert shown_outputs <= {
        f"out/{plan_dir}",
        f"out/{plan_dir}-new",
        f"out/{plan_dir}/plan.yaml",
        f"out/{files_dir}",
        "out/fire-flyer-2",
    }, shown_outputs


def test_commands_doc_cables_csv_columns_are_the_real_header(lab_plan_dir):
    header = cables_csv(load_plan(lab_plan_dir / "plan.yaml")).splitlines()[0].split(",")
    i = COMMANDS_DOC.index("`DIR/cables.csv`")
    described = COMMANDS_DOC[i : COMMANDS_DOC.index("`DIR/bom.csv`", i)]
    named = re.findall(r"\b[a-z_]+\b", described.split("columns", 1)[1])
    for column in header:
        assert column in named or column.startswith("side_b_"), (
            f"docs/commands.md does not name the cables.csv column {column}"
        )
    assert set(re.findall(r"`(ffplan_\w+)`", described)) == {c for c in header if c.startswith("ffplan_")}


def test_design_outputs_the_docs_name_are_what_design_writes(tmp_path):
    from typer.testing import CliRunner

    res = CliRunner().invoke(
        app, ["design", str(ROOT / "inventories" / "lab.yaml"), "-o", str(tmp_path / "plan"), "-q"]
    )
    assert res.exit_code == 0, res.output
    written = {p.name for p in (tmp_path / "plan").iterdir()}
    i = COMMANDS_DOC.index("Writes `DIR/plan.yaml`")
    described = COMMANDS_DOC[i : COMMANDS_DOC.index("The output folder is replaced", i)]
    shown = set(re.findall(r"`(?:DIR/)?([\w-]+\.(?:yaml|csv|json))`", described))
    assert shown == written
    i = README.index("writes `plan.yaml`")
    assert set(re.findall(r"`([\w-]+\.(?:yaml|csv|json))`", README[i : README.index("`--previous`", i)])) == written


def test_the_documented_dac_reach_is_the_catalogs():
    import yaml

    reach = {
        yaml.safe_load((ROOT / "ffplan" / "catalog" / f"{name}.yaml").read_text())["cables"]["dac_max_m"]["value"]
        for name in ("paper", "list-price")
    }
    assert len(reach) == 1
    assert f"`cables.dac_max_m` ({reach.pop()} m" in COMMANDS_DOC
    assert "DAC) up to 2 m" not in COMMANDS_DOC


def test_files_the_docs_cite_exist():
    for where, text in [
        ("README.md", README),
        *DOCS.items(),
        ("paper.yaml", (ROOT / "ffplan" / "catalog" / "paper.yaml").read_text(encoding="utf-8")),
    ]:
        for cited in re.findall(r"\b((?:tests|docs|examples|benchmarks|inventories|templates)/[\w./-]+\.\w+)", text):
            assert (ROOT / cited).exists(), f"{where} cites {cited}, which does not exist"


def test_ci_example_installs_ffplan_from_its_repository():
    workflow = (ROOT / "examples" / "ci" / "lint-inventories.yml").read_text(encoding="utf-8")
    install = re.search(r"run: (pip install .*)", workflow).group(1)
    assert "git+" in install, "ffplan is not on PyPI: `pip install ffplan` fails"


def test_help_examples_use_real_options_and_the_folders_make_run_writes():
    from typer.testing import CliRunner

    for path in (p for p in COMMANDS if p):
        text = CliRunner().invoke(app, [*path, "--help"]).output
        for example in (
            part.strip()
            for line in re.findall(r"Example: (.*)", text)
            for part in line.split(";")
            if part.strip().startswith("ffplan ")
        ):
            test_every_shown_command_and_option_exists("--help", example)
            for folder in re.findall(r"\bout/[\w./-]+", example):
                assert folder in ("out/fire-flyer-2/plan", "out/fire-flyer-2/plan-new", "out/fire-flyer-2/files"), (
                    example
                )


def test_readme_headings_name_arguments_and_values_as_the_help_does():
    root = typer.main.get_command(app)
    for heading in re.findall(r"^### `ffplan ([^`]+)`", README, flags=re.M):
        words = heading.split()
        command, path = root, []
        while words and words[0] in getattr(command, "commands", {}):
            command = command.commands[words[0]]
            path.append(words.pop(0))
        arguments = [p.metavar for p in command.params if p.param_type_name == "argument"]
        shown = [w.strip("[].") for w in words if not w.startswith("-") and w.strip("[].").isupper()]
        options = {o: p.metavar for p in command.params if p.param_type_name == "option" for o in p.opts}
        values = [w for prev, w in zip(words, words[1:]) if prev.startswith("-")]
        assert shown == arguments + values, heading
        for prev, value in zip(words, words[1:]):
            if prev.startswith("-"):
                assert options[prev] == value, f"{heading}: {prev} takes {options[prev]}"
