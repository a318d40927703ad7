"""What a retrieval backbone provides, and what a system is.

A **backbone** (BM25, a dense bi-encoder, a late-interaction model) scores texts against
the collection's *page rows*: column ``j`` of :meth:`Backbone.page_scores` is row ``j`` of
the page store (``PageStore`` order: sorted by ``(doc_id, page)``). Every generic
operation — ``joint(max)``, ``joint(ptop{p})``, ``page_max``, ``ptop{p}``,
``decompose(min|product|hmean|distinct)`` — is written once over these arrays (see
:mod:`nclue.systems.operations`), so any backbone that gives page scores gets them all.

Optional capabilities a backbone may add (checked with ``isinstance`` against the
runtime-checkable protocols below):

* :class:`DocScorer` — a document-level view (pages concatenated), used by ``joint`` with
  no pooling argument and by the Boolean baselines;
* :class:`TermMatcher` — exact term containment per page / per document, used by
  ``and`` and by the coverage-first system ``cover``.

A **system** turns a :class:`Request` into a ranked list of
:class:`~nclue.types.RankedDoc`; it is built from its name by
:func:`nclue.systems.registry.build_system`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol, runtime_checkable

import numpy as np

from nclue.corpus.store import PageStore
from nclue.types import RankedDoc


@dataclass(frozen=True)
class PageTable:
    """The collection's page rows as aligned arrays (the column order of every score matrix).

    ``doc_ids[page_doc[j]]`` and ``page_number[j]`` identify page row ``j``; the pages of
    document ``i`` are rows ``doc_offsets[i]:doc_offsets[i + 1]``.
    """

    doc_ids: np.ndarray
    page_doc: np.ndarray
    page_number: np.ndarray
    doc_offsets: np.ndarray

    @classmethod
    def from_store(cls, store: PageStore) -> PageTable:
        """The page table of an opened collection."""
        return cls(
            doc_ids=store.doc_ids,
            page_doc=store.page_doc,
            page_number=store.page_number,
            doc_offsets=store.doc_offsets,
        )

    @cached_property
    def id_list(self) -> list[str]:
        """``doc_ids`` as a Python list of ``str`` (cheap to index on the query path)."""
        return [str(d) for d in self.doc_ids.tolist()]

    @property
    def n_pages(self) -> int:
        """Number of page rows."""
        return int(len(self.page_doc))

    @property
    def n_docs(self) -> int:
        """Number of documents."""
        return int(len(self.doc_ids))


@runtime_checkable
class Backbone(Protocol):
    """Scores texts against every page row of one collection.

    ``name`` is the backbone token of system names (``bm25``, ``dense``, ``dense:e5``).
    """

    name: str
    pages: PageTable

    def page_scores(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), pages.n_pages)`` float32: higher is a better match."""
        ...


@runtime_checkable
class DocScorer(Protocol):
    """Optional: a document-level view of the same collection (pages concatenated)."""

    def doc_scores(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), pages.n_docs)`` float32 document scores."""
        ...


@runtime_checkable
class TermMatcher(Protocol):
    """Optional: exact containment of a text's (analysed) terms."""

    def page_matches(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), n_pages)`` bool: the page contains every term of the text."""
        ...

    def doc_matches(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), n_docs)`` bool: the document contains every term of the text."""
        ...


@dataclass(frozen=True)
class Request:
    """One query as a system sees it: its conditions and the rendered joint text.

    ``text`` is the chosen rendering (``raw``, ``clean_v2`` or ``natural``) of the
    conditions; condition-wise operations score each of ``conditions`` separately.
    """

    conditions: tuple[str, ...]
    text: str
    qid: str = ""


@runtime_checkable
class System(Protocol):
    """A named retriever: ``search`` returns at most ``depth`` documents, best first.

    ``page_aware`` systems fill ``RankedDoc.pages`` (surfaced pages, score descending) and
    ``RankedDoc.evidence`` (pages supporting each condition).
    """

    name: str
    page_aware: bool

    def search(self, request: Request, depth: int = 100) -> list[RankedDoc]:
        """Rank documents for one request."""
        ...
