"""The paper-style report and ``reproduce --verify`` on real runs over a real benchmark."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from nclue.report.paper import FROZEN
from nclue.report.reproduce import verify

pytestmark = pytest.mark.slow


def test_report_tables_match_the_scorer_json(frozen_runs: Path, small_bench: Path) -> None:
    from nclue.evaluate import load_benchmark, load_run, score_runs, scorecard

    frozen = json.loads((frozen_runs / FROZEN).read_text())
    bench = load_benchmark(small_bench)
    names = sorted(frozen["scorecard"], key=lambda n: frozen["scorecard"][n]["rank"])
    runs = [load_run(frozen_runs / f"{n}.jsonl", bench) for n in names]
    card = scorecard(bench, score_runs(bench, runs), ci="family", n_boot=200, seed=11)
    for name in names:
        for metric in ("n_clue_score", "gold_hit", "gold_ndcg"):
            assert frozen["scorecard"][name][metric] == pytest.approx(card["runs"][name][metric], abs=1e-9)
        assert frozen["scorecard"][name]["ci"] == pytest.approx(card["runs"][name]["ci"]["n_clue_score"])
    scores = [frozen["scorecard"][n]["n_clue_score"] for n in names]
    assert scores == sorted(scores, reverse=True)
    assert [frozen["scorecard"][n]["rank"] for n in names] == list(range(1, len(names) + 1))
    assert frozen["controls"]["oracle.surface_and"]["n_clue_score"] == 100.0
    assert frozen["controls"]["oracle.single_page_and"]["n_clue_score"] == 0.0
    assert set(frozen["query_forms"]["bm25.and"]) == {"raw", "clean_v2", "natural"}
    lexical = frozen["contrasts"]["Lexical composition"]
    assert lexical["display"] in lexical["tried"] and 0 <= lexical["p_holm"] <= 1


def test_report_writes_every_format(frozen_runs: Path) -> None:
    report = frozen_runs.parent / "report"
    index = (report / "index.md").read_text()
    for stem in ("table_s1_scorecard", "table_s1d_controls", "table_s1e_contrasts", "table_s1f_common_support",
                 "table_s1j_strata", "table_s2b_query_forms"):
        assert (report / f"{stem}.md").is_file() and (report / f"{stem}.tex").is_file()
        assert f"({stem}.md)" in index
    assert "\\begin{tabular}" in (report / "table_s1_scorecard.tex").read_text()
    for plot in ("scorecard.png", "scorecard.pdf", "delta_plane.png"):
        assert (report / plot).stat().st_size > 1000


def test_reproduce_passes_on_frozen_runs(frozen_runs: Path, small_bench: Path) -> None:
    result = verify(small_bench, frozen_runs)
    assert result.ok, result.hash_failures + result.cell_failures
    assert result.cells_checked > 50


def test_reproduce_fails_on_a_tampered_run_file(frozen_runs: Path, small_bench: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(frozen_runs, runs)
    path = runs / "bm25.and.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[0]["docs"] = rows[0]["docs"][::-1]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = verify(small_bench, runs)
    assert not result.ok
    assert any(f.startswith("runs/bm25.and.jsonl") for f in result.hash_failures)


def test_reproduce_fails_naming_the_cell_on_a_changed_qrel(frozen_runs: Path, small_bench: Path, tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    shutil.copytree(small_bench, bench)
    frozen = json.loads((frozen_runs / FROZEN).read_text())
    rows = [json.loads(line) for line in (bench / "qrels.jsonl").read_text().splitlines()]
    golds = [r for r in rows if r["label"] == "gold"]
    for row in golds[: max(1, len(golds) // 3)]:
        row["label"], row["grade"] = "partial", row["grade"] - 1
    (bench / "qrels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = verify(bench, frozen_runs)
    assert any(f.startswith("bench/qrels.jsonl") for f in result.hash_failures)
    assert any(f.startswith("scorecard › ") and "drift" in f for f in result.cell_failures)
    assert frozen["scorecard"]
