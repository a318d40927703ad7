"""Load a benchmark release into aligned arrays: queries, judged memberships, strata keys.

A :class:`Benchmark` is the scorer's view of ``BENCH/`` (``docs/formats.md``):

* ``queries.jsonl`` gives the query order (file order), the conditions (so ``n``);
* qrels come from ``qrels.jsonl`` (grade, label, evidence pages per condition), or from
  BEIR ``qrels/*.tsv`` / TREC qrels, where the label is derived from the grade:
  ``gold`` iff ``grade == n`` (those formats cannot express the distinct-page rule);
* ``corpus.jsonl`` (optional) gives ``n_pages`` for the ``L_min`` stratum.

Judged memberships (grade ≥ 1) are stored as parallel arrays sorted by
``key = query_index * n_docs + doc_index`` so a run's top-k can be labelled with one
``np.searchsorted``. Families (SPEC §2) group queries with the same set of gold doc_ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import scipy.sparse as sp

from nclue.errors import NclueError, where
from nclue.io import iter_jsonl

GOLD = 2
PARTIAL = 1
LABEL_CODES = {"gold": GOLD, "partial": PARTIAL}


@dataclass(frozen=True)
class QrelRow:
    """One judged membership as read from a qrels file (grade ≥ 1 only)."""

    qid: str
    doc_id: str
    grade: int
    label: int
    pages: tuple[frozenset[int], ...] | None


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


def load_benchmark(path: str | Path, qrels: str | Path | None = None) -> Benchmark:
    """Read ``BENCH/queries.jsonl`` plus qrels (``qrels.jsonl``, else ``qrels/*.tsv``, or ``qrels``).

    ``qrels`` may name an nclue JSONL, BEIR TSV or TREC qrels file explicitly. Raises
    :class:`NclueError` naming file and line for malformed rows, grades outside
    ``0..n``, a ``gold`` label with ``grade != n``, duplicate rows, or unknown qids.
    """
    root = Path(path)
    queries_file = root / "queries.jsonl"
    if not queries_file.is_file():
        raise NclueError(
            f"{root}: not a benchmark release (no queries.jsonl); give the directory written by nclue build"
        )
    qids, conditions = _read_queries(queries_file)
    qid_index = {q: i for i, q in enumerate(qids)}
    qrels_file = _find_qrels(root, qrels)
    rows = read_qrels(qrels_file, qid_index, conditions)
    n_pages_by_doc = _read_corpus(root / "corpus.jsonl")
    return build_benchmark(root, qids, conditions, rows, n_pages_by_doc)


def build_benchmark(
    path: Path | None,
    qids: list[str],
    conditions: list[tuple[str, ...]],
    rows: list[QrelRow],
    n_pages_by_doc: dict[str, int] | None = None,
) -> Benchmark:
    """Assemble a :class:`Benchmark` from parsed queries and qrel rows (in-memory entry point)."""
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
    label = np.array([r.label for r in rows], dtype=np.int8)[order]
    support = tuple(rows[i].pages for i in order)
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
    )


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


def _read_queries(path: Path) -> tuple[list[str], list[tuple[str, ...]]]:
    qids: list[str] = []
    conds: list[tuple[str, ...]] = []
    seen: dict[str, int] = {}
    for line, obj in iter_jsonl(path):
        qid = obj.get("qid")
        cs = obj.get("conditions")
        if not isinstance(qid, str) or not qid:
            raise NclueError(f"{where(path, line)}: missing or empty 'qid'")
        if not isinstance(cs, list) or not cs or not all(isinstance(c, str) and c for c in cs):
            raise NclueError(f"{where(path, line)}: 'conditions' must be a non-empty list of names")
        if qid in seen:
            raise NclueError(
                f"{where(path, line)}: qid {qid!r} already defined on line {seen[qid]}; qids must be unique"
            )
        seen[qid] = line
        qids.append(qid)
        conds.append(tuple(cs))
    if not qids:
        raise NclueError(f"{path}: no queries")
    return qids, conds


def _find_qrels(root: Path, explicit: str | Path | None) -> Path:
    if explicit is not None:
        p = Path(explicit)
        if not p.is_file():
            raise NclueError(f"{p}: qrels file not found")
        return p
    if (root / "qrels.jsonl").is_file():
        return root / "qrels.jsonl"
    tsvs = sorted((root / "qrels").glob("*.tsv")) if (root / "qrels").is_dir() else []
    if tsvs:
        return tsvs[0]
    raise NclueError(f"{root}: no qrels.jsonl or qrels/*.tsv; pass --qrels FILE")


def read_qrels(path: Path, qid_index: dict[str, int], conditions: list[tuple[str, ...]]) -> list[QrelRow]:
    """Parse a qrels file by its form: ``.jsonl`` (nclue), ``.tsv`` (BEIR), else TREC.

    Grade-0 rows are dropped (zero is the default). Duplicate ``(qid, doc_id)`` rows,
    unknown qids, grades outside ``0..n`` and labels that contradict the grade are errors.
    """
    path = Path(path)
    if path.suffix == ".jsonl":
        raw = _read_qrels_jsonl(path, conditions, qid_index)
    elif path.suffix == ".tsv":
        raw = _read_qrels_tsv(path)
    else:
        raw = _read_qrels_trec(path)
    rows: list[QrelRow] = []
    seen: dict[tuple[str, str], int] = {}
    for line, qid, doc, grade, label, pages in raw:
        if qid not in qid_index:
            raise NclueError(
                f"{where(path, line)}: qid {qid!r} is not in queries.jsonl; remove the row or add the query"
            )
        n = len(conditions[qid_index[qid]])
        if not 0 <= grade <= n:
            raise NclueError(f"{where(path, line)}: grade {grade} out of range 0..{n} for {qid!r} ({n} conditions)")
        if (qid, doc) in seen:
            raise NclueError(
                f"{where(path, line)}: ({qid}, {doc}) already judged on line {seen[(qid, doc)]}; keep one row"
            )
        seen[(qid, doc)] = line
        if label is None:
            label = GOLD if grade == n else PARTIAL
        elif label == GOLD and grade != n:
            raise NclueError(
                f"{where(path, line)}: label 'gold' needs grade == n == {n}, got grade {grade}; fix the label or grade"
            )
        if grade == 0:
            continue
        rows.append(QrelRow(qid, doc, grade, label, pages))
    return rows


_Raw = tuple[int, str, str, int, int | None, tuple[frozenset[int], ...] | None]


def _as_int(value: object, path: Path, line: int, field: str = "grade") -> int:
    """``value`` as an int (``2`` or ``2.0``), else an error naming file, line and field."""
    bad = NclueError(f"{where(path, line)}: {field} {value!r} is not an integer")
    if isinstance(value, bool):
        raise bad
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise bad from None
    if not number.is_integer():
        raise bad
    return int(number)


def _read_qrels_jsonl(path: Path, conditions: list[tuple[str, ...]], qid_index: dict[str, int]) -> list[_Raw]:
    out: list[_Raw] = []
    for line, obj in iter_jsonl(path):
        qid, doc = obj.get("qid"), obj.get("doc_id")
        if not isinstance(qid, str) or not isinstance(doc, str) or not doc:
            raise NclueError(f"{where(path, line)}: each row needs string 'qid' and 'doc_id'")
        grade = _as_int(obj.get("grade"), path, line)
        label_text = obj.get("label")
        if label_text not in LABEL_CODES:
            raise NclueError(f"{where(path, line)}: label {label_text!r} must be 'gold' or 'partial'")
        pages = None
        raw_pages = obj.get("pages")
        if raw_pages is not None and qid in qid_index:
            pages = _support(raw_pages, conditions[qid_index[qid]], path, line)
        out.append((line, qid, doc, grade, LABEL_CODES[label_text], pages))
    return out


def _support(raw: object, conds: tuple[str, ...], path: Path, line: int) -> tuple[frozenset[int], ...]:
    if not isinstance(raw, dict):
        raise NclueError(f"{where(path, line)}: 'pages' must map condition name to a page list")
    unknown = set(raw) - set(conds)
    if unknown:
        raise NclueError(
            f"{where(path, line)}: 'pages' names {sorted(unknown)} not among the query's conditions {list(conds)}"
        )
    sets = []
    for c in conds:
        pages = raw.get(c, [])
        if not isinstance(pages, list) or not all(
            isinstance(p, int) and not isinstance(p, bool) and p >= 1 for p in pages
        ):
            raise NclueError(f"{where(path, line)}: pages of {c!r} must be a list of 1-based page numbers")
        sets.append(frozenset(pages))
    return tuple(sets)


def _read_qrels_tsv(path: Path) -> list[_Raw]:
    out: list[_Raw] = []
    with path.open(encoding="utf-8") as handle:
        for line, text in enumerate(handle, start=1):
            parts = text.rstrip("\n").split("\t")
            if line == 1 and parts[:2] == ["query-id", "corpus-id"]:
                continue
            if not text.strip():
                continue
            if len(parts) != 3:
                raise NclueError(
                    f"{where(path, line)}: BEIR qrels need 3 tab-separated columns (query-id, corpus-id, score)"
                )
            out.append((line, parts[0], parts[1], _as_int(parts[2], path, line), None, None))
    return out


def _read_qrels_trec(path: Path) -> list[_Raw]:
    out: list[_Raw] = []
    with path.open(encoding="utf-8") as handle:
        for line, text in enumerate(handle, start=1):
            parts = text.split()
            if not parts:
                continue
            if len(parts) != 4:
                raise NclueError(
                    f"{where(path, line)}: TREC qrels need 4 columns (qid iter doc_id grade), got {len(parts)}"
                )
            out.append((line, parts[0], parts[2], _as_int(parts[3], path, line), None, None))
    return out


def _read_corpus(path: Path) -> dict[str, int]:
    if not path.is_file():
        return {}
    out: dict[str, int] = {}
    for line, obj in iter_jsonl(path):
        doc, n_pages = obj.get("doc_id"), obj.get("n_pages")
        if not isinstance(doc, str):
            raise NclueError(f"{where(path, line)}: corpus row needs a string 'doc_id'")
        if n_pages is not None:
            out[doc] = _as_int(n_pages, path, line, "n_pages")
    return out
