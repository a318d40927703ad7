"""The paper-style report and ``reproduce --verify`` on real runs over a real benchmark."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from nclue.report.paper import FROZEN
from nclue.report.reproduce import verify
from nclue.runfile import run_path

pytestmark = pytest.mark.slow


def _hand_scores(
    run_path: Path, labels: dict[str, dict[str, str]], qids: list[str], k: int = 10
) -> tuple[float, float]:
    """n-Clue Score and Gold Hit (pp) by the definition, written out plainly: stable sort by score,
    truncate at k, success iff the first judged document is gold; every query in the denominator."""
    ranked = {}
    for line in run_path.read_text().splitlines():
        row = json.loads(line)
        ranked[row["qid"]] = [d["doc_id"] for d in sorted(row["docs"], key=lambda d: -d["score"])][:k]
    wins = hits = 0
    for qid in qids:
        top = [labels[qid].get(d) for d in ranked.get(qid, [])]
        judged = [lab for lab in top if lab is not None]
        wins += bool(judged) and judged[0] == "gold"
        hits += "gold" in top
    return 100.0 * wins / len(qids), 100.0 * hits / len(qids)


def test_report_numbers_equal_a_hand_written_scorer(frozen_runs: Path, small_bench: Path) -> None:
    frozen = json.loads((frozen_runs.parent / "report" / FROZEN).read_text())
    qids = [json.loads(line)["qid"] for line in (small_bench / "queries.jsonl").read_text().splitlines()]
    labels: dict[str, dict[str, str]] = {q: {} for q in qids}
    for line in (small_bench / "qrels.jsonl").read_text().splitlines():
        row = json.loads(line)
        labels[row["qid"]][row["doc_id"]] = row["label"]
    for name, row in frozen["scorecard"].items():
        score, hit = _hand_scores(run_path(frozen_runs, name), labels, qids)
        assert row["n_clue_score"] == pytest.approx(score, abs=1e-9), name
        assert row["gold_hit"] == pytest.approx(hit, abs=1e-9), name
        assert row["ci"]["n_clue_score"][0] <= row["n_clue_score"] <= row["ci"]["n_clue_score"][1]
    for name, row in frozen["controls"].items():
        score, hit = _hand_scores(small_bench / "controls" / f"{name}.jsonl", labels, qids)
        assert (row["n_clue_score"], row["gold_hit"]) == pytest.approx((score, hit), abs=1e-9), name
    ranks = sorted(frozen["scorecard"], key=lambda n: frozen["scorecard"][n]["rank"])
    assert [frozen["scorecard"][n]["n_clue_score"] for n in ranks] == sorted(
        (frozen["scorecard"][n]["n_clue_score"] for n in ranks), reverse=True
    )
    assert set(frozen["query_forms"]["bm25.and"]) == {"raw", "clean_v2", "natural"}
    lexical = frozen["contrasts"]["Lexical composition"]
    assert lexical["variant"] in lexical["tried"] and 0 <= lexical["p_block"] <= lexical["p_selection"] <= 1


def test_report_writes_every_format(frozen_runs: Path) -> None:
    report = frozen_runs.parent / "report"
    index = (report / "index.md").read_text()
    for stem in (
        "table_s1_scorecard",
        "table_s1d_controls",
        "table_s1e_contrasts",
        "table_s1f_common_support",
        "table_s1g_sensitivity",
        "table_s1h_promotion",
        "table_s1j_strata",
        "table_s2b_query_forms",
    ):
        assert (report / f"{stem}.md").is_file() and (report / f"{stem}.tex").is_file()
        assert f"({stem}.md)" in index
    assert "\\begin{tabular}" in (report / "table_s1_scorecard.tex").read_text()
    for plot in ("scorecard.png", "scorecard.pdf", "delta_plane.png"):
        assert (report / plot).stat().st_size > 1000


def test_reproduce_passes_on_frozen_runs(frozen_runs: Path, small_bench: Path) -> None:
    result = verify(small_bench, frozen_runs, frozen_runs.parent / "report")
    assert result.ok, result.hash_failures + result.cell_failures
    assert result.cells_checked > 50


def test_reproduce_fails_on_a_tampered_run_file(frozen_runs: Path, small_bench: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(frozen_runs, runs)
    path = runs / "bm25.and.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[0]["docs"] = rows[0]["docs"][::-1]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = verify(small_bench, runs, frozen_runs.parent / "report")
    assert not result.ok
    assert any(f.startswith("runs/bm25.and.jsonl") for f in result.hash_failures)


def test_reproduce_fails_naming_the_cell_on_a_changed_qrel(
    frozen_runs: Path, small_bench: Path, tmp_path: Path
) -> None:
    bench = tmp_path / "bench"
    shutil.copytree(small_bench, bench)
    frozen = json.loads((frozen_runs.parent / "report" / FROZEN).read_text())
    rows = [json.loads(line) for line in (bench / "qrels.jsonl").read_text().splitlines()]
    golds = [r for r in rows if r["label"] == "gold"]
    for row in golds[: max(1, len(golds) // 3)]:
        row["label"], row["grade"] = "partial", row["grade"] - 1
        row["pages"].pop(sorted(row["pages"])[-1])  # the demoted gold loses one condition's evidence
    (bench / "qrels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = verify(bench, frozen_runs, frozen_runs.parent / "report")
    assert any(f.startswith("bench/qrels.jsonl") for f in result.hash_failures)
    assert any(f.startswith("scorecard › ") and "drift" in f for f in result.cell_failures)
    assert frozen["scorecard"]


def _headers(markdown: str, first_cell: str) -> list[str]:
    line = next(line for line in markdown.splitlines() if line.startswith(f"| {first_cell} |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_evaluate_compare_and_report_name_each_statistic_alike(frozen_runs: Path, small_bench: Path, cli) -> None:
    frozen = json.loads((frozen_runs.parent / "report" / FROZEN).read_text())
    names = sorted(frozen["scorecard"])
    result = cli("evaluate", small_bench, *(run_path(frozen_runs, n) for n in names), "--format", "markdown")
    assert result.exit_code == 0, result.output
    report = frozen_runs.parent / "report"
    evaluate_headers = _headers(result.output, "Rank")
    report_headers = _headers((report / "table_s1_scorecard.md").read_text(), "Rank")
    assert evaluate_headers == [h for h in report_headers if h != "Cat."]
    lexical = frozen["contrasts"]["Lexical composition"]
    result = cli(
        "compare",
        small_bench,
        run_path(frozen_runs, lexical["base"]),
        run_path(frozen_runs, lexical["variant"]),
        "--format",
        "markdown",
        "--draws",
        "999",
        "--bootstrap",
        "200",
    )
    assert result.exit_code == 0, result.output
    compare_headers = _headers(result.output, "Contrast")
    report_contrast = _headers((report / "table_s1e_contrasts.md").read_text(), "Contrast")
    assert report_contrast[: len(compare_headers)] == compare_headers and report_contrast[-1] == "Sel.+Holm p"


def _hand_gold_ndcg(run_path: Path, labels: dict[str, dict[str, str]], qids: list[str], k: int = 10) -> float:
    """Mean Gold-NDCG@k (gain 1 for gold, ideal over min(#gold, k) golds), written out plainly."""
    import math

    ranked = {}
    for line in run_path.read_text().splitlines():
        row = json.loads(line)
        ranked[row["qid"]] = [d["doc_id"] for d in sorted(row["docs"], key=lambda d: -d["score"])][:k]
    total = 0.0
    for qid in qids:
        dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked.get(qid, [])) if labels[qid].get(d) == "gold")
        golds = sum(1 for lab in labels[qid].values() if lab == "gold")
        ideal = sum(1 / math.log2(i + 2) for i in range(min(golds, k)))
        total += dcg / ideal if ideal else 0.0
    return 100.0 * total / len(qids)


