"""Candidate pages per condition: four high-recall routes and a round-robin pool (``docs/audit.md#candidate-pages``).

For condition ``c`` (canonical name and surface forms) of document ``d`` each route ranks
pages of ``d``:

* ``construction`` — the benchmark's own evidence pages ``P(d, c)``, by surface-form count
  (descending), then page;
* ``alias`` — pages where a surface form occurs as whole words (``nclue.bench.excerpts``), by
  occurrence count, then page;
* ``bm25`` — pages with a positive BM25 score for the name and surface forms in the
  collection's lexical page index, by score, then page;
* ``fuzzy`` — pages holding an OCR-tolerant approximate match of a surface form
  (:func:`nclue.audit.quote_match.fuzzy_page_distances`, budget ``⌊fuzzy_rate · length⌋`` edits), by
  distance, then page.

A pool is filled round-robin — the next unseen page of each route in the order above — until
it holds ``size`` pages; only when every route is exhausted do ``filler`` pages (the
document's pages in order) complete it, so a document without any trace of ``c`` still shows
the same number of pages. Expanded pools put the initial packet's pages (``original``) and
the pages evaluators selected (``evaluator``) first. Evaluators see pool pages in page
order: routes and ranks stay in the administrator file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from nclue.audit.audit_params import ROUTES, PoolParams
from nclue.audit.quote_match import FuzzyText, letters
from nclue.bench.excerpts import alias_pattern
from nclue.corpus.store import PageStore
from nclue.errors import NclueError


@dataclass(frozen=True)
class Routes:
    """Ranked pages of every route for one (document, condition)."""

    ranked: Mapping[str, tuple[int, ...]]
    pages: tuple[int, ...]

    def members(self, page: int) -> list[str]:
        """The routes (of :data:`~nclue.audit.audit_params.ROUTES`) that recover ``page``."""
        return [r for r in ROUTES if page in self.ranked.get(r, ())]


def round_robin(lists: Sequence[Sequence[int]], size: int, seen: Iterable[int] = ()) -> list[int]:
    """Up to ``size`` distinct pages taking each list's next unseen page in turn (``seen`` are skipped)."""
    taken = set(seen)
    out: list[int] = []
    cursors = [0] * len(lists)
    while len(out) < size:
        moved = False
        for i, pages in enumerate(lists):
            while cursors[i] < len(pages) and pages[cursors[i]] in taken:
                cursors[i] += 1
            if cursors[i] < len(pages):
                page = pages[cursors[i]]
                taken.add(page)
                out.append(page)
                moved = True
                if len(out) == size:
                    break
        if not moved:
            break
    return out


