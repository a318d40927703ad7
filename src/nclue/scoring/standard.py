"""Standard IR measures (nDCG@k, AP, RR, P@k, R@k, …) of encoded runs, computed by ir_measures.

nclue does not re-implement them: ``ir_measures`` (MacAvaney, Macdonald & Ounis, ECIR 2022) parses
the names and computes the values, through ``pytrec_eval`` (trec_eval) for the common ones. Any
name ir_measures accepts works: ``nDCG@10``, ``AP``, ``RR``, ``P@5``, ``R@100``, ``AP(rel=3)``
(gold-only on nclue's grades), ``Judged@10``.

What nclue decides, and why:

* **Qrels** — every judgment of the benchmark with its grade, grade-0 rows included (judged
  non-relevant). A measure's relevance level is ir_measures' (``rel=1`` unless the name sets it),
  so a partial document (grade 1–2) counts as relevant for ``AP`` and ``R@k``; ``AP(rel=3)``
  counts golds only.
* **Ranking** — the run's own order under nclue's ranking rule (score descending, ties in file
  order, ``docs/metrics.md#ranking-rule``). trec_eval breaks score ties by document ID instead,
  so each document is handed to it with the score ``depth − rank``: the order is nclue's, and
  every tool sees the same ranking. A ranked document the benchmark has never seen is passed
  under a placeholder ID that no qrel names (unjudged, non-relevant).
* **Denominator** — the mean over *every* benchmark query, as for nclue's own metrics: a query
  the run does not answer scores 0 (trec_eval's ``-c``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nclue.errors import NclueError
from nclue.scoring.benchmark import Benchmark
from nclue.scoring.runs import OUTSIDE, RunMatrix

EXAMPLES = "nDCG@10, AP, RR, P@5, R@100, AP(rel=3)"


def parse_measures(names: Sequence[str]) -> list:
    """ir_measures measure objects for ``names`` (duplicates dropped); a name it cannot parse is refused."""
    import ir_measures

    out, seen = [], set()
    for name in names:
        try:
            measure = ir_measures.parse_measure(str(name).strip())
        except (ValueError, NameError, TypeError, AttributeError, SyntaxError) as exc:
            raise NclueError(
                f"measure {name!r} is not an ir_measures measure ({exc}); write it as ir_measures does, e.g. {EXAMPLES}"
            ) from None
        if str(measure) not in seen:
            seen.add(str(measure))
            out.append(measure)
    return out


def _qrels(bench: Benchmark) -> list:
    from ir_measures import Qrel

    return [
        Qrel(bench.qids[q], bench.doc_ids[d], int(g))
        for q, d, g in zip(bench.j_query.tolist(), bench.j_doc.tolist(), bench.j_grade.tolist())
    ]


def _scored(run: RunMatrix, bench: Benchmark) -> list:
    from ir_measures import ScoredDoc

    depth = run.docs.shape[1]
    out = []
    for q, row in enumerate(run.docs.tolist()):
        qid = bench.qids[q]
        for rank, code in enumerate(row):
            if code < 0 and code != OUTSIDE:
                break  # padding: the ranking ends here
            doc = bench.doc_ids[code] if code >= 0 else f"nclue:unseen:{rank}"
            out.append(ScoredDoc(qid, doc, float(depth - rank)))
    return out


def standard_measures(bench: Benchmark, runs: Sequence[RunMatrix], names: Sequence[str]) -> dict[str, dict[str, float]]:
    """``{run: {measure: mean over every benchmark query}}`` (module docstring); ``{}`` without ``names``."""
    if not names:
        return {}
    import ir_measures

    measures = parse_measures(names)
    qrels = _qrels(bench)
    out: dict[str, dict[str, float]] = {}
    for run in runs:
        totals = {str(m): 0.0 for m in measures}
        for metric in ir_measures.iter_calc(measures, qrels, _scored(run, bench)):
            if metric.query_id in bench.qid_index:
                totals[str(metric.measure)] += float(metric.value)
        out[run.name] = {name: float(np.float64(total) / bench.n_queries) for name, total in totals.items()}
    return out
