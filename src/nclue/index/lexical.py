"""The lexical (BM25) page index and its document-level view, stored in bm25s format.

Layout inside a collection (``docs/formats.md``)::

    COLLECTION/index/lexical/
      nclue.json     parameters, analyser, page/doc counts and the pages.parquet fingerprint
      pages/         bm25s index over page rows (PageStore order)
      docs/          bm25s index over documents (each document's pages concatenated)
      terms.npy      int32 term id of every kept token, page after page (for phrase matching)
      term_offsets.npy  int64 CSR offsets: page row j's tokens are terms[off[j]:off[j+1]]

Both are ordinary ``bm25s.BM25.save`` directories, loaded with ``mmap=True``.

Analysis matches ``bm25s.tokenize``: lower-case, token pattern ``(?u)\\b\\w\\w+\\b``, the
bm25s English stop list, PyStemmer's English (Porter 2) stemmer. We tokenise and weight
ourselves, with NumPy over the whole corpus at once, for two reasons: ``bm25s.tokenize``
numbers its vocabulary in ``set`` order, which changes with ``PYTHONHASHSEED`` (our vocab
is sorted, so the index files are deterministic), and the document-level view is the
sum of page term counts, which we get from one sparse reduction instead of tokenising
every page twice. Term weights are :mod:`nclue.index.bm25_weights`' (every bm25s variant —
``lucene``, ``robertson``, ``atire``, ``bm25l``, ``bm25+`` — written from Kamphuis et al. and
checked against bare bm25s, without its private scorer functions).

BM25 weight of term ``t`` in unit ``u`` (lucene): ``idf(t) · tf / (tf + k1·(1 − b + b·|u|/avg|u|))``,
``idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))`` (Kamphuis et al., ECIR 2020).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from nclue.corpus.store import PageStore, pages_fingerprint
from nclue.engine import Engine
from nclue.errors import NclueError
from nclue.index.bm25_weights import inverse_document_frequency, saturation_limit, term_frequency_factor
from nclue.index.integrity import check, files_under, problems, record_files
from nclue.index.options import BM25Params
from nclue.io import atomic_write_text, exclusive_lock, fsync_dir, writable_dir

if TYPE_CHECKING:
    import scipy.sparse as sp

INDEX_DIR = Path("index") / "lexical"
META_FILE = "nclue.json"
FORMAT_VERSION = 3
SHARD_PAGES = 20_000
_TOKEN_PATTERN = re.compile(r"(?u)\b\w\w+\b")


class Analyzer:
    """bm25s-compatible analysis: lower-case, ``\\w\\w+`` tokens, English stop list, Porter 2 stems."""

    def __init__(self) -> None:
        import Stemmer

        load_bm25s()
        from bm25s.stopwords import STOPWORDS_EN

        self.stopwords = frozenset(STOPWORDS_EN)
        self._stemmer = Stemmer.Stemmer("english")
        self._cache: dict[str, str] = {}

    def stems(self, words: list[str]) -> list[str]:
        """Stem a list of (lower-case) words."""
        return self._stemmer.stemWords(words)

    def terms(self, text: str) -> list[str]:
        """The stemmed, stopword-free terms of ``text`` in order (repeats kept)."""
        out: list[str] = []
        cache = self._cache
        for token in _TOKEN_PATTERN.findall(text.lower()):
            if token in self.stopwords:
                continue
            stem = cache.get(token)
            if stem is None:
                stem = cache[token] = self._stemmer.stemWord(token)
            out.append(stem)
        return out

    def corpus(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """Analyse a whole corpus at once.

        Returns ``(term_ids, unit_lengths, vocab)``: the term id of every kept token in
        corpus order (int32), the number of kept tokens per text, and the sorted vocabulary.
        """
        split = _TOKEN_PATTERN.findall
        tokens = [split(t.lower()) for t in texts]
        counts = np.fromiter((len(t) for t in tokens), dtype=np.int64, count=len(tokens))
        flat = [tok for toks in tokens for tok in toks]
        first_seen = list(dict.fromkeys(flat))
        position = {tok: i for i, tok in enumerate(first_seen)}
        token_ids = np.fromiter(map(position.__getitem__, flat), dtype=np.int32, count=len(flat))
        stems = self.stems(first_seen)
        vocab = sorted(set(s for s, tok in zip(stems, first_seen) if tok not in self.stopwords))
        stem_index = {s: i for i, s in enumerate(vocab)}
        lookup = np.fromiter(
            (-1 if tok in self.stopwords else stem_index[s] for tok, s in zip(first_seen, stems)),
            dtype=np.int32,
            count=len(first_seen),
        )
        term_ids = lookup[token_ids]
        keep = term_ids >= 0
        unit = np.repeat(np.arange(len(texts), dtype=np.int32), counts)
        lengths = np.bincount(unit[keep], minlength=len(texts)).astype(np.int64)
        return term_ids[keep], lengths, vocab


def analyse_texts(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """:meth:`Analyzer.corpus` of one shard of page texts (a module-level function: engines ship it)."""
    return Analyzer().corpus(texts)


def analyse_sharded(texts: Sequence[str], engine: Engine, shard_pages: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """:meth:`Analyzer.corpus` of the whole corpus, computed shard by shard on ``engine``.

    Each shard is analysed against its own sorted vocabulary; the global vocabulary is the sorted
    union, and each shard's term ids are mapped into it — so the term ids, lengths and vocabulary
    (hence every document frequency, the average length and every BM25 weight) are exactly those
    of one unsharded pass.
    """
    bounds = list(range(0, len(texts), shard_pages)) or [0]
    parts: list = [None] * len(bounds)
    for position, result in engine.imap(analyse_texts, ((list(texts[b : b + shard_pages]),) for b in bounds)):
        parts[position] = result
    vocab = sorted(set().union(*(set(v) for _, _, v in parts)))
    index = np.array(vocab, dtype=object)
    ids = [np.searchsorted(index, np.array(v, dtype=object))[t].astype(np.int32) for t, _, v in parts]
    lengths = [lens for _, lens, _ in parts]
    return np.concatenate(ids), np.concatenate(lengths), vocab


def _bm25_matrix(tf: sp.csr_matrix, lengths: np.ndarray, params: BM25Params) -> tuple[sp.csc_matrix, np.ndarray | None]:
    """BM25 weights (units × terms, CSC) from raw term counts, with bm25s's scorers."""
    import scipy.sparse as sp

    n_units = tf.shape[0]
    p = params
    csc = tf.tocsc()
    csc.sort_indices()
    df = np.diff(csc.indptr)
    idf = inverse_document_frequency(p.method, df, n_units)
    avg = float(lengths.mean()) if n_units and lengths.mean() > 0 else 1.0
    rows = csc.indices
    term_of_entry = np.repeat(np.arange(csc.shape[1]), df)
    tfc = term_frequency_factor(p.method, csc.data, lengths[rows], avg, p.k1, p.b, p.delta)
    nonoccurrence = None
    if params.method in ("bm25l", "bm25+"):
        zero = float(term_frequency_factor(p.method, np.zeros(1), np.full(1, avg), avg, p.k1, p.b, p.delta)[0])
        nonoccurrence = (idf * zero).astype(np.float32)
        tfc = tfc - zero
    weights = (idf[term_of_entry] * tfc).astype(np.float32)
    matrix = sp.csc_matrix((weights, rows.astype(np.int32), csc.indptr.astype(np.int32)), shape=csc.shape)
    return matrix, nonoccurrence


