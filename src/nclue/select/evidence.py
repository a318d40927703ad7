"""Requirement evidence per page: P(document covers requirement) from the document's best page.

``docs/coverage.md#evidence``. Every page of every pool document is read (long documents are
read whole), through the collection's page indexes:

* **signals** (:data:`SIGNALS`), each an array over the collection's page rows for a list of
  requirement texts: ``bm25`` — the page's BM25 score divided by the requirement's best score
  over the collection (:func:`nclue.systems.operations.normalise`); ``phrase`` — 1 when the page
  holds the requirement's analysed terms as a contiguous phrase
  (:meth:`nclue.index.lexical.LexicalIndex.page_phrase_matches`); ``dense`` — the cosine between
  the requirement and the page under the collection's dense page index (best chunk of the page);
  ``maxsim`` — late-interaction MaxSim of the requirement's and the page's token vectors on the
  requirement's 20 best dense pages of the collection, 0 elsewhere
  (:class:`nclue.systems.late_interaction.MaxSimBackbone`; available where the collection has a
  contextual dense index; it encodes 20 pages per new requirement, so it is not in the default
  signals);
* **combination** (:func:`page_logits`): a page logit ``z(r, p) = b + Σ_s w_s x_s(r, p)``;
  the document's best page ``p*(d, r) = argmax_{p ∈ d} z(r, p)`` (ties: earlier page);
  ``P(d covers r) = σ(a + c · z(r, p*))``. The weights ``b, w, a, c`` come from a
  :class:`Calibration` fitted on labeled pages by :mod:`nclue.select.calibrate` (page-level
  logistic regression, then Platt scaling of the best-page logit against document labels).

Adding a signal (e.g. document structure) is one entry in :data:`SIGNALS` — a function from an
:class:`EvidenceSource` and texts to a ``(texts, pages)`` array — and a refit of the
calibration, which lists the signals it was fitted with.

Where a task set has no collection (hand-written ``docs.jsonl``), :meth:`EvidenceSource.from_docs`
makes one page per document, a lexical index over those pages in a scratch directory, and takes
the dense signal from the task set's own frozen vectors.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from nclue.errors import NclueError
from nclue.models.similarity import row_products

COVER_THRESHOLD = 0.5
"""A document covers a requirement when ``P ≥ 0.5``; a page is evidence when its page probability is."""
MAX_EVIDENCE_PAGES = 3
N_FOLDS = 2
PACKAGED = "calibration.json"


@dataclass
class EvidenceSource:
    """A collection's page rows and the scorers the signals read.

    ``lexical`` is a :class:`nclue.systems.lexical.LexicalBackbone`; ``dense(texts)`` returns
    ``(texts, pages)`` cosines; ``describe`` names the source in freeze manifests.
    """

    pages: Any
    lexical: Any
    dense: Callable[[Sequence[str]], np.ndarray]
    describe: dict = field(default_factory=dict)
    maxsim: Callable[[Sequence[str]], np.ndarray] | None = None

    @classmethod
    def from_workspace(cls, workspace: Any) -> EvidenceSource:
        """The lexical and dense page indexes of an opened :class:`~nclue.systems.registry.Workspace`."""

        def dense(texts: Sequence[str]) -> np.ndarray:
            return workspace.backbone("dense").page_scores(list(texts))

        def maxsim(texts: Sequence[str]) -> np.ndarray:
            return workspace.backbone("maxsim").page_scores(list(texts))

        return cls(
            workspace.pages,
            workspace.backbone("bm25"),
            dense,
            {
                "collection": str(workspace.collection_dir),
                "pages": int(workspace.pages.n_pages),
                "pages_sha256": workspace.store.fingerprint,
            },
            maxsim,
        )

    @classmethod
    def from_docs(
        cls, texts: Mapping[str, str], vectors: np.ndarray, encode: Callable[[list[str]], np.ndarray], scratch: Path
    ) -> EvidenceSource:
        """One page per document (``texts``: doc_id → text, sorted by ID, aligned with ``vectors``):
        a page store and lexical index written under ``scratch``; dense = ``encode(texts) · vectors``."""
        import pyarrow as pa

        from nclue.corpus.store import DOCS_SCHEMA, PAGES_SCHEMA, PageStore, write_table_atomic
        from nclue.index.lexical import LexicalIndex, build_lexical_index
        from nclue.systems.backbone import PageTable
        from nclue.systems.lexical import LexicalBackbone

        ids = list(texts)
        scratch.mkdir(parents=True, exist_ok=True)
        docs = [
            {
                "doc_id": d,
                "path": d,
                "sha256": hashlib.sha256(texts[d].encode("utf-8")).hexdigest(),
                "n_pages": 1,
                "n_bytes": len(texts[d].encode("utf-8")),
                "source": "docs.jsonl",
                "status": "ok",
                "error": None,
            }
            for d in ids
        ]
        pages = [{"doc_id": d, "page": 1, "text": texts[d], "n_chars": len(texts[d]), "method": "text"} for d in ids]
        write_table_atomic(scratch / "docs.parquet", pa.Table.from_pylist(docs, schema=DOCS_SCHEMA))
        write_table_atomic(scratch / "pages.parquet", pa.Table.from_pylist(pages, schema=PAGES_SCHEMA))
        store = PageStore.open(scratch)
        build_lexical_index(scratch, store=store)
        table = PageTable.from_store(store)
        if list(table.id_list) != ids:
            raise NclueError("document IDs must be unique and given in sorted order")
        doc_vectors = np.asarray(vectors, dtype=np.float32)

        def dense(queries: Sequence[str]) -> np.ndarray:
            return row_products(np.asarray(encode(list(queries)), dtype=np.float32), doc_vectors).astype(np.float32)

        lexical = LexicalBackbone("bm25", table, LexicalIndex(scratch, store))
        return cls(table, lexical, dense, {"collection": "docs.jsonl (one page per document)", "pages": len(ids)})

    def rows(self, doc_ids: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, starts)``: the page rows of ``doc_ids`` concatenated, and where each document starts."""
        index = {d: i for i, d in enumerate(self.pages.id_list)}
        missing = [d for d in doc_ids if d not in index]
        if missing:
            raise NclueError(
                f"document {missing[0]!r} is not in the evidence collection "
                f"({self.describe.get('collection', '?')}); pass the collection the pools were drawn from"
            )
        offsets = self.pages.doc_offsets
        spans = [(int(offsets[index[d]]), int(offsets[index[d] + 1])) for d in doc_ids]
        rows = np.concatenate([np.arange(a, b) for a, b in spans]) if spans else np.zeros(0, np.int64)
        starts = np.cumsum([0] + [b - a for a, b in spans[:-1]]).astype(np.int64)
        return rows.astype(np.int64), starts


