"""Speed of the n-Clue scorer and its statistics against ranx and pytrec_eval.

Synthetic data (seeded): 70 runs × 1,000 queries × depth 100, ~50 judged documents per
query (1–3 golds, the rest subsets) over a 20,000-document vocabulary; queries are
grouped into ~450 gold-set families. Scores are distinct floats (no ties), so every
scorer sees the same ranking.

Timed:
1. full scorecard (all docs/metrics.md metrics for 70 runs) + exact-family bootstrap (1,000
   replicates, 4 metrics × 70 runs) + eight paired family randomization tests
   (10,000 draws); goal < 5 s on 2 cores;
2. nDCG@10 alone for the 70 runs: nclue (``score_runs``, which computes every metric;
   with and without the stable rank sort from raw arrays) vs ranx (after its numba
   warm-up) vs pytrec_eval (``ndcg_cut_10``), and prints the ratios. Values are checked
   to agree to 1e-9.

Run: ``.venv/bin/python benchmarks/evaluate.py``
"""

from __future__ import annotations

import os
import platform
import time
import warnings

import numpy as np

from nclue.scoring import benchmark_from_judgments, compare_runs, score_runs, scorecard
from nclue.scoring.runs import RunMatrix
from nclue.scoring.summary import metric_matrix
from nclue.stats import paired_randomization
from nclue.types import Judgment

N_RUNS, N_QUERIES, DEPTH, N_DOCS, JUDGED, FAMILIES = 70, 1000, 100, 20000, 50, 450


def make_data(seed: int = 7):
    rng = np.random.default_rng(seed)
    doc_ids = [f"d{i:05d}" for i in range(N_DOCS)]
    family_golds = [rng.choice(N_DOCS, size=rng.integers(1, 4), replace=False) for _ in range(FAMILIES)]
    qids = [f"q{i:04d}" for i in range(N_QUERIES)]
    conditions, rows, judged = [], [], []
    for qi, qid in enumerate(qids):
        n = int(rng.choice([2, 3], p=[0.8, 0.2]))
        conditions.append(tuple(f"c{j}" for j in range(n)))
        golds = family_golds[qi % FAMILIES]
        others = rng.choice(N_DOCS, size=JUDGED + 5, replace=False)
        others = [d for d in others if d not in golds][: int(rng.integers(JUDGED - 10, JUDGED + 5)) - len(golds)]
        docs = list(golds) + others
        judged.append(np.array(docs))
        for d in golds:
            rows.append(Judgment(qid, doc_ids[d], n, "gold"))
        for d in others:
            rows.append(Judgment(qid, doc_ids[d], int(rng.integers(1, n + 1)), "partial"))
    bench = benchmark_from_judgments(None, qids, conditions, rows, {d: 50 for d in doc_ids})
    runs_docs, runs_scores = [], []
    for _ in range(N_RUNS):
        docs = np.empty((N_QUERIES, DEPTH), dtype=np.int64)
        for qi in range(N_QUERIES):
            pool = judged[qi]
            take = rng.choice(pool, size=min(len(pool), int(rng.integers(5, 40))), replace=False)
            extra = rng.choice(N_DOCS, size=DEPTH * 2, replace=False)
            extra = extra[~np.isin(extra, take)][: DEPTH - len(take)]
            docs[qi] = rng.permutation(np.concatenate([take, extra]))
        names = np.array(doc_ids)[docs]
        idx = np.array([[bench.doc_index[d] for d in row] for row in names], dtype=np.int32)
        runs_docs.append(idx)
        runs_scores.append(rng.random((N_QUERIES, DEPTH)) * 10 + np.arange(DEPTH)[::-1] * 1e-9)
    return bench, runs_docs, runs_scores


