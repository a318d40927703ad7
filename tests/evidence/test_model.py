"""The shipped calibrations: fitted on blind-reader judgments, and chosen so that none scores the
corpus whose readings fitted it."""

from __future__ import annotations

import pytest

from nclue.errors import NclueError
from nclue.evidence.evidence_defaults import DEFAULT_SIGNALS
from nclue.evidence.model import SHIPPED, Calibration, for_sources

DEV_SOURCES = {"r-doc-pdf", "texlive-humanities-doc", "texlive-science-doc"}
SHIFT_SOURCES = {"asymptote-doc", "gnuplot-doc", "pari-doc", "yacas-doc"}


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_calibrations_say_what_they_were_fitted_on(name: str) -> None:
    cal = Calibration.shipped(name)
    prov = cal.provenance
    assert cal.signals == DEFAULT_SIGNALS and len(cal.folds) == 2
    assert prov["labels"].startswith("blind-reader judgments") and prov["judgments_sha256"]
    assert prov["sources"] and prov["labelled_documents"] > prov["positive_documents"] > 0
    weights = dict(zip(("intercept", *cal.signals), cal.model.page))
    assert weights["bm25"] > 0 and weights["phrase"] > 0 and weights["role"] < 0 and cal.model.doc[1] > 0


def test_the_two_shipped_calibrations_come_from_disjoint_corpora() -> None:
    a, b = (Calibration.shipped(n) for n in SHIPPED)
    assert a.sources and b.sources and not a.sources & b.sources


def test_for_sources_never_picks_a_calibration_fitted_on_the_scored_sources() -> None:
    for sources in (DEV_SOURCES, SHIFT_SOURCES, {"texlive-science-doc"}, {"pari-doc", "other"}):
        assert not for_sources(sources).sources & sources
    assert for_sources(()) == Calibration.shipped(SHIPPED[0])
    both = Calibration.shipped(SHIPPED[0]).sources | Calibration.shipped(SHIPPED[1]).sources
    with pytest.raises(NclueError, match="every shipped evidence calibration was fitted on some of these sources"):
        for_sources(both)
    with pytest.raises(NclueError, match="no shipped evidence calibration 'nope'"):
        Calibration.shipped("nope")


def test_a_calibration_refuses_a_collection_indexed_with_another_dense_model() -> None:
    from nclue.evidence.model import Model, dense_model

    cal = Calibration(
        ("bm25", "dense"), Model((0.0, 1.0, 1.0), (0.0, 1.0)), (), {"dense_index": "minilm-af94-torch-bf16"}
    )
    assert dense_model("minilm-af94-torch-bf16") == dense_model("minilm-af94-onnx-int8") == "minilm-af94"
    cal.check_source({"dense_index": "minilm-af94-onnx"})  # another backend of the same model
    cal.check_source({"collection": "docs.jsonl"})  # no dense index recorded: not checked
    with pytest.raises(NclueError, match=r"fitted with dense model 'minilm-af94', but c is indexed with 'e5-1234'"):
        cal.check_source({"dense_index": "e5-1234-torch", "collection": "c"})
    lexical = Calibration(("bm25",), Model((0.0, 1.0), (0.0, 1.0)), (), {"dense_index": "minilm-af94-torch"})
    lexical.check_source({"dense_index": "e5-1234-torch"})  # reads no cosine: any model is fine
