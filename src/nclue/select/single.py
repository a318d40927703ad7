"""Coverage selection for one query: pick k documents that together cover every requirement.

``nclue coverage select`` (``docs/coverage.md#one-query``). For a query and its requirements:

1. **pool** — the ``pool_depth`` best documents of a retrieval system (a system name such as
   ``bm25.decompose(distinct)``, run with the requirements as conditions and the query as text);
2. **evidence** — ``P(d covers r)`` from each pool document's best page, over all its pages
   (:mod:`nclue.select.coverage_evidence`, with the packaged calibration unless another is given);
3. **vectors** for the vector-based selectors: the query and requirements encoded by the
   collection's dense model, and each document's vector from the collection's dense index (the
   document's first chunk — the opening window the protocol encodes — so nothing is encoded per document);
4. **selector** — any of :data:`nclue.select.selectors.USER_SELECTORS` (default ``expected``;
   ``setcover`` returns the smallest covering set and ignores k), under the near-duplicate rule
   (:mod:`nclue.select.redundancy`, groups from :mod:`nclue.index.duplicates`).

The pool is sorted by ID before selection (the tie rule of every selector), and its retrieval
scores feed the ``retriever`` selector. :class:`CoverageSelector` keeps a collection open
(indexes and encoder loaded once) to answer many queries.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nclue.api_args import path_arg, positive_int, text_arg, text_list
from nclue.errors import NclueError
from nclue.evidence.model import Calibration
from nclue.evidence.signals import EvidenceSource, check_texts
from nclue.select.coverage_evidence import COVER_THRESHOLD, EvidenceModel, EvidenceVerifier
from nclue.select.inputs import TaskVectors
from nclue.select.redundancy import select_distinct
from nclue.select.selection_defaults import SelectOptions
from nclue.select.selectors import READS_VECTORS, USER_SELECTORS, check_selectors
from nclue.select.tasks import id_key
from nclue.tables import Table, Tabular


def parse_requirements(query: str, requirements: tuple[str, ...] | list[str] = ()) -> tuple[str, ...]:
    """The requirements: the given ones, else the query split as ``"A"; "B"`` or ``A; B``.

    Requirements that differ only in case or spacing (``debugging`` and ``Debugging``) are one
    requirement, spelled as first given: counted twice they would double its weight in every
    coverage objective.
    """
    requirements = () if requirements is None else requirements
    if isinstance(requirements, str) or not all(isinstance(r, str) for r in requirements):
        raise NclueError(
            f'requirements must be a list of strings, got {requirements!r}; e.g. ["line numbering", "footnotes"]'
        )
    given = [r.strip() for r in requirements if r and r.strip()]
    if not given:
        if ";" not in query and '"' not in query:
            raise NclueError(
                'no requirements: give --require "REQUIREMENT" (repeatable), or write the query as "A; B; C"'
            )
        from nclue.query import parse_conditions

        given = list(parse_conditions(query))
    first: dict[str, str] = {}
    for requirement in given:
        first.setdefault(" ".join(requirement.casefold().split()), requirement)
    return tuple(first.values())


@dataclass(frozen=True)
class Selected:
    """One selected document: rank, ID, source path, score (expected requirements covered),
    the requirements it covers with their evidence pages, and every requirement's probability."""

    rank: int
    doc_id: str
    path: str
    score: float
    covers: dict[str, list[int]]
    probability: dict[str, float]

    def to_json(self) -> dict:
        return {
            "rank": self.rank,
            "doc_id": self.doc_id,
            "path": self.path,
            "score": round(self.score, 6),
            "covers": self.covers,
            "probability": {r: round(p, 6) for r, p in self.probability.items()},
        }


COVERED = "covered"
IN_POOL = "in the pool, not selected"
NOT_FOUND = "not found in the pool"
VERDICTS = (COVERED, IN_POOL, NOT_FOUND)
"""Per requirement: a selected document covers it (P ≥ 0.5); else some pool document does; else none."""


