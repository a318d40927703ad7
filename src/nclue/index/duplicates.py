"""Near-duplicate documents: word-shingle resemblance between every pair of documents.

Resemblance (Broder, *On the resemblance and containment of documents*, 1997) of documents a
and b is ``r(a, b) = |S(a) ∩ S(b)| / |S(a) ∪ S(b)|``, where ``S(x)`` is the set of x's
:data:`SHINGLE`-term shingles: runs of consecutive analysed terms (the lexical index's term
sequence of each page, pages joined in order — stemmed, stop words out), each hashed to 64 bits.
The values are exact, not MinHash estimates: a sparse document × shingle incidence matrix ``A``
gives every intersection at once as ``A·Aᵀ``. Why our own code: the peers (datasketch, text-dedup)
estimate with MinHash, whose error at the threshold (``r ≈ 0.1``, standard error ≈ 0.03 with
128 permutations) is as large as the gap being tested; the exact product costs 0.7 s for the
487 demo documents.

Pairs with ``r ≥`` :data:`STORED_MIN` go to ``COLLECTION/index/duplicates/pairs.npz`` with a
manifest naming the pages fingerprint and the lexical index they follow; ``nclue index --all``
builds it and :func:`open_duplicates` builds it on first use. :meth:`DuplicatePairs.groups`
gives near-duplicate groups among any set of documents: single-linkage components of the pairs
with ``r ≥ threshold`` (default :data:`RESEMBLANCE_THRESHOLD`).

The default threshold 0.10 was read off the demo collection's distribution of the 118,341
pairs (``docs/coverage.md#near-duplicates``): 99.9% of random pairs are below 0.015; the
successive versions of one manual (ledmac, eledmac, reledmac: 0.11–0.18; ledpar, eledpar,
reledpar: 0.08–0.14), translations and example variants are above 0.10.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from nclue.errors import NclueError
from nclue.index.integrity import check, record_files
from nclue.io import atomic_write_bytes, exclusive_lock, read_json_object, write_json

SHINGLE = 5
STORED_MIN = 0.05
RESEMBLANCE_THRESHOLD = 0.10
DUPLICATES_DIR = Path("index") / "duplicates"
PAIRS_FILE = "pairs.npz"
MANIFEST_FILE = "manifest.json"
FORMAT = 1
_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)


def shingle_hashes(terms: np.ndarray, size: int = SHINGLE) -> np.ndarray:
    """Sorted unique 64-bit hashes of every run of ``size`` consecutive term IDs (a document
    shorter than ``size`` terms has one shingle: all its terms; an empty one has none)."""
    seq = np.asarray(terms, dtype=np.uint64)
    if seq.size == 0:
        return np.zeros(0, dtype=np.uint64)
    width = min(size, seq.size)
    count = seq.size - width + 1
    h = np.zeros(count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(width):
            h = (h ^ (seq[j : j + count] + np.uint64(1))) * _MULTIPLIER
    return np.unique(h)


def resemblance_pairs(
    shingles: Sequence[np.ndarray], min_resemblance: float = STORED_MIN
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(i, j, r)`` for every pair ``i < j`` with resemblance ``r ≥ min_resemblance`` (exact)."""
    import scipy.sparse as sp

    n = len(shingles)
    sizes = np.array([s.size for s in shingles], dtype=np.float64)
    if n < 2 or sizes.sum() == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0)
    rows = np.repeat(np.arange(n), sizes.astype(np.int64))
    _, columns = np.unique(np.concatenate(shingles), return_inverse=True)
    incidence = sp.csr_matrix((np.ones(columns.size, dtype=np.float32), (rows, columns)), shape=(n, columns.max() + 1))
    shared = sp.triu(incidence @ incidence.T, k=1).tocoo()
    i, j, inter = shared.row.astype(np.int64), shared.col.astype(np.int64), shared.data.astype(np.float64)
    r = inter / (sizes[i] + sizes[j] - inter)
    keep = r >= min_resemblance
    order = np.lexsort((j[keep], i[keep]))
    return i[keep][order], j[keep][order], r[keep][order]


