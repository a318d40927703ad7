"""Standard measures through ir_measures: hand-computed values, ranx as a peer, nclue's tie order,
every benchmark query in the denominator, and clear refusal of an unknown name."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from nclue.errors import NclueError
from tests.scoring.nclue_eval_helpers import write_trec

GOLD = "world_bank_34454344"
PART2 = "world_bank_34422285"
SUB1 = "world_bank_34353633"


def test_hand_computed_values_and_every_query_counts(s6_release, tmp_path):
    import nclue

    # nclue_0000: gold (grade 3) first; 2 more relevant (grades 2, 1). q2 not answered.
    half = write_trec(tmp_path / "half.trec", {"nclue_0000": [(GOLD, 2.0), ("unseen-doc", 1.0), (PART2, 0.5)]})
    card = nclue.evaluate(s6_release, [half], measures=["RR", "P@2", "R@100", "AP", "RR(rel=3)", "RR"])
    got = card.measures["half"]
    assert list(got) == ["RR", "P@2", "R@100", "AP", "RR(rel=3)"]  # canonical names, duplicates dropped
    # by hand, then halved because q2 (unanswered) scores 0 in the mean over both queries
    assert got["RR"] == pytest.approx(1.0 / 2)
    assert got["P@2"] == pytest.approx(0.5 / 2)  # gold, then a document the benchmark never saw
    assert got["R@100"] == pytest.approx((2 / 3) / 2)
    assert got["AP"] == pytest.approx(((1 / 1 + 2 / 3) / 3) / 2)
    assert got["RR(rel=3)"] == pytest.approx(1.0 / 2)


def test_ties_keep_the_run_files_order(s6_release, tmp_path):
    import nclue

    # equal scores: nclue keeps the file order (SUB1, then the gold); trec_eval alone would sort
    # the tie by document ID and put the gold first
    tied = write_trec(tmp_path / "tied.trec", {"nclue_0000": [(SUB1, 1.0), (GOLD, 1.0)], "q2": [("g1", 1.0)]})
    got = nclue.evaluate(s6_release, [tied], measures=["RR(rel=3)"]).measures["tied"]
    assert got["RR(rel=3)"] == pytest.approx((1 / 2 + 0) / 2)  # q2's g1 is grade 2, not a gold at rel=3


def test_agrees_with_ranx(s6_release, tmp_path):
    from ranx import Qrels, Run, evaluate

    import nclue

    rankings = {
        "nclue_0000": [(SUB1, 3.0), (GOLD, 2.0), (PART2, 1.0)],
        "q2": [("s1", 4.0), ("g2", 3.0), ("x", 2.0), ("g1", 1.0)],
    }
    path = write_trec(tmp_path / "r.trec", rankings)
    got = nclue.evaluate(s6_release, [path], measures=["nDCG@10", "AP", "RR", "P@3", "R@2"]).measures["r"]
    qrels = {
        "nclue_0000": {GOLD: 3, PART2: 2, SUB1: 1},
        "q2": {"g1": 2, "g2": 2, "s1": 1, "j061": 2},
    }
    run = {q: {d: s for d, s in docs} for q, docs in rankings.items()}
    peer = evaluate(Qrels(qrels), Run(run), ["ndcg@10", "map", "mrr", "precision@3", "recall@2"])
    for ours, theirs in (
        ("nDCG@10", "ndcg@10"),
        ("AP", "map"),
        ("RR", "mrr"),
        ("P@3", "precision@3"),
        ("R@2", "recall@2"),
    ):
        assert got[ours] == pytest.approx(peer[theirs], abs=1e-9), ours


def test_cli_measure_option_and_unknown_names(s6_release, tmp_path):
    from nclue.cli import app

    run = write_trec(tmp_path / "base.trec", {"nclue_0000": [(GOLD, 1.0)], "q2": [("g1", 1.0)]})
    result = CliRunner().invoke(
        app, ["evaluate", str(s6_release), str(run), "-m", "nDCG@10", "-m", "AP", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    measures = json.loads(result.stdout)["measures"]["base"]
    assert set(measures) == {"nDCG@10", "AP"} and 0 < measures["AP"] <= 1
    table = CliRunner().invoke(app, ["evaluate", str(s6_release), str(run), "-m", "AP", "--format", "markdown"])
    assert "Standard measures (ir_measures)" in table.stdout
    bad = CliRunner().invoke(app, ["evaluate", str(s6_release), str(run), "-m", "NDCG@ten"])
    assert bad.exit_code != 0 and "is not an ir_measures measure" in bad.output and "nDCG@10" in bad.output
    import nclue

    with pytest.raises(NclueError, match="not an ir_measures measure"):
        nclue.evaluate(s6_release, [run], measures=["bogus"])
