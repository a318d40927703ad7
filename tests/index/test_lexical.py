"""The lexical index equals bare bm25s on the same texts, is deterministic and memory-mapped."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from nclue.corpus.store import PageStore
from nclue.errors import NclueError
from nclue.index.lexical import INDEX_DIR, BM25Params, LexicalIndex, build_lexical_index

QUERIES = [
    "regression model",
    "data frame import",
    "chemical equation arrows",
    "the algorithm environment",
    "Verse poetry",
]


def _bare(texts: list[str], **params: object):  # noqa: ANN202
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    model = bm25s.BM25(**params)
    model.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    return model, lambda q: bm25s.tokenize([q], stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False)[
        0
    ]


def test_page_scores_equal_bare_bm25s(lexical_collection: Path) -> None:
    store = PageStore.open(lexical_collection)
    index = LexicalIndex(lexical_collection, store)
    model, tok = _bare(store.texts)
    for q in QUERIES:
        np.testing.assert_allclose(index.page_scores([q])[0], model.get_scores(tok(q)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("method", ["lucene", "robertson", "atire", "bm25l", "bm25+"])
def test_every_variant_equals_bare_bm25s(lexical_collection: Path, tmp_path: Path, method: str) -> None:
    """nclue's own weights (:mod:`nclue.index.bm25_weights`) against bm25s's public BM25 of the same
    variant, at non-default k1, b and δ (BM25L and BM25+ give absent terms a weight too)."""
    coll = tmp_path / "coll"
    coll.mkdir()
    for name in ("docs.parquet", "pages.parquet"):
        shutil.copy2(lexical_collection / name, coll / name)
    params = BM25Params(k1=1.2, b=0.6, delta=0.7, method=method)
    build_lexical_index(coll, params)
    index = LexicalIndex(coll)
    model, tok = _bare(PageStore.open(coll).texts, method=method, k1=1.2, b=0.6, delta=0.7)
    for q in QUERIES:
        np.testing.assert_allclose(index.page_scores([q])[0], model.get_scores(tok(q)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("method", "k1", "delta"), [("bm25+", 0.0, 0.5), ("bm25l", 0.0, 0.0)])
def test_parameters_that_would_weigh_absent_terms_0_over_0_are_refused(method: str, k1: float, delta: float) -> None:
    with pytest.raises(NclueError, match="0/0"):
        BM25Params(k1=k1, delta=delta, method=method)
    BM25Params(k1=k1, delta=delta, method="lucene")  # k1 = 0 is a valid lucene setting (binary term weights)


def test_document_view_equals_bm25s_on_concatenated_pages(lexical_collection: Path) -> None:
    store = PageStore.open(lexical_collection)
    index = LexicalIndex(lexical_collection, store)
    offsets = store.doc_offsets
    docs = ["\n".join(store.texts[offsets[i] : offsets[i + 1]]) for i in range(len(store.doc_ids))]
    model, tok = _bare(docs)
    for q in QUERIES:
        np.testing.assert_allclose(index.doc_scores([q])[0], model.get_scores(tok(q)), rtol=1e-5, atol=1e-5)


def test_index_is_memory_mapped(lexical_collection: Path) -> None:
    index = LexicalIndex(lexical_collection)
    assert isinstance(index.pages.scores["data"].base, np.memmap)
    assert isinstance(index.docs.scores["indices"].base, np.memmap)


def test_rebuild_is_byte_identical_and_params_apply(lexical_collection: Path, tmp_path: Path) -> None:
    coll = tmp_path / "coll"
    coll.mkdir()
    for name in ("docs.parquet", "pages.parquet"):
        shutil.copy2(lexical_collection / name, coll / name)
    build_lexical_index(coll)
    first = {p.relative_to(coll): p.read_bytes() for p in sorted((coll / INDEX_DIR).rglob("*")) if p.is_file()}
    build_lexical_index(coll)
    second = {p.relative_to(coll): p.read_bytes() for p in sorted((coll / INDEX_DIR).rglob("*")) if p.is_file()}
    assert first == second
    build_lexical_index(coll, BM25Params(k1=0.9, b=0.4, method="atire"))
    index = LexicalIndex(coll)
    assert index.params == BM25Params(k1=0.9, b=0.4, method="atire")
    assert index.page_scores(["regression model"]).max() > 0


def test_matches_are_exact_term_containment(lexical_collection: Path) -> None:
    store = PageStore.open(lexical_collection)
    index = LexicalIndex(lexical_collection, store)
    for q in ["regression model", "chemical equation"]:
        terms = set(index.analyzer.terms(q))
        expected = np.array([terms <= set(index.analyzer.terms(t)) for t in store.texts])
        assert np.array_equal(index.page_matches([q])[0], expected)
        assert expected.any()
    assert not index.page_matches(["qqqzzzunseen regression"])[0].any()


def test_missing_index_says_how_to_build(tmp_path: Path, lexical_collection: Path) -> None:
    for name in ("docs.parquet", "pages.parquet"):
        shutil.copy2(lexical_collection / name, tmp_path / name)
    with pytest.raises(NclueError, match="nclue index"):
        LexicalIndex(tmp_path)
    with pytest.raises(NclueError, match="variant"):
        BM25Params(method="bm26")


def test_index_command(tmp_path: Path, lexical_collection: Path, cli) -> None:  # noqa: ANN001
    for name in ("docs.parquet", "pages.parquet"):
        shutil.copy2(lexical_collection / name, tmp_path / name)
    result = cli("index", tmp_path, "--lexical", "--k1", "1.2")
    assert result.exit_code == 0, result.output
    assert LexicalIndex(tmp_path).params.k1 == 1.2


def test_phrase_matches_are_contiguous_stems(lexical_collection: Path) -> None:
    store = PageStore.open(lexical_collection)
    index = LexicalIndex(lexical_collection, store)
    for q in ["regression model", "data frame", "chemical equation", "missing values"]:
        want = index.analyzer.terms(q)
        expected = []
        for text in store.texts:
            seq = index.analyzer.terms(text)
            expected.append(any(seq[i : i + len(want)] == want for i in range(len(seq) - len(want) + 1)))
        got = index.page_phrase_matches([q])[0]
        assert np.array_equal(got, np.array(expected)), q
        assert got.any() and (got <= index.page_matches([q])[0]).all()


def test_stale_index_is_refused(tmp_path: Path, lexical_collection: Path) -> None:
    import pyarrow.parquet as pq

    for name in ("docs.parquet", "pages.parquet"):
        shutil.copy2(lexical_collection / name, tmp_path / name)
    build_lexical_index(tmp_path)
    table = pq.read_table(tmp_path / "pages.parquet")
    pq.write_table(table.slice(0, table.num_rows - 1), tmp_path / "pages.parquet")
    with pytest.raises(NclueError, match="stale"):
        LexicalIndex(tmp_path)
