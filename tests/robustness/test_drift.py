"""Folders that drift (issue 28, cause 9): a report refuses inputs other than those its runs
recorded in ``matrix.json``, ``nclue run -s`` takes the run folder's lock, and a reused report
folder keeps no table of an earlier report."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from nclue.io import exclusive_lock
from tests.robustness.robust_helpers import assert_clean, swap_two_documents

MATRIX = """
depth = 20
k = 10
[[run]]
system = "bm25.joint"
[[run]]
system = "bm25.decompose(distinct)"
block = "decomposition"
[[contrast]]
name = "Lexical composition"
base = "bm25.joint"
variants = ["bm25.decompose(distinct)"]
"""
FAST = ("--bootstrap", "50", "--draws", "100")


@pytest.fixture(scope="module")
def matrix_runs(release: Path, indexed_source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-run matrix folder of the release (read-only: copy before changing)."""
    from nclue.matrix.runner import run_matrix
    from nclue.matrix.spec import load_matrix

    root = tmp_path_factory.mktemp("drift")
    (root / "m.toml").write_text(MATRIX, encoding="utf-8")
    run_matrix(load_matrix(root / "m.toml"), release, indexed_source, root / "runs")
    return root / "runs"


def test_report_refuses_a_collection_the_runs_did_not_search(
    cli, release: Path, matrix_runs: Path, indexed: Path, tmp_path: Path
) -> None:
    swap_two_documents(indexed)
    out = tmp_path / "report"
    result = cli("report", release, matrix_runs, "-o", out, "--collection", indexed, *FAST)
    assert_clean(result, 2, f"{indexed}: not the collection the runs in {matrix_runs} searched", "matrix.json")
    assert not (out / "masking").exists() and not (out / "index.md").exists()


def test_report_refuses_a_run_file_overwritten_by_a_single_run(
    cli, release: Path, matrix_runs: Path, indexed_source: Path, tmp_path: Path
) -> None:
    runs = Path(shutil.copytree(matrix_runs, tmp_path / "runs"))
    assert_clean(cli("run", release, indexed_source, "-s", "bm25.joint", "-o", runs, "--depth", "3"), 0)
    result = cli("report", release, runs, "-o", tmp_path / "report", *FAST)
    assert_clean(result, 2, "bm25.joint.jsonl, bm25.joint.trec changed since `nclue run --matrix`", "rerun")
    assert_clean(cli("run", release, indexed_source, "--matrix", tmp_path / "m.toml", "-o", runs), 2)
    (tmp_path / "m.toml").write_text(MATRIX, encoding="utf-8")
    assert_clean(cli("run", release, indexed_source, "--matrix", tmp_path / "m.toml", "-o", runs), 0)
    assert_clean(cli("report", release, runs, "-o", tmp_path / "report", *FAST), 0)


def test_report_refuses_a_benchmark_the_runs_were_not_made_on(
    cli, release: Path, matrix_runs: Path, tmp_path: Path
) -> None:
    other = Path(shutil.copytree(release, tmp_path / "bench"))
    lines = (other / "queries.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (other / "queries.jsonl").write_text("".join(reversed(lines)), encoding="utf-8")
    (other / "SHA256SUMS").unlink()
    result = cli("report", other, matrix_runs, "-o", tmp_path / "report", *FAST)
    assert_clean(result, 2, f"{other}: queries.jsonl is not the one the runs in {matrix_runs} read")


def test_masked_runs_of_another_collection_are_refused(cli, release: Path, matrix_runs: Path, tmp_path: Path) -> None:
    masking = tmp_path / "masking"
    masking.mkdir()
    (masking / "masking.json").write_text(
        json.dumps({"inputs": {"collection/pages": "0" * 64}, "runs": {}}), encoding="utf-8"
    )
    result = cli("report", release, matrix_runs, "-o", tmp_path / "report", "--masking", masking, *FAST)
    assert_clean(result, 2, f"{masking}: the masked runs were made on another collection")


def test_a_single_run_into_a_busy_run_folder_is_refused(
    cli, release: Path, indexed_source: Path, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    with exclusive_lock(runs, "run folder"):
        result = cli("run", release, indexed_source, "-s", "bm25.joint", "-o", runs)
        assert_clean(result, 2, "another nclue job is writing this run folder", f"pid {os.getpid()}")
    assert not (runs / "bm25.joint.jsonl").exists()


def test_a_reused_report_folder_keeps_no_table_of_the_earlier_report(
    cli, release: Path, matrix_runs: Path, tmp_path: Path
) -> None:
    out = tmp_path / "report"
    assert_clean(cli("report", release, matrix_runs, "-o", out, *FAST), 0)
    written = json.loads((out / "report-files.json").read_text(encoding="utf-8"))["files"]
    assert "table_s1_scorecard.md" in written and "frozen.json" in written
    (out / "notes.md").write_text("mine", encoding="utf-8")
    earlier = json.loads((out / "report-files.json").read_text(encoding="utf-8"))
    earlier["files"].append("table_s3_shift.md")
    (out / "report-files.json").write_text(json.dumps(earlier), encoding="utf-8")
    (out / "table_s3_shift.md").write_text("a table of another benchmark", encoding="utf-8")
    assert_clean(cli("report", release, matrix_runs, "-o", out, *FAST), 0)
    assert not (out / "table_s3_shift.md").exists()
    assert (out / "notes.md").read_text(encoding="utf-8") == "mine"
    assert (out / "table_s1_scorecard.md").is_file() and (out / "frozen.json").is_file()
