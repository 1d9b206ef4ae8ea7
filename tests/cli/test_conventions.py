"""What a user of ruff, yamllint or pre-commit expects of a command-line tool: --version/-V, shell completion,
`lint -` and `lint` with no path, a project config file, a pre-commit hook that finds inventories anywhere,
and help texts that name arguments as the docs do."""

import re
import textwrap

import pytest
import yaml
from typer.testing import CliRunner

from ffplan import __version__
from ffplan.cli.main import app
from tests.conftest import ROOT

runner = CliRunner()
HELP_WIDTH = 80  # click re-flows help paragraphs to at most 80 columns
LAB = (ROOT / "inventories" / "lab.yaml").read_text(encoding="utf-8")
QOS_BAD = (ROOT / "tests" / "errors" / "qos.yaml").read_text(encoding="utf-8")  # FF401-FF404 findings
COMMANDS = [
    ["lint"],
    ["rules"],
    ["explain"],
    ["schema"],
    ["design"],
    ["render"],
    ["diff"],
    ["verify"],
    ["analyze"],
    ["audit"],
    ["reroute"],
    ["report", "cost"],
    ["report", "facility"],
]


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(flag):
    res = runner.invoke(app, [flag])
    assert res.exit_code == 0
    assert res.output == f"ffplan {__version__}\n"


def test_shell_completion_is_offered_and_completes_commands_and_options():
    assert "--install-completion" in runner.invoke(app, ["--help"]).output
    script = runner.invoke(app, ["--show-completion", "bash"])
    assert script.exit_code == 0 and "_FFPLAN_COMPLETE=complete_bash" in script.output
    env = {"_FFPLAN_COMPLETE": "complete_bash", "COMP_WORDS": "ffplan ana", "COMP_CWORD": "1"}
    assert runner.invoke(app, [], prog_name="ffplan", env=env).output == "analyze\n"
    env.update(COMP_WORDS="ffplan lint --only", COMP_CWORD="2")
    assert runner.invoke(app, [], prog_name="ffplan", env=env).output == "--only-inventories\n"


@pytest.mark.parametrize(
    "words, expected",
    [
        ("ffplan analyze PLAN --pattern sh", "shift\n"),
        ("ffplan explain FF10", "".join(f"FF10{i}\n" for i in range(1, 10))),
        ("ffplan verify PLAN --zone z", "za\nzb\n"),
        ("ffplan analyze PLAN --plane ", "lab\n"),
    ],
)
def test_completion_offers_values(tmp_path, words, expected):
    """Patterns, rule ids and the plan's zones and planes are completed (completion offered no values)."""
    design = runner.invoke(app, ["design", str(ROOT / "inventories" / "lab.yaml"), "-o", str(tmp_path / "plan"), "-q"])
    assert design.exit_code == 0, design.output
    line = words.replace("PLAN", str(tmp_path / "plan"))
    env = {
        "_FFPLAN_COMPLETE": "complete_bash",
        "COMP_WORDS": line,
        "COMP_CWORD": str(len(line.split()) - (0 if line.endswith(" ") else 1)),
    }
    assert runner.invoke(app, [], prog_name="ffplan", env=env).output == expected


def test_lint_reads_standard_input_and_names_it():
    res = runner.invoke(app, ["lint", "-"], input=QOS_BAD)
    assert res.exit_code == 1
    assert "<stdin>:59:29: error FF402 traffic class 'hfreduce' uses VL15" in res.output
    clean = runner.invoke(app, ["lint", "-"], input=LAB)
    assert clean.exit_code == 0 and "<stdin>: inventory 'lab'" in clean.output


def test_lint_of_undecodable_standard_input_is_an_input_error():
    res = runner.invoke(app, ["lint", "-"], input=b"name: \xff\n")
    assert res.exit_code == 2
    assert re.search(r"^<stdin>:(\d+:\d+: )?error FF003 file is not UTF-8 text \(byte 6\)", res.output, flags=re.M)


def test_lint_without_a_path_lints_the_current_folder(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "bad.yaml").write_text(QOS_BAD, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["lint"])
    assert res.exit_code == 1
    assert "sub/bad.yaml:60:18: error FF401" in res.output


def test_lint_without_a_path_in_the_project_root_lints_the_shipped_inventories(monkeypatch):
    """It linted tests/ and its failing fixtures too (245 errors): pyproject.toml names the inventories."""
    monkeypatch.chdir(ROOT)
    res = runner.invoke(app, ["lint"])
    assert res.exit_code == 0, res.output[-2000:]
    shipped = len(list((ROOT / "inventories").glob("*.yaml")))
    assert f"no findings in {shipped} files" in res.output


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")


