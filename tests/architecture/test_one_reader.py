"""One reader per file kind: only the module that owns a file kind names it in code.

A run folder's ``matrix.json`` is read through :class:`nclue.matrix.runset.RunSet`, a release's
``MANIFEST.json`` through :func:`nclue.release.read_manifest`, a collection's ``collection.json``
through :func:`nclue.corpus.store.collection_record`. The check is an ``ast`` walk for
string constants equal to the file name (a path being built), as in ``test_release_door.py``:
docstrings and messages that merely mention the file are longer strings and never match.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "nclue"
OWNERS = {"matrix.json": "matrix/runset.py", "MANIFEST.json": "release.py", "collection.json": "corpus/store.py"}


def foreign_names(src: Path, owners: dict[str, str] = OWNERS) -> list[str]:
    """``file:line: 'name'`` for every constant naming an owned file outside its owner module."""
    out = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in owners and owners[node.value] != rel:
                out.append(f"{rel}:{node.lineno}: {node.value!r}")
    return out


def test_each_manifest_has_one_reader() -> None:
    assert foreign_names(SRC) == []


def test_the_walk_finds_a_second_reader(tmp_path: Path) -> None:
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "rogue.py").write_text(
        '"""Reads matrix.json."""\nimport json\nM = json.loads(open("runs/" + "matrix.json").read())\n'
    )
    (tmp_path / "release.py").write_text('MANIFEST_FILE = "MANIFEST.json"\n')
    assert foreign_names(tmp_path) == ["report/rogue.py:3: 'matrix.json'"]


def progress_aliases(src: Path) -> list[str]:
    """``file:line`` of every module-level alias of a progress callback type outside ``progress.py``.

    A progress callback is ``Callable[[str, int, int | None], None]`` or ``Callable[[int], None]``;
    they are :class:`nclue.progress.Progress` and :data:`nclue.progress.Advance`, defined once.
    """
    shapes = {"Callable[[str, int, int | None], None]", "Callable[[int], None]", "Callable[[], None]"}
    out = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        if rel == "progress.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            annotation = getattr(node, "annotation", None) if isinstance(node, ast.arg) else None
            value = node.value if isinstance(node, ast.Assign) else annotation
            if value is not None and ast.unparse(value).removesuffix(" | None") in shapes:
                out.append(f"{rel}:{node.lineno}")
    return out


def test_one_progress_protocol() -> None:
    assert progress_aliases(SRC) == []


def test_the_progress_walk_finds_a_second_protocol(tmp_path: Path) -> None:
    (tmp_path / "rogue.py").write_text(
        "from collections.abc import Callable\nTick = Callable[[str, int, int | None], None]\n"
        "def f(tick: Callable[[int], None] | None = None):\n    pass\n"
    )
    assert progress_aliases(tmp_path) == ["rogue.py:2", "rogue.py:3"]
