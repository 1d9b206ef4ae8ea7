"""Input that must be refused before it is built: exit 2 with a located FF003, never a hang or a crash."""

import pytest

BOMB = "\n".join(
    ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    + [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
)  # 9^10 nodes when expanded


@pytest.mark.parametrize(
    "text, message",
    [
        (BOMB, "expands to more than 2,000,000 nodes (alias expansion bomb?)"),
        ("a: " + "[" * 200 + "]" * 200, "nests deeper than 64 levels"),
        ("a: &a [1, *a]", "an alias refers to a node that contains it"),
    ],
    ids=["billion-laughs", "deep-nesting", "recursive-alias"],
)
def test_hostile_yaml_is_refused(ffplan, tmp_path, text, message):
    path = tmp_path / "hostile.yaml"
    path.write_text(text)
    result = ffplan("lint", str(path))
    assert result.exit_code == 2
    assert f"error FF003 document {message}" in result.stdout or f"error FF003 {message}" in result.stdout


def test_fifty_megabyte_file_is_refused_unread(ffplan, tmp_path):
    path = tmp_path / "huge.yaml"
    with path.open("wb") as f:
        f.write(b"# padding line of an oversized inventory\n" * (50 * 1024 * 1024 // 41))
    result = ffplan("lint", str(path))
    assert result.exit_code == 2
    assert "error FF003 file is 52,428," in result.stdout and "over the 8,388,608-byte limit" in result.stdout
