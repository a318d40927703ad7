"""The scorer's view of a release: queries, judged memberships and strata keys as aligned arrays.

A :class:`Benchmark` is built from a :class:`~nclue.release.Release` (the one reader of
``queries.jsonl``, qrels and ``corpus.jsonl``): the query order is the file order, ``n`` is
each query's number of conditions, labels come from the qrels (derived from the grade where
the qrels cannot carry them), and ``corpus.jsonl``'s ``n_pages`` gives the ``L_min`` stratum.

Judged memberships (grade ≥ 1) are stored as parallel arrays sorted by
``key = query_index * n_docs + doc_index`` so a run's top-k can be labelled with one
``np.searchsorted``. Families (``docs/labels.md#family``) group queries with the same set of
gold doc_ids.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

from nclue.errors import NclueError
from nclue.release import Release
from nclue.types import Judgment

GOLD = 2
PARTIAL = 1
LABEL_CODES = {"gold": GOLD, "partial": PARTIAL}


@dataclass(frozen=True)
class Benchmark:
    """Queries and judgments of one release, as arrays aligned to ``qids``.

    ``j_*`` arrays hold one row per judged (grade ≥ 1) membership, sorted by ``j_key``.
    ``support[j]`` is the per-condition evidence page sets of membership ``j`` (in the
    query's condition order) or ``None`` when the qrels carry no pages.
    """

    path: Path | None
    qids: tuple[str, ...]
    conditions: tuple[tuple[str, ...], ...]
    n: np.ndarray
    doc_ids: tuple[str, ...]
    doc_index: dict[str, int]
    qid_index: dict[str, int]
    j_query: np.ndarray
    j_doc: np.ndarray
    j_grade: np.ndarray
    j_label: np.ndarray
    j_key: np.ndarray
    support: tuple[tuple[frozenset[int], ...] | None, ...]
    family: np.ndarray
    n_pages: np.ndarray
    warnings: tuple[str, ...] = ()

    @property
    def n_queries(self) -> int:
        """Number of benchmark queries (the denominator of every metric)."""
        return len(self.qids)

    @property
    def n_docs(self) -> int:
        """Size of the document vocabulary (judged docs plus corpus docs)."""
        return len(self.doc_ids)

    @property
    def n_families(self) -> int:
        """Number of exact gold-set families."""
        return int(self.family.max()) + 1 if len(self.family) else 0

    @property
    def n_gold(self) -> np.ndarray:
        """Number of gold documents per query."""
        return np.bincount(self.j_query[self.j_label == GOLD], minlength=self.n_queries)

    @property
    def d_plus(self) -> np.ndarray:
        """``|D+|``: number of nonzero qrels per query."""
        return np.bincount(self.j_query, minlength=self.n_queries)

    @property
    def l_min(self) -> np.ndarray:
        """Minimum page count among a query's golds (NaN when unknown or no gold)."""
        out = np.full(self.n_queries, np.inf)
        gold = self.j_label == GOLD
        pages = self.n_pages[self.j_doc[gold]].astype(float)
        pages[pages < 0] = np.nan
        np.fmin.at(out, self.j_query[gold], pages)
        out[~np.isfinite(out)] = np.nan
        return out

    def ideal_grades(self, k: int) -> np.ndarray:
        """``(n_queries, k)`` grades of the ideal ranking (judged grades sorted descending)."""
        order = np.lexsort((-self.j_grade, self.j_query))
        q = self.j_query[order]
        g = self.j_grade[order]
        starts = np.searchsorted(q, np.arange(self.n_queries))
        pos = np.arange(len(q)) - starts[q]
        keep = pos < k
        out = np.zeros((self.n_queries, k), dtype=np.int16)
        out[q[keep], pos[keep]] = g[keep]
        return out

    def incidence(self, memberships: Literal["gold", "judged"] = "gold") -> sp.csr_matrix:
        """``(n_docs, n_queries)`` 0/1 sparse membership matrix: gold docs, or every judged doc."""
        keep = self.j_label == GOLD if memberships == "gold" else np.ones(len(self.j_label), dtype=bool)
        data = np.ones(int(keep.sum()))
        return sp.csr_matrix((data, (self.j_doc[keep], self.j_query[keep])), shape=(self.n_docs, self.n_queries))

    def lookup(self, qidx: np.ndarray, didx: np.ndarray) -> np.ndarray:
        """Membership row for each ``(query, doc)`` pair, or -1 when unjudged (grade 0)."""
        key = qidx.astype(np.int64) * max(self.n_docs, 1) + didx
        pos = np.searchsorted(self.j_key, key)
        pos = np.minimum(pos, max(len(self.j_key) - 1, 0))
        hit = (didx >= 0) & (len(self.j_key) > 0)
        if len(self.j_key):
            hit &= self.j_key[pos] == key
        return np.where(hit, pos, -1)

    @classmethod
    def open(cls, path: str | os.PathLike[str], qrels: str | os.PathLike[str] | None = None) -> Benchmark:
        """Open the release at ``path`` (with ``qrels`` instead of its own, if given) for scoring."""
        return cls.from_release(Release.open(path, qrels, require_qrels=True))

    @classmethod
    def from_release(cls, release: Release) -> Benchmark:
        """The array view of ``release``; refuses a release without judgments.

        Judged documents missing from the corpus and queries without a gold are kept, and
        described in :attr:`warnings` (a caller shows them; the CLI prints them).
        """
        problems = release.problems()
        if not release.judgments:
            raise NclueError(f"{problems[0]}; pass the qrels that belong to these queries with --qrels")
        n_pages = {d.doc_id: d.n_pages for d in release.corpus if d.n_pages is not None}
        return benchmark_from_judgments(
            release.root,
            [q.qid for q in release.queries],
            [q.conditions for q in release.queries],
            release.judgments,
            n_pages,
            tuple(problems),
        )


def benchmark_from_judgments(
    path: Path | None,
    qids: list[str],
    conditions: list[tuple[str, ...]],
    rows: tuple[Judgment, ...] | list[Judgment],
    n_pages_by_doc: dict[str, int] | None = None,
    warnings: tuple[str, ...] = (),
) -> Benchmark:
    """Assemble a :class:`Benchmark` from queries and judgments (validated by :class:`~nclue.release.Release`)."""
    n_pages_by_doc = n_pages_by_doc or {}
    qid_index = {q: i for i, q in enumerate(qids)}
    doc_ids = tuple(sorted({r.doc_id for r in rows} | set(n_pages_by_doc)))
    doc_index = {d: i for i, d in enumerate(doc_ids)}
    nd = max(len(doc_ids), 1)
    jq = np.array([qid_index[r.qid] for r in rows], dtype=np.int32)
    jd = np.array([doc_index[r.doc_id] for r in rows], dtype=np.int32)
    key = jq.astype(np.int64) * nd + jd
    order = np.argsort(key, kind="stable")
    grade = np.array([r.grade for r in rows], dtype=np.int16)[order]
    label = np.array([LABEL_CODES[r.label] for r in rows], dtype=np.int8)[order]
    support = tuple(_support(rows[i], conditions[qid_index[rows[i].qid]]) for i in order)
    jq, jd, key = jq[order], jd[order], key[order]
    family = _families(len(qids), jq, jd, label, doc_ids)
    n_pages = np.array([n_pages_by_doc.get(d, -1) for d in doc_ids], dtype=np.int64)
    return Benchmark(
        path=path,
        qids=tuple(qids),
        conditions=tuple(conditions),
        n=np.array([len(c) for c in conditions], dtype=np.int16),
        doc_ids=doc_ids,
        doc_index=doc_index,
        qid_index=qid_index,
        j_query=jq,
        j_doc=jd,
        j_grade=grade,
        j_label=label,
        j_key=key,
        support=support,
        family=family,
        n_pages=n_pages,
        warnings=warnings,
    )


def _support(row: Judgment, conditions: tuple[str, ...]) -> tuple[frozenset[int], ...] | None:
    """Per-condition evidence page sets in the query's condition order (``None``: no pages)."""
    if row.pages is None:
        return None
    return tuple(frozenset(row.pages.get(c, ())) for c in conditions)


def _families(nq: int, jq: np.ndarray, jd: np.ndarray, label: np.ndarray, doc_ids: tuple[str, ...]) -> np.ndarray:
    """Family id per query: queries with the identical gold doc_id set share an id.

    Ids are assigned in order of the sorted gold-id tuples, so they do not depend on
    query order. Queries without any gold form one family each (nothing to share).
    """
    golds: list[list[str]] = [[] for _ in range(nq)]
    for q, d, lab in zip(jq.tolist(), jd.tolist(), label.tolist()):
        if lab == GOLD:
            golds[q].append(doc_ids[d])
    keys = [tuple(sorted(g)) if g else ("", str(i)) for i, g in enumerate(golds)]
    ids = {k: i for i, k in enumerate(sorted(set(keys)))}
    return np.array([ids[k] for k in keys], dtype=np.int32)


def build_benchmark(*args: Any, **kwargs: Any) -> Benchmark:
    """Deprecated name of :func:`benchmark_from_judgments` (``nclue.build_benchmark`` builds a release)."""
    warnings.warn(
        "nclue.scoring.build_benchmark is deprecated: use nclue.scoring.benchmark_from_judgments (same arguments)",
        DeprecationWarning,
        stacklevel=2,
    )
    return benchmark_from_judgments(*args, **kwargs)
