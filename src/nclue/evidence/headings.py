"""Heading evidence: how well the headings that start on a page name a condition.

For a condition ``c`` and page row ``p`` (``docs/evidence.md#signals``):

* ``head`` — the best cosine between ``c`` and a heading that starts on ``p`` (``structure.parquet``,
  embedded once by :func:`nclue.index.heading_vectors.build_heading_vectors` with the collection's dense
  model), 0 when none;
* ``head_level`` — the best ``cosine / level`` over the page's headings (``level`` 1 = chapter;
  Title-Case lines of unknown level count as level :data:`UNKNOWN_LEVEL`): the position in the outline.

Rows are cached by condition text (conditions recur across queries), at most :data:`CACHE_TEXTS`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from nclue.corpus.store import PageStore
from nclue.corpus.structure import STRUCTURE_FILE, open_structure
from nclue.errors import NclueError
from nclue.index.heading_vectors import HEADINGS_DIR, HEADINGS_FILE, HEADINGS_MANIFEST
from nclue.index.integrity import check
from nclue.io import read_json_record, sha256_file
from nclue.models.similarity import row_products

UNKNOWN_LEVEL = 3
CACHE_TEXTS = 256


class HeadingEvidence:
    """The embedded headings of one collection, and the page roles (table of contents, index)."""

    def __init__(
        self,
        collection: Path,
        store: PageStore,
        n_pages: int,
        encode: Callable[[list[str]], np.ndarray],
        dense_key: str,
    ) -> None:
        self.n_pages = n_pages
        self.encode = encode
        structure = open_structure(collection, store)
        directory = collection / HEADINGS_DIR
        fix = f"rebuild them with `nclue structure {collection}`"
        manifest = read_json_record(directory / HEADINGS_MANIFEST)
        if manifest is None:
            raise NclueError(
                f"{collection}: no heading vectors ({directory}); build them with `nclue structure {collection}`"
            )
        if manifest.get("structure_sha256") != sha256_file(collection / STRUCTURE_FILE):
            raise NclueError(f"{directory}: stale — structure.parquet changed since the headings were embedded; {fix}")
        if manifest.get("dense") != dense_key:
            raise NclueError(
                f"{directory}: embedded with dense index {manifest.get('dense')!r}, the collection's is {dense_key!r}; {fix}"
            )
        check(directory, manifest.get("files") or {}, fix)
        vectors = np.load(directory / HEADINGS_FILE)
        index = {t: i for i, t in enumerate(manifest["titles"])}
        level = structure.levels.astype(np.float32)
        level = np.where(level >= 1, level, UNKNOWN_LEVEL)
        order = np.lexsort((np.arange(len(structure.head_row)), structure.head_row))
        rows = structure.head_row[order]
        self._title = np.fromiter((index[structure.titles[i]] for i in order.tolist()), np.int64, len(order))
        self._inv_level = (1.0 / level[order]).astype(np.float32)
        self._vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self._starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]]) if len(rows) else np.zeros(0, np.int64)
        self._pages = rows[self._starts] if len(rows) else rows
        self.role = (structure.role != "").astype(np.float32)
        self._cache: OrderedDict[str, tuple[np.ndarray, np.ndarray]] = OrderedDict()

    def clear_cache(self) -> None:
        """Forget the cached rows."""
        self._cache.clear()

    def scores(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(head, head_level)``, each ``(len(texts), n_pages)`` float32."""
        texts = list(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        for start in range(0, len(missing), CACHE_TEXTS // 2):
            chunk = missing[start : start + CACHE_TEXTS // 2]
            head = np.zeros((len(chunk), self.n_pages), np.float32)
            head_level = np.zeros((len(chunk), self.n_pages), np.float32)
            if len(self._starts):
                sims = row_products(np.asarray(self.encode(chunk), np.float32), self._vectors)[:, self._title]
                head[:, self._pages] = np.maximum(np.maximum.reduceat(sims, self._starts, axis=1), 0.0)
                scaled = np.maximum.reduceat(sims * self._inv_level, self._starts, axis=1)
                head_level[:, self._pages] = np.maximum(scaled, 0.0)
            for i, text in enumerate(chunk):
                self._cache[text] = (head[i], head_level[i])
                if len(self._cache) > CACHE_TEXTS:
                    self._cache.popitem(last=False)
        rows = []
        for text in texts:
            if text not in self._cache:  # evicted by a batch larger than the cache
                return self._uncached(texts)
            self._cache.move_to_end(text)
            rows.append(self._cache[text])
        if not rows:
            empty = np.zeros((0, self.n_pages), np.float32)
            return empty, empty
        return np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows])

    def _uncached(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        heads, levels = [], []
        for start in range(0, len(texts), CACHE_TEXTS // 2):
            head, level = self.scores(texts[start : start + CACHE_TEXTS // 2])
            heads.append(head)
            levels.append(level)
        return np.concatenate(heads), np.concatenate(levels)
