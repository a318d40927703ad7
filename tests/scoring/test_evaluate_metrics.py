"""Hand-computed metric cases: the seed's Table S6 query, the tie and denominator rules, NDCG."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nclue.scoring import Benchmark, from_records, load_run_matrix, score_runs, summarise
from nclue.scoring.metrics import GOLD_FIRST, MISS, SUBSET_FIRST
from nclue.scoring.summary import strata
from nclue.types import RankedDoc, Run
from tests.scoring.nclue_eval_helpers import write_jsonl, write_trec

GOLD = "world_bank_34454344"
SUB2 = "world_bank_34422285"
SUB1 = "world_bank_34353633"


def d(k: int) -> float:
    return 1.0 / math.log2(k + 1)


def test_table_s6_gold_first_and_subset_first(s6_release, tmp_path):
    bench = Benchmark.open(s6_release)
    assert bench.qids == ("nclue_0000", "q2")
    qi = bench.qid_index["nclue_0000"]
    # gold at rank 2 behind an unjudged doc, grade-2 subset at rank 3: success (only judged subsets block).
    a = write_trec(tmp_path / "gold_first.trec", {"nclue_0000": [("unjudged", 9), (GOLD, 8), (SUB2, 7)]})
    # grade-1 subset above the gold: subset-first, gold still hit.
    b = write_trec(tmp_path / "subset_first.trec", {"nclue_0000": [(SUB1, 9), (GOLD, 8)]})
    # only subsets: miss.
    c = write_trec(tmp_path / "miss.trec", {"nclue_0000": [(SUB2, 9), (SUB1, 8)]})
    scores = score_runs(bench, [load_run_matrix(p, bench) for p in (a, b, c)], k=10)
    assert scores.names == ("gold_first", "subset_first", "miss")
    assert scores.outcome[:, qi].tolist() == [GOLD_FIRST, SUBSET_FIRST, MISS]
    assert scores.gold_ndcg[0, qi] == pytest.approx(d(2))
    assert scores.gold_ndcg[1, qi] == pytest.approx(d(2))
    assert scores.gold_ndcg[2, qi] == 0.0
    ideal = 3 * d(1) + 2 * d(2) + 1 * d(3)
    assert scores.graded_ndcg[0, qi] == pytest.approx((3 * d(2) + 2 * d(3)) / ideal)
    assert scores.graded_ndcg[1, qi] == pytest.approx((1 * d(1) + 3 * d(2)) / ideal)
    assert scores.graded_ndcg[2, qi] == pytest.approx((2 * d(1) + 1 * d(2)) / ideal)


def test_denominator_is_every_benchmark_query_and_missing_ranking_is_miss(s6_release, tmp_path):
    bench = Benchmark.open(s6_release)
    run = load_run_matrix(write_trec(tmp_path / "one.trec", {"nclue_0000": [(GOLD, 1.0)]}), bench)
    assert run.answered.tolist() == [True, False]
    s = summarise(score_runs(bench, [run]))["one"]
    assert s["n_clue_score"] == 50.0
    assert s["gold_hit"] == 50.0
    assert s["miss"] == 50.0 and s["gold_first"] == 50.0 and s["subset_first"] == 0.0
    assert s["gold_ndcg"] == 50.0


def test_tie_rule_keeps_input_order(s6_release, tmp_path):
    bench = Benchmark.open(s6_release)
    first = load_run_matrix(write_trec(tmp_path / "tie_gold.trec", {"q2": [("g1", 1.0), ("s1", 1.0)]}), bench)
    second = load_run_matrix(write_trec(tmp_path / "tie_sub.trec", {"q2": [("s1", 1.0), ("g1", 1.0)]}), bench)
    # rank column is ignored: the file order of equal scores decides
    scores = score_runs(bench, [first, second])
    q = bench.qid_index["q2"]
    assert scores.outcome[:, q].tolist() == [GOLD_FIRST, SUBSET_FIRST]
    # a higher score later in the file still wins: sort by score first
    later = load_run_matrix(write_trec(tmp_path / "later.trec", {"q2": [("s1", 1.0), ("g1", 2.0)]}), bench)
    assert score_runs(bench, [later]).outcome[0, q] == GOLD_FIRST


def test_tie_rule_same_in_jsonl_and_records(s6_release, tmp_path):
    bench = Benchmark.open(s6_release)
    path = write_jsonl(
        tmp_path / "js.jsonl", [{"qid": "q2", "docs": [{"doc_id": "s1", "score": 1}, {"doc_id": "g1", "score": 1}]}]
    )
    rec = Run("rec", {"q2": [RankedDoc("s1", 1.0), RankedDoc("g1", 1.0)]})
    scores = score_runs(bench, [load_run_matrix(path, bench), from_records(rec, bench)])
    assert scores.outcome[:, bench.qid_index["q2"]].tolist() == [SUBSET_FIRST, SUBSET_FIRST]


def test_j061_partial_with_full_grade_blocks_and_counts_in_graded_ndcg(s6_release, tmp_path):
    bench = Benchmark.open(s6_release)
    q = bench.qid_index["q2"]
    run = load_run_matrix(write_trec(tmp_path / "j.trec", {"q2": [("j061", 3), ("g2", 2), ("g1", 1)]}), bench)
    s = score_runs(bench, [run])
    assert s.outcome[0, q] == SUBSET_FIRST
    assert s.gold_ndcg[0, q] == pytest.approx((d(2) + d(3)) / (d(1) + d(2)))
    ideal = 2 * d(1) + 2 * d(2) + 2 * d(3) + 1 * d(4)
    assert s.graded_ndcg[0, q] == pytest.approx((2 * d(1) + 2 * d(2) + 2 * d(3)) / ideal)


def test_cutoff_excludes_gold_below_k(s6_release, tmp_path):
    bench = Benchmark.open(s6_release)
    q = bench.qid_index["q2"]
    docs = [(f"x{i}", 100 - i) for i in range(10)] + [("g1", 1)]
    s = score_runs(bench, [load_run_matrix(write_trec(tmp_path / "deep.trec", {"q2": docs}), bench)], k=10)
    assert s.outcome[0, q] == MISS
    s5 = score_runs(
        bench, [load_run_matrix(write_trec(tmp_path / "k.trec", {"q2": [("x", 3), ("g1", 2)]}), bench)], k=1
    )
    assert s5.outcome[0, q] == MISS and s5.gold_ndcg[0, q] == 0.0


def test_mpg_partition_and_strata(s6_release, tmp_path):
    bench = Benchmark.open(s6_release)
    run = load_run_matrix(
        write_trec(tmp_path / "r.trec", {"nclue_0000": [(SUB1, 2), (GOLD, 1)], "q2": [("g1", 1)]}), bench
    )
    s = summarise(score_runs(bench, [run]))["r"]
    assert s["miss"] + s["subset_first"] + s["gold_first"] == pytest.approx(100.0)
    cells = strata(bench)
    assert set(cells["n"]) == {"n=2", "n=3"}
    # L_min: nclue_0000's gold has 80 pages; q2's golds 20 and 200 -> min 20
    assert cells["L_min"]["31-100"].tolist() == [True, False]
    assert cells["L_min"]["<=30"].tolist() == [False, True]
    assert cells["|D+|"]["<=25"].all()


def test_gold_support_and_page_coverage(s6_release, tmp_path):
    bench = Benchmark.open(s6_release)
    rows = [
        {
            "qid": "nclue_0000",
            "docs": [
                {"doc_id": GOLD, "score": 2.0, "pages": [[2, 0.9], [19, 0.8], [60, 0.7], [61, 0.1]]},
                {"doc_id": SUB2, "score": 1.0, "pages": [[28, 0.5]]},
            ],
        },
        {
            "qid": "q2",
            "docs": [
                {
                    "doc_id": "g1",
                    "score": 2.0,
                    "pages": [[1, 0.9], [4, 0.9], [6, 0.9], [2, 0.1]],
                    "evidence": {"A": [1], "B": [2]},
                }
            ],
        },
    ]
    run = load_run_matrix(write_jsonl(tmp_path / "paged.jsonl", rows), bench)
    assert run.page_aware
    s = score_runs(bench, [run])
    # nclue_0000: top-3 pages {2, 19, 60} meet all three supports; q2: top-3 {1, 4, 6} misses B's page 2
    assert s.gold_support[0].tolist() == [1.0, 0.0]
    assert s.coverage_condition[0].tolist() == [1.0, 0.5]
    summary = summarise(s)["paged"]
    assert summary["gold_support"] == 50.0
    assert summary["page_coverage_all"] == 50.0
    assert summary["page_coverage_condition"] == 75.0
    trec = load_run_matrix(write_trec(tmp_path / "plain.trec", {"q2": [("g1", 1)]}), bench)
    assert summarise(score_runs(bench, [trec]))["plain"]["gold_support"] is None


def _random_case(rng, n_queries=40):
    from nclue.scoring import benchmark_from_judgments
    from nclue.types import Judgment

    qids = [f"q{i}" for i in range(n_queries)]
    conds, rows = [], []
    for qid in qids:
        n = int(rng.integers(2, 4))
        conds.append(tuple(f"c{j}" for j in range(n)))
        docs = rng.choice(60, size=int(rng.integers(3, 25)), replace=False)
        n_gold = int(rng.integers(0, 4))
        for j, doc in enumerate(docs):
            if j < n_gold:
                rows.append(Judgment(qid, f"d{doc}", n, "gold"))
            else:
                rows.append(Judgment(qid, f"d{doc}", int(rng.integers(1, n + 1)), "partial"))
    bench = benchmark_from_judgments(None, qids, conds, rows)
    runs = []
    for r in range(5):
        rankings = {}
        for qid in qids:
            docs = rng.choice(80, size=int(rng.integers(1, 30)), replace=False)
            scores = rng.permutation(len(docs)) + rng.random() * 0.5
            rankings[qid] = [RankedDoc(f"d{doc}", float(s)) for doc, s in zip(docs, scores)]
        runs.append(Run(f"r{r}", rankings))
    return bench, runs


def test_ndcg_matches_pytrec_eval_on_random_runs_without_ties():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(3)
    bench, runs = _random_case(rng)
    scores = score_runs(bench, [from_records(r, bench) for r in runs], k=10)
    graded = {q: {} for q in bench.qids}
    gold_only = {q: {} for q in bench.qids}
    for q, doc, g, lab in zip(bench.j_query, bench.j_doc, bench.j_grade, bench.j_label):
        graded[bench.qids[q]][bench.doc_ids[doc]] = int(g)
        gold_only[bench.qids[q]][bench.doc_ids[doc]] = int(lab == 2)
    for r, run in enumerate(runs):
        as_dict = {q: {d.doc_id: d.score for d in docs} for q, docs in run.rankings.items()}
        for qrels, ours in ((graded, scores.graded_ndcg), (gold_only, scores.gold_ndcg)):
            result = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10"}).evaluate(as_dict)
            for qi, qid in enumerate(bench.qids):
                expected = result[qid]["ndcg_cut_10"] if qid in result else 0.0
                assert abs(ours[r, qi] - expected) < 1e-9, (run.name, qid)


def test_n_clue_matches_reference_loop_on_random_runs():
    rng = np.random.default_rng(5)
    bench, runs = _random_case(rng)
    scores = score_runs(bench, [from_records(r, bench) for r in runs], k=10)
    labels = {
        (bench.qids[q], bench.doc_ids[d]): int(lab) for q, d, lab in zip(bench.j_query, bench.j_doc, bench.j_label)
    }
    for r, run in enumerate(runs):
        for qi, qid in enumerate(bench.qids):
            ranked = sorted(run.rankings[qid], key=lambda x: -x.score)[:10]
            labs = [labels.get((qid, x.doc_id), 0) for x in ranked]
            judged = [lab for lab in labs if lab]
            expected = GOLD_FIRST if judged and judged[0] == 2 else (SUBSET_FIRST if 2 in labs else MISS)
            assert scores.outcome[r, qi] == expected
