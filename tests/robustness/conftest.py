"""Shared helpers for the robustness probes: a fresh indexed collection, a small release, checks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nclue.runfile import run_path
from tests.fixtures.small_collection import small_build_options


@pytest.fixture(scope="session")
def indexed_source(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture collection with its lexical index, built once (copy it before changing it)."""
    from nclue.index.lexical import build_lexical_index

    root = tmp_path_factory.mktemp("robust") / "coll"
    shutil.copytree(small_collection, root)
    build_lexical_index(root)
    return root


@pytest.fixture
def indexed(indexed_source: Path, tmp_path: Path) -> Path:
    """A private copy of the indexed collection, free to damage."""
    target = tmp_path / "coll"
    shutil.copytree(indexed_source, target)
    return target


@pytest.fixture(scope="session")
def release(indexed_source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 20-query release built from the fixture collection (read-only: copy before changing)."""
    from nclue.bench.pipeline import build

    out = tmp_path_factory.mktemp("robust") / "bench"
    build(indexed_source, out, small_build_options(20))
    return out


@pytest.fixture(scope="session")
def run_file(release: Path, indexed_source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real ``bm25.and`` run of the release (JSONL)."""
    from nclue.systems.run import run_systems

    out = tmp_path_factory.mktemp("robust-runs")
    run_systems(release, indexed_source, ["bm25.decompose(distinct)"], out_dir=out)
    return run_path(out, "bm25.decompose(distinct)")
