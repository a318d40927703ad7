"""Calibration: the logistic fit against statsmodels, the scores by hand, cross-fitting that never
sees a held-out fold's labels, and the CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from nclue.select.calibrate import calibrate, fit_logistic, scores
from nclue.select.evidence import Calibration, fold_of
from tests.select.builders import PHRASES, write_release


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
    result = cli("coverage", "calibrate", bench, coll, "-o", tmp_path / "c.json", "--signal", "bm25", "--signal",
                 "phrase", "--format", "markdown")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Cross-fitted (held-out fold) scores" in result.output
    assert Calibration.load(tmp_path / "c.json").signals == ("bm25", "phrase")
