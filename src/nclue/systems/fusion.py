"""Reciprocal-rank fusion: ``rrf(A, B, ...)``, equal weights, ``k = 60``, depth 100.

``RRF(d) = Σ_s 1 / (k + rank_s(d))`` over the systems ``s`` whose top-``depth`` ranking
contains ``d`` (rank 1-based; Cormack, Clarke & Büttcher, SIGIR 2009 — the same as ranx's
``fuse(method="rrf")``). Ties keep the order of first appearance scanning the component
rankings rank by rank, system by system in argument order (deterministic).
``rrf(A, B, k=60, depth=100)`` overrides the constants.

Page evidence: a fused document carries the surfaced pages and evidence of the first
page-aware component (argument order) that retrieved it.
"""

from __future__ import annotations

from dataclasses import dataclass

from nclue.errors import NclueError
from nclue.systems.backbone import Request, System
from nclue.systems.names import Call, format_name
from nclue.types import RankedDoc

K = 60
DEPTH = 100


def rrf_fuse(rankings: list[list[str]], k: int = K) -> list[tuple[str, float]]:
    """Fuse ranked doc-id lists: ``[(doc_id, Σ 1/(k + rank))]``, score descending, stable ties."""
    scores: dict[str, float] = {}
    first: dict[str, int] = {}
    width = max((len(r) for r in rankings), default=0)
    for rank in range(width):
        for ranking in rankings:
            if rank < len(ranking):
                first.setdefault(ranking[rank], len(first))
    for ranking in rankings:
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], first[item[0]]))


@dataclass
class RRFSystem:
    """Reciprocal-rank fusion of component systems."""

    name: str
    systems: tuple[System, ...]
    k: int = K
    depth: int = DEPTH

    @property
    def page_aware(self) -> bool:
        """Whether any component surfaces pages."""
        return any(s.page_aware for s in self.systems)

    def prefetch(self, requests: list[Request]) -> None:
        """Pass a batch of requests on to every component that can prepare for it."""
        for system in self.systems:
            prepare = getattr(system, "prefetch", None)
            if prepare is not None:
                prepare(requests)

    def search(self, request: Request, depth: int = DEPTH) -> list[RankedDoc]:
        results = [s.search(request, self.depth) for s in self.systems]
        source: dict[str, RankedDoc] = {}
        for system, ranked in zip(self.systems, results):
            if system.page_aware:
                for doc in ranked:
                    source.setdefault(doc.doc_id, doc)
        fused = rrf_fuse([[d.doc_id for d in ranked] for ranked in results], self.k)[:depth]
        out = []
        for doc_id, score in fused:
            evidence = source.get(doc_id)
            out.append(
                RankedDoc(doc_id, score, pages=evidence.pages, evidence=evidence.evidence)
                if evidence is not None
                else RankedDoc(doc_id, score)
            )
        return out


def build_system(spec: Call, workspace) -> RRFSystem:
    """Registry hook for ``rrf(A, B, ..., k=60, depth=100)``."""
    name = format_name(spec)
    if len(spec.systems) < 2 or len(spec.systems) != len(spec.args):
        raise NclueError(
            f"system {name!r}: rrf fuses two or more systems, e.g. rrf(bm25.and, bm25.decompose(distinct))"
        )
    unknown = {key for key, _ in spec.options} - {"k", "depth"}
    if unknown:
        raise NclueError(f"system {name!r}: unknown rrf options {sorted(unknown)}; allowed: k, depth")
    try:
        k = int(spec.option("k", str(K)))
        depth = int(spec.option("depth", str(DEPTH)))
    except ValueError:
        raise NclueError(f"system {name!r}: k and depth must be integers") from None
    if k < 0 or depth < 1:
        raise NclueError(f"system {name!r}: need k >= 0 and depth >= 1")
    return RRFSystem(name, tuple(workspace.system(s) for s in spec.systems), k, depth)
