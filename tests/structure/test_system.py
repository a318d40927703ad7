"""The ``struct`` backbone: heading evidence, cover = brute-force assignment, calibration choice, errors."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from nclue.errors import NclueError
from nclue.evidence.model import Calibration
from nclue.evidence.signals import signal_matrix
from nclue.systems.backbone import Request
from nclue.systems.registry import Workspace

pytestmark = pytest.mark.slow  # builds a real MiniLM dense index of ~85 pages

CONDITIONS = ("Examples", "Loading the package", "Norms")


def test_heading_evidence_is_the_best_heading_cosine(struct_collection: Path) -> None:
    """``head`` on a page equals the max cosine between the condition and that page's own headings
    (recomputed here from structure.parquet and a fresh encoding of each title)."""
    import pyarrow.parquet as pq

    workspace = Workspace(struct_collection)
    backbone = workspace.backbone("struct:test")
    head = signal_matrix(backbone.source, ["head"], ["Norms"])[0, 0]
    table = pq.read_table(struct_collection / "structure.parquet").to_pylist()
    doc = "texlive-science-doc/texlive-doc/latex/functan/functan"
    titles = [r["title"] for r in table if r["doc_id"] == doc and r["page"] == 3 and r["origin"] != "toc"]
    encoder = workspace.backbone("dense").encoder
    expected = float(np.max(encoder.encode(titles) @ encoder.encode(["Norms"])[0]))
    pages = workspace.pages
    row = next(j for j in range(pages.n_pages) if pages.id_list[pages.page_doc[j]] == doc and pages.page_number[j] == 3)
    assert head[row] == pytest.approx(expected, abs=1e-4)
    assert expected > 0.99  # functan's 1.2 "Norms" heading


def test_cover_is_the_best_distinct_page_assignment(struct_collection: Path) -> None:
    """Document score = max over injective condition→page maps of the summed page weights (brute force)."""
    workspace = Workspace(struct_collection)
    system = workspace.system("struct:test.cover")
    backbone = workspace.backbone("struct:test")
    request = Request(CONDITIONS, "; ".join(CONDITIONS))
    weights = backbone.cover_scores(request)
    pages = workspace.pages
    ranked = system.search(request, depth=10)
    assert ranked and ranked[0].doc_id.endswith("functan")
    for doc in ranked:
        d = pages.id_list.index(doc.doc_id)
        lo, hi = int(pages.doc_offsets[d]), int(pages.doc_offsets[d + 1])
        block = weights[:, lo:hi]
        best = max(
            sum(block[c, p] for c, p in enumerate(choice))
            for choice in itertools.permutations(range(hi - lo), len(CONDITIONS))
        )
        assert doc.score == pytest.approx(best, rel=1e-5)
        pages_used = [p for c in CONDITIONS for p in doc.evidence[c]]
        assert len(pages_used) == len(set(pages_used)) == len(CONDITIONS)


def test_fair_rows_and_fusion_run(struct_collection: Path) -> None:
    workspace = Workspace(struct_collection)
    request = Request(CONDITIONS, "; ".join(CONDITIONS))
    prob = workspace.backbone("struct:test").page_scores(list(CONDITIONS))
    assert np.all((prob > 0) & (prob < 1))
    for name in ("min", "product", "hmean", "distinct"):
        ranked = workspace.system(f"struct:test.decompose({name})").search(request, 5)
        assert ranked[0].doc_id.endswith("functan"), name
    fused = workspace.system("rrf(bm25.and, struct:test.cover)").search(request, 5)
    assert fused and fused[0].evidence


def test_unusable_calibration_and_missing_structure_are_named(struct_collection: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"features": ["head"], "weights": [1.0], "bias": 0.0}))
    with pytest.raises(NclueError, match="not an evidence calibration"):
        Calibration.load(bad)
    bad.write_text(json.dumps({"signals": ["headings"], "model": {"page": [0.0, 1.0], "doc": [0, 1]}}))
    with pytest.raises(NclueError, match="unknown evidence signal 'headings'"):
        Calibration.load(bad)
    with pytest.raises(NclueError, match="no calibration"):
        Workspace(struct_collection).system("struct:nope.cover")
    coll = Path(shutil.copytree(struct_collection, tmp_path / "coll"))
    (coll / "structure.parquet").unlink()
    with pytest.raises(NclueError, match="nclue structure"):
        Workspace(coll).system("struct:test.cover")


def test_stale_heading_vectors_are_refused(struct_collection: Path, tmp_path: Path) -> None:
    from nclue.corpus.structure import StructureParams, build_structure
    from nclue.index.heading_vectors import build_heading_vectors, headings_current

    coll = Path(shutil.copytree(struct_collection, tmp_path / "coll"))
    assert headings_current(coll)
    build_structure(coll, StructureParams(fonts="off", running_min_pages=4), rebuild=True)
    assert not headings_current(coll)
    with pytest.raises(NclueError, match=r"stale .*nclue structure"):
        Workspace(coll).system("struct:test.cover")
    build_heading_vectors(coll)
    assert headings_current(coll)
    assert Workspace(coll).system("struct:test.cover").search(Request(CONDITIONS, "x"), 3)


def test_struct_reads_the_shipped_calibration_of_other_sources(struct_collection: Path) -> None:
    """The test collection is texlive-science-doc (a development source): ``struct`` must use the
    calibration fitted on the shift corpus's readings, whose sources it does not share."""
    workspace = Workspace(struct_collection)
    sources = set(workspace.store.docs.column("source").to_pylist())
    backbone = workspace.backbone("struct")
    fitted_on = set(backbone.calibration.provenance["sources"])
    assert sources and not sources & fitted_on
    assert backbone.calibration.provenance["labels"].startswith("blind-reader judgments")
    assert backbone.calibration == Calibration.shipped("reader-debian-docs-shift")