def _save_bm25s(
    path: Path, matrix: sp.csc_matrix, nonoccurrence: np.ndarray | None, vocab: list[str], params: BM25Params
) -> None:
    bm25s = load_bm25s()

    model = bm25s.BM25(k1=params.k1, b=params.b, delta=params.delta, method=params.method)
    model.scores = {
        "data": matrix.data,
        "indices": matrix.indices,
        "indptr": matrix.indptr,
        "num_docs": int(matrix.shape[0]),
    }
    model.vocab_dict = {term: i for i, term in enumerate(vocab)}
    model.nonoccurrence_array = nonoccurrence
    model.save(str(path), show_progress=False)


def build_lexical_index(
    collection_dir: str | os.PathLike[str],
    params: BM25Params = BM25Params(),
    store: PageStore | None = None,
    engine: Engine | None = None,
    shard_pages: int = SHARD_PAGES,
) -> Path:
    """Build the BM25 page index and document view of a collection; return the index directory.

    The directory is written next to its final place and renamed over it, so an
    interrupted build leaves the previous index (or none), never a torn one. With an
    ``engine`` (:mod:`nclue.engine`), the analysis runs in shards of ``shard_pages`` pages on it
    (:func:`analyse_sharded`); the index is byte-identical to a single-process build.
    """
    base = Path(collection_dir)
    store = store if store is not None else PageStore.open(base)
    writable_dir(base / INDEX_DIR.parent, "index")
    with exclusive_lock(base, "collection"):
        return _build(base, params, store, engine, shard_pages)


