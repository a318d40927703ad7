"""Generic systems over any :class:`~nclue.systems.backbone.Backbone`: joint and decomposed.

* ``B.joint(max)`` / ``B.page_max`` and ``B.joint(ptop{p})`` / ``B.ptop{p}`` score the
  rendered query text against every page and pool pages to documents
  (:func:`~nclue.systems.aggregate.pool_max`, :func:`~nclue.systems.aggregate.pool_ptop`).
  ``B.joint`` uses the backbone's document-level view when it has one (``DocScorer``),
  else ``joint(max)``.
* ``B.decompose(agg)`` scores each condition separately. Condition ``c``'s page scores are
  max-normalised over the collection, ``s_c(p) / max_p' s_c(p')`` (so conditions with rare,
  high-idf terms do not dominate), and only positive pages count as support.
  ``min``/``product``/``hmean`` combine each condition's best page per document;
  ``distinct`` (SDR) takes the best injective condition→page assignment, score = sum of
  the assigned normalised scores. Candidates are every document with a positive page for
  some condition — the exact ranking, not a top-M approximation.

Page-aware outputs: ``pages`` are the surfaced ``(page, score)`` pairs, best first (joint:
the document's top three pages; decomposition: each condition's evidence page, scored by
its normalised condition score), and ``evidence`` maps each condition to its supporting
pages (``distinct``: the assigned page; joint: the surfaced pages that score positive for
the condition).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from nclue.errors import NclueError
from nclue.evidence.signals import normalise
from nclue.systems.aggregate import combine, distinct_assign, doc_topk, pool_max, pool_ptop
from nclue.systems.backbone import Backbone, DocScorer, Request
from nclue.systems.names import Op, format_name, suggest
from nclue.types import RankedDoc

SURFACED = 3
_PTOP = re.compile(r"^ptop([1-9][0-9]*)$")


def top_documents(scores: np.ndarray, depth: int, eligible: np.ndarray | None = None) -> np.ndarray:
    """Indices of the ``depth`` best documents with a positive score (or ``eligible``), score
    descending, ties to the lower document index (stable)."""
    if depth <= 0:
        return np.zeros(0, np.int64)
    keep = eligible if eligible is not None else scores > 0
    cand = np.flatnonzero(keep)
    if len(cand) > depth:
        part = np.argpartition(-scores[cand], depth - 1)[:depth]
        threshold = scores[cand][part].min()
        cand = cand[scores[cand] >= threshold]
    order = np.lexsort((cand, -scores[cand]))
    return cand[order][:depth]


def condition_scores_at(backbone: Backbone, conditions: Sequence[str], rows: np.ndarray) -> np.ndarray:
    """``(len(conditions), len(rows))``: the backbone's page scores of ``conditions`` at page ``rows`` —
    from its ``scores_at`` where it has one (``maxsim`` then scores no other page), else sliced from
    ``page_scores``."""
    at = getattr(backbone, "scores_at", None)
    if at is not None:
        return at(list(conditions), rows)
    return backbone.page_scores(list(conditions))[:, rows]


@dataclass
class JointSystem:
    """Joint query text, page scores pooled to documents (``pool``: ``None`` = doc view, ``0`` = max, ``p`` = ptop{p})."""

    name: str
    backbone: Backbone
    pool: int | None
    page_aware: bool = True

    def prefetch(self, requests: Sequence[Request]) -> None:
        """Let the backbone prepare a batch at once, if it can (``maxsim`` encodes beside the scoring):
        the joint texts scored whole, the conditions only prepared, since :meth:`search` reads them on
        the surfaced pages alone."""
        prepare = getattr(self.backbone, "prefetch_joint", None)
        if prepare is not None and self.pool is not None:
            prepare([r.text for r in requests], [r.conditions for r in requests])

    def search(self, request: Request, depth: int = 100) -> list[RankedDoc]:
        pages = self.backbone.pages
        if self.pool is None:
            scores = self.backbone.doc_scores([request.text])[0]  # type: ignore[attr-defined]
            return [RankedDoc(pages.id_list[d], float(scores[d])) for d in top_documents(scores, depth)]
        joint = self.backbone.page_scores([request.text])[0]
        doc_scores = (
            pool_max(joint, pages.doc_offsets)
            if self.pool == 0
            else pool_ptop(joint, pages.page_doc, pages.doc_offsets, self.pool)
        )
        # Every document's best positive pages in one pass (doc_topk: ties to the earlier page),
        # read for the ranked documents only; no per-document sort.
        top = top_documents(doc_scores, depth)
        positive_docs, best_rows, _ = doc_topk(joint, pages.page_doc, SURFACED)
        slot = np.minimum(np.searchsorted(positive_docs, top), max(len(positive_docs) - 1, 0))
        found = positive_docs[slot] == top if len(positive_docs) else np.zeros(len(top), dtype=bool)
        shown = best_rows[slot[found]]
        shown_rows = np.unique(shown[shown >= 0])
        per_cond = condition_scores_at(self.backbone, request.conditions, shown_rows)  # (conditions, shown_rows)
        out = []
        for d, s, has in zip(top.tolist(), slot.tolist(), found.tolist(), strict=True):
            surfaced = [r for r in best_rows[s].tolist() if r >= 0] if has else []
            numbers = pages.page_number[surfaced].tolist()
            shows = (per_cond[:, np.searchsorted(shown_rows, surfaced)] > 0).tolist()
            out.append(
                RankedDoc(
                    pages.id_list[d],
                    float(doc_scores[d]),
                    pages=tuple(zip(numbers, joint[surfaced].tolist(), strict=True)),
                    evidence={
                        c: tuple(n for n, shown in zip(numbers, shows[i], strict=True) if shown)
                        for i, c in enumerate(request.conditions)
                    },
                )
            )
        return out


ConditionScorer = Callable[[Request], np.ndarray]


@dataclass
class DecomposeSystem:
    """Per-condition page scores → per-document aggregation (``min|product|hmean|distinct``).

    ``condition_scores`` returns the ``(n, n_pages)`` matrix to aggregate (default: the
    backbone's max-normalised condition scores).
    """

    name: str
    backbone: Backbone
    how: str
    condition_scores: ConditionScorer | None = None
    page_aware: bool = True

    def prefetch(self, requests: Sequence[Request]) -> None:
        """Let the backbone prepare every condition of a batch of requests at once, if it can
        (one encoder call and one matrix product for the batch instead of one per query)."""
        prepare = getattr(self.backbone, "prefetch", None)
        if prepare is not None:
            prepare(list(dict.fromkeys(c for r in requests for c in r.conditions)))

    def scores(self, request: Request) -> np.ndarray:
        """The ``(n, n_pages)`` condition score matrix that is aggregated."""
        if self.condition_scores is not None:
            return self.condition_scores(request)
        return normalise(self.backbone.page_scores(list(request.conditions)))

    def _segments(self, n: int) -> np.ndarray:
        """Segment key ``c · n_docs + page_doc`` of every entry of an ``(n, n_pages)`` matrix (cached)."""
        cache = self.__dict__.setdefault("_segment_cache", {})
        if n not in cache:
            pages = self.backbone.pages
            cache[n] = (np.arange(n, dtype=np.int64)[:, None] * pages.n_docs + pages.page_doc[None, :]).ravel()
        return cache[n]

    def rank(self, request: Request, depth: int = 100) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(docs, doc_scores, evidence_rows, evidence_values)`` of the top ``depth`` documents:
        evidence rows/values are ``(docs, n)`` (``-1`` / 0 = no supporting page)."""
        pages = self.backbone.pages
        matrix = self.scores(request)
        n = matrix.shape[0]
        k = n if self.how == "distinct" else 1
        # one pass over all conditions: condition c's pages form segments c·n_docs + doc
        keys, top_rows, top_vals = doc_topk(matrix.ravel(), self._segments(n), k)
        cond, docs = np.divmod(keys, pages.n_docs)
        present = np.zeros(pages.n_docs, dtype=bool)
        present[docs] = True
        cand = np.flatnonzero(present)
        at = (np.cumsum(present) - 1)[docs]
        rows = np.full((len(cand), n, k), -1, np.int64)
        vals = np.zeros((len(cand), n, k), np.float32)
        rows[at, cond] = np.where(top_rows >= 0, top_rows - cond[:, None] * pages.n_pages, -1)
        vals[at, cond] = top_vals
        if self.how == "distinct":
            total, assigned = distinct_assign(rows, vals)
            assigned_vals = np.take_along_axis(
                vals, np.argmax(rows == assigned[:, :, None], axis=2)[:, :, None], axis=2
            )[:, :, 0]
            assigned_vals = np.where(assigned >= 0, assigned_vals, 0.0)
        else:
            total = combine(vals[:, :, 0], self.how)
            assigned, assigned_vals = rows[:, :, 0], vals[:, :, 0]
        eligible = np.any(assigned >= 0, axis=1)
        best = top_documents(total, depth, eligible=eligible)
        return cand[best], total[best], assigned[best], assigned_vals[best]

    def search(self, request: Request, depth: int = 100) -> list[RankedDoc]:
        pages = self.backbone.pages
        docs, scores, rows, vals = self.rank(request, depth)
        numbers = np.where(rows >= 0, pages.page_number[np.maximum(rows, 0)], -1)
        order = np.lexsort((numbers, -vals), axis=-1)
        ranked_pages = np.take_along_axis(numbers, order, axis=1).tolist()
        ranked_vals = np.take_along_axis(vals, order, axis=1).tolist()
        conditions = request.conditions
        ids = pages.id_list
        unique_pages = self.how == "distinct"  # an assignment never repeats a page
        out = []
        for d, score, nums, row_pages, row_vals in zip(
            docs.tolist(), scores.tolist(), numbers.tolist(), ranked_pages, ranked_vals
        ):
            if unique_pages and -1 not in row_pages:
                surfaced = tuple(zip(row_pages, row_vals))
            elif unique_pages:
                surfaced = tuple((p, v) for p, v in zip(row_pages, row_vals) if p >= 0)
            else:
                best: dict[int, float] = {}
                for p, v in zip(row_pages, row_vals):
                    if p >= 0 and p not in best:
                        best[p] = v
                surfaced = tuple(best.items())
            evidence = dict(zip(conditions, [(p,) if p >= 0 else () for p in nums]))
            out.append(RankedDoc(ids[d], score, surfaced, evidence))
        return out


def _pool_arg(spec: Op, arg: str) -> int:
    if arg == "max":
        return 0
    m = _PTOP.match(arg)
    if not m:
        raise NclueError(f"system {format_name(spec)!r}: pooling {arg!r} is not max or ptop{{p}} (e.g. ptop3)")
    return int(m.group(1))


def build_op(spec: Op, backbone: Backbone) -> JointSystem | DecomposeSystem:
    """The generic system for ``spec`` on ``backbone``; :class:`NclueError` for unknown operations."""
    name = format_name(spec)
    if spec.op == "joint":
        if len(spec.args) > 1:
            raise NclueError(f"system {name!r}: joint takes one pooling argument (max or ptop{{p}})")
        if not spec.args:
            return JointSystem(
                name,
                backbone,
                None if isinstance(backbone, DocScorer) else 0,
                page_aware=not isinstance(backbone, DocScorer),
            )
        return JointSystem(name, backbone, _pool_arg(spec, spec.args[0]))
    if spec.op == "page_max" and not spec.args:
        return JointSystem(name, backbone, 0)
    if _PTOP.match(spec.op) and not spec.args:
        return JointSystem(name, backbone, _pool_arg(spec, spec.op))
    if spec.op == "decompose":
        if len(spec.args) != 1 or spec.args[0] not in ("min", "product", "hmean", "distinct"):
            raise NclueError(
                f"system {name!r}: use decompose(min), decompose(product), decompose(hmean) or decompose(distinct)"
            )
        return DecomposeSystem(name, backbone, spec.args[0])
    raise NclueError(f"unknown operation {spec.op!r} in system {name!r}" + suggest(name))