def timed(fn, repeat: int = 3):
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    bench, runs_docs, runs_scores = make_data()
    runs = [RunMatrix.from_arrays(f"run{r:02d}", d, s) for r, (d, s) in enumerate(zip(runs_docs, runs_scores))]

    def full():
        scores = score_runs(bench, runs, 10)
        card = scorecard(bench, scores, "family", 1000, 11)
        primary = metric_matrix(scores, "n_clue_score")
        p = paired_randomization(primary[1:9] - primary[0], bench.family, 10000, 11)
        return card, p

    t_full, (card, p) = timed(full)
    t_sort, _ = timed(
        lambda: [RunMatrix.from_arrays(f"run{r:02d}", d, s) for r, (d, s) in enumerate(zip(runs_docs, runs_scores))]
    )
    t_ndcg, scores = timed(lambda: score_runs(bench, runs, 10))
    names = [r.name for r in runs]
    t_compare, _ = timed(lambda: compare_runs(bench, scores, names[0], names[1:9]), repeat=1)

    import pytrec_eval
    from ranx import Qrels, Run, evaluate

    qrels_dict = {q: {} for q in bench.qids}
    for q, d, g in zip(bench.j_query, bench.j_doc, bench.j_grade):
        qrels_dict[bench.qids[q]][bench.doc_ids[d]] = int(g)
    run_dicts = []
    for r in range(N_RUNS):
        run_dicts.append(
            {
                bench.qids[q]: {bench.doc_ids[d]: float(s) for d, s in zip(runs_docs[r][q], runs_scores[r][q])}
                for q in range(N_QUERIES)
            }
        )
    qrels_ranx = Qrels.from_dict(qrels_dict)
    ranx_runs = [Run.from_dict(rd, name=f"run{r:02d}") for r, rd in enumerate(run_dicts)]
    warnings.filterwarnings("ignore", module="ranx")  # numba's uint64→int64 cast notice inside ranx
    evaluate(qrels_ranx, ranx_runs[0], "ndcg@10")  # numba warm-up (JIT compile)
    t_ranx, ranx_vals = timed(
        lambda: [evaluate(qrels_ranx, rr, "ndcg@10", return_mean=False) for rr in ranx_runs], repeat=2
    )
    evaluator = pytrec_eval.RelevanceEvaluator(qrels_dict, {"ndcg_cut_10"})
    t_trec, trec_vals = timed(lambda: [evaluator.evaluate(rd) for rd in run_dicts], repeat=1)

    ours = scores.graded_ndcg
    worst_trec = max(
        abs(trec_vals[r][q]["ndcg_cut_10"] - ours[r, qi]) for r in range(N_RUNS) for qi, q in enumerate(bench.qids)
    )
    worst_ranx = float(np.max(np.abs(np.array(ranx_vals) - ours)))

    print(
        f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {platform.processor() or platform.machine()}; cpus={os.cpu_count()}"
    )
    print(
        f"data: {N_RUNS} runs x {N_QUERIES} queries x depth {DEPTH}; {len(bench.j_key)} judged rows "
        f"({len(bench.j_key) / N_QUERIES:.1f}/query); {bench.n_families} families"
    )
    print(f"full scorecard + family bootstrap 1000 + 8 family randomization tests x 10000: {t_full:.3f} s (goal < 5 s)")
    print(f"  (stable rank sort of the 70 raw runs, done once at load: {t_sort:.3f} s)")
    print(
        "nclue compare, 8 contrasts with every sensitivity analysis (query+family tests, crossed bootstraps, "
        f"leave-one-doc, remove-top-20, promotion bounds): {t_compare:.3f} s"
    )
    print(
        f"nDCG@10 for 70 runs: nclue {t_ndcg * 1000:.1f} ms (all metrics); with rank sort {(t_ndcg + t_sort) * 1000:.1f} ms"
    )
    print(
        f"  ranx (numba, warm) {t_ranx * 1000:.1f} ms -> nclue is {t_ranx / t_ndcg:.1f}x faster "
        f"({t_ranx / (t_ndcg + t_sort):.1f}x incl. sort)"
    )
    print(
        f"  pytrec_eval        {t_trec * 1000:.1f} ms -> nclue is {t_trec / t_ndcg:.1f}x faster "
        f"({t_trec / (t_ndcg + t_sort):.1f}x incl. sort)"
    )
    print(f"  max |nclue - pytrec_eval ndcg_cut_10| = {worst_trec:.2e}; max |nclue - ranx| = {worst_ranx:.2e}")
    best = card[card.ranked()[0]]
    print(
        f"sanity: best run {best.name} n-Clue {best.n_clue_score:.1f} CI {best.ci['n_clue_score']}; p[0] = {p[0]:.4f}"
    )


if __name__ == "__main__":
    main()
