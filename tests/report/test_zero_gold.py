"""A qrels version that leaves a query without a gold: the report drops it (as `audit impact` and the
supplement after repair do) unless asked to keep it; the choice is recorded and `reproduce` repeats it."""

from __future__ import annotations

from pathlib import Path

import pytest

from nclue.audit.impact import impact
from nclue.report.reproduce import _kept_zero_gold
from nclue.report.scored import score_run_folder
from nclue.scoring import metric_matrix
from tests.scoring.nclue_eval_helpers import make_release, write_jsonl


def _row(qid: str, doc: str, grade: int) -> dict:
    return {"qid": qid, "doc_id": doc, "grade": grade, "label": "gold" if grade == 2 else "partial"}


@pytest.fixture()
def repaired(tmp_path: Path) -> tuple[Path, Path, Path]:
    """q1's gold g1 stays; the repair demotes q2's only gold g2 to a partial. Run A ranks g1 for both
    queries, run B an unjudged document."""
    v1 = [_row("q1", "g1", 2), _row("q2", "g2", 2), _row("q2", "p2", 1)]
    v2 = [_row("q1", "g1", 2), _row("q2", "g2", 1), _row("q2", "p2", 1)]
    queries = [{"qid": q, "conditions": ["alpha", "beta"]} for q in ("q1", "q2")]
    bench = make_release(tmp_path / "bench", queries, v1)
    runs = tmp_path / "runs"
    runs.mkdir()
    for name, doc in (("A", "g1"), ("B", "x")):
        rows = [{"qid": q, "run": name, "docs": [{"doc_id": doc, "score": 1.0}]} for q in ("q1", "q2")]
        write_jsonl(runs / f"{name}.jsonl", rows)
    return bench, runs, write_jsonl(tmp_path / "qrels.v2.jsonl", v2)


def _gold_ndcg(folder) -> dict[str, float]:  # noqa: ANN001
    values = metric_matrix(folder.scores, "gold_ndcg")
    return {n: round(100 * float(values[folder.scores.index(n)].mean()), 6) for n in ("A", "B")}


def test_zero_gold_query_is_dropped_by_default(repaired):
    bench, runs, v2 = repaired
    folder = score_run_folder(bench, runs, v2, check_inputs=False)
    assert folder.dropped == ("q2",) and folder.bench.n_queries == 1
    assert _gold_ndcg(folder) == {"A": 100.0, "B": 0.0}  # by hand: q1 alone, A ranks its gold first
    report = impact(bench, [bench / "qrels.jsonl", v2], [runs], draws=100, bootstrap=20).to_json()
    assert report["versions"][1]["gold_ndcg"] == pytest.approx(_gold_ndcg(folder))  # the same population as impact


def test_keep_zero_gold_scores_it_as_a_miss(repaired):
    bench, runs, v2 = repaired
    folder = score_run_folder(bench, runs, v2, check_inputs=False, keep_zero_gold=True)
    assert folder.dropped == () and folder.bench.n_queries == 2
    assert _gold_ndcg(folder) == {"A": 50.0, "B": 0.0}  # q2 has no gold: 0 for every run


def test_own_qrels_drop_nothing(repaired):
    bench, runs, _ = repaired
    folder = score_run_folder(bench, runs, None, check_inputs=False)
    assert folder.dropped == () and folder.bench.n_queries == 2
    assert _gold_ndcg(folder) == {"A": 50.0, "B": 0.0}  # q2's own gold g2 is ranked by neither run


def test_reproduce_repeats_the_recorded_rule():
    assert _kept_zero_gold({"options": {"zero_gold": {"keep": False, "dropped": {"development": ["q2"]}}}}) is False
    assert _kept_zero_gold({"options": {"zero_gold": {"keep": True, "dropped": {"development": []}}}}) is True
    assert _kept_zero_gold({"options": {"qrels": None}}) is True  # a freeze from before the rule kept them