class RouteFinder:
    """Computes the routes of conditions in documents of one collection (BM25 scores cached per text)."""

    def __init__(self, store: PageStore, collection: str, params: PoolParams = PoolParams()) -> None:
        from nclue.index.lexical import LexicalIndex, index_exists

        if not index_exists(collection):
            raise NclueError(
                f"{collection}: no lexical index; the BM25 route needs it — build it with `nclue index {collection} --lexical`"
            )
        self.store = store
        self.index = LexicalIndex(collection, store)
        self.params = params
        self._bm25: dict[str, np.ndarray] = {}
        self._doc: tuple[int, list[str], FuzzyText] | None = None

    def prefetch_bm25(self, texts: Iterable[str], batch: int = 64) -> None:
        """Score many condition texts against every page at once (one index pass per batch)."""
        todo = sorted(set(texts) - set(self._bm25))
        for start in range(0, len(todo), batch):
            chunk = todo[start : start + batch]
            for text, row in zip(chunk, self.index.page_scores(chunk)):
                self._bm25[text] = row

    def doc_rows(self, doc_id: str) -> tuple[int, int]:
        """Page-row range of ``doc_id`` in the store."""
        i = self.store.doc_index.get(doc_id)
        if i is None:
            raise NclueError(
                f"{self.store.root}: document {doc_id!r} of the audit is not in this collection; "
                "give the collection the benchmark was built from"
            )
        return int(self.store.doc_offsets[i]), int(self.store.doc_offsets[i + 1])

    def routes(self, doc_id: str, name: str, aliases: tuple[str, ...], construction: Sequence[int]) -> Routes:
        """Every route's ranked pages for condition ``name`` in ``doc_id``."""
        start, stop = self.doc_rows(doc_id)
        numbers = self.store.page_number[start:stop].tolist()
        texts = self.store.texts[start:stop]
        lower, fuzzy_view = self._views(start, stop)
        forms = tuple(dict.fromkeys((name, *aliases)))
        pattern = alias_pattern(forms)
        firsts = {w.lower() for f in forms for w in re.split(r"[\s\-]+", f)[:1] if w}
        counts = [len(pattern.findall(t)) if any(w in low for w in firsts) else 0 for t, low in zip(texts, lower)]
        count_of = dict(zip(numbers, counts))
        ranked: dict[str, tuple[int, ...]] = {}
        ranked["construction"] = tuple(sorted(set(construction), key=lambda p: (-count_of.get(p, 0), p)))
        ranked["alias"] = tuple(p for _, p in sorted((-c, p) for p, c in zip(numbers, counts) if c > 0))
        text = " ".join(forms)
        if text not in self._bm25:
            self.prefetch_bm25([text])
        scores = self._bm25[text][start:stop]
        ranked["bm25"] = tuple(numbers[i] for i in sorted(np.flatnonzero(scores > 0), key=lambda i: (-scores[i], i)))
        ranked["fuzzy"] = self._fuzzy(fuzzy_view, numbers, forms)
        return Routes(ranked, tuple(numbers))

    def _views(self, start: int, stop: int) -> tuple[list[str], FuzzyText]:
        """Lower-cased and letters-only page texts of one document (kept for its next condition)."""
        if self._doc is None or self._doc[0] != start:
            texts = self.store.texts[start:stop]
            self._doc = (start, [t.lower() for t in texts], FuzzyText([letters(t) for t in texts]))
        return self._doc[1], self._doc[2]

    def _fuzzy(self, pages: FuzzyText, numbers: list[int], forms: tuple[str, ...]) -> tuple[int, ...]:
        best: dict[int, int] = {}
        for form in dict.fromkeys(letters(f) for f in forms):
            if not form:
                continue
            budget = int(self.params.fuzzy_rate * len(form)) if len(form) >= self.params.fuzzy_min_len else 0
            for pos, dist in pages.distances(form, budget).items():
                best[pos] = min(dist, best.get(pos, dist))
        return tuple(numbers[pos] for pos, _ in sorted(best.items(), key=lambda kv: (kv[1], numbers[kv[0]])))


def pool(routes: Routes, size: int, first: Sequence[Sequence[int]] = (), minimum: int | None = None) -> list[int]:
    """The pool of ``size`` pages: the ``first`` lists (original, evaluator) in full, then the routes round-robin.

    Filler pages (document order) bring it up to ``minimum`` (default ``size``) when the
    routes run dry; never more pages than the document has.
    """
    out: list[int] = []
    for pages in first:
        for p in pages:
            if p not in out and p in routes.pages:
                out.append(p)
    out += round_robin([routes.ranked[r] for r in ROUTES], max(size - len(out), 0), out)
    floor = size if minimum is None else minimum
    if len(out) < floor:
        out += [p for p in routes.pages if p not in out][: floor - len(out)]
    return out


def pool_entries(routes: Routes, pages: Sequence[int], first: Mapping[str, Sequence[int]] | None = None) -> list[dict]:
    """Administrator rows of a pool: page, hidden rank, and every route that recovers it (nonexclusive).

    ``first`` names the lists that led the pool (``original``, ``evaluator``).
    """
    out = []
    for rank, page in enumerate(pages, start=1):
        members = [name for name, listed in (first or {}).items() if page in listed] + routes.members(page)
        out.append({"page": page, "rank": rank, "routes": members or ["filler"]})
    return out
