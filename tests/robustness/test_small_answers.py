"""Small wrong answers made impossible (issue 28, cause 11): one concept, one requirement; one block, one Holm term."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nclue.errors import NclueError
from nclue.scoring.compare import read_blocks
from nclue.select.single import parse_requirements


def test_requirements_differing_in_case_or_spacing_are_one() -> None:
    got = parse_requirements("q", ["debugging", "Debugging", " debugging ", "line  numbering", "Line numbering"])
    assert got == ("debugging", "line  numbering")


@pytest.mark.parametrize("bad", ["line numbering", ["a", 3]])
def test_requirements_that_are_not_a_list_of_strings_are_refused(bad: object) -> None:
    with pytest.raises(NclueError, match="requirements must be a list of strings"):
        parse_requirements("q", bad)


def test_a_repeated_block_name_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "blocks.json"
    block = {"name": "fusion", "endpoints": ["a", "b"]}
    path.write_text(json.dumps({"blocks": [block, {**block, "endpoints": ["c"]}]}))
    with pytest.raises(NclueError, match=r"block #2 repeats the name 'fusion' of block #1"):
        read_blocks(path, "base")


def test_a_deeply_nested_blocks_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(NclueError, match="nested too deeply"):
        read_blocks(path, "base")
