"""Document-level BM25 at parameters other than the index's, from its token stream (for tuning).

The stored ``docs/`` weights of :mod:`nclue.index.lexical` fix ``k1``, ``b`` and the variant at
index time. Tuning them (``bm25.and_tuned``, :mod:`nclue.systems.tuning`) needs them free, so
:class:`DocTermCounts` rebuilds the raw document × term counts once from ``terms.npy`` and
``term_offsets.npy`` — the counts the index builder weighted — and weights only the query's
columns at query time:

``score(d, q) = Σ_{t ∈ q} idf(t) · (tfc(tf_{d,t}, |d|) − tfc₀) + Σ_{t ∈ q} idf(t) · tfc₀``

with ``tfc``/``idf`` of :mod:`nclue.index.bm25_weights` over document frequencies of the
document view, ``tfc₀`` the factor of an absent term at average length (non-zero for BM25L and
BM25+ only), repeats of a query term counted as often as they occur (as in the index). At the
index's own parameters the scores equal :meth:`LexicalIndex.doc_scores` (tested); rebuilding the
index per grid point would cost a full analysis pass each time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nclue.index.bm25_weights import inverse_document_frequency, term_frequency_factor
from nclue.index.lexical import LexicalIndex
from nclue.index.options import BM25Params


class DocTermCounts:
    """Raw term counts per document of a lexical index, weighted on demand with any :class:`BM25Params`."""

    def __init__(self, index: LexicalIndex, page_doc: np.ndarray, n_docs: int) -> None:
        import scipy.sparse as sp

        self.index = index
        offsets = np.asarray(index.term_offsets, dtype=np.int64)
        terms = np.asarray(index.terms, dtype=np.int32)
        page_of_token = np.repeat(np.arange(len(offsets) - 1, dtype=np.int32), np.diff(offsets))
        doc_of_token = np.asarray(page_doc, dtype=np.int32)[page_of_token]
        n_terms = len(index.vocab)
        counts = sp.csc_matrix((np.ones(len(terms), dtype=np.float32), (doc_of_token, terms)), shape=(n_docs, n_terms))
        counts.sum_duplicates()
        counts.sort_indices()
        self.counts = counts
        self.lengths = np.bincount(doc_of_token, minlength=n_docs).astype(np.float64)
        self.n_docs = n_docs
        self.df = np.diff(counts.indptr)

    def scores(self, texts: Sequence[str], params: BM25Params) -> np.ndarray:
        """``(len(texts), n_docs)`` document-level BM25 of each text at ``params``."""
        lengths = self.lengths
        avg = float(lengths.mean()) if self.n_docs and lengths.mean() > 0 else 1.0
        p = params
        zero = float(term_frequency_factor(p.method, np.zeros(1), np.full(1, avg), avg, p.k1, p.b, p.delta)[0])
        out = np.zeros((len(texts), self.n_docs), dtype=np.float64)
        indptr, indices, data = self.counts.indptr, self.counts.indices, self.counts.data
        for row, text in enumerate(texts):
            ids = self.index.analyse(text)[1]
            if not len(ids):
                continue
            unique, repeats = np.unique(ids, return_counts=True)
            idf = inverse_document_frequency(p.method, self.df[unique], self.n_docs)
            for t, w, r in zip(unique.tolist(), idf.tolist(), repeats.tolist()):
                lo, hi = indptr[t], indptr[t + 1]
                docs = indices[lo:hi]
                tfc = term_frequency_factor(
                    p.method, data[lo:hi].astype(np.float64), lengths[docs], avg, p.k1, p.b, p.delta
                )
                out[row, docs] += r * w * (tfc - zero)
            if zero:
                out[row] += float((repeats * idf).sum()) * zero
        return out.astype(np.float32)