def _build(base: Path, params: BM25Params, store: PageStore, engine: Engine | None, shard_pages: int) -> Path:
    """:func:`build_lexical_index` while holding the collection's lock."""
    import scipy.sparse as sp

    for leftover in (base / INDEX_DIR.parent).glob(".lexical.*"):  # staging of a killed build
        shutil.rmtree(leftover, ignore_errors=True)
    if engine is None:
        term_ids, lengths, vocab = Analyzer().corpus(store.texts)
    else:
        term_ids, lengths, vocab = analyse_sharded(store.texts, engine, shard_pages)
    vocab = vocab + [""]  # bm25s convention: an empty token scores nothing
    n_terms = len(vocab)
    unit = np.repeat(np.arange(store.n_pages, dtype=np.int32), lengths)
    page_tf = sp.csr_matrix(
        (np.ones(len(term_ids), dtype=np.float32), (unit, term_ids)), shape=(store.n_pages, n_terms)
    )
    page_tf.sum_duplicates()
    n_docs = len(store.doc_ids)
    doc_rows = sp.csr_matrix(
        (np.ones(store.n_pages, dtype=np.float32), (store.page_doc, np.arange(store.n_pages))),
        shape=(n_docs, store.n_pages),
    )
    doc_tf = (doc_rows @ page_tf).tocsr()
    doc_lengths = np.bincount(store.page_doc, weights=lengths, minlength=n_docs).astype(np.int64)

    target = base / INDEX_DIR
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".lexical.", dir=target.parent))
    try:
        for name, tf, lens in (("pages", page_tf, lengths), ("docs", doc_tf, doc_lengths)):
            matrix, nonocc = _bm25_matrix(tf, lens, params)
            _save_bm25s(staging / name, matrix, nonocc, vocab, params)
        np.save(staging / "terms.npy", term_ids.astype(np.int32, copy=False))
        term_offsets = np.zeros(store.n_pages + 1, np.int64)
        np.cumsum(lengths, out=term_offsets[1:])
        np.save(staging / "term_offsets.npy", term_offsets)
        meta = {
            "format": FORMAT_VERSION,
            "params": asdict(params),
            "analyzer": {
                "token_pattern": _TOKEN_PATTERN.pattern,
                "stopwords": "bm25s.stopwords.STOPWORDS_EN",
                "stemmer": "PyStemmer english",
            },
            "n_pages": store.n_pages,
            "n_docs": n_docs,
            "n_terms": n_terms,
            "pages_sha256": store.fingerprint,
            "files": record_files(staging, files_under(staging)),
        }
        atomic_write_text(staging / META_FILE, json.dumps(meta, sort_keys=True, indent=2) + "\n")
        old = None
        if target.exists():
            old = target.with_name(f".lexical.old.{os.getpid()}")
            os.replace(target, old)
        os.replace(staging, target)
        fsync_dir(target.parent)
        if old is not None:
            shutil.rmtree(old)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def load_bm25s() -> ModuleType:
    """``bm25s``, imported without numba, scipy.sparse or tqdm.

    bm25s imports numba (when installed: ranx needs it) for its own ``retrieve``, and scipy.sparse
    for its own score matrices; that costs 0.3 s of every cold start, a quarter of a one-shot
    ``nclue coverage select``. nclue never calls ``retrieve``: page and document scores are read
    from the loaded arrays, and the index is built with scipy imported where it is needed. Its
    modules also import ``tqdm.auto`` for their own progress bars, which pulls in asyncio (0.15 s);
    nclue draws its own bars and calls bm25s with ``show_progress=False``, and every one of those
    imports falls back to a no-op bar on ``ImportError``. So the modules that are not loaded yet
    are hidden while bm25s is first imported; they stay importable afterwards, and ranx, the
    builders and everything else get them as usual.
    """
    if "bm25s" in sys.modules:
        return sys.modules["bm25s"]
    hidden = [name for name in ("numba", "scipy.sparse", "tqdm") if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment] - makes the import raise ImportError
    try:
        import bm25s
    finally:
        for name in hidden:
            del sys.modules[name]
    return bm25s