def test_pyproject_config_selects_and_ignores_rules_found_from_a_subfolder(tmp_path, monkeypatch):
    _write(
        tmp_path / "pyproject.toml",
        """\
        [project]
        name = "cluster"

        [tool.ffplan]
        select = ["FF4"]
        ignore = ["FF402"]
        """,
    )
    _write(tmp_path / "inventories" / "a.yaml", QOS_BAD)
    monkeypatch.chdir(tmp_path / "inventories")
    res = runner.invoke(app, ["lint", "a.yaml"])
    rules = set(re.findall(r"(?:error|warning) (FF\d+)", res.output))
    assert rules == {"FF401", "FF403", "FF404"}, res.output  # FF402 ignored; without the config FF402 is there too
    assert runner.invoke(app, ["lint", "a.yaml", "--config", str(tmp_path / "none.yaml")]).exit_code == 2


def test_ffplan_yaml_per_file_ignores_and_inventories(tmp_path, monkeypatch):
    _write(
        tmp_path / ".ffplan.yaml",
        """\
        inventories: ["clusters/*.yaml"]
        per-file-ignores:
          "clusters/old-*.yaml": [FF4]
        """,
    )
    _write(tmp_path / "clusters" / "old-1.yaml", QOS_BAD)
    _write(tmp_path / "clusters" / "new.yaml", QOS_BAD)
    _write(tmp_path / "notes" / "other.yaml", "not: an inventory\n")
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["lint"])
    assert "clusters/new.yaml:59:29: error FF402" in res.output
    assert not re.search(r"old-1\.yaml:\d", res.output)  # every FF4xx finding of it is ignored
    assert "other.yaml" not in res.output  # not among the configured inventories
    assert res.exit_code == 1


@pytest.mark.parametrize(
    "config, where, message, hint",
    [
        (
            "ignore: [FF9999]\n",
            ".ffplan.yaml:1:1",
            "ignore: 'FF9999' is no rule id or prefix of one",
            "`ffplan rules` lists them",
        ),
        ("selcet: [FF1]\n", ".ffplan.yaml:1:1", "selcet: unknown setting", "did you mean 'select'?"),
        (
            "select: FF1\n",
            ".ffplan.yaml:1:1",
            "select: expected a list of rule ids, got 'FF1'",
            'e.g. ["FF501", "FF1"]',
        ),
    ],
)
def test_bad_config_is_an_input_error_located_in_its_file(tmp_path, monkeypatch, config, where, message, hint):
    _write(tmp_path / ".ffplan.yaml", config)
    _write(tmp_path / "a.yaml", LAB)
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["lint", "a.yaml"])
    assert res.exit_code == 2
    assert f"error: {where}: {message}" in res.output
    assert f"hint: {hint}" in res.output


def test_bad_pyproject_setting_names_its_line(tmp_path, monkeypatch):
    _write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n\n[tool.ffplan]\nselect = ["FF1"]\nignore = ["XX1"]\n')
    _write(tmp_path / "a.yaml", LAB)
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["lint", "a.yaml"])
    assert res.exit_code == 2
    assert "error: pyproject.toml:6:1: tool.ffplan.ignore: 'XX1' is no rule id or prefix of one" in res.output


def test_pre_commit_hook_takes_every_yaml_file_and_lints_only_inventories(tmp_path, monkeypatch):
    hook = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))[0]
    assert re.search(hook["files"], "clusters/site-a/fabric.yml") and re.search(hook["files"], "inventories/lab.yaml")
    args = hook["entry"].split()[1:]
    _write(tmp_path / "clusters" / "bad.yaml", QOS_BAD)
    _write(tmp_path / ".github" / "workflows" / "ci.yml", "on: push\njobs: {}\n")
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, [*args, "clusters/bad.yaml", ".github/workflows/ci.yml"])
    assert res.exit_code == 1 and "clusters/bad.yaml:59:29: error FF402" in res.output
    assert "ci.yml" not in res.output
    assert runner.invoke(app, [*args, ".github/workflows/ci.yml"]).exit_code == 0


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_names_values_as_the_docs_do(command):
    res = runner.invoke(app, [*command, "--help"])
    assert res.exit_code == 0
    text = res.output
    assert not re.search(r"<[a-z]+[^>]*>", text), "a Python type name such as <list[Path]> or <bool>"
    assert "\\[" not in text, "a markup escape printed as written (help is plain text): switch\\[port]"
    arguments = re.findall(r"\{(\w+)\}", text.splitlines()[0])
    assert all(a.isupper() for a in arguments), text.splitlines()[0]
    assert set(arguments) <= {"INVENTORY", "PLAN", "OLD", "NEW", "OUT", "INVENTORY_OR_PLAN", "RULE", "FABRIC"}
    description = text.split("\nArguments:")[0].split("\nOptions:")[0].splitlines()[1:]
    for line, following in zip(description, description[1:]):
        if line.strip() and following.strip():  # within a paragraph, a line ends only where the next word would not fit
            assert len(line.rstrip()) + 1 + len(following.split()[0]) > HELP_WIDTH, f"broken mid-sentence: {line!r}"


def test_every_command_help_has_an_example():
    for command in COMMANDS:
        assert re.search(r"Example: (.*; )?ffplan ", runner.invoke(app, [*command, "--help"]).output), command