@dataclass(frozen=True)
class Selection(Tabular):
    """The answer to one query: the selected documents, a verdict per requirement (:data:`VERDICTS`),
    and for a requirement the pool covers but the selection does not, the pool's best document
    (``pool_best[r]``: ``doc_id``, ``probability``, ``pages`` best first)."""

    query: str
    requirements: tuple[str, ...]
    selector: str
    pool: dict
    selected: tuple[Selected, ...]
    verdicts: dict[str, str]
    pool_best: dict[str, dict] = field(default_factory=dict)
    calibration: dict = field(default_factory=dict)
    near_copies: tuple[dict, ...] = ()
    """Pool documents left out as near-copies of a selected one that add no coverage
    (``doc_id``, ``copy_of``, ``resemblance``; :mod:`nclue.select.redundancy`)."""
    verification: dict = field(default_factory=dict)
    """Where a reader verified the evidence (:mod:`nclue.reader.verified_coverage`): the model, the floor, the
    pairs read and established, and the reply counts; empty otherwise."""

    @property
    def uncovered(self) -> tuple[str, ...]:
        """The requirements no selected document covers (in the pool or not)."""
        return tuple(r for r in self.requirements if self.verdicts[r] != COVERED)

    def to_json(self) -> dict:
        return {
            "query": self.query,
            "requirements": list(self.requirements),
            "selected": [s.to_json() for s in self.selected],
            "verdicts": dict(self.verdicts),
            "pool_best": self.pool_best,
            "near_copies": list(self.near_copies),
            "uncovered": list(self.uncovered),
            "selector": self.selector,
            "pool": self.pool,
            "calibration": self.calibration,
            "verification": self.verification,
        }

    def tables(self) -> list[Table]:
        heads = tuple(f"{s.rank}. {s.doc_id.rsplit('/', 1)[-1]}" for s in self.selected)
        rows = []
        for req in self.requirements:
            cells = []
            for s in self.selected:
                p = s.probability[req]
                pages = s.covers.get(req)
                cells.append(f"p. {', '.join(map(str, pages))} ({p:.2f})" if pages else f"— ({p:.2f})")
            rows.append((req, *cells, self._verdict_cell(req)))
        rows.append(("expected requirements covered", *(f"{s.score:.2f}" for s in self.selected), ""))
        note = (
            f"Cells: evidence pages, best first, where P(covers) ≥ {COVER_THRESHOLD} (probability in brackets). "
            + self._verification_note()
            + f"Pool: {self.pool['system']} at depth {self.pool['depth']} ({self.pool['size']} documents). "
            + (
                f"Not covered by the selection: {'; '.join(self.uncovered)}."
                if self.uncovered
                else "Every requirement is covered."
            )
            + (
                " Left out as near-copies adding no coverage: "
                + "; ".join(
                    f"{c['doc_id'].rsplit('/', 1)[-1]} (of {c['copy_of'].rsplit('/', 1)[-1]}, "
                    f"resemblance {c['resemblance']:.2f})"
                    for c in self.near_copies
                )
                + "."
                if self.near_copies
                else ""
            )
        )
        grid = Table(
            ("Requirement", *heads, "Verdict"),
            tuple(rows),
            align="l" + "l" * len(heads) + "l",
            caption=f"{self.selector}: {self.query}",
            notes=(note,),
        )
        listing = Table(
            ("Rank", "Document", "Path", "Score"),
            tuple((str(s.rank), s.doc_id, s.path, f"{s.score:.3f}") for s in self.selected),
            align="rllr",
        )
        return [grid, listing]

    def _verification_note(self) -> str:
        v = self.verification
        if not v:
            return ""
        failed = v["malformed_replies"] + v["rejected_answers"]
        return (
            f"Verified by the reader {v['model']}: {v['pairs_read']} (document, requirement) pairs with "
            f"P ≥ {v['floor']} read on their {v['pages']} best pages, {v['established']} established "
            "(probability 1.00, the pages the reader quoted), the others 0.00. "
            + (
                f"Replies that failed validation ({v['malformed_replies']} malformed, {v['rejected_answers']} "
                "rejected answers) left their pairs unread: the evidence's probability stands there. "
                if failed
                else ""
            )
        )

    def _verdict_cell(self, req: str) -> str:
        verdict = self.verdicts[req]
        best = self.pool_best.get(req)
        if verdict == IN_POOL and best:
            pages = ", ".join(map(str, best["pages"]))
            return f"{verdict}: {best['doc_id'].rsplit('/', 1)[-1]} p. {pages} ({best['probability']:.2f})"
        return verdict


