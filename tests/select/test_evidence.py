"""Requirement evidence for coverage: best page per document, calibration files, whole-document reading."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nclue.errors import NclueError
from nclue.evidence.model import Calibration, Model, fold_of, page_logits, segment_best, sigmoid
from nclue.evidence.signals import EvidenceSource
from nclue.select.coverage_evidence import EvidenceModel


def test_segment_best_matches_a_loop_and_takes_the_earlier_page_on_ties():
    rng = np.random.default_rng(2)
    values = np.round(rng.random((3, 11)), 1)
    starts = np.array([0, 4, 5, 9])
    best, first = segment_best(values, starts)
    ends = [4, 5, 9, 11]
    for t in range(3):
        for s, (a, b) in enumerate(zip(starts, ends)):
            assert best[t, s] == values[t, a:b].max()
            assert first[t, s] == a + int(np.argmax(values[t, a:b]))


class FakeLexical:
    """Page scores, BM25 upper bounds and phrase matches given as fixed values per text."""

    def __init__(self, scores: dict, phrases: dict, bounds: dict) -> None:
        self.scores, self.phrases, self.bounds = scores, phrases, bounds
        self.index = self

    def page_scores(self, texts):
        return np.stack([self.scores[t] for t in texts]).astype(np.float32)

    def known_term(self, word):
        return None

    def page_upper_bounds(self, texts):
        return np.array([self.bounds[t] for t in texts], dtype=np.float64)

    def page_phrase_matches(self, texts):
        return np.stack([self.phrases[t] for t in texts])


def hand_source() -> EvidenceSource:
    from nclue.systems.backbone import PageTable

    # two documents: "a" pages 1-3 (rows 0-2), "b" pages 1-2 (rows 3-4)
    pages = PageTable(
        doc_ids=np.array(["a", "b"], dtype=object),
        page_doc=np.array([0, 0, 0, 1, 1], dtype=np.int32),
        page_number=np.array([1, 2, 3, 1, 2], dtype=np.int32),
        doc_offsets=np.array([0, 3, 5]),
    )
    lexical = FakeLexical(
        {"red fox": np.array([1.0, 4.0, 2.0, 0.0, 0.5]), "blue owl": np.array([0.0, 0.0, 0.0, 3.0, 3.0])},
        {"red fox": np.array([False, True, False, False, False]), "blue owl": np.array([False] * 5)},
        {"red fox": 8.0, "blue owl": 6.0},
    )
    dense = {"red fox": [0.1, 0.2, 0.3, 0.0, 0.1], "blue owl": [0.0, 0.0, 0.0, 0.5, 0.6]}
    return EvidenceSource(pages, lexical, lambda texts: np.array([dense[t] for t in texts], dtype=np.float32))


def test_probability_comes_from_the_best_page_under_the_calibrated_logit():
    model = Model(page=(-2.0, 2.0, 1.5, 1.0), doc=(0.5, 1.2))
    cal = Calibration(("bm25", "phrase", "dense"), model)
    ev = EvidenceModel(hand_source(), cal).evidence(["red fox", "blue owl"], ["b", "a"])
    # by hand: bm25 is divided by each text's upper bound (red fox: /8, blue owl: /6)
    z_red_a = [-2 + 2 * 0.125 + 0.1, -2 + 2 * 0.5 + 1.5 + 0.2, -2 + 2 * 0.25 + 0.3]
    z_red_b = [-2 + 0 + 0.0, -2 + 2 * 0.0625 + 0.1]
    z_owl_b = [-2 + 2 * 0.5 + 0.5, -2 + 2 * 0.5 + 0.6]
    assert ev.probs[1, 0] == pytest.approx(sigmoid(0.5 + 1.2 * max(z_red_a)))
    assert ev.probs[0, 0] == pytest.approx(sigmoid(0.5 + 1.2 * max(z_red_b)))
    assert ev.probs[0, 1] == pytest.approx(sigmoid(0.5 + 1.2 * max(z_owl_b)))
    assert ev.best_page[1, 0] == 2 and ev.best_page[0, 1] == 2
    # page 2 of "a" has page probability sigmoid(0.7) >= 0.5: it is the evidence page
    assert ev.pages[1][0] == (2,)
    assert ev.covers(1) == {"red fox": [2]}


def test_page_logits_is_the_linear_combination_per_text():
    features = np.arange(2 * 2 * 3, dtype=np.float32).reshape(2, 2, 3)
    models = [Model((1.0, 2.0, 3.0), (0, 1)), Model((0.0, -1.0, 0.5), (0, 1))]
    got = page_logits(features, models)
    assert np.allclose(got[0], 1 + 2 * features[0, 0] + 3 * features[1, 0])
    assert np.allclose(got[1], -features[0, 1] + 0.5 * features[1, 1])


def test_calibration_file_round_trip_folds_and_errors(tmp_path):
    cal = Calibration(
        ("bm25",), Model((-1.0, 2.0), (0.0, 1.0)), (Model((-2.0, 1.0), (0.0, 1.0)), Model((-3.0, 1.0), (1.0, 1.0)))
    )
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(cal.to_json()))
    back = Calibration.load(path)
    assert back == cal and back.sha256 == cal.sha256
    assert back.model_for("line numbering", crossfit=False) == cal.model
    assert back.model_for("line numbering", crossfit=True) == cal.folds[fold_of("line numbering")]
    assert fold_of("Line Numbering ") == fold_of("line numbering")
    with pytest.raises(NclueError, match="calibration file not found"):
        Calibration.load(tmp_path / "missing.json")
    path.write_text(json.dumps({"format": 4, "signals": ["bm25", "dense"], "model": {"page": [1, 2], "doc": [0, 1]}}))
    with pytest.raises(NclueError, match="2 page weights for 2 signals"):
        Calibration.load(path)
    older = {**cal.to_json(), "format": 2}  # weights fitted when bm25 was max-normalised
    path.write_text(json.dumps(older))
    with pytest.raises(NclueError, match="calibration format 2.*upper bound.*nclue evidence fit"):
        Calibration.load(path)
    path.write_text(json.dumps({**cal.to_json(), "format": 3}))  # before the lexical signals read both spellings
    with pytest.raises(NclueError, match="calibration format 3.*both spellings.*nclue evidence fit"):
        Calibration.load(path)
    dense_only = {**cal.to_json(), "format": 3, "signals": ["dense"], "model": {"page": [0, 1], "doc": [0, 1]}}
    path.write_text(json.dumps({**dense_only, "folds": []}))
    assert Calibration.load(path).signals == ("dense",)  # no lexical signal: nothing changed for it
    with pytest.raises(NclueError, match="no cross-fitting folds"):
        Calibration(("bm25",), Model((0.0, 1.0), (0.0, 1.0))).model_for("x", crossfit=True)


def test_long_documents_are_read_whole(lexical_only):
    """'floating environment' occurs only on pages 14 and 16 of the 18-page algorithms manual —
    far past the first 2,000 characters R03 encodes — and is found there."""
    from nclue.corpus.store import PageStore
    from nclue.select.adapter import leading_text
    from nclue.systems.registry import Workspace

    ws = Workspace(lexical_only)
    store = PageStore.open(lexical_only)
    algorithms = next(d for d in ws.pages.id_list if d.endswith("algorithms/algorithms"))
    assert "floating environment" not in leading_text(store, algorithms, 2000).lower()
    pages_with = {
        int(store.page_number[i])
        for i in range(store.n_pages)
        if store.doc_ids[store.page_doc[i]] == algorithms and "floating environment" in store.texts[i].lower()
    }
    assert pages_with == {14, 16}
    source = EvidenceSource(ws.pages, ws.backbone("bm25"), lambda texts: np.zeros((len(texts), ws.pages.n_pages)))
    ev = EvidenceModel(source, Calibration.load(None)).evidence(["floating environment"], ws.pages.id_list)
    row = ws.pages.id_list.index(algorithms)
    assert int(ev.best_page[row, 0]) in pages_with
    assert ev.probs[row, 0] == ev.probs[:, 0].max()
    assert set(ev.pages[row][0]) <= pages_with


def test_requirement_without_content_words_is_refused():
    from nclue.evidence.signals import check_texts

    with pytest.raises(NclueError, match="no searchable words"):
        check_texts(["the of a"])


def test_maxsim_signal_is_refused_where_there_is_no_collection():
    from nclue.evidence.signals import signal_matrix

    with pytest.raises(NclueError, match="maxsim signal needs a collection"):
        signal_matrix(hand_source(), ("maxsim",), ["red fox"])


@pytest.mark.slow
def test_maxsim_signal_scores_only_the_dense_candidate_pages(indexed):
    from nclue.evidence.signals import signal_matrix
    from nclue.systems.late_interaction import POOL_PAGES
    from nclue.systems.registry import Workspace

    ws = Workspace(indexed)
    source = EvidenceSource.from_workspace(ws)
    dense, maxsim = signal_matrix(source, ("dense", "maxsim"), ["floating environment"])[:, 0]
    scored = np.flatnonzero(maxsim)
    assert 0 < len(scored) <= POOL_PAGES
    top = set(np.argsort(-dense, kind="stable")[:POOL_PAGES].tolist())
    assert set(scored.tolist()) <= top and np.all(maxsim[scored] <= 1.0 + 1e-6)


def test_covered_pages_are_listed_best_first():
    """bm25 alone, intercept 0: "red fox" on document "a" has normalised bm25 0.25, 1.0, 0.5 on
    pages 1-3, so every page passes σ(z) ≥ 0.5 and the order is 2, 3, 1 (not page order)."""
    cal = Calibration(("bm25",), Model((0.0, 1.0), (0.0, 1.0)))
    ev = EvidenceModel(hand_source(), cal).evidence(["red fox"], ["a"])
    assert ev.covers(0) == {"red fox": [2, 3, 1]}


def test_bm25_signal_is_the_score_over_its_hand_computed_upper_bound(tmp_path):
    """The bound is Σ lucene idf from the page document frequencies, counted here by hand (bm25s's
    lucene term factor tf / (tf + k1 (1 − b + b dl/avgdl)) tends to 1); no page exceeds it; a page made of the term nearly reaches it; and the signal of a page
    does not jump when a document that scores far higher joins (as a max-normalisation would)."""
    import math

    from nclue.evidence.signals import SIGNALS, EvidenceSource
    from nclue.systems.registry import Workspace
    from tests.select.builders import write_collection

    pages = {
        "a": ["the red fox runs over the hill", "a quiet page about owls and night"],
        "b": ["fox tracks in the snow", "notes without the animal"],
        "c": ["weather report for the valley", "more weather, more rain"],
    }
    coll = write_collection(tmp_path / "one", pages)
    source = EvidenceSource.from_workspace(Workspace(coll))
    index = source.lexical.index
    (bound,) = index.page_upper_bounds(["fox"])
    df, n = 2, 6  # "fox" is on two of the six pages
    assert bound == pytest.approx(math.log(1 + (n - df + 0.5) / (df + 0.5)))
    raw = index.page_scores(["fox"])[0]
    signal = SIGNALS["bm25"](source, ["fox"])[0]
    assert np.all(raw <= bound + 1e-6) and np.allclose(signal, raw / bound, atol=1e-6)
    dense = write_collection(tmp_path / "two", {**pages, "d": [" ".join(["fox"] * 200), "weather", "rain", "snow"]})
    source2 = EvidenceSource.from_workspace(Workspace(dense))
    signal2 = SIGNALS["bm25"](source2, ["fox"])[0]
    assert signal2[6] > 0.95  # the page of 200 "fox" nearly reaches the bound
    # no page of the first collection reaches the bound, so none reads 1 as under max-normalisation
    assert signal.max() < 0.5