def test_struct_page_probabilities_are_the_evidence_models(struct_collection: Path) -> None:
    """``struct``'s inlined accumulation equals the evidence layer's ``page_logits`` over the
    stacked signals (the model coverage selection applies), bit for bit after the float32 cast."""
    from nclue.evidence.model import page_logits

    backbone = Workspace(struct_collection).backbone("struct:test")
    cal = backbone.calibration
    features = signal_matrix(backbone.source, cal.signals, list(CONDITIONS))
    z = page_logits(features, [cal.model] * len(CONDITIONS)).astype(np.float32)
    expected = (1.0 / (1.0 + np.exp(-z))).astype(np.float32)
    assert np.array_equal(backbone.page_scores(list(CONDITIONS)), expected)


def test_struct_takes_a_dense_variant_like_dense_does(struct_collection: Path, tmp_path: Path) -> None:
    """``struct:VARIANT`` (no calibration of that name) reads the dense index VARIANT names."""
    from nclue.index.dense import adopt_dense_index, build_dense_index, list_dense_indexes
    from nclue.models.encoder import DEFAULT_BACKEND

    coll = Path(shutil.copytree(struct_collection, tmp_path / "coll"))
    (own,) = list_dense_indexes(coll)
    own_backend = DEFAULT_BACKEND  # the fixture's index
    other_backend = "torch" if own_backend == "onnx" else "onnx"
    other = build_dense_index(coll, backend=other_backend)
    adopt_dense_index(coll, own, keep_others=True)  # two indexes, the heading vectors' one is the default
    workspace = Workspace(coll)
    backbone = workspace.backbone(f"struct:{own_backend}")
    assert backbone.source.describe["dense_index"] == own.name
    assert np.array_equal(
        backbone.page_scores(list(CONDITIONS)), workspace.backbone("struct").page_scores(list(CONDITIONS))
    )
    with pytest.raises(NclueError, match=rf"embedded with dense index '{own.name}'.*{other.name}"):
        workspace.backbone(f"struct:{other_backend}")  # its headings were embedded with the other model run
    with pytest.raises(NclueError, match=r"no calibration .*nomatch.json and no dense index matching 'nomatch'"):
        workspace.backbone("struct:nomatch")