def test_spearman_is_over_the_fair_runs_of_the_default_form(frozen_runs: Path, small_bench: Path) -> None:
    from scipy.stats import spearmanr

    frozen = json.loads((frozen_runs.parent / "report" / FROZEN).read_text())
    qids = [json.loads(line)["qid"] for line in (small_bench / "queries.jsonl").read_text().splitlines()]
    labels: dict[str, dict[str, str]] = {q: {} for q in qids}
    for line in (small_bench / "qrels.jsonl").read_text().splitlines():
        row = json.loads(line)
        labels[row["qid"]][row["doc_id"]] = row["label"]

    def hand(path: Path) -> tuple[float, float]:
        return _hand_scores(path, labels, qids)[0], _hand_gold_ndcg(path, labels, qids)

    fair = sorted(frozen["scorecard"])
    assert "bm25.and@raw" not in fair and not any(n.startswith(("oracle.", "baseline.")) for n in fair)
    values = [hand(run_path(frozen_runs, n)) for n in fair]
    expected = spearmanr([v[0] for v in values], [v[1] for v in values]).statistic
    assert frozen["spearman"]["n_clue_score"]["gold_ndcg"] == pytest.approx(expected, abs=1e-12)
    # the same ρ over every scored run (controls and off-form runs included) is what the report must not give
    paths = [run_path(frozen_runs, n) for n in (*fair, "bm25.and@raw", "bm25.and@natural")]
    paths += sorted((small_bench / "controls").glob("*.jsonl"))
    pooled = [hand(p) for p in paths]
    inflated = spearmanr([v[0] for v in pooled], [v[1] for v in pooled]).statistic
    if abs(inflated - expected) > 1e-9:  # on this fixture both orderings may coincide
        assert frozen["spearman"]["n_clue_score"]["gold_ndcg"] != pytest.approx(inflated, abs=1e-12)


