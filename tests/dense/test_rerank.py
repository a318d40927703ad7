"""rerank(BASE, SCORER, pool=N): a fixed pool from the base run, rescored, never extended."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from nclue.errors import NclueError
from nclue.systems.backbone import Request
from nclue.systems.registry import Workspace
from nclue.systems.rerank import RerankSystem

REQUEST = Request(
    conditions=("numbered lines of verse", "footnotes in legal texts"),
    text='"numbered lines of verse"; "footnotes in legal texts"',
)


@pytest.fixture(scope="module")
def workspace(subset_dense):
    return Workspace(subset_dense)


@dataclass
class Spy:
    """Wraps a real system and records the depth it is asked for."""

    inner: object
    depths: list

    @property
    def page_aware(self):
        return self.inner.page_aware

    def search(self, request, depth=100):
        self.depths.append(depth)
        return self.inner.search(request, depth)


def test_pool_is_exactly_the_base_top_100(workspace):
    system = workspace.system("rerank(dense.decompose(min), minilm)")
    assert system.pool == 100 and system.name == "rerank(dense.decompose(min), minilm)"
    spy = Spy(system.base, [])
    system.base = spy
    ranking = system.search(REQUEST, depth=100)
    base = spy.inner.search(REQUEST, depth=100)
    assert spy.depths == [100]
    assert sorted(d.doc_id for d in ranking) == sorted(d.doc_id for d in base)


def test_pool_is_never_extended(workspace):
    system = workspace.system("rerank(dense.decompose(min), minilm, pool=2)")
    base = workspace.system("dense.decompose(min)").search(REQUEST, depth=100)
    ranking = system.search(REQUEST, depth=100)
    assert len(base) == 4 and len(ranking) == 2
    assert {d.doc_id for d in ranking} == {d.doc_id for d in base[:2]}
    assert len(system.search(REQUEST, depth=1)) == 1


def test_bi_encoder_scores_by_hand(workspace):
    """With the dense joint base, the best surfaced page is the best page: rerank keeps the scores."""
    base = workspace.system("dense.joint(max)").search(REQUEST, depth=100)
    reranked = workspace.system("rerank(dense.joint(max), minilm)").search(REQUEST, depth=100)
    assert [(d.doc_id, round(d.score, 5)) for d in reranked] == [(d.doc_id, round(d.score, 5)) for d in base]
    page = workspace.backbone("dense").page_scores([REQUEST.text])[0]
    decompose = workspace.system("rerank(dense.decompose(min), minilm)").search(REQUEST, depth=100)
    for doc in decompose:
        rows = [workspace.store.doc_index[doc.doc_id]]
        start = workspace.pages.doc_offsets[rows[0]]
        numbers = [p for p, _ in doc.pages[:3]]
        pages = [start + int(np.flatnonzero(workspace.pages.page_number[start:] == p)[0]) for p in numbers]
        assert doc.score == pytest.approx(float(page[pages].max()), rel=1e-5)
        assert doc.evidence  # base evidence is carried over


def test_ties_keep_the_base_order(workspace):
    class Constant:
        def doc_scores(self, query, doc_rows):
            return np.zeros(len(doc_rows), np.float32)

    base = workspace.system("dense.decompose(hmean)")
    system = RerankSystem("r", base, Constant(), workspace.pages, workspace.store.doc_index, pool=100)
    assert [d.doc_id for d in system.search(REQUEST)] == [d.doc_id for d in base.search(REQUEST, depth=100)]


def test_cross_encoder_scorer(workspace, tiny_cross_encoder, monkeypatch):
    from sentence_transformers import CrossEncoder

    monkeypatch.setenv("NCLUE_MODEL_MINILM_CROSS", str(tiny_cross_encoder))
    ws = Workspace(workspace.collection_dir)
    system = ws.system("rerank(dense.joint(max), minilm-cross, pool=3)")
    ranking = system.search(REQUEST, depth=100)
    base = ws.system("dense.joint(max)").search(REQUEST, depth=3)
    assert sorted(d.doc_id for d in ranking) == sorted(d.doc_id for d in base)
    assert [d.score for d in ranking] == sorted((d.score for d in ranking), reverse=True)
    # by hand for the first document: best CrossEncoder score over its surfaced pages' passages
    doc = ranking[0]
    rows = system.candidate_rows(doc)
    from nclue.models.chunking import chunk_pages
    from nclue.models.tokenizer import load_tokenizer_dir

    texts = [ws.store.texts[r] for r in rows]
    chunks = chunk_pages(texts, load_tokenizer_dir(tiny_cross_encoder), system.scorer.window, 32)
    model = CrossEncoder(str(tiny_cross_encoder), device="cpu")
    expected = model.predict([(REQUEST.text, t) for t in chunks.texts(texts)]).max()
    assert doc.score == pytest.approx(float(expected), rel=1e-4, abs=1e-5)


def test_arms_with_one_scorer_load_its_model_once(workspace, monkeypatch):
    """``rrf(rerank(A, minilm), rerank(B, minilm))`` loaded the model once per arm (issue 28: a
    299-arm name was killed at ~20 GB); arms with the same scorer now share one loaded model."""
    import nclue.models.encoder as encoder

    loads = []
    real = encoder.load_encoder
    monkeypatch.setattr(encoder, "load_encoder", lambda *a, **k: loads.append(a) or real(*a, **k))
    ws = Workspace(workspace.collection_dir)
    fused = ws.system("rrf(rerank(dense.joint(max), minilm, pool=3), rerank(dense.decompose(min), minilm, pool=2))")
    first, second = (ws.system(name) for name in ("rerank(dense.joint(max), minilm, pool=3)",
                                                  "rerank(dense.decompose(min), minilm, pool=2)"))  # fmt: skip
    assert first.scorer is second.scorer and first.pool == 3 and second.pool == 2
    assert len(loads) == 1, loads
    assert fused.search(REQUEST, depth=10)


def test_bad_scorers_and_options(workspace, tmp_path, monkeypatch):
    with pytest.raises(NclueError, match="unknown reranking scorer 'ce'.*NCLUE_MODEL_CE=MODEL_DIR"):
        workspace.system("rerank(dense.joint(max), ce)")
    monkeypatch.setenv("NCLUE_MODEL_EMPTY", str(tmp_path))
    with pytest.raises(NclueError, match="neither a cross-encoder"):
        workspace.system("rerank(dense.joint(max), empty)")
    monkeypatch.setenv("NCLUE_MODEL_GONE", str(tmp_path / "gone"))
    with pytest.raises(NclueError, match="model path not found"):
        workspace.system("rerank(dense.joint(max), gone)")
    with pytest.raises(NclueError, match="pool must be a positive integer"):
        workspace.system("rerank(dense.joint(max), minilm, pool=0)")
    with pytest.raises(NclueError, match="unknown option 'depth'"):
        workspace.system("rerank(dense.joint(max), minilm, depth=5)")
    with pytest.raises(NclueError, match="write rerank"):
        workspace.system("rerank(dense.joint(max))")