def checked_meta(collection_dir: str | os.PathLike[str], store: PageStore | None = None) -> dict:
    """The lexical index's ``meta.json`` once it is present, of this format, fresh for the pages
    and its files intact (sizes and samples); an :class:`NclueError` naming the fix otherwise."""
    base = Path(collection_dir)
    root = base / INDEX_DIR
    rebuild = f"rebuild it with `nclue index {base} --lexical`"
    if not (root / META_FILE).is_file():
        raise NclueError(f"{base}: no lexical index; build it with `nclue index {base} --lexical`")
    try:
        meta = json.loads((root / META_FILE).read_text(encoding="utf-8"))
        meta["params"], meta["files"]  # noqa: B018 - the keys every load needs
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise NclueError(f"{root / META_FILE}: damaged ({type(exc).__name__}: {exc}); {rebuild}") from None
    if meta.get("format") != FORMAT_VERSION:
        raise NclueError(f"{root}: index format {meta.get('format')} is not {FORMAT_VERSION}; {rebuild}")
    fingerprint = store.fingerprint if store is not None else pages_fingerprint(base)
    if meta.get("pages_sha256") != fingerprint:
        raise NclueError(
            f"{root}: index is stale (built from a different pages.parquet: {meta.get('n_pages')} pages "
            f"indexed); {rebuild}"
        )
    check(root, meta["files"], rebuild)
    return meta


