"""The evidence fitter: the logistic fit against statsmodels, the scores by hand, cross-fitting that
never sees a held-out fold's labels, reader labels (shown pages only), the transfer score, the CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from nclue.errors import NclueError
from nclue.evidence import fit as fitting
from nclue.evidence.fit import fit_logistic, scores
from nclue.evidence.model import Calibration, fold_of
from tests.select.builders import PHRASES, write_release


def fit(bench, coll, out=None, signals=("bm25", "phrase"), labels="reader"):
    from nclue.systems.registry import Workspace

    return fitting.fit(bench, Workspace(coll), out, signals, labels)


def score(calibration, bench, coll):
    from nclue.systems.registry import Workspace

    return fitting.score(calibration, bench, Workspace(coll))


def calibrate(bench, coll, out=None, signals=("bm25", "phrase")):
    """The qrels-labelled fit (the phrase benchmark has no reader judgments)."""
    return fit(bench, coll, out, signals, labels="qrels")


def test_fit_logistic_equals_statsmodels_maximum_likelihood():
    import statsmodels.api as sm

    rng = np.random.default_rng(7)
    x = rng.normal(size=(4000, 3))
    y = rng.random(4000) < 1 / (1 + np.exp(-(-1.0 + x @ np.array([1.5, -0.7, 0.2]))))
    ours = fit_logistic(x, y, l2=0.0)
    peer = sm.Logit(y.astype(float), sm.add_constant(x)).fit(disp=0).params
    np.testing.assert_allclose(ours, peer, atol=1e-4)


def test_scores_by_hand():
    p = np.array([0.05, 0.15, 0.8, 0.9])
    y = np.array([0, 1, 1, 1])
    s = scores(p, y)
    assert s["brier"] == pytest.approx((0.05**2 + 0.85**2 + 0.2**2 + 0.1**2) / 4)
    assert s["log_loss"] == pytest.approx(-(math.log(0.95) + math.log(0.15) + math.log(0.8) + math.log(0.9)) / 4)
    # bins [0,.1): p .05 y 0 ; [.1,.2): p .15 y 1 ; [.8,.9): .8/1 ; [.9,1]: .9/1
    assert s["ece"] == pytest.approx((0.05 + 0.85 + 0.2 + 0.1) / 4)
    assert (s["precision"], s["recall"]) == (1.0, pytest.approx(2 / 3))
    assert s["brier_base_rate"] == pytest.approx(0.75 * 0.25)


def test_calibration_learns_the_surface_rule_and_cross_fits(phrase_bench, tmp_path):
    bench, coll = phrase_bench
    report = calibrate(bench, coll, tmp_path / "cal.json", signals=("bm25", "phrase"))
    cal = Calibration.load(tmp_path / "cal.json")
    assert cal == report.calibration and cal.provenance["positive_pages"] == 8
    assert cal.provenance["conditions"] == 4 and cal.provenance["positive_documents"] == 8
    weights = dict(zip(("intercept", "bm25", "phrase"), cal.model.page))
    assert weights["phrase"] > 0
    held = report.heldout["document"]
    assert held["pairs"] == 4 * 8 and held["positives"] == 8
    assert held["recall"] == 1.0 and held["precision"] == 1.0  # the rule is learnable from the other fold


def test_a_fold_model_never_sees_its_own_labels(phrase_bench, tmp_path):
    """Relabel every fold-0 condition's evidence page: the fold-0 model (fitted without fold 0) is unchanged."""
    bench, coll = phrase_bench
    base = calibrate(bench, coll, signals=("bm25", "phrase")).calibration
    rows = [json.loads(line) for line in (bench / "qrels.jsonl").read_text().splitlines()]
    queries = [json.loads(line) for line in (bench / "queries.jsonl").read_text().splitlines()]
    fold0 = {c for c in PHRASES if fold_of(c) == 0}
    assert fold0 and fold0 != set(PHRASES)
    moved = []
    for r in rows:
        pages = {c: ([1 + p % 4 for p in ps] if c in fold0 else ps) for c, ps in r["pages"].items()}
        moved.append((r["qid"], r["doc_id"], pages))
    other = write_release(
        tmp_path / "bench2", [(q["qid"], q["conditions"]) for q in queries], moved, [f"d{i}" for i in range(8)]
    )
    changed = calibrate(other, coll, signals=("bm25", "phrase")).calibration
    assert changed.folds[0] == base.folds[0]
    assert changed.folds[1] != base.folds[1] and changed.model != base.model


def test_calibrate_cli_writes_the_file_and_the_tables(cli, phrase_bench, tmp_path):
    bench, coll = phrase_bench
    result = cli("evidence", "fit", bench, coll, "--labels", "qrels", "-o", tmp_path / "c.json", "--signal", "bm25", "--signal",
                 "phrase", "--format", "markdown")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Cross-fitted (held-out fold) scores" in result.output
    assert Calibration.load(tmp_path / "c.json").signals == ("bm25", "phrase")


