"""The house is one-way: every import in ``src/nclue`` points to the same or a lower layer.

An ``ast`` walk over every module (imports inside functions included) finds each ``nclue.X``
import and fails on any that runs back up the layer order below. Packages are the units;
the foundation modules (records, I/O, tables, the release and run-file readers) sit at the
bottom and may import each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "nclue"

LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(names)
    for names in (
        ("_version", "errors", "api_args", "io", "types", "query", "tables", "release", "runfile", "engine"),
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
