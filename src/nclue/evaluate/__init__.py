"""Scoring: benchmark/qrels and run readers, and the vectorised n-Clue metrics (SPEC §3).

Typical use::

    from nclue.evaluate import load_benchmark, load_run, score_runs, summarise
    bench = load_benchmark("BENCH")
    runs = [load_run(p, bench) for p in paths]
    scores = score_runs(bench, runs, k=10)      # per-query arrays (n_runs, n_queries)
    table = summarise(scores)                   # {run: {metric: percentage points}}
"""

from nclue.evaluate.benchmark import Benchmark, build_benchmark, load_benchmark, read_qrels
from nclue.evaluate.compare import Block, compare_runs, read_blocks
from nclue.evaluate.metrics import Scores, score_runs
from nclue.evaluate.runs import RunMatrix, from_records, load_run
from nclue.evaluate.scorecard import evaluate, scorecard
from nclue.evaluate.summary import metric_matrix, per_query_rows, strata, summarise, summarise_strata

__all__ = [
    "Benchmark",
    "Block",
    "RunMatrix",
    "Scores",
    "build_benchmark",
    "compare_runs",
    "evaluate",
    "from_records",
    "load_benchmark",
    "load_run",
    "metric_matrix",
    "per_query_rows",
    "read_blocks",
    "read_qrels",
    "score_runs",
    "scorecard",
    "strata",
    "summarise",
    "summarise_strata",
]
