"""The one call ``make demo`` makes (adapt → calibrate → freeze → evaluate) and its verification."""

from __future__ import annotations

import json
import os
import shutil

import pytest


@pytest.mark.slow
def test_run_coverage_then_verify(phrase_bench, tmp_path):
    import os

    from nclue.index.dense import build_dense_index
    from nclue.select.pipeline import run_coverage, verify_coverage

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    bench, source = phrase_bench
    coll = tmp_path / "coll"
    shutil.copytree(source, coll)
    build_dense_index(coll, backend="onnx", max_chunks_per_page=1)
    from nclue.corpus.structure import StructureParams, build_structure
    from nclue.index.heading_vectors import build_heading_vectors

    build_structure(coll, StructureParams(fonts="off"))
    build_heading_vectors(coll)
    out = tmp_path / "coverage"
    lines: list[str] = []
    report = run_coverage(bench, coll, out, depth=6, k=2, log=lines.append)
    assert report["all"].tasks == 4 and "expected" in report["all"].methods
    adapter = json.loads((out / "tasks" / "adapter.json").read_text())
    assert adapter["pool"]["kind"] == "retrieval" and adapter["pool"]["depth"] == 6
    # the typed comparator ran over the whole collection and is frozen and scored like any selector
    assert adapter["pool"]["typed"].startswith("struct.decompose(hmean) over the whole collection (8 documents)")
    assert "typed" in report["all"].methods and "expected-minus-typed" in report["all"].crossed
    first = json.loads((out / "tasks" / "tasks.jsonl").read_text().splitlines()[0])
    assert len(first["typed_scores"]) == len(first["pool"])
    (frozen,) = [p for p in (out / "freeze").iterdir() if not p.name.startswith(".")]
    method = json.loads((frozen / "method.json").read_text())
    assert method["evidence"]["crossfit"] is False
    # the calibration is a shipped reader one fitted on other sources, never this release's qrels
    used = json.loads((out / "calibration.json").read_text())
    assert used["provenance"]["labels"].startswith("blind-reader judgments")
    assert method["evidence"]["calibration_fitted_on"] != bench.name
    # every requirement phrase is stated twice on exactly one page per document: evidence finds it
    assert report["all"].methods["expected"]["coverage"] == 1.0
    assert verify_coverage(out).ok
    run_coverage(bench, coll, out, depth=6, k=2, log=lines.append)
    assert any("reusing it" in line for line in lines)
    assert len([p for p in (out / "freeze").iterdir() if not p.name.startswith(".")]) == 1
    summary = json.loads((out / "results" / "summary.json").read_text())
    summary["splits"]["all"]["methods"]["pm2"]["coverage"] = 0.5
    (out / "results" / "summary.json").write_text(json.dumps(summary))
    check = verify_coverage(out)
    assert not check.ok and check.failures[0].startswith("splits/all/methods/pm2/coverage: recorded 0.5")


@pytest.mark.slow
def test_freeze_refuses_a_calibration_fitted_on_its_own_release(phrase_bench, tmp_path):
    """A calibration fitted on the qrels of the release the tasks were adapted from is refused
    without --crossfit; with each requirement's held-out fold it is allowed."""
    from nclue.errors import NclueError
    from nclue.evidence.fit import fit
    from nclue.index.dense import build_dense_index
    from nclue.select.adapter import adapt_release
    from nclue.select.freeze import freeze
    from nclue.systems.registry import Workspace

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    bench, source = phrase_bench
    coll = tmp_path / "coll"
    shutil.copytree(source, coll)
    build_dense_index(coll, backend="onnx", max_chunks_per_page=1)
    adapt_release(bench, coll, tmp_path / "tasks", k=2, depth=6)
    own = fit(bench, Workspace(coll), signals=("bm25", "phrase"), labels="qrels").calibration
    with pytest.raises(NclueError, match=r"fitted on the labels of .*freeze with --crossfit"):
        freeze(tmp_path / "tasks", tmp_path / "frz", k=2, calibration=own)
    made = freeze(tmp_path / "tasks", tmp_path / "frz", k=2, calibration=own, crossfit=True)
    assert made.manifest["tasks"] == 4