class LexicalIndex:
    """A loaded (memory-mapped) lexical index: page scores, document scores, term containment."""

    def __init__(self, collection_dir: str | os.PathLike[str], store: PageStore | None = None) -> None:
        bm25s = load_bm25s()
        base = Path(collection_dir)
        root = base / INDEX_DIR
        rebuild = f"rebuild it with `nclue index {base} --lexical`"
        self.meta = checked_meta(base, store)
        self.params = BM25Params(**self.meta["params"])
        try:
            self.pages = bm25s.BM25.load(str(root / "pages"), mmap=True, show_progress=False)
            self.docs = bm25s.BM25.load(str(root / "docs"), mmap=True, show_progress=False)
            self.terms = np.load(root / "terms.npy", mmap_mode="r").view(np.ndarray)
            self.term_offsets = np.load(root / "term_offsets.npy", mmap_mode="r").view(np.ndarray)
        except (OSError, ValueError, EOFError, KeyError) as exc:
            raise NclueError(f"{root}: cannot load the index ({type(exc).__name__}: {exc}); {rebuild}") from None
        for model in (self.pages, self.docs):
            # plain ndarray views of the memory maps: slicing a np.memmap subclass costs a
            # Python-level __array_finalize__ per slice on the query path
            for key in ("data", "indices", "indptr"):
                model.scores[key] = model.scores[key].view(np.ndarray)
        self.vocab: dict[str, int] = self.pages.vocab_dict
        self.analyzer = Analyzer()

    def analyse(self, text: str) -> tuple[list[str], np.ndarray]:
        """``(terms, ids)``: the analysed terms of ``text`` and the ids of those in the vocabulary
        (order kept, repeats kept, out-of-vocabulary terms dropped)."""
        terms = self.analyzer.terms(text)
        ids = np.fromiter((self.vocab[t] for t in terms if t in self.vocab), dtype=np.int32)
        return terms, ids

    def known_term(self, word: str) -> str | None:
        """The analysed term of one ``word`` when the vocabulary holds it; ``None`` for a stopword,
        a word the analyser splits, or a term no page uses."""
        terms = self.analyzer.terms(word)
        return terms[0] if len(terms) == 1 and terms[0] in self.vocab else None

    @staticmethod
    def _score_matrix(model, id_lists: list[np.ndarray]) -> np.ndarray:
        """``(len(id_lists), n_units)``: summed precomputed BM25 weights of each id list.

        One ``np.bincount`` over the concatenated postings of every text (row ``i``'s
        units offset by ``i · n_units``) instead of bm25s's per-token ``np.add.at``.
        """
        n = int(model.scores["num_docs"])
        indptr, indices, data = model.scores["indptr"], model.scores["indices"], model.scores["data"]
        parts_i, parts_w = [], []
        for row, ids in enumerate(id_lists):
            for t in ids.tolist():
                lo, hi = int(indptr[t]), int(indptr[t + 1])
                parts_i.append(indices[lo:hi] + row * n if row else indices[lo:hi])
                parts_w.append(data[lo:hi])
        if parts_i:
            flat = np.bincount(np.concatenate(parts_i), weights=np.concatenate(parts_w), minlength=n * len(id_lists))
        else:
            flat = np.zeros(n * len(id_lists))
        scores = flat.reshape(len(id_lists), n).astype(np.float32)
        if model.nonoccurrence_array is not None:
            scores += np.array([model.nonoccurrence_array[ids].sum() for ids in id_lists], np.float32)[:, None]
        return scores

    def page_scores(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), n_pages)`` BM25 scores of each text against every page row."""
        return self._score_matrix(self.pages, [self.analyse(t)[1] for t in texts])

    def page_upper_bounds(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts),)``: the largest page BM25 score each text could reach,
        ``T · Σ_t idf(t)`` over its analysed terms (repeats kept, as in scoring).

        ``T`` is the limit of the index variant's own term-frequency factor as ``tf → ∞``, read
        from bm25s's scorer: 1 for ``lucene`` and ``robertson`` (bm25s drops Lucene's constant
        ``k1 + 1``), ``k1 + 1 + δ`` for BM25+. ``idf`` is the variant's own, over page document
        frequencies. The bound depends on the collection only through ``idf``. The collection's
        best page for the text does not enter, as it would in a max-normalisation."""
        indptr = self.pages.scores["indptr"]
        n = int(self.pages.scores["num_docs"])
        p = self.params
        limit = saturation_limit(p.method, p.k1, p.delta)
        bounds = []
        for text in texts:
            ids = np.asarray(self.analyse(text)[1], dtype=np.int64)
            df = indptr[ids + 1].astype(np.int64) - indptr[ids]
            bounds.append(limit * float(inverse_document_frequency(p.method, df, n).sum()))
        return np.array(bounds, dtype=np.float64)

    def doc_scores(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), n_docs)`` BM25 scores against the document-level view."""
        return self._score_matrix(self.docs, [self.analyse(t)[1] for t in texts])

    @staticmethod
    def _contains_all(model, terms: list[str], ids: np.ndarray) -> np.ndarray:
        n = model.scores["num_docs"]
        unique = np.unique(ids)
        if not terms or len(unique) < len(set(terms)):
            return np.zeros(n, dtype=bool)
        indptr, indices = model.scores["indptr"], model.scores["indices"]
        postings = np.concatenate([indices[indptr[t] : indptr[t + 1]] for t in unique])
        return np.bincount(postings, minlength=n) == len(unique)

    def page_matches(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), n_pages)`` bool: the page contains every analysed term of the text."""
        rows = [self._contains_all(self.pages, *self.analyse(t)) for t in texts]
        return np.stack(rows) if rows else np.zeros((0, self.meta["n_pages"]), bool)

    def _phrase(self, terms: list[str], ids: np.ndarray) -> np.ndarray:
        contains = self._contains_all(self.pages, terms, ids)
        if len(ids) <= 1 or not contains.any():
            return contains
        cand = np.flatnonzero(contains)
        starts, ends = self.term_offsets[cand], self.term_offsets[cand + 1]
        lengths = ends - starts
        # every token position of the candidate pages, page by page
        positions = np.repeat(starts - np.cumsum(np.r_[0, lengths[:-1]]), lengths) + np.arange(lengths.sum())
        seq = self.terms[positions]
        page_of = np.repeat(cand, lengths)
        m = len(ids)
        span = len(seq) - m + 1
        if span <= 0:
            return np.zeros_like(contains)
        ok = page_of[:span] == page_of[m - 1 :]
        for j, term in enumerate(ids.tolist()):
            ok &= seq[j : j + span] == term
        out = np.zeros_like(contains)
        out[page_of[:span][ok]] = True
        return out

    def page_phrase_matches(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), n_pages)`` bool: the page contains the text's analysed terms as a
        contiguous phrase (stopwords removed on both sides, stems compared)."""
        rows = [self._phrase(*self.analyse(t)) for t in texts]
        return np.stack(rows) if rows else np.zeros((0, self.meta["n_pages"]), bool)

    def doc_matches(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), n_docs)`` bool: the document contains every analysed term of the text."""
        rows = [self._contains_all(self.docs, *self.analyse(t)) for t in texts]
        return np.stack(rows) if rows else np.zeros((0, self.meta["n_docs"]), bool)


def index_exists(collection_dir: str | os.PathLike[str]) -> bool:
    """Whether ``collection_dir`` has a lexical index."""
    return (Path(collection_dir) / INDEX_DIR / META_FILE).is_file()


def index_present(collection_dir: str | os.PathLike[str]) -> bool:
    """Whether ``collection_dir`` has a lexical index folder, complete or not (a build only ever
    renames a finished one into place, so one without ``nclue.json`` is damaged)."""
    return (Path(collection_dir) / INDEX_DIR).exists()


def verify_lexical_index(collection_dir: str | os.PathLike[str]) -> list[str]:
    """Full check of the lexical index: its ``nclue.json``, every file's SHA-256 against the build's,
    and freshness. Returns one line per problem (empty when the index is intact)."""
    base = Path(collection_dir)
    meta = base / INDEX_DIR / META_FILE
    if not meta.is_file():
        return [
            f"{meta}: missing (the record of the index's settings and file hashes); "
            f"rebuild it with `nclue index {base} --lexical`"
        ]
    try:
        index = LexicalIndex(base)
    except NclueError as exc:
        return [str(exc)]
    return problems(base / INDEX_DIR, index.meta["files"], full=True)
