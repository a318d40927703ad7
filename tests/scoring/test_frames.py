"""Runs from ranx-style dicts and DataFrames, runs and scorecards as DataFrames, and wrong types named."""

from __future__ import annotations

import pandas as pd
import pytest

import nclue
from nclue.errors import NclueError
from tests.scoring.nclue_eval_helpers import write_trec

GOLD = "world_bank_34454344"
SUB1 = "world_bank_34353633"


def test_dict_and_frame_runs_score_like_the_same_trec_file(s6_release, tmp_path):
    rankings = {"nclue_0000": {SUB1: 2.0, GOLD: 1.0}, "q2": {"g1": 1.0}}
    trec = write_trec(tmp_path / "file.trec", {q: list(d.items()) for q, d in rankings.items()})
    frame = pd.DataFrame(
        [(q, d, s) for q, docs in rankings.items() for d, s in docs.items()], columns=["qid", "docno", "score"]
    )
    card = nclue.evaluate(s6_release, [trec, rankings, frame, nclue.Run("named", rankings)])
    assert set(card.runs) == {"file", "run2", "run3", "named"}
    # by hand: nclue_0000 ranks a partial first (subset-first, 0), q2 ranks a gold first (1): 50
    assert {card[n].n_clue_score for n in card.runs} == {50.0}
    table = card.to_pandas()
    assert list(table.index) == card.ranked()
    assert table.loc["named", "n_clue_score"] == 50.0 and table.loc["named", "gold_hit"] == 100.0
    assert table.loc["named", "n_clue_score_lo"] <= 50.0 <= table.loc["named", "n_clue_score_hi"]


def test_run_round_trips_through_pandas_in_nclue_order(tmp_path):
    run = nclue.Run("r", {"q1": {"a": 1.0, "b": 2.0, "c": 1.0}, "q2": [("x", 0.5)]})
    df = run.to_pandas()
    assert list(df.columns) == ["qid", "docno", "score", "rank"]
    # score descending, the tie between a and c kept in input order, ranks from 0 (PyTerrier)
    assert df[df.qid == "q1"].docno.tolist() == ["b", "a", "c"] and df[df.qid == "q1"]["rank"].tolist() == [0, 1, 2]
    back = nclue.Run.from_pandas(df, "back")
    assert [d.doc_id for d in back.rankings["q1"]] == ["b", "a", "c"]
    ranx_shape = df.rename(columns={"qid": "q_id", "docno": "doc_id"})
    assert nclue.Run.from_pandas(ranx_shape, "r2").rankings.keys() == {"q1", "q2"}


def test_compare_takes_dicts_and_returns_a_frame(s6_release):
    base = {"nclue_0000": {SUB1: 2.0, GOLD: 1.0}, "q2": {"g1": 1.0}}
    better = nclue.Run("better", {"nclue_0000": {GOLD: 2.0, SUB1: 1.0}, "q2": {"g1": 1.0}})
    result = nclue.compare(s6_release, base, [better], bootstrap=50, draws=100, sensitivity=False)
    table = result.to_pandas()
    assert list(table.index) == ["better"]
    assert table.loc["better", "delta_n_clue_score"] == pytest.approx(50.0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: nclue.Run("x", [("q", "d")]), "rankings must be a mapping"),
        (lambda: nclue.Run("x", {"q": 3}), "query 'q': expected a ranking, got int"),
        (lambda: nclue.Run("x", {"q": {"d": "high"}}), "the score of 'd' is 'high', not a number"),
        (lambda: nclue.Run("", {"q": {"d": 1.0}}), "non-empty string"),
        (lambda: nclue.Run.from_pandas(pd.DataFrame({"a": [1]}), "x"), "no query or document or score column"),
        (lambda: nclue.Run.from_pandas([1, 2], "x"), "expected a pandas DataFrame"),
    ],
)
def test_wrong_types_are_named(call, message):
    with pytest.raises(NclueError, match=message):
        call()


def test_evaluate_refuses_a_bare_run_and_unknown_types(s6_release):
    with pytest.raises(NclueError, match="wrap a single run in a list"):
        nclue.evaluate(s6_release, {"nclue_0000": {GOLD: 1.0}})
    with pytest.raises(NclueError, match="run 1: expected a Run, a run file path"):
        nclue.evaluate(s6_release, [42])


