"""The engine on a real (small) Debian collection: every system, evidence validity, bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from nclue.errors import NclueError
from nclue.query import render_clean_v2
from nclue.systems.backbone import Request
from nclue.systems.names import EXAMPLES
from nclue.systems.operations import normalise

QUERIES = [
    ("regression model", "data frame", "missing values"),
    ("algorithm", "pseudocode", "loop"),
    ("chemical equation", "arrow", "isotope"),
    ("verse", "stanza"),
    ("function", "environment", "package", "namespace"),
]
# bm25.and_tuned runs only after `nclue tune` wrote its record (tests/systems/test_tuning.py)
BM25_SYSTEMS = [n for n in EXAMPLES if not n.startswith(("dense", "rerank")) and n != "bm25.and_tuned"]


def request(conditions: tuple[str, ...]) -> Request:
    return Request(conditions, render_clean_v2(conditions))


@pytest.mark.parametrize("name", BM25_SYSTEMS)
def test_every_bm25_system_ranks(workspace, name: str) -> None:  # noqa: ANN001
    system = workspace.system(name)
    assert system.name == name
    ids = set(workspace.pages.doc_ids.tolist())
    for conds in QUERIES:
        ranked = system.search(request(conds), depth=5)
        assert len(ranked) <= 5
        assert {d.doc_id for d in ranked} <= ids and len({d.doc_id for d in ranked}) == len(ranked)
        scores = [d.score for d in ranked]
        assert scores == sorted(scores, reverse=True)
        for doc in ranked:
            if system.page_aware and doc.pages:
                page_scores = [s for _, s in doc.pages]
                assert page_scores == sorted(page_scores, reverse=True)
                assert set(doc.evidence) == set(conds)


def _condition_matrix(workspace, conds):  # noqa: ANN001, ANN202
    return normalise(workspace.backbone("bm25").page_scores(list(conds)))


@pytest.mark.parametrize("conds", QUERIES)
def test_distinct_evidence_is_a_valid_optimal_assignment(workspace, conds) -> None:  # noqa: ANN001
    pages = workspace.pages
    store = workspace.store
    analyzer = workspace.backbone("bm25").index.analyzer
    matrix = _condition_matrix(workspace, conds)
    ranked = workspace.system("bm25.decompose(distinct)").search(request(conds), depth=100)
    assert ranked
    for doc in ranked:
        d = workspace.store.doc_index[doc.doc_id]
        start, stop = int(pages.doc_offsets[d]), int(pages.doc_offsets[d + 1])
        assigned = [p for c in conds for p in doc.evidence[c]]
        assert len(assigned) == len(set(assigned)), f"{doc.doc_id}: conditions share a page"
        for c in conds:
            for page in doc.evidence[c]:
                terms = set(analyzer.terms(c))
                assert terms & set(analyzer.terms(store.page_text(doc.doc_id, page))), (
                    f"{doc.doc_id} p.{page} lacks {c!r}"
                )
        # independent optimum: Hungarian on the document's full condition × page matrix
        block = matrix[:, start:stop].astype(np.float64)
        r, c = linear_sum_assignment(block, maximize=True)
        assert doc.score == pytest.approx(block[r, c].sum(), abs=1e-4)


def test_min_product_hmean_use_best_pages(workspace) -> None:  # noqa: ANN001
    conds = QUERIES[0]
    matrix = _condition_matrix(workspace, conds)
    pages = workspace.pages
    best = np.stack([np.maximum.reduceat(row, pages.doc_offsets[:-1]) for row in matrix], axis=1)
    expected = {
        "min": best.min(axis=1),
        "product": best.prod(axis=1),
        "hmean": np.where(best.min(axis=1) > 0, len(conds) / (1 / np.maximum(best, 1e-30)).sum(axis=1), 0),
    }
    for how, values in expected.items():
        ranked = workspace.system(f"bm25.decompose({how})").search(request(conds), depth=3)
        top = workspace.store.doc_index[ranked[0].doc_id]
        assert ranked[0].score == pytest.approx(values.max(), rel=1e-5)
        assert values[top] == pytest.approx(values.max(), rel=1e-5)


def test_and_returns_only_documents_with_every_condition(workspace) -> None:  # noqa: ANN001
    analyzer = workspace.backbone("bm25").index.analyzer
    store = workspace.store
    for conds in QUERIES:
        for doc in workspace.system("bm25.and").search(request(conds)):
            d = store.doc_index[doc.doc_id]
            text = " ".join(store.texts[store.doc_offsets[d] : store.doc_offsets[d + 1]])
            vocab = set(analyzer.terms(text))
            assert all(set(analyzer.terms(c)) <= vocab for c in conds)


def _hand_coverage(workspace, conds, doc_id: str, phrase: bool) -> int:  # noqa: ANN001
    """Conditions matchable to distinct pages of ``doc_id``, by hand: each page's analysed terms are
    searched for the condition's terms as a contiguous run (``phrase``) or anywhere (terms), then every
    injective assignment of a subset of conditions to pages is tried."""
    analyzer = workspace.backbone("bm25").index.analyzer
    store = workspace.store
    d = store.doc_index[doc_id]
    page_terms = [analyzer.terms(t) for t in store.texts[store.doc_offsets[d] : store.doc_offsets[d + 1]]]
    matches = []
    for c in conds:
        want = analyzer.terms(c)
        if phrase:
            hits = {i for i, t in enumerate(page_terms) if any(t[j : j + len(want)] == want for j in range(len(t)))}
        else:
            hits = {i for i, t in enumerate(page_terms) if set(want) <= set(t)}
        matches.append(hits)
    for size in range(len(conds), 0, -1):
        for subset in itertools.combinations(range(len(conds)), size):
            for pages in itertools.product(*(sorted(matches[c]) for c in subset)):
                if len(set(pages)) == size:
                    return size
    return 0


@pytest.mark.parametrize(("name", "phrase"), [("bm25.cover", True), ("bm25.cover(terms)", False)])
def test_cover_ranks_by_hand_computed_distinct_page_coverage(workspace, name: str, phrase: bool) -> None:  # noqa: ANN001
    every = workspace.pages.id_list
    for conds in QUERIES:
        ranked = workspace.system(name).search(request(conds), depth=len(every))
        hand = {doc: _hand_coverage(workspace, conds, doc, phrase) for doc in every}
        assert [int(d.score // (len(conds) + 1)) for d in ranked] == [hand[d.doc_id] for d in ranked]
        assert [hand[d.doc_id] for d in ranked] == sorted((hand[d.doc_id] for d in ranked), reverse=True)
        assert hand[ranked[0].doc_id] == max(hand.values())
    # a fact about the real pages: the verse manual has "verse" and "stanza" as phrases on distinct pages
    top = workspace.system("bm25.cover").search(request(("verse", "stanza")), depth=3)
    assert top[0].doc_id.endswith("latex/verse/verse") and int(top[0].score // 3) == 2


def test_rrf_of_real_systems_is_the_formula_over_their_rankings(workspace) -> None:  # noqa: ANN001
    lexical, sdr = workspace.system("bm25.and"), workspace.system("bm25.decompose(distinct)")
    fused = workspace.system("rrf(bm25.and, bm25.decompose(distinct))")
    assert fused.page_aware
    for conds in QUERIES[:3]:
        a, b = lexical.search(request(conds), 100), sdr.search(request(conds), 100)
        expected: dict[str, float] = {}
        for ranking in (a, b):
            for rank, doc in enumerate(ranking, start=1):
                expected[doc.doc_id] = expected.get(doc.doc_id, 0.0) + 1.0 / (60 + rank)
        got = fused.search(request(conds), 100)
        assert {d.doc_id: d.score for d in got} == pytest.approx(expected, rel=1e-12)
        assert [d.score for d in got] == sorted(expected.values(), reverse=True)
        evidence = {d.doc_id: d.evidence for d in b}  # bm25.and surfaces no pages: evidence comes from the SDR
        assert all(d.evidence == evidence[d.doc_id] for d in got)


def test_bad_input(workspace) -> None:  # noqa: ANN001
    with pytest.raises(NclueError, match="searchable words"):
        workspace.system("bm25.decompose(distinct)").search(request(("the", "regression model")))
    with pytest.raises(NclueError, match="did you mean 'bm25.decompose"):
        workspace.system("bm25.decompse(distinct)")
    with pytest.raises(NclueError, match="unknown backbone"):
        workspace.system("bm52.joint")
    with pytest.raises(NclueError, match="decompose"):
        workspace.system("bm25.decompose(mean)")
    with pytest.raises(NclueError, match="two or more"):
        workspace.system("rrf(bm25.and)")
