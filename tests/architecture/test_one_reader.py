"""One reader per file kind: only the module that owns a file kind names it in code.

A run folder's ``matrix.json`` is read through :class:`nclue.matrix.runset.RunSet`, a release's
``MANIFEST.json`` through :func:`nclue.release.read_manifest`, a collection's ``collection.json``
through :func:`nclue.corpus.store.collection_record`. The check is an ``ast`` walk for
string constants equal to the file name (a path being built), as in ``test_release_door.py``:
docstrings and messages that merely mention the file are longer strings and never match. A
module that imports the owner's constant for the file name (``from nclue.release import
MANIFEST_FILE``) may build the path — to hash it, lock it, write it in a stamp — but a JSON read
of an expression that uses it is a second reader (:func:`imported_reads`).

Progress has one protocol too, :class:`nclue.progress.Progress`: no module defines another
callback type for it, and no job takes ``progress: bool`` and draws its own bars.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "nclue"
OWNERS = {"matrix.json": "matrix/runset.py", "MANIFEST.json": "release.py", "collection.json": "corpus/store.py"}
STANDALONE = "bench/standalone/"
"""Scripts copied into every release that run where nclue is not installed (standard library only,
:mod:`nclue.bench.standalone`): they cannot import the owner, so they carry their own reader."""


def foreign_names(src: Path, owners: dict[str, str] = OWNERS) -> list[str]:
    """``file:line: 'name'`` for every constant naming an owned file outside its owner module."""
    out = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        if rel.startswith(STANDALONE):
            continue
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


JSON_READS = {"loads", "load", "read_json_object", "read_json_record", "read_text", "read_bytes", "open"}
"""Calls that read a file's contents (``json.loads(path.read_text())``, ``nclue.io`` readers, ``open``)."""


def owned_constants(src: Path, owners: dict[str, str] = OWNERS) -> dict[str, set[str]]:
    """Per owner module (dotted, ``nclue.release``) the names of its module-level constants equal to an owned file."""
    out: dict[str, set[str]] = {}
    for name, rel in owners.items():
        path = src / rel
        if not path.is_file():
            continue
        module = "nclue." + rel.removesuffix(".py").replace("/", ".")
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value == name:
                out.setdefault(module, set()).update(t.id for t in node.targets if isinstance(t, ast.Name))
    return out


def imported_reads(src: Path, owners: dict[str, str] = OWNERS) -> list[str]:
    """``file:line: NAME`` for every read call outside an owner whose arguments use an owner's imported constant."""
    constants = owned_constants(src, owners)
    out = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bound = {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module in constants
            for alias in node.names
            if alias.name in constants[node.module]
        }
        if not bound or rel in owners.values():
            continue
        for node in ast.walk(tree):
            func = node.func if isinstance(node, ast.Call) else None
            called = getattr(func, "attr", None) or getattr(func, "id", None)
            if called not in JSON_READS:
                continue
            used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} & bound
            out.extend(f"{rel}:{node.lineno}: {name}" for name in sorted(used))
    return sorted(set(out))


def test_no_module_reads_an_owned_file_through_its_imported_name() -> None:
    assert imported_reads(SRC) == []


def test_the_import_walk_finds_a_read_through_an_imported_name(tmp_path: Path) -> None:
    (tmp_path / "matrix").mkdir()
    (tmp_path / "matrix" / "runset.py").write_text('MANIFEST = "matrix.json"\n')
    (tmp_path / "demo.py").write_text(
        "import json\nfrom nclue.matrix.runset import MANIFEST as M\n"
        "stamp = digest(root / M)\n"  # building the path to hash it is fine
        "data = json.loads((root / M).read_text())\n"
    )
    assert imported_reads(tmp_path, {"matrix.json": "matrix/runset.py"}) == ["demo.py:4: M"]


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


def bool_progress(source: str) -> list[int]:
    """Lines of every ``progress: bool`` (or ``bool | None``) annotation in ``source``: an argument or a field.

    A job takes a :class:`nclue.progress.Progress` callback; the public API's old booleans are turned
    into one in a single place, :func:`nclue.progress.as_progress`, whose argument is not a ``bool``.
    A CLI flag keeps its ``--progress/--no-progress`` option under another parameter name.
    """
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.arg) and node.arg == "progress":
            annotation = node.annotation
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "progress":
            annotation = node.annotation
        else:
            continue
        if annotation is None:
            continue
        written = annotation.value if isinstance(annotation, ast.Constant) else ast.unparse(annotation)
        if written in ("bool", "bool | None", "Optional[bool]"):
            lines.append(node.lineno)
    return sorted(lines)


def test_no_job_takes_progress_as_a_bool() -> None:
    found = [
        f"{path.relative_to(SRC).as_posix()}:{line}"
        for path in sorted(SRC.rglob("*.py"))
        for line in bool_progress(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_bool_walk_finds_a_progress_flag() -> None:
    source = (
        "def job(items, progress: bool = False):\n    pass\n"
        "class Options:\n    progress: bool | None = None\n"
        "def cli(show_progress: bool = True, progress: Progress = quiet):\n    pass\n"
        "def other(verbose: bool, *, progress: 'bool'):\n    pass\n"
    )
    assert bool_progress(source) == [1, 4, 7]


def bar_drawers(src: Path) -> list[str]:
    """``file:line`` of every import of ``rich.progress`` outside ``progress.py`` (the one renderer)."""
    out = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        if rel == "progress.py":
            continue
        lines = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module] if isinstance(node, ast.ImportFrom) else []
            names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module == "rich":
                names += [f"rich.{a.name}" for a in node.names]
            if "rich.progress" in names:
                lines.add(node.lineno)
        out += [f"{rel}:{line}" for line in sorted(lines)]
    return out


def test_only_progress_bars_draws_bars() -> None:
    assert bar_drawers(SRC) == []


def test_the_drawer_walk_finds_a_second_renderer(tmp_path: Path) -> None:
    (tmp_path / "progress.py").write_text("from rich.progress import Progress\n")
    (tmp_path / "job.py").write_text(
        "def run():\n    from rich.progress import Progress\n\n\nimport rich.progress\nfrom rich import progress\n"
    )
    assert bar_drawers(tmp_path) == ["job.py:2", "job.py:5", "job.py:6"]