# Judgments made in memory: the same grades as a TREC qrels file must give the same card.
GRADES = {"nclue_0000": {GOLD: 3, SUB1: 2}, "q2": {"g1": 2, "s1": 1}}
RUN = {"nclue_0000": {SUB1: 2.0, GOLD: 1.0}, "q2": {"g1": 1.0, "s1": 0.5}}


def _trec_qrels(path, grades):
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in grades.items() for d, g in docs.items()))
    return path


def _frame(columns):
    return pd.DataFrame([(q, d, g) for q, docs in GRADES.items() for d, g in docs.items()], columns=columns)


@pytest.mark.parametrize(
    "qrels",
    [
        GRADES,
        nclue.Qrels.from_dict(GRADES),
        _frame(["qid", "docno", "label"]),  # PyTerrier
        _frame(["query_id", "doc_id", "relevance"]),  # ir_measures
        _frame(["q_id", "doc_id", "score"]),  # ranx
    ],
    ids=["dict", "Qrels", "pyterrier", "ir_measures", "ranx"],
)
def test_in_memory_qrels_score_like_the_same_trec_qrels_file(s6_release, tmp_path, qrels):
    from_file = nclue.evaluate(s6_release, [nclue.Run("r", RUN)], qrels=_trec_qrels(tmp_path / "q.txt", GRADES))
    in_memory = nclue.evaluate(s6_release, [nclue.Run("r", RUN)], qrels=qrels)
    assert in_memory["r"].to_json() == from_file["r"].to_json()
    # by hand: nclue_0000's gold is second behind a partial (miss), q2's gold is first (hit): 50
    assert in_memory["r"].n_clue_score == 50.0


def test_in_memory_qrels_replace_the_release_judgments(s6_release):
    # the release's own gold for nclue_0000 is ranked second (a miss); make the first document the gold
    own = nclue.evaluate(s6_release, [nclue.Run("r", RUN)])
    swapped = nclue.evaluate(s6_release, [nclue.Run("r", RUN)], qrels={"nclue_0000": {SUB1: 3}, "q2": {"g1": 2}})
    assert own["r"].n_clue_score == 50.0 and swapped["r"].n_clue_score == 100.0
    release = nclue.open_release(s6_release, qrels={"q2": {"g2": 2}})
    assert [(j.qid, j.doc_id, j.label) for j in release.judgments] == [("q2", "g2", "gold")]


def test_qrels_round_trip_through_pandas_and_dicts():
    qrels = nclue.Qrels.from_dict(GRADES)
    frame = qrels.to_pandas()
    assert list(frame.columns) == ["qid", "doc_id", "grade", "label"]
    assert nclue.Qrels.from_pandas(frame).to_dict() == GRADES
    labelled = pd.DataFrame([("q2", "j061", 2, "partial")], columns=["qid", "doc_id", "grade", "label"])
    assert nclue.Qrels.from_pandas(labelled).rows == (("q2", "j061", 2, "partial"),)


@pytest.mark.parametrize(
    ("qrels", "message"),
    [
        ({"q2": {"g1": 3}}, r"qrels row 1 \(q2, g1\): grade 3 out of range 0..2"),
        ({"q9": {"g1": 1}}, r"qid 'q9' is not in queries.jsonl"),
        ({"q2": {"g1": 1.5}}, r"grade 1.5 must be a non-negative integer"),
        ({"q2": {"g1": -1}}, r"grade -1 must be a non-negative integer"),
        ({"q2": ["g1"]}, r"expected \{qid: \{doc_id: grade\}\}"),
        (pd.DataFrame({"qid": ["q2"], "docno": ["g1"]}), "no grade column"),
        (42, "qrels must be a qrels file path, nclue.Qrels"),
    ],
)
def test_bad_in_memory_qrels_are_named(s6_release, qrels, message):
    with pytest.raises(NclueError, match=message):
        nclue.evaluate(s6_release, [nclue.Run("r", RUN)], qrels=qrels)