def test_reproduce_checks_every_file_the_release_lists(frozen_runs: Path, small_bench: Path, tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    shutil.copytree(small_bench, bench)
    manifest = json.loads((bench / "MANIFEST.json").read_text())
    manifest["name"] = "renamed"
    (bench / "MANIFEST.json").write_text(json.dumps(manifest))
    lines = (bench / "qrels" / "test.tsv").read_text().splitlines()
    qid, doc, grade = lines[1].split("\t")
    lines[1] = f"{qid}\t{doc}\t{int(grade) % 2 + 1}"
    (bench / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n")
    (bench / "inventory.jsonl").write_text((bench / "inventory.jsonl").read_text() + "\n")
    result = verify(bench, frozen_runs, frozen_runs.parent / "report")
    assert not result.ok and not result.cell_failures  # nothing the tables read changed ...
    named = " ".join(result.hash_failures)
    for path in ("bench/MANIFEST.json", "bench/qrels/test.tsv", "bench/inventory.jsonl"):  # ... yet each file is caught
        assert f"{path}: SHA-256 changed" in named
        assert f"bench/{path.removeprefix('bench/')}: SHA-256 mismatch" in named


def test_reproduce_tolerances_are_per_quantity(frozen_runs: Path, small_bench: Path, tmp_path: Path) -> None:
    report = tmp_path / "report"
    shutil.copytree(frozen_runs.parent / "report", report)
    frozen = json.loads((report / FROZEN).read_text())
    name = next(iter(frozen["scorecard"]))
    frozen["scorecard"][name]["n_clue_score"] += 0.04  # points: within 0.05
    contrast = frozen["contrasts"]["Lexical composition"]
    contrast["p_family"] = contrast["p_family"] + 0.04 if contrast["p_family"] < 0.9 else contrast["p_family"] - 0.04
    frozen["spearman"]["n_clue_score"]["gold_ndcg"] -= 0.04
    frozen["queries"] += 1
    (report / FROZEN).write_text(json.dumps(frozen))
    result = verify(small_bench, frozen_runs, report)
    failed = {f.split(":")[0] for f in result.cell_failures}
    assert failed == {
        "contrasts › Lexical composition › p_family",
        "spearman › n_clue_score › gold_ndcg",
        "queries",
    }
    assert any("p-value tolerance" in f for f in result.cell_failures)
    assert any("counts must match exactly" in f for f in result.cell_failures)


@pytest.mark.slow
def test_reproduce_verifies_a_coverage_study_too(frozen_runs: Path, small_bench: Path, tmp_path: Path, cli) -> None:  # noqa: ANN001
    """``--coverage DIR`` adds every cell of the coverage study; a changed cell fails the command, named."""
    from nclue.index.dense import build_dense_index
    from nclue.select.pipeline import run_coverage
    from tests.select.conftest import build_phrase_bench

    bench, coll = build_phrase_bench(tmp_path / "phrases")
    build_dense_index(coll, backend="onnx", max_chunks_per_page=1)
    coverage = tmp_path / "coverage"
    run_coverage(bench, coll, coverage, depth=6, k=2)
    cells = re.compile(r"reproduced: (\d+) cells")
    alone = cli("reproduce", small_bench, frozen_runs, frozen_runs.parent / "report", "--verify")
    both = cli("reproduce", small_bench, frozen_runs, frozen_runs.parent / "report", "--verify", "--coverage", coverage)
    assert alone.exit_code == 0 and both.exit_code == 0, both.output
    assert int(cells.search(both.output)[1]) > int(cells.search(alone.output)[1]) + 100
    summary_path = coverage / "results" / "summary.json"
    summary = json.loads(summary_path.read_text())
    summary["splits"]["all"]["methods"]["expected"]["coverage"] = 0.25
    summary_path.write_text(json.dumps(summary))
    failed = cli(
        "reproduce", small_bench, frozen_runs, frozen_runs.parent / "report", "--verify", "--coverage", coverage
    )
    assert failed.exit_code == 1 and "coverage: splits/all/methods/expected/coverage" in failed.output


def _tree(root: Path) -> dict[str, str]:
    import hashlib

    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*")
        if p.is_file()
    }


@pytest.mark.slow
def test_report_writes_nothing_into_its_inputs(
    frozen_runs: Path, small_bench: Path, indexed_collection: Path, tmp_path: Path, cli
) -> None:  # noqa: ANN001
    """Release, run folder and collection are byte-identical after `nclue report --collection`, and the
    masked runs and the freeze are in the report folder, where `reproduce` finds them."""
    bench, runs, coll, out = tmp_path / "bench", tmp_path / "runs", tmp_path / "coll", tmp_path / "out"
    shutil.copytree(small_bench, bench)
    shutil.copytree(frozen_runs, runs)
    shutil.copytree(indexed_collection, coll)
    before = {name: _tree(root) for name, root in (("bench", bench), ("runs", runs), ("coll", coll))}
    done = cli("report", bench, runs, "-o", out, "--collection", coll, "--bootstrap", "50", "--draws", "100")
    assert done.exit_code == 0, done.output
    assert {name: _tree(root) for name, root in (("bench", bench), ("runs", runs), ("coll", coll))} == before
    assert (out / FROZEN).is_file() and any((out / "masking").glob("*@drop1.jsonl"))
    assert cli("reproduce", bench, runs, out, "--verify").exit_code == 0
    missing = cli("reproduce", bench, runs, "--verify")
    assert missing.exit_code != 0 and "nclue reproduce BENCH RUN_DIR REPORT_DIR --verify" in missing.output
