"""Shared-document sensitivity of a per-query contrast (``docs/statistics.md#crossed-query-document-bootstrap``, the seed's Tables S1g/S1i).

Queries that share documents are not independent. Three stress checks, each over the
query–document *membership* graph (``memberships="gold"``: a query's gold documents;
``"judged"``: every gold or partial document):

``incidence`` is the ``(n_docs, n_queries)`` 0/1 sparse membership matrix
(:meth:`nclue.scoring.benchmark.Benchmark.incidence`).

* **Crossed query × document bootstrap**: independent Poisson(1) weights ``w_q`` on
  queries and ``u_d`` on the documents that belong to some query. ``combine="product"`` gives query ``q`` the
  weight ``w_q · Π_{d ∈ D(q)} u_d``; ``combine="membership"`` gives it
  ``w_q · Σ_{d ∈ D(q)} u_d``, i.e. every (query, document) membership is a cell with the
  product weight ``w_q u_d`` of Owen (2007, "The pigeonhole bootstrap"). A product over
  many documents is zero with probability ``1 − (1 − e^{-1})^{|D(q)|}``, so for
  all-judged memberships (~50 per query) the product rule leaves almost no usable
  replicate; the membership rule is the usable form there. Replicates whose total
  weight is zero are dropped and counted.
* **Leave-one-doc-out range**: for each document, drop every query with that document
  in its membership set and recompute the mean; report the min and max.
* **Remove the 20 highest-degree documents**: degree = number of queries a document
  belongs to (ties by doc_id); drop every query touching one of them.

Values are on the 0..1 scale of the input differences.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp

from nclue.models.similarity import row_products
from nclue.stats.budget import require
from nclue.types import DEFAULT_SEED


@dataclass(frozen=True)
class CrossedInterval:
    """Percentile interval of a crossed bootstrap plus the number of usable replicates."""

    lo: float
    hi: float
    valid_replicates: int


def crossed_weights(
    incidence: sp.spmatrix,
    combine: Literal["product", "membership"] = "product",
    n_replicates: int = 1000,
    seed: int = DEFAULT_SEED,
) -> np.ndarray:
    """``(n_queries, n_replicates)`` effective query weights of the crossed bootstrap."""
    matrix = sp.csr_matrix(incidence)
    members = np.flatnonzero(np.diff(matrix.indptr) > 0)
    require(
        8.0 * 4 * (matrix.shape[1] + members.size) * n_replicates,
        f"a crossed bootstrap of {n_replicates:,} replicates over {matrix.shape[1]} queries",
        "ask for fewer replicates (1,000 is the usual number)",
    )
    by_query = matrix[members].T.tocsr()
    rng = np.random.default_rng(seed)
    w_query = rng.poisson(1.0, size=(matrix.shape[1], n_replicates)).astype(np.float64)
    u_doc = rng.poisson(1.0, size=(members.size, n_replicates)).astype(np.float64)
    if combine == "product":
        zeros = by_query @ (u_doc == 0).astype(np.float64)
        logs = by_query @ np.log(np.maximum(u_doc, 1.0))
        doc_factor = np.where(zeros > 0, 0.0, np.exp(logs))
    else:
        doc_factor = by_query @ u_doc
        doc_factor[np.diff(by_query.indptr) == 0] = 1.0
    return w_query * doc_factor


def crossed_bootstrap(
    diffs: np.ndarray,
    incidence: sp.spmatrix,
    combine: Literal["product", "membership"] = "product",
    n_replicates: int = 1000,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> list[CrossedInterval]:
    """Crossed query × document bootstrap interval of the mean of each row of ``diffs (M, Q)``.

    All rows share the same weights (one interval per row, in order).
    """
    diffs = np.atleast_2d(np.asarray(diffs, dtype=np.float64))
    weight = crossed_weights(incidence, combine, n_replicates, seed)
    total = weight.sum(axis=0)
    valid = total > 0
    n_valid = int(valid.sum())
    if not n_valid:
        return [CrossedInterval(float("nan"), float("nan"), 0) for _ in range(diffs.shape[0])]
    # one matrix–vector product per row (nclue.models.similarity): a contrast's interval must not
    # depend on which other contrasts were bootstrapped with it
    estimates = row_products(diffs, weight[:, valid].T) / total[valid]
    alpha = (1.0 - level) / 2.0
    bounds = np.quantile(estimates, [alpha, 1.0 - alpha], axis=1).T
    return [CrossedInterval(float(lo), float(hi), n_valid) for lo, hi in bounds]


def leave_one_doc_out(diff: np.ndarray, incidence: sp.spmatrix) -> tuple[float, float]:
    """``(min, max)`` of ``mean(diff)`` after dropping the queries of each document in turn."""
    diff = np.asarray(diff, dtype=np.float64)
    inc = sp.csr_matrix(incidence)
    degree = np.asarray(inc.sum(axis=1)).ravel()
    removed_sum = inc @ diff
    docs = np.flatnonzero(degree > 0)
    remaining = inc.shape[1] - degree[docs]
    ok = remaining > 0
    means = (diff.sum() - removed_sum[docs][ok]) / remaining[ok]
    if not means.size:
        return float("nan"), float("nan")
    return float(means.min()), float(means.max())


def remove_top_degree(
    diff: np.ndarray, incidence: sp.spmatrix, doc_ids: Sequence[str], n_remove: int = 20
) -> tuple[float, int]:
    """``(mean(diff) over surviving queries, number of surviving queries)``; ties by ``doc_ids``."""
    diff = np.asarray(diff, dtype=np.float64)
    inc = sp.csr_matrix(incidence)
    degree = np.asarray(inc.sum(axis=1)).ravel()
    name_rank = np.empty(len(doc_ids), dtype=np.int64)
    name_rank[np.argsort(np.asarray(doc_ids), kind="stable")] = np.arange(len(doc_ids))
    order = np.lexsort((name_rank, -degree))
    order = order[degree[order] > 0][:n_remove]
    top = np.zeros(inc.shape[0])
    top[order] = 1.0
    touched = (inc.T @ top) > 0
    keep = ~touched
    n_keep = int(keep.sum())
    return (float(diff[keep].mean()) if n_keep else float("nan")), n_keep
