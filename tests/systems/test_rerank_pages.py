"""Which pages ``rerank`` scores (``pages=best|evidence|first``) and the named model scorers
(``cross:KEY``, ``bi:KEY``), on the small real collection.

Hand check (BM25 on the fixture collection, query below): ``bm25.joint`` is not page-aware; its
top document ``verse`` (25 pages) has its best BM25 pages at 7, 5, 6 and ``jura`` (26 pages) at
23, 19, 17 — ``pages=best`` must score those, not pages 1, 2, 3 (the first-three rule, ``pages=first``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nclue.errors import NclueError
from nclue.systems.backbone import Request
from nclue.systems.names import format_name, parse_name
from nclue.systems.registry import Workspace

REQUEST = Request(
    conditions=("numbered lines of verse", "footnotes in legal texts"),
    text='"numbered lines of verse"; "footnotes in legal texts"',
)
VERSE = "texlive-humanities-doc/texlive-doc/latex/verse/verse"
JURA = "texlive-humanities-doc/texlive-doc/latex/jura/jura"


class Recorder:
    """A scorer that keeps the page rows it is given and scores every document 0 (base order kept)."""

    def __init__(self) -> None:
        self.rows: list[list[int]] = []

    def doc_scores(self, query: str, doc_rows: list[list[int]]) -> np.ndarray:
        self.rows = doc_rows
        return np.zeros(len(doc_rows), np.float32)


def scored_pages(workspace: Workspace, name: str) -> dict[str, list[int]]:
    """Page numbers the scorer of ``name`` is given, per pooled document."""
    system = workspace.system(name)
    system.scorer = recorder = Recorder()
    ranking = system.search(REQUEST, depth=100)
    numbers = workspace.pages.page_number
    return {d.doc_id: [int(numbers[r]) for r in rows] for d, rows in zip(ranking, recorder.rows, strict=True)}


def test_best_pages_of_a_non_page_aware_base_are_its_backbones_best_pages(workspace: Workspace) -> None:
    system = workspace.system("rerank(bm25.joint, minilm, pool=5)")
    assert not system.base.page_aware and system.page_choice == "best"
    got = scored_pages(workspace, "rerank(bm25.joint, minilm, pool=5)")
    assert got[VERSE] == [7, 5, 6] and got[JURA] == [23, 19, 17]  # by hand (module docstring)
    page = workspace.backbone("bm25").page_scores([REQUEST.text])[0]
    for doc_id, numbers in got.items():
        i = workspace.store.doc_index[doc_id]
        start, stop = workspace.pages.doc_offsets[i], workspace.pages.doc_offsets[i + 1]
        best = sorted(range(start, stop), key=lambda r: (-page[r], r))[:3]
        assert numbers == [int(workspace.pages.page_number[r]) for r in best]
    assert got == scored_pages(workspace, "rerank(bm25.joint, minilm, pool=5, pages=best)")


def test_first_keeps_the_first_three_pages(workspace: Workspace) -> None:
    got = scored_pages(workspace, "rerank(bm25.joint, minilm, pool=5, pages=first)")
    assert len(got) == 5 and all(numbers == [1, 2, 3] for numbers in got.values())


def test_best_scores_differ_from_first_three_scores(workspace: Workspace) -> None:
    """End to end with the bundled bi-encoder: each score is the best passage cosine over the best pages."""
    from nclue.models.chunking import chunk_pages
    from nclue.models.encoder import load_encoder, load_tokenizer

    best = workspace.system("rerank(bm25.joint, minilm, pool=2)").search(REQUEST)
    first = workspace.system("rerank(bm25.joint, minilm, pool=2, pages=first)").search(REQUEST)
    encoder, tokenizer = load_encoder(), load_tokenizer(None)
    query = encoder.encode([REQUEST.text])[0]
    pages = {VERSE: [7, 5, 6], "texlive-humanities-doc/texlive-doc/latex/covington/covington": [12, 11, 2]}
    for doc in best:
        i = workspace.store.doc_index[doc.doc_id]
        start = int(workspace.pages.doc_offsets[i])
        texts = [workspace.store.texts[start + p - 1] for p in pages[doc.doc_id]]
        chunks = chunk_pages(texts, tokenizer, encoder.max_length - 2, 32)
        assert doc.score == pytest.approx(float((encoder.encode(chunks.texts(texts)) @ query).max()), abs=1e-5)
    assert {d.doc_id: round(d.score, 4) for d in best} != {d.doc_id: round(d.score, 4) for d in first}


def test_evidence_pages_of_a_page_aware_base(workspace: Workspace) -> None:
    base = workspace.system("bm25.decompose(distinct)").search(REQUEST, depth=5)
    got = scored_pages(workspace, "rerank(bm25.decompose(distinct), minilm, pool=5, pages=evidence)")
    for doc in base:
        evidence = list(dict.fromkeys(p for c in REQUEST.conditions for p in doc.evidence.get(c, ())))
        assert got[doc.doc_id] == (evidence or [p for p, _ in doc.pages])[:3]
    surfaced = scored_pages(workspace, "rerank(bm25.decompose(distinct), minilm, pool=5)")
    assert surfaced == {d.doc_id: [p for p, _ in d.pages][:3] for d in base}


def test_page_options_are_checked(workspace: Workspace) -> None:
    with pytest.raises(NclueError, match="pages=evidence needs a page-aware base.*use pages=best"):
        workspace.system("rerank(bm25.joint, minilm, pages=evidence)")
    with pytest.raises(NclueError, match="pages=top is not one of best, evidence, first"):
        workspace.system("rerank(bm25.joint, minilm, pages=top)")
    with pytest.raises(NclueError, match="unknown option 'depth'; rerank takes pool=N and pages="):
        workspace.system("rerank(bm25.joint, minilm, depth=3)")


@pytest.mark.parametrize(
    "name",
    [
        "rerank(bm25.joint, cross:ms-marco-MiniLM-L6-v2, pool=100, pages=best)",
        "rerank(bm25.decompose(distinct), bi:minilm, pool=50, pages=evidence)",
        "rerank(bm25.joint, llm:gpt-4o-mini, pages=first)",
    ],
)
def test_scorer_names_round_trip(name: str) -> None:
    assert format_name(parse_name(name)) == name
    assert parse_name(name).args[1] == name.split(", ")[1]


@pytest.fixture(scope="module")
def models_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A models folder holding ``minilm-cross``: the bundled MiniLM with a seeded one-logit head (a real
    ``CrossEncoder`` directory; its scores are not meaningful relevance)."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from nclue.models.identity import bundled_model_path

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("models")
    model = AutoModelForSequenceClassification.from_pretrained(str(bundled_model_path()), num_labels=1)
    model.save_pretrained(str(folder / "minilm-cross"))
    AutoTokenizer.from_pretrained(str(bundled_model_path())).save_pretrained(str(folder / "minilm-cross"))
    return folder


def test_cross_and_bi_keys_load_the_models(lexical_collection: Path, models_folder: Path, monkeypatch) -> None:
    from nclue.models.identity import bundled_model_path, model_identity
    from nclue.systems.rerank import BiEncoderPassages, CrossEncoderPassages

    monkeypatch.setenv("NCLUE_MODELS", str(models_folder))
    ws = Workspace(lexical_collection)
    bi = ws.system("rerank(bm25.joint, bi:minilm, pool=2)")
    assert isinstance(bi.scorer, BiEncoderPassages)
    assert bi.scorer.identity == model_identity(bundled_model_path())
    cross = ws.system("rerank(bm25.joint, cross:minilm-cross, pool=2)")
    assert isinstance(cross.scorer, CrossEncoderPassages)
    assert cross.scorer.scorer.identity == model_identity(models_folder / "minilm-cross")
    ranking = cross.search(REQUEST)
    assert {d.doc_id for d in ranking} == {d.doc_id for d in ws.system("bm25.joint").search(REQUEST, depth=2)}
    assert [d.score for d in ranking] == sorted((d.score for d in ranking), reverse=True)


def test_bad_scorer_keys(lexical_collection: Path, models_folder: Path, monkeypatch) -> None:
    monkeypatch.setenv("NCLUE_MODELS", str(models_folder))
    ws = Workspace(lexical_collection)
    with pytest.raises(NclueError, match="is a bi-encoder, not a cross-encoder; write bi:minilm"):
        ws.system("rerank(bm25.joint, cross:minilm)")
    with pytest.raises(NclueError, match="is a cross-encoder, not a bi-encoder; write cross:minilm-cross"):
        ws.system("rerank(bm25.joint, bi:minilm-cross)")
    with pytest.raises(NclueError, match="'zz:' is not a scorer kind; write cross:KEY"):
        ws.system("rerank(bm25.joint, zz:minilm)")
    with pytest.raises(NclueError, match=r"unknown reranking scorer 'gone'.*NCLUE_MODEL_GONE=MODEL_DIR.*models folder"):
        ws.system("rerank(bm25.joint, cross:gone)")