def _bm25(source: EvidenceSource, texts: Sequence[str]) -> np.ndarray:
    from nclue.systems.operations import normalise

    return normalise(source.lexical.page_scores(list(texts)))


def _phrase(source: EvidenceSource, texts: Sequence[str]) -> np.ndarray:
    return source.lexical.page_phrase_matches(list(texts)).astype(np.float32)


def _dense(source: EvidenceSource, texts: Sequence[str]) -> np.ndarray:
    return np.asarray(source.dense(list(texts)), dtype=np.float32)


def _maxsim(source: EvidenceSource, texts: Sequence[str]) -> np.ndarray:
    if source.maxsim is None:
        raise NclueError(
            f"the maxsim signal needs a collection with a contextual dense index, which "
            f"{source.describe.get('collection', 'this source')} is not; use a calibration without maxsim"
        )
    return np.asarray(source.maxsim(list(texts)), dtype=np.float32)


SIGNALS: dict[str, Callable[[EvidenceSource, Sequence[str]], np.ndarray]] = {
    "bm25": _bm25,
    "phrase": _phrase,
    "dense": _dense,
    "maxsim": _maxsim,
}
"""Signal name → ``(source, texts) → (len(texts), n_pages)`` float32 array (module docstring)."""


def check_texts(texts: Sequence[str]) -> None:
    """Refuse a requirement the lexical signals cannot read (no content words)."""
    from nclue.index.lexical import Analyzer

    analyzer = Analyzer()
    for text in texts:
        if not analyzer.terms(text):
            raise NclueError(
                f"requirement {text!r} has no searchable words (only stopwords or one-letter tokens); "
                "rephrase it with content words"
            )


