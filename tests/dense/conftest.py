"""Fixtures for the dense tests: small real collections cut from ``small_collection`` and their indexes.

``subset_collection`` keeps four short real documents (algorithms, functan, jura, verse;
about 85 pages) so that embedding with the real bundled MiniLM stays within seconds;
``tiny_collection`` keeps only ``functan`` (16 pages) for build/resume tests.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SUBSET = ("latex/algorithms/algorithms", "latex/functan/functan", "latex/jura/jura", "latex/verse/verse")


def cut_collection(source: Path, target: Path, suffixes: tuple[str, ...]) -> Path:
    """Copy the documents of ``source`` whose doc_id ends with one of ``suffixes`` into a new collection."""
    from nclue.corpus.store import DOCS_FILE, PAGES_FILE, write_table_atomic

    docs = pq.read_table(source / DOCS_FILE)
    pages = pq.read_table(source / PAGES_FILE)
    ids = [d for d in docs.column("doc_id").to_pylist() if d.endswith(suffixes)]
    assert len(ids) == len(suffixes), f"expected documents {suffixes} in {source}, found {ids}"
    keep = pa.array(ids)
    target.mkdir(parents=True)
    write_table_atomic(target / DOCS_FILE, docs.filter(pc.is_in(docs.column("doc_id"), keep)))
    write_table_atomic(target / PAGES_FILE, pages.filter(pc.is_in(pages.column("doc_id"), keep)))
    return target


@pytest.fixture(scope="session")
def subset_collection(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four short real documents (~85 pages) as a collection."""
    return cut_collection(small_collection, tmp_path_factory.mktemp("dense") / "subset", SUBSET)


@pytest.fixture(scope="session")
def subset_dense(subset_collection: Path) -> Path:
    """``subset_collection`` with the default (bfloat16) dense index of the bundled MiniLM (returns the collection)."""
    from nclue.index.dense import build_dense_index

    build_dense_index(subset_collection)
    return subset_collection


@pytest.fixture(scope="session")
def tiny_source(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real 16-page document (functan) as a collection, never written to by tests."""
    return cut_collection(small_collection, tmp_path_factory.mktemp("dense") / "tiny", ("latex/functan/functan",))


@pytest.fixture(scope="session")
def tiny_indexed_source(tiny_source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``tiny_source`` plus a bfloat16 (``torch-bf16``, bundled MiniLM) dense index, built once: the
    tests compare other backends with it, whatever this machine's default backend is."""
    from nclue.index.dense import build_dense_index

    target = tmp_path_factory.mktemp("dense") / "tiny-indexed"
    shutil.copytree(tiny_source, target)
    build_dense_index(target, backend="torch-bf16")
    return target


@pytest.fixture()
def tiny_collection(tiny_source: Path, tmp_path: Path) -> Path:
    """A fresh copy of the tiny collection without vectors (tests write indexes into it)."""
    return Path(shutil.copytree(tiny_source, tmp_path / "tiny"))


@pytest.fixture()
def tiny_indexed(tiny_indexed_source: Path, tmp_path: Path) -> Path:
    """A fresh copy of the tiny collection with its default dense index."""
    return Path(shutil.copytree(tiny_indexed_source, tmp_path / "tiny-indexed"))


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real ``CrossEncoder`` directory: the bundled MiniLM with a seeded one-logit head.

    Its scores are not meaningful relevance (the head is untrained); it exercises the
    cross-encoder path end to end, offline.
    """
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from nclue.models.identity import bundled_model_path

    torch.manual_seed(0)
    target = tmp_path_factory.mktemp("cross") / "minilm-cross"
    model = AutoModelForSequenceClassification.from_pretrained(str(bundled_model_path()), num_labels=1)
    model.save_pretrained(str(target))
    AutoTokenizer.from_pretrained(str(bundled_model_path())).save_pretrained(str(target))
    return target
