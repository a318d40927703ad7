"""The page-evidence signals: one feature set, read from a collection's page indexes.

``docs/evidence.md#signals``. Each signal is an array over the collection's page rows for a list
of condition texts (:data:`SIGNALS`):

* ``bm25`` — the page's BM25 score divided by the highest score the condition could reach,
  ``Σ idf`` times the term-frequency factor's limit
  (:meth:`nclue.index.lexical.LexicalIndex.page_upper_bounds`). Until
  calibration format 3 it was divided by the condition's best score over the collection, so a
  page's value moved whenever a higher-scoring document was added
  (``benchmarks/evidence_bm25_bound.py`` measured the change across corpora);
* ``phrase`` — 1 when the page holds the condition's analysed terms as a contiguous phrase
  (:meth:`nclue.index.lexical.LexicalIndex.page_phrase_matches`);
* both lexical signals also read the condition in the other spelling convention
  (``customisation`` → ``customization``, :mod:`nclue.index.spelling`) wherever the collection
  uses it, and keep the higher value per page (calibration format 4; the stemmer keeps the two
  spellings apart, so a page written the other way read 0);
* ``dense`` — the cosine between the condition and the page under the collection's dense page
  index (best chunk of the page);
* ``head``, ``head_level`` — heading evidence (:mod:`nclue.evidence.headings`);
  ``head_high`` — ``max(0, head − 0.6) / 0.4``, so a near-identical heading can weigh more than a
  loosely related one (the logistic model is otherwise linear);
* ``role`` — 1 on table-of-contents and index pages (they point at sections, they do not hold them);
* ``maxsim`` — late-interaction MaxSim of the condition's and the page's token vectors on the
  condition's 20 best dense pages of the collection, 0 elsewhere
  (:class:`nclue.systems.late_interaction.MaxSimBackbone`; only where the collection has a
  contextual dense index; it encodes 20 pages per new condition, so no shipped calibration reads it).

A source without document structure (a hand-written document set, a collection where
``nclue structure`` was not run) reads 0 for the heading signals and ``role``, and says so in
:attr:`EvidenceSource.describe`; ``struct`` refuses such a collection instead.

Adding a signal is one entry in :data:`SIGNALS` and a refit (``nclue evidence fit``); a
calibration lists the signals it was fitted with.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from nclue.errors import NclueError
from nclue.evidence.headings import HeadingEvidence

HEAD_HIGH = 0.6
"""``head_high`` is the part of ``head`` above this cosine, rescaled to [0, 1]."""


def normalise(scores: np.ndarray) -> np.ndarray:
    """Max-normalise each row: ``s / max(s)`` (rows with no positive score become 0)."""
    top = scores.max(axis=1, keepdims=True)
    return np.where(top > 0, scores / np.where(top > 0, top, 1.0), 0.0).astype(np.float32)


@dataclass
class EvidenceSource:
    """A collection's page rows and the scorers the signals read.

    ``pages`` is a :class:`nclue.systems.backbone.PageTable`; ``lexical`` has ``page_scores`` and
    ``page_phrase_matches`` (:class:`nclue.systems.lexical.LexicalBackbone`); ``dense(texts)``
    returns ``(texts, pages)`` cosines; ``headings()`` loads the heading evidence (``None``: the
    source has no structure); ``describe`` names the source (collection, pages, sources) in
    freeze manifests and calibrations.
    """

    pages: Any
    lexical: Any
    dense: Callable[[Sequence[str]], np.ndarray]
    describe: dict = field(default_factory=dict)
    maxsim: Callable[[Sequence[str]], np.ndarray] | None = None
    headings_loader: Callable[[], HeadingEvidence] | None = None

    @classmethod
    def from_workspace(cls, workspace: Any, require_structure: bool = False, dense: str = "dense") -> EvidenceSource:
        """The page indexes of an opened :class:`~nclue.systems.registry.Workspace` (its structure when built).

        ``dense`` is the backbone token of the dense index the signals read: the collection's
        own (``dense``) or another one (``dense:VARIANT``, :func:`nclue.index.dense.select_index`).
        """
        from nclue.corpus.structure import STRUCTURE_FILE

        base = Path(workspace.collection_dir)
        has_structure = (base / STRUCTURE_FILE).is_file()
        if require_structure and not has_structure:
            raise NclueError(
                f"{base}: no document structure ({STRUCTURE_FILE}); build it with `nclue structure {base}`"
            )

        def cosines(texts: Sequence[str]) -> np.ndarray:
            return workspace.backbone(dense).page_scores(list(texts))

        def maxsim(texts: Sequence[str]) -> np.ndarray:
            return workspace.backbone(dense.replace("dense", "maxsim", 1)).page_scores(list(texts))

        def headings() -> HeadingEvidence:
            backbone = workspace.backbone(dense)
            return HeadingEvidence(base, workspace.store, workspace.pages.n_pages, backbone.encode, backbone.index.key)

        describe = {
            "collection": str(workspace.collection_dir),
            "pages": int(workspace.pages.n_pages),
            "pages_sha256": workspace.store.fingerprint,
            "sources": sorted(set(workspace.store.docs.column("source").to_pylist())),
            "dense_index": _dense_key(base, dense.partition(":")[2] or None),
        }
        if not has_structure:
            describe["structure"] = "absent: the heading signals and role read 0"
        return cls(
            workspace.pages, workspace.backbone("bm25"), cosines, describe, maxsim, headings if has_structure else None
        )

    @cached_property
    def headings(self) -> HeadingEvidence | None:
        """The heading evidence, loaded on first use; ``None`` without structure."""
        return self.headings_loader() if self.headings_loader is not None else None

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


def _dense_key(collection: Path, variant: str | None = None) -> str | None:
    """The key (folder name) of the dense index ``dense[:variant]`` reads, without loading it; ``None`` when none does."""
    from nclue.index.dense import default_dense_index, select_index

    if variant is not None:
        return select_index(collection, variant).name
    found = default_dense_index(collection)
    return found.name if found is not None else None


def spelling_alternates(index: Any, texts: Sequence[str]) -> tuple[list[str], list[int]]:
    """``(alternates, owners)``: each text's other-convention spelling where the collection uses it
    (:func:`nclue.index.spelling.alternate_text`), and the position of the text it rewrites."""
    from nclue.index.spelling import alternate_text

    alternates, owners = [], []
    for i, text in enumerate(texts):
        other = alternate_text(text, index.known_term)
        if other is not None:
            alternates.append(other)
            owners.append(i)
    return alternates, owners


def _best_spelling(source: EvidenceSource, texts: Sequence[str], read: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """``read(texts)``, each row raised to its spelling alternate's where that is higher."""
    texts = list(texts)
    out = read(texts)
    alternates, owners = spelling_alternates(source.lexical.index, texts)
    if alternates:
        rows = np.asarray(owners)
        out[rows] = np.maximum(out[rows], read(alternates))
    return out