class CoverageSelector:
    """An opened collection with its evidence model, answering one query at a time."""

    def __init__(
        self,
        collection: str | os.PathLike[str],
        calibration: Calibration | str | Path | None = None,
        near_duplicates: float = SelectOptions.near_duplicates,
    ) -> None:
        from nclue.index.duplicates import open_duplicates
        from nclue.systems.registry import Workspace

        collection = path_arg("collection", collection)
        if calibration is not None and not isinstance(calibration, Calibration):
            calibration = path_arg("calibration", calibration, "'calibration.json'")
        near_duplicates = _resemblance(near_duplicates)
        self.workspace = Workspace(collection)
        # ONNX Runtime builds its session with the GIL released: load the query encoder in a thread
        # while this one opens the indexes (0.2 s of a cold start); select() waits for it. A failure
        # here waits for it too: a process must not exit while the thread is inside ONNX Runtime.
        self._warm = threading.Thread(target=self._load_encoder, name="nclue-encoder")
        self._warm.start()
        try:
            self.duplicates = open_duplicates(collection)
            self.resemblance = near_duplicates
            source = EvidenceSource.from_workspace(self.workspace)
            self.calibration = (
                calibration
                if isinstance(calibration, Calibration)
                else Calibration.load(calibration, source.describe["sources"])
            )
            self.model = EvidenceModel(source, self.calibration)
            paths = self.workspace.store.docs.select(["doc_id", "path"]).to_pylist()
            self.paths = {row["doc_id"]: row["path"] or "" for row in paths}
        except BaseException:
            self._warm.join()
            raise

    def _load_encoder(self) -> None:
        """The dense backbone and its encoder (errors surface where the dense index is first used)."""
        try:
            dense = self.workspace.backbone("dense")
            dense.encoder  # noqa: B018 - loads the cached encoder
        except NclueError:
            pass

    def doc_vectors(self, ids: list[str]) -> np.ndarray:
        """Each document's first dense chunk vector (zeros for a document without text)."""
        dense = self.workspace.backbone("dense")
        pages = self.workspace.pages
        chunk_page = np.asarray(dense.index.chunks.page)
        vectors = dense.vectors
        index = {d: i for i, d in enumerate(pages.id_list)}
        out = np.zeros((len(ids), vectors.shape[1]), dtype=np.float32)
        for j, doc in enumerate(ids):
            i = index[doc]
            first = int(np.searchsorted(chunk_page, pages.doc_offsets[i]))
            if first < len(chunk_page) and chunk_page[first] < pages.doc_offsets[i + 1]:
                out[j] = vectors[first]
        return out

    def select(
        self,
        query: str,
        requirements: tuple[str, ...] | list[str] = (),
        k: int = SelectOptions.k,
        pool: str = SelectOptions.pool,
        pool_depth: int = SelectOptions.pool_depth,
        selector: str = SelectOptions.selector,
        verify: EvidenceVerifier | None = None,
    ) -> Selection:
        """Select ``k`` documents for one query (module docstring); with ``verify``, on the evidence a
        reader confirmed (:mod:`nclue.reader.verified_coverage`)."""
        from nclue.systems.backbone import Request

        self._warm.join()
        query = text_arg("query", query, "'typeset a critical edition'")
        requirements = text_list("requirements", () if requirements is None else requirements, '["footnotes"]')
        k = positive_int("k", k, 5)
        pool_depth = positive_int("pool_depth", pool_depth, 100)
        pool = text_arg("pool", pool, "'bm25.decompose(distinct)'")
        selector = text_arg("selector", selector, "'expected'")
        check_selectors([selector], USER_SELECTORS)
        reqs = parse_requirements(query, requirements)
        check_texts(reqs)
        question = query.strip() or "; ".join(reqs)
        system = self.workspace.system(pool)
        found = system.search(Request(reqs, question), pool_depth)
        if len(found) < k:
            raise NclueError(
                f"the pool has {len(found)} document(s) ({system.name} at depth {pool_depth}), fewer than k={k}; "
                "raise --pool-depth, choose a broader --pool, or lower --k"
            )
        ids = sorted((d.doc_id for d in found), key=id_key)
        scores = {d.doc_id: d.score for d in found}
        evidence = self.model.evidence(reqs, ids)
        verification: dict = {}
        if verify is not None:
            checked = verify.verify(self.model, evidence, self.workspace.store.page_text)
            evidence, verification = checked.evidence, checked.summary
        tv = TaskVectors("query", tuple(ids), np.zeros(1), np.zeros((len(reqs), 1)), np.zeros((len(ids), 1)))
        if selector in READS_VECTORS:
            dense = self.workspace.backbone("dense")
            encoded = dense.encode([question, *reqs])
            tv = TaskVectors("query", tuple(ids), encoded[0], encoded[1:], self.doc_vectors(ids))
        tv = TaskVectors(
            tv.task_id,
            tv.ids,
            tv.question,
            tv.requirements,
            tv.docs,
            evidence.probs,
            np.array([scores[d] for d in ids], dtype=np.float64),
            self.duplicates.groups(ids, self.resemblance),
        )
        picked, left_out = select_distinct(USER_SELECTORS[selector], tv, k)
        first_of = {int(tv.groups[q]): q for q in reversed(picked)}  # the best-ranked selected member
        near_copies = [
            {
                "doc_id": ids[p],
                "copy_of": ids[first_of[int(tv.groups[p])]],
                "resemblance": round(self.duplicates.resemblance_of(ids[p], ids[first_of[int(tv.groups[p])]]), 4),
            }
            for p in left_out
            if int(tv.groups[p]) in first_of
        ]
        selected = tuple(
            Selected(
                rank=rank,
                doc_id=ids[p],
                path=self.paths.get(ids[p], ""),
                score=float(evidence.probs[p].sum()),
                covers=evidence.covers(p),
                probability={r: float(evidence.probs[p, j]) for j, r in enumerate(reqs)},
            )
            for rank, p in enumerate(picked, start=1)
        )
        covered = {r for s in selected for r in s.covers}
        verdicts, pool_best = {}, {}
        for j, req in enumerate(reqs):
            best = int(np.argmax(evidence.probs[:, j]))  # ties: the smaller ID (the pool is sorted)
            if req in covered:
                verdicts[req] = COVERED
            elif evidence.probs[best, j] >= COVER_THRESHOLD:
                verdicts[req] = IN_POOL
                pool_best[req] = {
                    "doc_id": ids[best],
                    "probability": round(float(evidence.probs[best, j]), 6),
                    "pages": list(evidence.pages[best][j]),
                }
            else:
                verdicts[req] = NOT_FOUND
        return Selection(
            query=query,
            requirements=reqs,
            selector=selector,
            pool={"system": system.name, "depth": pool_depth, "size": len(found)},
            selected=selected,
            verdicts=verdicts,
            pool_best=pool_best,
            calibration={
                "sha256": self.calibration.sha256,
                "signals": list(self.calibration.signals),
                "fitted_on": self.calibration.provenance.get("release"),
            },
            near_copies=tuple(near_copies),
            verification=verification,
        )


def _resemblance(value: object) -> float:
    """``near_duplicates`` as a finite float (above 1 turns the near-copy rule off)."""
    import math
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise NclueError(
            f"near_duplicates must be a number, got {type(value).__name__} {value!r}; "
            "e.g. near_duplicates=0.1 (above 1 turns the near-copy rule off)"
        )
    return float(value)


def select_documents(
    collection: str | os.PathLike[str],
    query: str,
    requirements: tuple[str, ...] | list[str] = (),
    k: int = SelectOptions.k,
    pool: str = SelectOptions.pool,
    pool_depth: int = SelectOptions.pool_depth,
    selector: str = SelectOptions.selector,
    calibration: Calibration | str | Path | None = None,
    near_duplicates: float = SelectOptions.near_duplicates,
    verify: EvidenceVerifier | None = None,
) -> Selection:
    """Open ``collection`` and answer one query (:meth:`CoverageSelector.select`)."""
    return CoverageSelector(collection, calibration, near_duplicates).select(
        query, requirements, k, pool, pool_depth, selector, verify
    )
