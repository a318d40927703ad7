"""The house is one-way: every import in ``src/nclue`` points to the same or a lower layer.

An ``ast`` walk over every module (imports inside functions included) finds each ``nclue.X``
import and fails on any that runs back up the layer order below. Packages are the units;
the foundation modules (records, I/O, tables, the release and run-file readers) sit at the
bottom and may import each other.

Within a layer, modules form no cycle either: the module-level graph (every import, function-level
ones included; annotation-only imports under ``if TYPE_CHECKING:`` excluded, since they never run)
is acyclic, checked with Tarjan's strongly connected components.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "nclue"

LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(names)
    for names in (
        (
            "_version",
            "_moved",
            "errors",
            "api_args",
            "io",
            "progress",
            "types",
            "query",
            "tables",
            "release",
            "runfile",
            "engine",
        ),
        ("llm",),
        ("corpus",),
        ("models",),
        ("index",),
        ("evidence",),
        ("systems",),
        ("stats",),
        ("scoring",),
        ("bench",),
        ("select",),
        ("audit",),
        ("reader",),
        ("matrix",),
        ("report",),
        ("api", "demo"),
        ("cli", "__init__"),
    )
)
RANK = {unit: i for i, layer in enumerate(LAYERS) for unit in layer}


def unit_of(path: Path, src: Path = SRC) -> str:
    """The layer unit of a source file: its top-level package or module name under ``nclue``."""
    rel = path.relative_to(src)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def imported_units(path: Path) -> list[tuple[int, str]]:
    """``(line, unit)`` of every ``nclue`` import in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "nclue":
                names = [f"nclue.{a.name}" for a in node.names]
            else:
                names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "nclue":
                out.append((node.lineno, parts[1] if len(parts) > 1 else "__init__"))
    return out


def violations(src: Path = SRC) -> list[str]:
    """Every import under ``src`` that runs back up the layers (or names an unknown unit)."""
    found = []
    for path in sorted(src.rglob("*.py")):
        here = unit_of(path, src)
        for line, there in imported_units(path):
            if there not in RANK:
                found.append(f"{path.relative_to(src)}:{line}: nclue.{there} is in no layer; add it to LAYERS")
            elif RANK[there] > RANK[here]:
                found.append(
                    f"{path.relative_to(src)}:{line}: {here} (layer {RANK[here]}) imports {there} "
                    f"(layer {RANK[there]}) — an import that runs back up"
                )
    return found


def test_every_unit_has_a_layer() -> None:
    units = {unit_of(p) for p in SRC.rglob("*.py")}
    assert units <= set(RANK), f"units without a layer: {sorted(units - set(RANK))}"


def test_imports_only_run_down_the_layers() -> None:
    assert violations() == []


def test_the_checker_catches_an_upward_import(tmp_path: Path) -> None:
    """The walk is real: a low-layer module that imports the report (inside a function) is reported."""
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "bad.py").write_text("def f():\n    from nclue.report.paper import compute_report\n")
    (tmp_path / "stats.py").write_text("import nclue.stats\nfrom nclue import errors\n")
    assert violations(tmp_path) == [
        "corpus/bad.py:2: corpus (layer 2) imports report (layer 14) — an import that runs back up"
    ]


def module_name(path: Path, src: Path) -> str:
    """``nclue.a.b`` for ``src/a/b.py`` (a package's ``__init__.py`` is the package)."""
    parts = ("nclue", *path.relative_to(src).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node outside ``if TYPE_CHECKING:`` blocks."""
    out, stack = [], [tree]
    while stack:
        node = stack.pop()
        test = node.test if isinstance(node, ast.If) else None
        if (
            isinstance(test, ast.Name | ast.Attribute)
            and getattr(test, "id", getattr(test, "attr", "")) == "TYPE_CHECKING"
        ):
            stack.extend(node.orelse)
            continue
        out.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return out


def module_graph(src: Path = SRC) -> dict[str, set[str]]:
    """``module -> modules it imports`` over ``src`` (``from pkg import mod`` counts as importing ``pkg.mod``)."""
    paths = {module_name(p, src): p for p in src.rglob("*.py")}

    def known(name: str) -> str:
        while name not in paths and "." in name:
            name = name.rsplit(".", 1)[0]
        return name

    graph: dict[str, set[str]] = {m: set() for m in paths}
    for module, path in paths.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # from .x import y: relative to this module's package
                    parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*parts, *([node.module] if node.module else [])])
                targets = [f"{base}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for target in targets:
                if target.split(".")[0] == "nclue" and (there := known(target)) in paths and there != module:
                    graph[module].add(there)
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph) + 100))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_import_cycle_at_any_level() -> None:
    assert import_cycles(module_graph()) == []


def test_the_cycle_check_finds_a_function_level_cycle(tmp_path: Path) -> None:
    """A lazy import back (inside a function) is a cycle; one under ``TYPE_CHECKING`` is not."""
    (tmp_path / "index").mkdir()
    (tmp_path / "index" / "__init__.py").write_text("")
    (tmp_path / "index" / "a.py").write_text("from nclue.index.b import g\n")
    (tmp_path / "index" / "b.py").write_text("def g():\n    from nclue.index import a\n")
    (tmp_path / "index" / "c.py").write_text(
        "from typing import TYPE_CHECKING\nfrom nclue.index.a import x\nif TYPE_CHECKING:\n    from nclue.index.d import y\n"
    )
    (tmp_path / "index" / "d.py").write_text("from nclue.index.c import z\n")
    (tmp_path / "index" / "e.py").write_text(
        "import typing\nif typing.TYPE_CHECKING:\n    from nclue.index.f import w\n"
    )
    (tmp_path / "index" / "f.py").write_text("from .e import v\n")
    (tmp_path / "index" / "g.py").write_text("from . import h\n")
    (tmp_path / "index" / "h.py").write_text("def k():\n    import nclue.index.g as g\n")
    assert import_cycles(module_graph(tmp_path)) == [
        ["nclue.index.a", "nclue.index.b"],
        ["nclue.index.g", "nclue.index.h"],
    ]