def write_judgments(bench, rows):
    bench.mkdir(parents=True, exist_ok=True)
    (bench / "judgments.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return bench


def reader_rows():
    """A reader read every (phrase, document) on two pages: the page stating the phrase twice (when
    the document has it) and the page with the words apart; only the first is quoted."""
    rows = []
    for i in range(8):
        own = PHRASES[i % 4]
        for c, phrase in enumerate(PHRASES):
            if phrase == own:
                rows.append({"condition": phrase, "doc_id": f"d{i}", "shown": [1 + i % 4, 1 + (i + 1) % 4],
                             "established": [1 + i % 4]})  # fmt: skip
            else:
                rows.append({"condition": phrase, "doc_id": f"d{i}", "shown": [1 + (c + 2) % 4], "established": []})
    return rows


def test_reader_labels_are_the_shown_pages_and_the_read_pairs(phrase_bench, tmp_path):
    _, coll = phrase_bench
    bench = write_judgments(tmp_path / "reader", reader_rows())
    report = fit(bench, coll, tmp_path / "r.json", ("bm25", "phrase"))
    prov = report.calibration.provenance
    # 8 own pairs × 2 shown pages + 24 other pairs × 1 page; shown pages overlap only where a page repeats
    assert prov["labelled_documents"] == 32 and prov["positive_documents"] == 8
    assert prov["positive_pages"] == 8 and prov["labelled_pages"] <= 8 * 2 + 24
    assert prov["labels"].startswith("blind-reader judgments") and prov["judgments_sha256"]
    held = report.heldout["document"]
    assert (held["pairs"], held["positives"]) == (32, 8) and held["recall"] == 1.0
    assert report.heldout["page"]["pairs"] == prov["labelled_pages"]


def test_only_shown_pages_are_labelled(phrase_bench, tmp_path):
    """Hand check of the masks: d0 / "alpha beta" was shown pages 1 and 2 and quoted on page 1, so
    exactly those two page rows are labelled (1 positive); the other pages of d0 are unlabelled,
    not negatives."""
    from nclue.evidence.labels import load_labels
    from nclue.evidence.signals import EvidenceSource
    from nclue.systems.registry import Workspace

    _, coll = phrase_bench
    bench = write_judgments(tmp_path / "reader", reader_rows())
    source = EvidenceSource.from_workspace(Workspace(coll))
    labels = load_labels(bench, source, ("bm25",))
    c = labels.conditions.index("alpha beta")
    pages = source.pages
    d0 = [j for j in range(pages.n_pages) if pages.id_list[pages.page_doc[j]] == "d0"]
    numbers = [int(pages.page_number[j]) for j in d0]
    assert [numbers[i] for i, j in enumerate(d0) if labels.page_mask[c, j]] == [1, 2]
    assert [numbers[i] for i, j in enumerate(d0) if labels.page_labels[c, j]] == [1]
    assert labels.doc_mask[c].sum() == 8 and labels.doc_labels[c].sum() == 2  # d0 and d4 state it


def test_transfer_score_is_the_full_model_on_other_labels(phrase_bench, tmp_path):
    bench, coll = phrase_bench
    reader = write_judgments(tmp_path / "reader", reader_rows())
    cal = fit(reader, coll, signals=("bm25", "phrase")).calibration
    transfer = score(cal, reader, coll)
    assert transfer.levels["document"]["pairs"] == 32
    assert transfer.levels["document"]["brier"] < transfer.levels["document"]["brier_base_rate"]
    assert "scored on" in transfer.render("markdown")


def test_bad_judgment_rows_name_the_line(phrase_bench, tmp_path):
    _, coll = phrase_bench
    bench = write_judgments(tmp_path / "bad", [reader_rows()[0], {"condition": "alpha beta", "doc_id": "d0"}])
    with pytest.raises(NclueError, match=r"judgments.jsonl:2: not a judgment row .*shown and established"):
        fit(bench, coll, signals=("bm25", "phrase"))
    bench = write_judgments(tmp_path / "ghost", [dict(reader_rows()[0], doc_id="nope")])
    with pytest.raises(NclueError, match=r"judgments.jsonl:1: document 'nope' is not in the collection"):
        fit(bench, coll, signals=("bm25", "phrase"))
    with pytest.raises(NclueError, match="no judgments.jsonl.*--judge reader"):
        fit(tmp_path / "empty", coll, signals=("bm25", "phrase"))


def test_score_cli_names_the_shipped_calibrations_and_scores_a_file(cli, phrase_bench, tmp_path):
    bench, coll = phrase_bench
    result = cli("evidence", "score", "nope", bench, coll)
    assert result.exit_code == 2 and "reader-debian-docs-shift, reader-debian-docs" in result.output
    reader = write_judgments(tmp_path / "reader", reader_rows())
    fit(reader, coll, tmp_path / "c.json")
    result = cli("evidence", "score", tmp_path / "c.json", reader, coll, "--format", "markdown")
    assert result.exit_code == 0, result.output
    assert "| document | 32 | 8 |" in result.output