def components(n: int, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Single-linkage group label of each of ``n`` items (the smallest member position)."""
    parent = np.arange(n)

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = int(parent[x])
        return x

    for a, b in zip(i.tolist(), j.tolist(), strict=True):
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return np.array([root(x) for x in range(n)], dtype=np.int64)


@dataclass(frozen=True)
class DuplicatePairs:
    """Stored resemblance pairs of a collection's documents (``doc_ids`` in store order)."""

    doc_ids: tuple[str, ...]
    i: np.ndarray
    j: np.ndarray
    resemblance: np.ndarray

    @cached_property
    def position(self) -> dict[str, int]:
        """``doc_id`` → its position in :attr:`doc_ids`."""
        return {d: k for k, d in enumerate(self.doc_ids)}

    def groups(self, ids: Sequence[str], threshold: float = RESEMBLANCE_THRESHOLD) -> np.ndarray:
        """Near-duplicate group of each of ``ids`` (positions in ``ids``; single linkage over the
        pairs among ``ids`` with resemblance ≥ ``threshold``); a document alone is its own group."""
        if threshold < STORED_MIN:
            raise NclueError(f"near-duplicate threshold {threshold} is below the stored minimum {STORED_MIN}")
        index = self.position
        wanted = np.full(len(self.doc_ids), -1, dtype=np.int64)
        for p, d in enumerate(ids):
            if d in index:
                wanted[index[d]] = p
        keep = (self.resemblance >= threshold) & (wanted[self.i] >= 0) & (wanted[self.j] >= 0)
        return components(len(ids), wanted[self.i[keep]], wanted[self.j[keep]])

    def resemblance_of(self, a: str, b: str) -> float:
        """Stored resemblance of two documents (0 when below :data:`STORED_MIN`)."""
        x, y = sorted((self.position[a], self.position[b]))
        hit = np.nonzero((self.i == x) & (self.j == y))[0]
        return float(self.resemblance[hit[0]]) if hit.size else 0.0


def text_shingles(texts: Sequence[str]) -> list[np.ndarray]:
    """Shingle hashes of plain texts, analysed as the lexical index analyses pages."""
    from nclue.index.lexical import Analyzer

    analyzer, vocab = Analyzer(), {}
    return [
        shingle_hashes(np.array([vocab.setdefault(t, len(vocab)) for t in analyzer.terms(text)], dtype=np.int64))
        for text in texts
    ]


def text_duplicates(texts: dict[str, str]) -> DuplicatePairs:
    """Resemblance pairs of plain texts (``doc_id → text``)."""
    ids = tuple(texts)
    i, j, r = resemblance_pairs(text_shingles([texts[d] for d in ids]))
    return DuplicatePairs(ids, i, j, r)


def _stamp(collection: Path) -> dict:
    from nclue.corpus.store import pages_fingerprint

    return {
        "format": FORMAT,
        "pages_sha256": pages_fingerprint(collection),
        "shingle": SHINGLE,
        "stored_min": STORED_MIN,
    }


def build_duplicates(collection: str | os.PathLike[str], rebuild: bool = False) -> Path:
    """Write ``COLLECTION/index/duplicates/`` from the lexical index's term sequences (kept when current)."""
    from nclue.corpus.store import PageStore
    from nclue.index.lexical import LexicalIndex, index_exists

    base = Path(collection)
    out = base / DUPLICATES_DIR
    out.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(out, "near-duplicate pairs"):
        if not rebuild and duplicates_current(base):
            return out
        store = PageStore.open(base)
        bounds = store.doc_offsets
        if index_exists(base):
            lexical = LexicalIndex(base, store)
            offsets = lexical.term_offsets
            shingles = [
                shingle_hashes(lexical.terms[offsets[bounds[d]] : offsets[bounds[d + 1]]])
                for d in range(len(store.doc_ids))
            ]
        else:  # no lexical index yet: analyse the page texts the way it would
            texts = store.texts
            shingles = text_shingles(["\n".join(texts[bounds[d] : bounds[d + 1]]) for d in range(len(store.doc_ids))])
        i, j, r = resemblance_pairs(shingles)
        buffer = io.BytesIO()
        np.savez(buffer, doc_ids=np.array([str(d) for d in store.doc_ids], dtype=str), i=i, j=j, resemblance=r)
        atomic_write_bytes(out / PAIRS_FILE, buffer.getvalue())
        write_json(
            out / MANIFEST_FILE, {**_stamp(base), "pairs": int(i.size), "files": record_files(out, [PAIRS_FILE])}
        )
    return out


def duplicates_current(collection: str | os.PathLike[str]) -> bool:
    """Whether the stored pairs follow the collection's current pages."""
    import json

    base = Path(collection)
    try:
        manifest = json.loads((base / DUPLICATES_DIR / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return {k: manifest.get(k) for k in _stamp(base)} == _stamp(base) and (base / DUPLICATES_DIR / PAIRS_FILE).is_file()


def open_duplicates(collection: str | os.PathLike[str]) -> DuplicatePairs:
    """The collection's near-duplicate pairs, built first when missing or stale."""

    base = Path(collection)
    if not duplicates_current(base):
        build_duplicates(base)
    out = base / DUPLICATES_DIR
    manifest = read_json_object(out / MANIFEST_FILE, f"rebuild it with `nclue index {base} --all`")
    check(out, manifest["files"], f"rebuild it with `nclue index {base} --all`")
    with np.load(out / PAIRS_FILE, allow_pickle=False) as data:
        return DuplicatePairs(tuple(data["doc_ids"].tolist()), data["i"], data["j"], data["resemblance"])
