"""The report's studies on a real benchmark, each against a hand computation or an independent tool:
paraphrase probe (S2a), condition masking (S5a), difficulty (S5b), SourceShift (S3/S4), label example (S6)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from nclue.report.paper import compute_report, write_report
from nclue.runfile import run_path

pytestmark = pytest.mark.slow


def _labels(bench: Path) -> tuple[list[str], dict[str, dict[str, str]], dict[str, list[str]]]:
    queries = [json.loads(line) for line in (bench / "queries.jsonl").read_text().splitlines()]
    labels: dict[str, dict[str, str]] = {q["qid"]: {} for q in queries}
    for line in (bench / "qrels.jsonl").read_text().splitlines():
        row = json.loads(line)
        labels[row["qid"]][row["doc_id"]] = row["label"]
    return [q["qid"] for q in queries], labels, {q["qid"]: q["conditions"] for q in queries}


def _ranked(path: Path, k: int = 10) -> dict[str, list[str]]:
    out = {}
    for line in path.read_text().splitlines():
        row = json.loads(line)
        out[row["qid"]] = [d["doc_id"] for d in sorted(row["docs"], key=lambda d: -d["score"])][:k]
    return out


def _success(ranking: list[str], labels: dict[str, str]) -> float:
    judged = [labels[d] for d in ranking if d in labels]
    return float(bool(judged) and judged[0] == "gold")


def _gold_ndcg(ranking: list[str], labels: dict[str, str], k: int = 10) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranking) if labels.get(d) == "gold")
    ideal = sum(1 / math.log2(i + 2) for i in range(min(sum(v == "gold" for v in labels.values()), k)))
    return dcg / ideal if ideal else 0.0


@pytest.fixture(scope="module")
def study_runs(frozen_runs: Path, small_bench: Path, indexed_collection: Path, tmp_path_factory) -> tuple[Path, Path]:
    """Copies of the bench and runs with a paraphrase run added, and masked runs in ``runs/../masking``."""
    from nclue.bench.verify import write_sums
    from nclue.report.masking import run_masking
    from nclue.systems.run import run_systems

    root = tmp_path_factory.mktemp("studies")
    bench, runs = root / "bench", root / "runs"
    shutil.copytree(small_bench, bench)
    shutil.copytree(frozen_runs, runs)
    _, _, conditions = _labels(bench)
    rows = [
        {"qid": q, "text": "manuals on " + " plus ".join(c.lower() for c in conds)} for q, conds in conditions.items()
    ]
    (bench / "paraphrases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    write_sums(bench)  # as `nclue bench paraphrase` does
    run_systems(bench, indexed_collection, ["bm25.and"], form="paraphrase", out_dir=runs)
    run_masking(bench, indexed_collection, root / "masking", ["bm25.and", "bm25.decompose(distinct)"], "clean_v2")
    return bench, runs


@pytest.fixture(scope="module")
def report(study_runs: tuple[Path, Path]):  # noqa: ANN201
    bench, runs = study_runs
    return compute_report(
        bench, runs, n_boot=200, n_draws=1000, shift=(bench, runs), masking_dir=runs.parent / "masking"
    )


def test_paraphrase_probe_row_is_the_hand_scored_difference(report, study_runs) -> None:  # noqa: ANN001
    bench, runs = study_runs
    qids, labels, _ = _labels(bench)
    row = next(r for r in report.paraphrase if r.system == "bm25.and")
    para = _ranked(runs / "bm25.and@paraphrase.jsonl")
    raw = _ranked(runs / "bm25.and@raw.jsonl")
    hand_para = 100 * np.mean([_success(para.get(q, []), labels[q]) for q in qids])
    hand_raw = 100 * np.mean([_success(raw.get(q, []), labels[q]) for q in qids])
    assert (row.paraphrase, row.raw, row.reference) == (pytest.approx(hand_para), pytest.approx(hand_raw), "raw")
    assert row.delta == pytest.approx(hand_para - hand_raw) and 0 < row.p_family <= 1
    assert report.query_forms["bm25.and"]["paraphrase"] == pytest.approx(hand_para)


def test_masking_reruns_only_a_damaged_run(study_runs, indexed_collection: Path, tmp_path: Path) -> None:  # noqa: ANN001
    from nclue.report.masking import run_masking

    bench, runs = study_runs
    masking = Path(shutil.copytree(runs.parent / "masking", tmp_path / "masking"))
    run_path(masking, "bm25.and@drop2").unlink()
    events: list[tuple[str, int, int | None]] = []
    started: list[str] = []
    produced = run_masking(
        bench, indexed_collection, masking, ["bm25.and", "bm25.decompose(distinct)"], "clean_v2",
        progress=lambda *event: events.append(event), tick=started.append,
    )  # fmt: skip
    assert produced == started == ["bm25.and@drop2"]
    assert events == [("masked runs", 0, 1), ("masked runs", 1, None)]
    rerun, original = (run_path(folder, "bm25.and@drop2") for folder in (masking, runs.parent / "masking"))
    assert rerun.read_bytes() == original.read_bytes()


def test_masked_runs_ask_the_remaining_conditions(study_runs, indexed_collection: Path) -> None:  # noqa: ANN001
    from nclue.query import render_clean_v2
    from nclue.systems.backbone import Request
    from nclue.systems.registry import Workspace

    bench, runs = study_runs
    _, _, conditions = _labels(bench)
    system = Workspace(indexed_collection).system("bm25.decompose(distinct)")
    for position in (1, 2, 3):
        masked = {
            json.loads(line)["qid"]: json.loads(line)["docs"]
            for line in run_path(runs.parent / "masking", f"bm25.decompose(distinct)@drop{position}")
            .read_text()
            .splitlines()
        }
        assert set(masked) == {q for q, c in conditions.items() if len(c) >= position}
        for qid in list(masked)[:4]:
            kept = tuple(c for i, c in enumerate(conditions[qid], start=1) if i != position)
            expected = system.search(Request(kept, render_clean_v2(kept)), 100)
            assert [d["doc_id"] for d in masked[qid]] == [d.doc_id for d in expected]


def test_masking_cells_are_hand_computed_gold_ndcg_changes(report, study_runs) -> None:  # noqa: ANN001
    bench, runs = study_runs
    qids, labels, conditions = _labels(bench)
    full = _ranked(runs / "bm25.and.jsonl")
    for position in (1, 2, 3):
        masked = _ranked(run_path(runs.parent / "masking", f"bm25.and@drop{position}"))
        chosen = [q for q in qids if len(conditions[q]) >= position]
        hand = 100 * np.mean(
            [_gold_ndcg(masked.get(q, []), labels[q]) - _gold_ndcg(full.get(q, []), labels[q]) for q in chosen]
        )
        cell = report.masking.cells["bm25.and"][f"c{position}"]
        assert cell["gold_ndcg"] == pytest.approx(hand, abs=1e-9)
        assert report.masking.queries[f"c{position}"] == len(chosen)
        lo, hi = cell["gold_ndcg_ci"]
        assert lo <= hi


def test_difficulty_covariates_auc_and_fit_by_hand(report, study_runs) -> None:  # noqa: ANN001
    from nclue.report.difficulty import COVARIATES, _design, auc, condition_df, covariates, fit
    from nclue.scoring import Benchmark

    bench_dir, _ = study_runs
    bench = Benchmark.open(bench_dir)
    df = condition_df(bench_dir / "inventory.jsonl")
    docs_of: dict[str, set[str]] = {}
    for line in (bench_dir / "inventory.jsonl").read_text().splitlines():
        row = json.loads(line)
        docs_of.setdefault(row["condition"], set()).add(row["doc_id"])
    cov = covariates(bench, df)
    first = bench.conditions[0]
    assert cov["rarity"][0] == pytest.approx(-np.mean([math.log(len(docs_of[c])) for c in first]))
    # AUC against the pairwise definition
    rng = np.random.default_rng(3)
    y, s = rng.integers(0, 2, 60).astype(float), rng.integers(0, 5, 60).astype(float)
    pairs = [(a, b) for a in s[y == 1] for b in s[y == 0]]
    assert auc(y, s) == pytest.approx(np.mean([1.0 if a > b else 0.5 if a == b else 0.0 for a, b in pairs]))
    # statsmodels' maximum-likelihood β against plain Newton–Raphson, on outcomes drawn from a known model
    n = 400
    synthetic = {
        "rarity": rng.normal(size=n),
        "n3": (rng.random(n) < 0.4).astype(float),
        "log_length": rng.normal(3, 1, size=n),
        "log_pool": rng.normal(3, 0.5, size=n),
    }
    x = _design(synthetic, COVARIATES)
    truth = np.array([-0.3, 0.8, -0.5, 0.2, 0.4])
    y = (rng.random(n) < 1 / (1 + np.exp(-x @ truth))).astype(float)
    model = fit(y, synthetic)
    assert model is not None
    beta = np.zeros(x.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-x @ beta))
        beta += np.linalg.solve(x.T @ (x * (p * (1 - p))[:, None]), x.T @ (y - p))
    assert [model["beta"][c] for c in COVARIATES] == pytest.approx(beta[1:].tolist(), abs=1e-5)
    assert model["auc"] == pytest.approx(auc(y, x @ beta), abs=1e-9)
    # on the small benchmark every covariate is recorded, and a model is fitted or honestly absent
    assert set(report.difficulty.covariates) == set(COVARIATES)
    for model in report.difficulty.models.values():
        assert model is None or set(model["beta"]) == set(COVARIATES)


def test_shift_tables_by_hand(report, study_runs) -> None:  # noqa: ANN001
    bench, runs = study_runs
    qids, labels, _ = _labels(bench)
    source_of = {
        json.loads(line)["doc_id"]: json.loads(line)["source"]
        for line in (bench / "corpus.jsonl").read_text().splitlines()
    }
    gold_sources = {q: {source_of[d] for d, lab in labels[q].items() if lab == "gold"} for q in qids}
    shift = report.shift
    by_source = {s.source: s for s in shift.sources}
    for source, row in by_source.items():
        assert row.queries == sum(1 for q in qids if gold_sources[q] == {source})
    assert shift.mixed_queries == sum(1 for q in qids if len(gold_sources[q]) > 1)
    base, variant = _ranked(runs / "bm25.and.jsonl"), _ranked(run_path(runs, "bm25.decompose(distinct)"))
    diff = {q: _success(variant.get(q, []), labels[q]) - _success(base.get(q, []), labels[q]) for q in qids}
    contrast = next(c for c in shift.contrasts if c.variant == "bm25.decompose(distinct)" and c.base == "bm25.and")
    assert contrast.forms["clean_v2"].delta == pytest.approx(100 * np.mean(list(diff.values())))
    # source heterogeneity is of the Gold-NDCG@10 gap by default, as in the seed
    ndcg_diff = {q: _gold_ndcg(variant.get(q, []), labels[q]) - _gold_ndcg(base.get(q, []), labels[q]) for q in qids}
    assert shift.source_metric == "gold_ndcg"
    for row in (d for d in shift.source_deltas if d.contrast == contrast.name):
        mine = [ndcg_diff[q] for q in qids if gold_sources[q] == {row.source}]
        assert row.metric == "gold_ndcg" and row.development is None
        assert row.delta == pytest.approx(100 * np.mean(mine)) and row.queries == len(mine)
        assert row.pooled == pytest.approx(100 * np.mean(list(ndcg_diff.values())))
        assert row.reverses == (row.delta * row.pooled < 0)
        if row.reverses:
            assert any(row.source in line and contrast.name in line for line in shift.reversals)
    raw = _ranked(runs / "bm25.and@raw.jsonl")
    assert shift.scores["bm25.and"]["raw"] == pytest.approx(
        100 * np.mean([_success(raw.get(q, []), labels[q]) for q in qids])
    )


def test_label_example_rows_follow_the_qrels(report, study_runs) -> None:  # noqa: ANN001
    bench, _ = study_runs
    label = report.label
    rows = {(r["qid"], r["doc_id"]): r for r in map(json.loads, (bench / "qrels.jsonl").read_text().splitlines())}
    gold, *subsets = label.rows
    assert gold["label"] == "Gold" and [s["grade"] for s in subsets] == sorted(
        (s["grade"] for s in subsets), reverse=True
    )
    shown = [gold["shown"][c] for c in label.conditions]
    assert len(set(shown)) == len(shown)  # distinct pages
    for row in label.rows:
        stored = rows[(label.qid, row["doc_id"])]
        assert stored["grade"] == row["grade"]
        for c in label.conditions:
            page = row["shown"].get(c)
            assert (page is None) == (c not in stored.get("pages", {}))
            assert page is None or page in stored["pages"][c]


def test_written_report_reproduces_with_the_studies(report, study_runs, tmp_path: Path) -> None:  # noqa: ANN001
    from nclue.report.reproduce import verify

    bench, runs = study_runs
    written = write_report(report, tmp_path / "report")
    names = {p.name for p in written}
    for stem in (
        "table_s2a_paraphrase",
        "table_s3_shift",
        "table_s4_shift",
        "table_s5a_masking",
        "table_s5b_difficulty",
        "table_s6_label_example",
        "table_s1i_components",
    ):
        assert f"{stem}.md" in names and f"{stem}.tex" in names, stem
    assert "index.html" in names and "label_figure.png" not in names  # no collection given: no figure
    result = verify(bench, runs, tmp_path / "report")
    assert result.ok, result.hash_failures + result.cell_failures
    inputs = json.loads((tmp_path / "report" / "frozen.json").read_text())["inputs"]
    assert any(k.startswith("masking/") for k in inputs) and not (runs / "frozen.json").exists()


def test_label_crop_highlights_the_condition_on_the_real_page(small_pdf_dir: Path, tmp_path: Path) -> None:
    import pypdfium2 as pdfium
    from PIL import Image

    from nclue.report.label import render_crop

    pdf = small_pdf_dir / "texlive-humanities-doc/texlive-doc/latex/verse/verse.pdf"
    document = pdfium.PdfDocument(str(pdf))
    page = next(i + 1 for i in range(len(document)) if "stanza" in document[i].get_textpage().get_text_range().lower())
    document.close()
    out = render_crop(pdf, page, ("stanza", "stanzas"), tmp_path / "crop.png")
    with Image.open(out) as img:
        pixels = np.asarray(img.convert("RGB")).reshape(-1, 3).astype(int)
        assert img.width > 800 and img.height > 200
    highlighted = (pixels[:, 0] > 230) & (pixels[:, 1] > 200) & (pixels[:, 2] < 150)  # the yellow marker
    assert highlighted.sum() > 50
    blank = render_crop(pdf, page, ("no such words anywhere",), tmp_path / "blank.png")
    with Image.open(blank) as img:
        plain = np.asarray(img.convert("RGB")).reshape(-1, 3).astype(int)
    assert ((plain[:, 0] > 230) & (plain[:, 1] > 200) & (plain[:, 2] < 150)).sum() == 0


def test_html_report_loads_every_image_in_chromium(
    report,
    study_runs,
    indexed_collection: Path,
    small_pdf_dir: Path,
    tmp_path: Path,  # noqa: ANN001
) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path("/usr/bin/chromium").is_file():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    coll = tmp_path / "collection"
    shutil.copytree(indexed_collection, coll, ignore=shutil.ignore_patterns("index"))
    meta = json.loads((coll / "collection.json").read_text())
    meta["pdf_dir"] = str(small_pdf_dir)
    (coll / "collection.json").write_text(json.dumps(meta))
    out = tmp_path / "report"
    write_report(report, out, collection=coll)
    assert report.label is not None and (out / "label_figure.png").is_file()
    html = (out / "index.html").read_text()
    assert "<script" not in html and "http://" not in html and "https://" not in html  # self-contained
    errors: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto((out / "index.html").as_uri())
        images = page.evaluate("() => [...document.images].map(i => [i.alt, i.complete && i.naturalWidth > 0])")
        tables = page.evaluate("() => document.querySelectorAll('table').length")
        links = page.evaluate(
            "() => [...document.querySelectorAll('a[href$=\".md\"]')].map(a => a.getAttribute('href'))"
        )
        page.screenshot(path=str(tmp_path / "shot.png"), full_page=False)
        browser.close()
    assert images and all(ok for _, ok in images), images
    assert {alt for alt, _ in images} >= {
        a for a in (f"Evidence pages of {report.label.qid}: gold and grade-2 subset.",)
    }
    assert tables == len(list(report.sections())) and errors == []
    assert links and all((out / href).is_file() for href in links)


def test_masked_runs_of_another_release_are_refused(study_runs, tmp_path: Path) -> None:  # noqa: ANN001
    from nclue.errors import NclueError

    bench, runs = study_runs
    copy = tmp_path / "bench"
    shutil.copytree(bench, copy)
    rows = [json.loads(line) for line in (copy / "queries.jsonl").read_text().splitlines()]
    rows[0]["forms"]["raw"] = rows[0]["forms"]["raw"] + " (edited)"
    (copy / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(NclueError, match="queries.jsonl is not the one the runs in .* read"):
        compute_report(copy, runs, n_boot=50, n_draws=100, masking_dir=runs.parent / "masking")
    with pytest.raises(NclueError, match="masked runs were made from another release .*queries.jsonl"):
        compute_report(copy, runs, n_boot=50, n_draws=100, masking_dir=runs.parent / "masking", check_inputs=False)


def _demote_first_gold(bench: Path, out: Path) -> tuple[str, str]:
    """A qrels copy where the first gold row loses its last condition (a partial of grade n − 1)."""
    rows = [json.loads(line) for line in (bench / "qrels.jsonl").read_text().splitlines()]
    row = next(r for r in rows if r["label"] == "gold")
    dropped = sorted(row["pages"])[-1]
    row.update(label="partial", grade=row["grade"] - 1, pages={c: p for c, p in row["pages"].items() if c != dropped})
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return row["qid"], row["doc_id"]


def test_shift_tables_on_a_final_qrels_copy(report, study_runs, tmp_path: Path) -> None:  # noqa: ANN001
    """--shift-qrels scores S3/S4 on another copy of the SourceShift labels and leaves the rest alone."""
    bench, runs = study_runs
    final = tmp_path / "qrels.final.jsonl"
    qid, doc = _demote_first_gold(bench, final)
    again = compute_report(
        bench,
        runs,
        n_boot=200,
        n_draws=1000,
        shift=(bench, runs),
        shift_qrels=final,
        masking_dir=runs.parent / "masking",
    )
    kept_too = compute_report(
        bench, runs, n_boot=20, n_draws=100, shift=(bench, runs), shift_qrels=final, keep_zero_gold=True
    )
    qids, labels, _ = _labels(bench)
    labels[qid][doc] = "partial"
    scored = [q for q in qids if "gold" in labels[q].values()]  # a query the copy leaves without a gold is dropped
    for system, name in (("bm25.and", "bm25.and.jsonl"), ("bm25.decompose(distinct)", None)):
        ranked = _ranked(runs / name if name else run_path(runs, system))
        hand = 100 * np.mean([_success(ranked.get(q, []), labels[q]) for q in scored])
        assert again.shift.scores[system]["clean_v2"] == pytest.approx(hand)
        kept = 100 * np.mean([_success(ranked.get(q, []), labels[q]) for q in qids])
        assert kept_too.shift.scores[system]["clean_v2"] == pytest.approx(kept)
    dropped = sorted(set(qids) - set(scored))
    assert again.to_json()["options"]["zero_gold"] == {"keep": False, "dropped": {"development": [], "shift": dropped}}
    assert again.shift.qrels == str(final.resolve()) and report.shift.qrels == ""
    assert again.to_json()["options"]["shift"]["qrels"] == str(final.resolve())
    assert again.to_json()["scorecard"] == report.to_json()["scorecard"]  # the development tables are untouched


def test_study_metric_switch(study_runs) -> None:  # noqa: ANN001
    """S1i and the per-source deltas on n-Clue Score when asked: S1i's observed gap is then the n-Clue Δ."""
    bench, runs = study_runs
    data = compute_report(bench, runs, n_boot=200, n_draws=1000, shift=(bench, runs), study_metric="n_clue_score")
    column = data.components[0]
    base, variant = column.base, column.variant
    assert column.metric == "n_clue_score"
    assert column.observed == pytest.approx(data.card.runs[variant].n_clue_score - data.card.runs[base].n_clue_score)
    assert {d.metric for d in data.shift.source_deltas} == {"n_clue_score"}
    assert data.to_json()["study_metric"] == "n_clue_score"
    with pytest.raises(Exception, match="study metric 'gold_hit'"):
        compute_report(bench, runs, n_boot=20, n_draws=100, study_metric="gold_hit")


def test_repaired_report_with_a_relative_qrels_path_reproduces(study_runs, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """A report on a qrels version outside the release, named by a path relative to the working
    directory (as `make demo` passes data/…/qrels.v2.jsonl), verifies: the version is frozen under
    qrels/ only, not as a release file that reproduce would look for inside BENCH."""
    from nclue.report.reproduce import verify

    bench, runs = study_runs
    (tmp_path / "audit").mkdir()
    _demote_first_gold(bench, tmp_path / "audit" / "qrels.v2.jsonl")
    monkeypatch.chdir(tmp_path)
    repaired = compute_report(bench, runs, n_boot=50, n_draws=200, qrels=Path("audit/qrels.v2.jsonl"))
    write_report(repaired, tmp_path / "report-v2")
    frozen = json.loads((tmp_path / "report-v2" / "frozen.qrels.v2.json").read_text())
    assert not [k for k in frozen["inputs"] if k.startswith("bench/") and "qrels.v2" in k]
    result = verify(bench, runs, tmp_path / "report-v2", qrels=Path("audit/qrels.v2.jsonl"))
    assert result.ok, result.hash_failures + result.cell_failures
