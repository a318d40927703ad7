"""One door to a release: no module but :mod:`nclue.release` names its query, qrels or corpus file.

The check is on code, not prose: an ``ast`` walk looks for string constants equal to a release
file name (a path being built), which docstrings and messages that merely mention a file never are.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "nclue"
RELEASE_FILES = {"queries.jsonl", "qrels.jsonl", "corpus.jsonl", "test.tsv", "qrels/test.tsv"}


def path_constants(src: Path) -> list[str]:
    """``file:line: 'name'`` for every string constant naming a release file outside ``release.py``."""
    out = []
    for path in sorted(src.rglob("*.py")):
        if path.relative_to(src).as_posix() == "release.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in RELEASE_FILES:
                out.append(f"{path.relative_to(src)}:{node.lineno}: {node.value!r}")
    return out


def test_only_the_release_module_opens_release_files() -> None:
    assert path_constants(SRC) == []


def test_the_walk_finds_a_second_reader(tmp_path: Path) -> None:
    (tmp_path / "rogue.py").write_text(
        '"""Reads queries.jsonl."""\nfrom pathlib import Path\nQ = Path("b") / "queries.jsonl"\n'
    )
    assert path_constants(tmp_path) == ["rogue.py:3: 'queries.jsonl'"]
