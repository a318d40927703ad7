"""The ``bm25`` backbone and its Boolean baselines and coverage-first system.

Backbone: :class:`LexicalBackbone` wraps :class:`nclue.index.lexical.LexicalIndex` (page
scores, the document-level view, exact term containment). Operations of its own:

* ``bm25.and`` — documents containing every analysed term of every condition, ranked by
  document-level BM25 of the rendered query text (documents that fail are not returned);
* ``bm25.or`` — sum over conditions of document-level BM25 of each condition (any
  condition may match);
* ``bm25.condition_text`` — document-level BM25 of the condition names joined by spaces
  (the rendering's quotes and template words left out);
* ``bm25.and_tuned`` — ``bm25.and`` with ``k1`` and ``b`` chosen by ``nclue tune`` on a
  declared tuning split and grid (:mod:`nclue.systems.tuning`);
* ``bm25.cover`` — coverage-first SDR (ours): condition ``c`` *matches* page ``p`` when
  ``p`` contains ``c``'s analysed terms as a contiguous phrase (stems compared, stopwords
  dropped on both sides; ``bm25.cover(terms)``: anywhere on the page); page weights
  ``w_c(p) = (n + 1)·match_c(p) + ŝ_c(p)`` with ``ŝ_c`` the max-normalised BM25 score, and
  the document score is the best injective assignment of conditions to distinct pages
  under ``w``. Since ``Σ ŝ ≤ n < n + 1``, this ranks documents lexicographically by the
  number of conditions matched on distinct pages — the gold rule of ``docs/labels.md#gold`` applied to
  exact matches — then by SDR score. Bag-of-words BM25 lets one strong condition (or a
  condition's words scattered over a page) outweigh a missing one; ``cover`` does not.

Every generic operation (``joint(max)``, ``ptop3``, ``decompose(...)``) comes from
:mod:`nclue.systems.operations`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nclue.errors import NclueError
from nclue.index.lexical import LexicalIndex
from nclue.index.options import BM25Params
from nclue.index.reweight import DocTermCounts
from nclue.systems.backbone import PageTable, Request
from nclue.systems.names import Op, format_name
from nclue.systems.operations import DecomposeSystem, normalise, top_documents
from nclue.types import RankedDoc


class LexicalBackbone:
    """BM25 over the collection's lexical index (``COLLECTION/index/lexical``)."""

    def __init__(self, name: str, pages: PageTable, index: LexicalIndex) -> None:
        self.name = name
        self.pages = pages
        self.index = index

    def _check(self, texts: Sequence[str]) -> None:
        for text in texts:
            if not self.index.analyzer.terms(text):
                raise NclueError(
                    f"{text!r} has no searchable words (only stopwords or one-letter tokens); "
                    "rephrase the condition with content words"
                )

    def page_scores(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), n_pages)`` BM25 page scores."""
        self._check(texts)
        return self.index.page_scores(texts)

    def doc_scores(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), n_docs)`` BM25 scores on the document-level view."""
        self._check(texts)
        return self.index.doc_scores(texts)

    def page_matches(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), n_pages)``: the page contains every analysed term."""
        return self.index.page_matches(texts)

    def doc_matches(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), n_docs)``: the document contains every analysed term."""
        return self.index.doc_matches(texts)

    def page_phrase_matches(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), n_pages)``: the page contains the analysed terms as a phrase."""
        return self.index.page_phrase_matches(texts)


def load_backbone(workspace, variant: str | None) -> LexicalBackbone:
    """Registry hook: the BM25 backbone of ``workspace``'s collection (no variants)."""
    if variant is not None:
        raise NclueError(f"backbone 'bm25:{variant}': bm25 has no variants; BM25 parameters are set by `nclue index`")
    return LexicalBackbone("bm25", workspace.pages, LexicalIndex(workspace.collection_dir, workspace.store))


def doc_term_counts(workspace, backbone: LexicalBackbone) -> DocTermCounts:
    """The collection's raw document × term counts (built once per workspace)."""
    store = workspace.store
    return workspace.shared(
        ("bm25-doc-term-counts",), lambda: DocTermCounts(backbone.index, store.page_doc, len(store.doc_ids))
    )


@dataclass
class DocLevelSystem:
    """A document-level BM25 baseline (``and``, ``or``, ``condition_text``); not page-aware.

    With ``params`` (and the ``counts`` to weight), ``and`` ranks by BM25 at those parameters
    instead of the index's (``bm25.and_tuned``).
    """

    name: str
    backbone: LexicalBackbone
    kind: str
    page_aware: bool = False
    params: BM25Params | None = None
    counts: DocTermCounts | None = None

    def search(self, request: Request, depth: int = 100) -> list[RankedDoc]:
        bb = self.backbone
        eligible = None
        if self.kind == "and" and self.params is not None and self.counts is not None:
            bb._check([request.text])
            scores = self.counts.scores([request.text], self.params)[0]
            eligible = np.all(bb.doc_matches(list(request.conditions)), axis=0)
        elif self.kind == "and":
            scores = bb.doc_scores([request.text])[0]
            eligible = np.all(bb.doc_matches(list(request.conditions)), axis=0)
        elif self.kind == "or":
            scores = bb.doc_scores(list(request.conditions)).sum(axis=0)
        else:
            scores = bb.doc_scores([" ".join(request.conditions)])[0]
        ids = bb.pages.id_list
        return [RankedDoc(ids[d], float(scores[d])) for d in top_documents(scores, depth, eligible)]


COVER_MODES = ("phrase", "terms")


def cover_scores(backbone: LexicalBackbone, request: Request, mode: str = "phrase") -> np.ndarray:
    """``(n, n_pages)`` coverage-first weights ``(n + 1)·match + ŝ`` (see module docstring)."""
    conditions = list(request.conditions)
    n = len(conditions)
    scores = normalise(backbone.page_scores(conditions))
    matches = backbone.page_phrase_matches(conditions) if mode == "phrase" else backbone.page_matches(conditions)
    return (n + 1) * matches.astype(np.float32) + scores


def build_op(spec: Op, backbone: LexicalBackbone, workspace) -> DocLevelSystem | DecomposeSystem | None:
    """Registry hook: BM25-only operations; ``None`` defers to the generic operations."""
    name = format_name(spec)
    if spec.op in ("and", "or", "condition_text"):
        if spec.args:
            raise NclueError(f"system {name!r}: bm25.{spec.op} takes no arguments")
        return DocLevelSystem(name, backbone, spec.op)
    if spec.op == "and_tuned":
        if spec.args:
            raise NclueError(
                f"system {name!r}: bm25.and_tuned takes no arguments (its k1 and b come from `nclue tune`)"
            )
        from nclue.systems.tuning import read_tuning

        record = read_tuning(workspace.collection_dir, workspace.store.fingerprint)
        return DocLevelSystem(name, backbone, "and", params=record.params, counts=doc_term_counts(workspace, backbone))
    if spec.op == "cover":
        if spec.args not in ((), ("terms",)):
            raise NclueError(f"system {name!r}: use bm25.cover (phrase matches) or bm25.cover(terms)")
        mode = spec.args[0] if spec.args else "phrase"
        return DecomposeSystem(name, backbone, "distinct", condition_scores=lambda r: cover_scores(backbone, r, mode))
    return None