def signal_matrix(source: EvidenceSource, signals: Sequence[str], texts: Sequence[str]) -> np.ndarray:
    """``(len(signals), len(texts), n_pages)`` float32 features."""
    unknown = [s for s in signals if s not in SIGNALS]
    if unknown:
        raise NclueError(f"unknown evidence signal {unknown[0]!r}; known: {', '.join(SIGNALS)}")
    if not texts:
        return np.zeros((len(signals), 0, source.pages.n_pages), np.float32)
    return np.stack([SIGNALS[s](source, texts) for s in signals]).astype(np.float32)


def fold_of(text: str, n_folds: int = N_FOLDS) -> int:
    """Cross-fitting fold of a requirement: SHA-256 of its stripped, lower-cased text, first 8 hex digits, mod ``n_folds``."""
    return int(hashlib.sha256(text.strip().lower().encode("utf-8")).hexdigest()[:8], 16) % n_folds


def sigmoid(z: np.ndarray) -> np.ndarray:
    """Logistic function, overflow-safe."""
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(z, dtype=np.float64)))


@dataclass(frozen=True)
class Model:
    """Page weights ``(b, w_1..w_S)`` and document Platt scaling ``(a, c)``."""

    page: tuple[float, ...]
    doc: tuple[float, float]

    def to_json(self) -> dict:
        return {"page": list(self.page), "doc": list(self.doc)}

    @classmethod
    def from_json(cls, row: Mapping) -> Model:
        return cls(tuple(float(x) for x in row["page"]), (float(row["doc"][0]), float(row["doc"][1])))


@dataclass(frozen=True)
class Calibration:
    """Fitted evidence weights: one model on every labeled requirement and one per cross-fitting
    fold (``folds[f]`` was fitted without the requirements of fold ``f``), plus provenance."""

    signals: tuple[str, ...]
    model: Model
    folds: tuple[Model, ...] = ()
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "format": 1,
            "signals": list(self.signals),
            "model": self.model.to_json(),
            "folds": [f.to_json() for f in self.folds],
            "fold_rule": "sha256(stripped lower-cased requirement)[:8] as hex, mod number of folds",
            "provenance": dict(self.provenance),
        }

    @property
    def sha256(self) -> str:
        """SHA-256 of the canonical JSON (recorded by freezes)."""
        from nclue.io import dumps_canonical

        return hashlib.sha256(dumps_canonical(self.to_json()).encode("utf-8")).hexdigest()

    @classmethod
    def from_json(cls, data: Mapping, where: str = "calibration") -> Calibration:
        try:
            signals = tuple(str(s) for s in data["signals"])
            model = Model.from_json(data["model"])
            folds = tuple(Model.from_json(f) for f in data.get("folds", []))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise NclueError(
                f"{where}: not a calibration ({type(exc).__name__}: {exc}); write one with `nclue coverage calibrate`"
            ) from None
        for m in (model, *folds):
            if len(m.page) != len(signals) + 1:
                raise NclueError(f"{where}: {len(m.page)} page weights for {len(signals)} signals (need signals + 1)")
        return cls(signals, model, folds, dict(data.get("provenance", {})))

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> Calibration:
        """Read a calibration file; ``None`` = the packaged one (fitted on the development benchmark)."""
        if path is None:
            text = resources.files("nclue.select").joinpath(PACKAGED).read_text(encoding="utf-8")
            return cls.from_json(json.loads(text), f"nclue/select/{PACKAGED}")
        p = Path(path)
        if not p.is_file():
            raise NclueError(
                f"{p}: calibration file not found; write one with `nclue coverage calibrate BENCH COLL -o {p}`"
            )
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise NclueError(
                f"{p}: unreadable calibration ({exc}); rewrite it with `nclue coverage calibrate`"
            ) from None
        return cls.from_json(data, str(p))

    def model_for(self, text: str, crossfit: bool) -> Model:
        """The model applied to a requirement: its held-out fold's under ``crossfit``, else the full one."""
        if not crossfit:
            return self.model
        if not self.folds:
            raise NclueError("this calibration has no cross-fitting folds; refit it with `nclue coverage calibrate`")
        return self.folds[fold_of(text, len(self.folds))]


