"""Scoring: the benchmark's array view, run encoding, the vectorised n-Clue metrics and their results.

Typical use::

    from nclue.scoring import Benchmark, load_run_matrix, score_runs, scorecard
    bench = Benchmark.open("BENCH")
    runs = [load_run_matrix(p, bench) for p in paths]
    scores = score_runs(bench, runs, k=10)      # per-query arrays (n_runs, n_queries)
    card = scorecard(bench, scores)             # a Scorecard: card["bm25.and"].n_clue_score

Most users call :func:`nclue.evaluate` and :func:`nclue.compare` instead (``nclue.api``).
"""

from nclue.scoring.benchmark import Benchmark, benchmark_from_judgments, build_benchmark
from nclue.scoring.compare import Block, compare_runs, read_blocks
from nclue.scoring.metrics import Scores, score_runs
from nclue.scoring.results import BlockTest, Comparison, Contrast, RunSummary, Scorecard
from nclue.scoring.runs import RunCoverage, RunMatrix, coverage_of, from_records, load_run, load_run_matrix
from nclue.scoring.scorecard import CI_KINDS, evaluate, scorecard
from nclue.scoring.summary import metric_matrix, per_query_rows, strata, summarise, summarise_strata

__all__ = [
    "Benchmark",
    "Block",
    "BlockTest",
    "CI_KINDS",
    "Comparison",
    "Contrast",
    "RunMatrix",
    "RunSummary",
    "Scorecard",
    "Scores",
    "benchmark_from_judgments",
    "build_benchmark",
    "compare_runs",
    "evaluate",
    "from_records",
    "load_run",
    "load_run_matrix",
    "coverage_of",
    "RunCoverage",
    "metric_matrix",
    "per_query_rows",
    "read_blocks",
    "score_runs",
    "scorecard",
    "strata",
    "summarise",
    "summarise_strata",
]
