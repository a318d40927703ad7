"""Document-level views of a per-query contrast (the seed's Table S1g columns and Table S1i).

``incidence`` is the ``(n_docs, n_queries)`` 0/1 membership matrix of
:meth:`nclue.scoring.benchmark.Benchmark.incidence` (gold or all judged documents); ``Q_d``
is the set of queries document ``d`` belongs to and ``D`` the documents with ``|Q_d| ≥ 1``
(``docs/report.md#clustered-uncertainty``).

* **Document macro** — every document weighs the same, however many queries reuse it:
  ``macro = (1/|D|) Σ_{d∈D} mean_{q∈Q_d} δ_q``.
* **One-query-per-document bootstrap** — replicate ``b`` draws ``|D|`` documents uniformly
  with replacement and, for each drawn document, one of its queries uniformly; the
  replicate is the mean ``δ`` of the drawn queries. Its expectation is the document macro;
  the percentile interval shows how much the contrast rests on particular documents when no
  document may contribute more than one query per draw. Draws: ``rng = default_rng(seed)``,
  first ``rng.integers(0, |D|, (B, |D|))`` (documents), then ``rng.random((B, |D|))``
  (query ``⌊u·|Q_d|⌋`` of the drawn document's queries in query order).
* **Connected components** — queries are linked when they share a document; a component
  is a maximal linked set (queries without any document are components of their own).
  ``scipy.sparse.csgraph.connected_components`` on the query–query co-membership graph.
* **Connected-component bootstrap** — the cluster bootstrap of
  :func:`nclue.stats.bootstrap.bootstrap_ci` with components as clusters: components share
  no document, so resampling them keeps every document's queries together (Davison &
  Hinkley 1997, §3.8).

Values are on the 0..1 scale of the input differences.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from nclue.stats.bootstrap import bootstrap_ci
from nclue.stats.budget import require
from nclue.types import DEFAULT_SEED


def _by_document(incidence: sp.spmatrix) -> sp.csr_matrix:
    """Rows of documents with at least one query (CSR; column indices sorted)."""
    matrix = sp.csr_matrix(incidence, dtype=np.float64)
    matrix.sum_duplicates()
    matrix.sort_indices()
    return matrix[np.flatnonzero(np.diff(matrix.indptr) > 0)]


def document_macro(diff: np.ndarray, incidence: sp.spmatrix) -> float:
    """Mean over documents of the mean ``diff`` of each document's queries (NaN without documents)."""
    by_doc = _by_document(incidence)
    if by_doc.shape[0] == 0:
        return float("nan")
    degree = np.diff(by_doc.indptr).astype(np.float64)
    per_doc = (by_doc @ np.asarray(diff, dtype=np.float64)) / degree
    return float(per_doc.mean())


def one_query_per_doc_replicates(
    diff: np.ndarray, incidence: sp.spmatrix, n_replicates: int = 1000, seed: int = DEFAULT_SEED
) -> np.ndarray:
    """``(n_replicates,)`` replicates of the one-query-per-document bootstrap (see the module docstring)."""
    diff = np.asarray(diff, dtype=np.float64)
    by_doc = _by_document(incidence)
    n_docs = by_doc.shape[0]
    if n_docs == 0:
        return np.full(n_replicates, np.nan)
    require(
        24.0 * n_replicates * n_docs,
        f"{n_replicates:,} one-query-per-document replicates over {n_docs:,} documents",
        "ask for fewer replicates (1,000 is the usual number)",
    )
    rng = np.random.default_rng(seed)
    docs = rng.integers(0, n_docs, size=(n_replicates, n_docs))
    u = rng.random((n_replicates, n_docs))
    degree = np.diff(by_doc.indptr)
    pick = by_doc.indptr[docs] + np.minimum((u * degree[docs]).astype(np.int64), degree[docs] - 1)
    return diff[by_doc.indices[pick]].mean(axis=1)


def one_query_per_doc_ci(
    diff: np.ndarray,
    incidence: sp.spmatrix,
    n_replicates: int = 1000,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile interval of :func:`one_query_per_doc_replicates`."""
    reps = one_query_per_doc_replicates(diff, incidence, n_replicates, seed)
    if np.isnan(reps).all():
        return float("nan"), float("nan")
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(reps, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def connected_components(incidence: sp.spmatrix) -> np.ndarray:
    """Component label (0..C-1) of every query; queries sharing a document share a label."""
    from scipy.sparse.csgraph import connected_components as scipy_components

    matrix = sp.csr_matrix(incidence, dtype=np.float64)
    linked = (matrix.T @ matrix).tocsr()
    _, labels = scipy_components(linked, directed=False)
    return labels.astype(np.int64)


def component_summary(incidence: sp.spmatrix) -> tuple[int, int]:
    """``(number of components, queries in the largest)``."""
    labels = connected_components(incidence)
    if not labels.size:
        return 0, 0
    sizes = np.bincount(labels)
    return int(sizes.size), int(sizes.max())


def component_bootstrap_ci(
    diff: np.ndarray,
    incidence: sp.spmatrix,
    n_replicates: int = 1000,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile interval of the mean ``diff`` resampling connected components (see the module docstring)."""
    ci = bootstrap_ci(
        np.asarray(diff, dtype=np.float64)[None, :], connected_components(incidence), n_replicates, seed, level
    )
    return float(ci[0, 0]), float(ci[0, 1])
