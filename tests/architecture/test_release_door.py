"""One door to a release: no module but :mod:`nclue.release` names its query, qrels or corpus file.

The check is on code, not prose: an ``ast`` walk looks for string constants equal to a release
file name (a path being built), which docstrings and messages that merely mention a file never are.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "nclue"
RELEASE_FILES = {"queries.jsonl", "qrels.jsonl", "corpus.jsonl", "test.tsv", "qrels/test.tsv"}
STANDALONE = "bench/standalone/"
"""Scripts shipped inside every release that run without nclue (:mod:`nclue.bench.standalone`): they
read the release's files themselves because they cannot import :mod:`nclue.release`."""


def path_constants(src: Path) -> list[str]:
    """``file:line: 'name'`` for every string constant naming a release file outside ``release.py``."""
    out = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        if rel == "release.py" or rel.startswith(STANDALONE):
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


def test_standalone_scripts_import_nothing_from_nclue() -> None:
    """The exemption above holds only while the scripts stay standalone."""
    scripts = sorted((SRC / STANDALONE).glob("*.py"))
    assert len(scripts) >= 2, "the standalone scripts moved; update STANDALONE"
    for path in scripts:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        modules += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        assert not [m for m in modules if m.split(".")[0] == "nclue"], path
