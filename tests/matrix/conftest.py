"""Fixtures for the matrix/report/reproduce tests: a real benchmark on the small real collection."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

MINI_MATRIX = """
depth = 100
k = 10
form = "clean_v2"

[[run]]
system = "bm25.joint"

[[run]]
system = "bm25.and"
block = "baseline"
forms = ["raw", "clean_v2", "natural"]

[[run]]
system = "bm25.decompose(min)"
block = "decomposition"

[[run]]
system = "bm25.decompose(distinct)"
block = "decomposition"

[[run]]
system = "rrf(bm25.and, bm25.decompose(distinct))"
block = "fusion"

[[contrast]]
name = "Lexical composition"
base = "bm25.and"
variants = ["bm25.decompose(min)", "bm25.decompose(distinct)"]

[[contrast]]
name = "Fusion"
base = "bm25.decompose(distinct)"
variants = ["rrf(bm25.and, bm25.decompose(distinct))"]
"""


@pytest.fixture(scope="session")
def indexed_collection(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of the small real collection with its lexical index."""
    from nclue.index.lexical import build_lexical_index

    coll = tmp_path_factory.mktemp("matrix") / "collection"
    shutil.copytree(small_collection, coll)
    build_lexical_index(coll)
    return coll


@pytest.fixture(scope="session")
def small_bench(indexed_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A benchmark release built by ``nclue build`` from the small real collection."""
    from nclue.bench.pipeline import build
    from tests.fixtures.small_collection import small_build_options

    out = tmp_path_factory.mktemp("matrix") / "bench"
    build(indexed_collection, out, small_build_options(1000))
    return out


@pytest.fixture
def mini_matrix(tmp_path: Path) -> Path:
    """A five-system lexical matrix with two contrasts."""
    path = tmp_path / "mini.toml"
    path.write_text(MINI_MATRIX, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def frozen_runs(small_bench: Path, indexed_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The mini matrix run and reported once (``RUNS/../report`` holds ``frozen.json``); returns RUNS."""
    from nclue.matrix.runner import run_matrix
    from nclue.matrix.spec import load_matrix
    from nclue.report.paper import compute_report, write_report

    root = tmp_path_factory.mktemp("frozen")
    spec_path = root / "mini.toml"
    spec_path.write_text(MINI_MATRIX, encoding="utf-8")
    runs = root / "runs"
    run_matrix(load_matrix(spec_path), small_bench, indexed_collection, runs)
    write_report(compute_report(small_bench, runs, n_boot=200, n_draws=1000), root / "report")
    return runs
