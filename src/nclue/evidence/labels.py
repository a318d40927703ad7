"""Labelled evidence pairs for fitting and scoring the evidence model.

Two kinds (:data:`LABELS`):

* ``reader`` — a reader-judged release's ``judgments.jsonl`` (``nclue build --judge reader``):
  one row per (condition, document) a blind reader read, with the pages shown and the pages the
  reader quoted as establishing it. Page pairs: every *shown* page, positive when quoted (the
  pages never shown are unlabelled and left out). Document pairs: every read pair, positive when
  established. The shown pages are the high-recall page pools of the reading (the audit's routes),
  so the page model learns to tell a section from a mention among pages that look relevant.
* ``qrels`` — a release's qrels evidence pages: page ``p`` is positive for condition ``c`` when
  some qrels row lists ``p`` for ``c``; every other page of the collection is negative; a document
  is positive when it has a positive page. A release lists every document with evidence for any
  condition of each query, so for every condition used by some query the positives are complete.
  Use it for a benchmark of your own; nclue's shipped calibrations are fitted on ``reader`` labels.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nclue.errors import NclueError
from nclue.evidence.signals import EvidenceSource, signal_matrix
from nclue.io import iter_jsonl, sha256_file
from nclue.release import QUERIES_FILE, read_manifest

READER_JUDGMENTS = "judgments.jsonl"
"""The file of a reader-judged release that lists every read (condition, document) pair."""
LABELS: dict[str, str] = {
    "reader": "blind-reader judgments (judgments.jsonl: shown pages, quoted pages)",
    "qrels": "qrels evidence pages",
}


@dataclass(frozen=True)
class Labels:
    """Features of every labelled condition on every page, with masks of the labelled pairs.

    ``features (S, C, P)``; ``page_mask``/``page_labels (C, P)``; ``doc_mask``/``doc_labels (C, D)``;
    ``starts (D,)`` the first page row of each document.
    """

    conditions: tuple[str, ...]
    features: np.ndarray
    page_mask: np.ndarray
    page_labels: np.ndarray
    doc_mask: np.ndarray
    doc_labels: np.ndarray
    starts: np.ndarray
    provenance: dict[str, Any] = field(default_factory=dict)


def load_labels(
    bench_dir: str | os.PathLike[str], source: EvidenceSource, signals: tuple[str, ...], kind: str = "reader"
) -> Labels:
    """The ``kind`` labels of a release over ``source`` (module docstring)."""
    if kind not in LABELS:
        raise NclueError(f"unknown label kind {kind!r}; use one of {', '.join(LABELS)}")
    rows, conditions, provenance = (_reader_pairs if kind == "reader" else _qrels_pairs)(Path(bench_dir))
    pages = source.pages
    row_of = {(int(d), int(p)): i for i, (d, p) in enumerate(zip(pages.page_doc, pages.page_number))}
    doc_of = {d: i for i, d in enumerate(pages.id_list)}
    position = {c: i for i, c in enumerate(conditions)}
    shape_pages, shape_docs = (len(conditions), pages.n_pages), (len(conditions), len(pages.id_list))
    page_mask, page_labels = np.zeros(shape_pages, bool), np.zeros(shape_pages, bool)
    doc_mask, doc_labels = np.zeros(shape_docs, bool), np.zeros(shape_docs, bool)
    where = provenance["file"]
    for condition, doc_id, shown, established, line in rows:
        d = doc_of.get(doc_id)
        if d is None:
            raise NclueError(
                f"{where}:{line}: document {doc_id!r} is not in the collection; "
                "pass the collection the release was built from"
            )
        c = position[condition]
        for p, positive in [(p, False) for p in shown] + [(p, True) for p in established]:
            row = row_of.get((d, int(p)))
            if row is None:
                raise NclueError(f"{where}:{line}: page {p} of {doc_id!r} is not in the collection")
            page_mask[c, row] = True
            page_labels[c, row] |= positive
        doc_mask[c, d] = True
        doc_labels[c, d] |= bool(established)
    if kind == "qrels":
        doc_labels = np.logical_or.reduceat(page_labels, np.asarray(pages.doc_offsets[:-1], np.int64), axis=1)
        page_mask[:] = True
        doc_mask[:] = True
    starts = np.asarray(pages.doc_offsets[:-1], dtype=np.int64)
    features = signal_matrix(source, signals, conditions)
    return Labels(conditions, features, page_mask, page_labels, doc_mask, doc_labels, starts, provenance)


def _reader_pairs(bench: Path) -> tuple[list, tuple[str, ...], dict]:
    path = bench / READER_JUDGMENTS
    if not path.is_file():
        raise NclueError(
            f"{bench}: no {READER_JUDGMENTS}, so there are no reader judgments to fit on; use a release built with "
            "`nclue build --judge reader`, or --labels qrels for a release's qrels evidence pages"
        )
    rows = []
    for line, row in iter_jsonl(path):
        try:
            rows.append(
                (
                    str(row["condition"]),
                    str(row["doc_id"]),
                    [int(p) for p in row["shown"]],
                    [int(p) for p in row["established"]],
                    line,
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise NclueError(
                f"{path}:{line}: not a judgment row ({type(exc).__name__}: {exc}); "
                "each row needs condition, doc_id, shown and established (page lists)"
            ) from None
    try:
        manifest = read_manifest(bench, required=False)
    except NclueError:  # a damaged manifest only loses the readers' names from the provenance
        manifest = {}
    reading = manifest.get("reading") or {}
    provenance = {
        "file": str(path),
        "release": bench.name,
        "queries_sha256": sha256_file(bench / QUERIES_FILE) if (bench / QUERIES_FILE).is_file() else None,
        "judgments_sha256": sha256_file(path),
        "readers": (reading.get("provenance") or {}).get("answered_by", {}),
    }
    return rows, tuple(sorted({r[0] for r in rows})), provenance


def _qrels_pairs(bench: Path) -> tuple[list, tuple[str, ...], dict]:
    from nclue.release import Release

    release = Release.open(bench, require_qrels=True)
    where = str(release.files.get("qrels"))
    used = {c for q in release.queries for c in q.conditions}
    rows = []
    for j in release.judgments:
        if j.pages is None:
            raise NclueError(
                f"{where}: the qrels carry no evidence pages, so page labels are unknown; "
                "calibrate on a release written by `nclue build`"
            )
        for condition, numbers in j.pages.items():
            rows.append((condition, j.doc_id, [], [int(p) for p in numbers], f"query {j.qid}"))
    conditions = tuple(sorted(used | {r[0] for r in rows}))
    queries = release.hashes.get(QUERIES_FILE)
    return (
        rows,
        conditions,
        {"file": where, "release": bench.name, "queries_sha256": queries, "release_sha256": release.hashes},
    )