def page_logits(features: np.ndarray, models: Sequence[Model]) -> np.ndarray:
    """``(T, P)`` page logits ``b + Σ_s w_s x_s`` for features ``(S, T, P)`` and one model per text."""
    weights = np.array([m.page for m in models], dtype=np.float64)  # (T, S+1)
    out = np.repeat(weights[:, :1], features.shape[2], axis=1)
    for s in range(features.shape[0]):
        out += weights[:, s + 1 : s + 2] * features[s]
    return out


def segment_best(values: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``values (T, R)`` and segment (``starts``): the maximum and its first column."""
    best = np.maximum.reduceat(values, starts, axis=1)
    lengths = np.diff(np.r_[starts, values.shape[1]])
    hit = values == np.repeat(best, lengths, axis=1)
    cols = np.arange(values.shape[1])
    first = -np.maximum.reduceat(np.where(hit, -cols, -values.shape[1]), starts, axis=1)
    return best, first


@dataclass(frozen=True)
class Evidence:
    """Per pool document and requirement: probability, best page, and evidence pages.

    ``pages[d][r]``: the pages of document ``d`` whose page probability ``σ(z)`` is at least
    :data:`COVER_THRESHOLD`, best first (at most :data:`MAX_EVIDENCE_PAGES`); the best page alone
    when none is but the document covers ``r``; empty otherwise.
    """

    doc_ids: tuple[str, ...]
    requirements: tuple[str, ...]
    probs: np.ndarray
    best_page: np.ndarray
    pages: tuple[tuple[tuple[int, ...], ...], ...]

    def covers(self, d: int) -> dict[str, list[int]]:
        """``{requirement: evidence pages}`` for the requirements document ``d`` covers."""
        return {
            req: sorted(self.pages[d][r])
            for r, req in enumerate(self.requirements)
            if self.probs[d, r] >= COVER_THRESHOLD
        }


class EvidenceModel:
    """A calibration applied to one source, with page logits cached per requirement text."""

    def __init__(self, source: EvidenceSource, calibration: Calibration, crossfit: bool = False) -> None:
        self.source = source
        self.calibration = calibration
        self.crossfit = crossfit
        self._logits: dict[str, np.ndarray] = {}

    def prepare(self, texts: Sequence[str], batch: int = 64) -> None:
        """Compute and cache the page logits of every new text (in batches of ``batch``)."""
        new = [t for t in dict.fromkeys(texts) if t not in self._logits]
        check_texts(new)
        for start in range(0, len(new), batch):
            chunk = new[start : start + batch]
            features = signal_matrix(self.source, self.calibration.signals, chunk)
            models = [self.calibration.model_for(t, self.crossfit) for t in chunk]
            for text, row in zip(chunk, page_logits(features, models)):
                self._logits[text] = row.astype(np.float32)

    def evidence(self, requirements: Sequence[str], doc_ids: Sequence[str]) -> Evidence:
        """:class:`Evidence` of ``doc_ids`` (in that order) for ``requirements``."""
        self.prepare(requirements)
        rows, starts = self.source.rows(doc_ids)
        z = np.stack([self._logits[r][rows] for r in requirements]).astype(np.float64)  # (m, R)
        best, first = segment_best(z, starts)
        docs_models = [self.calibration.model_for(r, self.crossfit) for r in requirements]
        a = np.array([m.doc[0] for m in docs_models])[:, None]
        c = np.array([m.doc[1] for m in docs_models])[:, None]
        probs = sigmoid(a + c * best).T  # (n, m)
        numbers = self.source.pages.page_number[rows]
        best_page = numbers[first].T.astype(np.int32)
        page_prob = sigmoid(z)
        ends = np.r_[starts[1:], len(rows)]
        pages = []
        for d, (lo, hi) in enumerate(zip(starts.tolist(), ends.tolist())):
            per_req = []
            for r in range(len(requirements)):
                local = page_prob[r, lo:hi]
                top = np.lexsort((np.arange(hi - lo), -local))[:MAX_EVIDENCE_PAGES]
                found = tuple(int(numbers[lo + i]) for i in top if local[i] >= COVER_THRESHOLD)
                if not found and probs[d, r] >= COVER_THRESHOLD:
                    found = (int(best_page[d, r]),)
                per_req.append(found)
            pages.append(tuple(per_req))
        return Evidence(tuple(doc_ids), tuple(requirements), probs, best_page, tuple(pages))
