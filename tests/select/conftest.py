"""Fixtures for coverage-selection tests: a bag-of-words hashing encoder and task-set copies."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.select.builders import PHRASES, write_collection, write_release

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "coverage"


class HashingEncoder:
    """Deterministic stand-in for MiniLM: hashed bag of lower-cased words, L2-normalised."""

    backend = "hashing"
    max_length = 512
    batch_size = 0

    def __init__(self, dim: int = 64) -> None:
        from nclue.models.identity import ModelIdentity

        self.dim = dim
        self.calls = 0
        self.identity = ModelIdentity(f"hashing-test-{dim}", "0" * 64)

    def encode(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                out[i, int(hashlib.sha256(word.encode()).hexdigest()[:8], 16) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)


@pytest.fixture
def encoder() -> HashingEncoder:
    return HashingEncoder()


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    """A writable copy of the hand-made example task set."""
    target = tmp_path / "tasks"
    shutil.copytree(EXAMPLES, target)
    return target


SELECT_DOCS = ("latex/algorithms/algorithms", "latex/algorithmicx/algorithmicx", "latex/functan/functan")


@pytest.fixture(scope="session")
def lexical_only(small_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three real documents (62 pages) of the fixture collection with a lexical index only."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from nclue.corpus.store import DOCS_FILE, PAGES_FILE, write_table_atomic
    from nclue.index.lexical import build_lexical_index

    target = tmp_path_factory.mktemp("select") / "three"
    target.mkdir()
    docs = pq.read_table(small_collection / DOCS_FILE)
    pages = pq.read_table(small_collection / PAGES_FILE)
    keep = pa.array([d for d in docs.column("doc_id").to_pylist() if d.endswith(SELECT_DOCS)])
    write_table_atomic(target / DOCS_FILE, docs.filter(pc.is_in(docs.column("doc_id"), keep)))
    write_table_atomic(target / PAGES_FILE, pages.filter(pc.is_in(pages.column("doc_id"), keep)))
    build_lexical_index(target)
    return target


@pytest.fixture(scope="session")
def indexed(lexical_only: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``lexical_only`` plus a dense index of the bundled MiniLM (ONNX, first window per page)."""
    import os

    from nclue.index.dense import build_dense_index

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    target = tmp_path_factory.mktemp("select") / "three-indexed"
    shutil.copytree(lexical_only, target)
    build_dense_index(target, backend="onnx", max_chunks_per_page=1)
    return target


@pytest.fixture(scope="session")
def phrase_bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """:func:`build_phrase_bench` once per session."""
    return build_phrase_bench(tmp_path_factory.mktemp("phrases"))


def build_phrase_bench(base: Path) -> tuple[Path, Path]:
    """A collection of 8 documents × 4 pages and a release whose labels say: a page establishes a
    condition when it states the phrase twice (a surface-form rule, as the real builder's).

    Document ``d{i}`` states phrase ``i % 4`` twice on page ``1 + i % 4`` and once, with the words
    apart, on another page; query ``q{j}`` asks for phrases ``j`` and ``j + 1``.
    """
    docs, evidence = {}, {}
    for i in range(8):
        phrase = PHRASES[i % 4]
        first, second = phrase.split()
        pages = [f"filler text number {i} page {p} about nothing in particular" for p in range(1, 5)]
        pages[i % 4] = f"Here {phrase} is defined. The {phrase} is used."
        pages[(i + 1) % 4] = f"{first} appears and later {second} appears"
        docs[f"d{i}"] = pages
        evidence.setdefault(phrase, []).append((f"d{i}", 1 + i % 4))
    coll = write_collection(base / "coll", docs)
    queries = [(f"q{j}", [PHRASES[j], PHRASES[(j + 1) % 4]]) for j in range(4)]
    qrels = []
    for qid, conds in queries:
        for doc in sorted({d for c in conds for d, _ in evidence[c]}):
            qrels.append((qid, doc, {c: [p for d, p in evidence[c] if d == doc] for c in conds}))
    bench = write_release(base / "bench", queries, qrels, sorted(docs))
    return bench, coll