def _bm25_ratio(index: Any, texts: list[str]) -> np.ndarray:
    scores = index.page_scores(texts).astype(np.float64)
    bounds = index.page_upper_bounds(texts)[:, None]
    ratio = np.divide(scores, bounds, out=np.zeros_like(scores), where=bounds > 0)
    return np.clip(ratio, 0.0, 1.0).astype(np.float32)


def _bm25(source: EvidenceSource, texts: Sequence[str]) -> np.ndarray:
    index = source.lexical.index
    return _best_spelling(source, texts, lambda batch: _bm25_ratio(index, batch))


def _phrase(source: EvidenceSource, texts: Sequence[str]) -> np.ndarray:
    return _best_spelling(source, texts, lambda batch: source.lexical.page_phrase_matches(batch).astype(np.float32))


def _dense(source: EvidenceSource, texts: Sequence[str]) -> np.ndarray:
    return np.asarray(source.dense(list(texts)), dtype=np.float32)


def _heading(source: EvidenceSource, texts: Sequence[str], which: int) -> np.ndarray:
    if source.headings is None:
        return np.zeros((len(texts), source.pages.n_pages), np.float32)
    return source.headings.scores(texts)[which]


def _head(source: EvidenceSource, texts: Sequence[str]) -> np.ndarray:
    return _heading(source, texts, 0)


def _head_high(source: EvidenceSource, texts: Sequence[str]) -> np.ndarray:
    return (np.maximum(_head(source, texts) - HEAD_HIGH, 0.0) / (1.0 - HEAD_HIGH)).astype(np.float32)


def _head_level(source: EvidenceSource, texts: Sequence[str]) -> np.ndarray:
    return _heading(source, texts, 1)


def _role(source: EvidenceSource, texts: Sequence[str]) -> np.ndarray:
    if source.headings is None:
        return np.zeros((len(texts), source.pages.n_pages), np.float32)
    return np.repeat(source.headings.role[None, :], len(texts), axis=0)


def _maxsim(source: EvidenceSource, texts: Sequence[str]) -> np.ndarray:
    if source.maxsim is None:
        raise NclueError(
            f"the maxsim signal needs a collection with a contextual dense index, which "
            f"{source.describe.get('collection', 'this source')} is not; use a calibration without maxsim"
        )
    return np.asarray(source.maxsim(list(texts)), dtype=np.float32)


SIGNALS: dict[str, Callable[[EvidenceSource, Sequence[str]], np.ndarray]] = {
    "head": _head,
    "head_high": _head_high,
    "head_level": _head_level,
    "dense": _dense,
    "bm25": _bm25,
    "phrase": _phrase,
    "role": _role,
    "maxsim": _maxsim,
}
"""Signal name → ``(source, texts) → (len(texts), n_pages)`` float32 array (module docstring)."""


def check_texts(texts: Sequence[str]) -> None:
    """Refuse a condition the lexical signals cannot read (no content words)."""
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
