"""Mine the page-fact inventory ``P0(d, c)``: candidate conditions and the pages that establish them.

This is the deterministic **offline judge** (``docs/construction.md#offline-judge``). Over the tokens of
:mod:`nclue.bench.text` every word n-gram (n = 1..3, not crossing a break, first and
last word a content word of ≥ 3 letters, an inner word either a content word or *of*)
is keyed by its S-stemmed, case-folded words, so case, hyphenation and inflection
variants share one key. An all-capitals acronym that the corpus pairs with an expansion
(``TeX Directory Structure (TDS)``: the initials of the words before the parenthesis
spell the acronym) is counted as an occurrence of the expansion.

**Establishes rule.** Page ``p`` establishes condition ``c`` iff, outside running
headers/footers and table-of-contents/index lines, at least one of

* (H) a heading line of ``p`` contains a surface form of ``c``;
* (R) surface forms of a multi-word ``c`` occur at least twice on ``p`` (a single word
  repeated twice is too often incidental — *stack*, *scale* — so single-word conditions
  are established only by H or D);
* (D) a defining sentence: ``c is/are a|an|the|used|defined|called …``,
  ``c refers to|means|denotes|stands for …``, or ``called|termed|named|known as c``.

A single passing mention establishes nothing.

**Candidate conditions** are keys that are established in at least ``min_df`` and at
most ``max_df`` documents ("rare-ish"), whose *topicality* — documents establishing the
key ÷ documents mentioning it at all — is at least ``min_topicality`` (a concept such as
*tensor notation* is discussed wherever it occurs; a generic word such as *purpose* or
*beginning* is mentioned in many documents and established in few), that contain no
document-structure word (:data:`STRUCTURAL`), whose last word is not a participle
(``-ed``), that occur in a heading of at least ``min_heading_df`` documents, and — for
single words — that end a heading (the head noun of a title) in ``min_heading_df``
documents, have at least ``min_single_len`` letters (short words here are mostly code:
*foo*, *cfg*, *inf*) and are neither Roman numerals nor adverbs (a lone body word is too
often generic). A phrase that never occurs in lower case and is not acronym-like (*John*, *Duncan Temple Lang*) is a name, not a concept, and is
dropped unless the corpus pairs it with an acronym. Each condition's canonical name is its
most frequent lower-case surface form (an acronym-like form such as *BibTeX* keeps its
case when it never appears in lower case); its aliases are all observed surface forms.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from nclue.bench.params import MineParams
from nclue.bench.text import (
    ENGLISH_STOPWORDS,
    FOREIGN_WORDS,
    STOPWORDS,
    PageTokens,
    s_stem,
    split_pages,
    tokenize_document,
)
from nclue.corpus.store import PageStore
from nclue.engine import Engine
from nclue.errors import NclueError

STRUCTURAL = frozenset(
    s_stem(w)
    for w in """abstract acknowledgement acknowledgment appendix argument author bug change changelog chapter
    command content contents copyright description detail document documentation example exercise figure
    file history implementation index installation introduction issue license licence manual mit note option
    overview package page part preface preliminary problem question readme reference remark section see
    source summary summarium table thank thanks todo usage user value version warning""".split()
)
_ACRONYM = re.compile(r"((?:[A-Za-z][A-Za-z]+[\s\-]+){1,5}[A-Za-z][A-Za-z]+)\s*\(([A-Z]{2,6})s?\)")
_ROMAN = re.compile(r"[ivxlc]+")
_DEF_AFTER_1 = frozenset({"refers", "means", "denotes", "stands"})
_DEF_IS = frozenset({"is", "are"})
_DEF_AFTER_2 = frozenset({"a", "an", "the", "used", "defined", "called"})
_DEF_BEFORE = frozenset({"called", "termed", "named"})


@dataclass
class Condition:
    """A mined condition: canonical name, aliases (surface forms) and normalised key words."""

    name: str
    aliases: tuple[str, ...]
    key: tuple[str, ...]
    acronyms: tuple[str, ...] = ()
    heading_df: int = 0
    mention_df: int = 0


@dataclass
class Inventory:
    """``P0``: for condition ``c`` and document index ``d``, ``pages[c][d]`` = sorted establishing pages.

    ``doc_ids`` and ``n_pages`` are indexed by document index.
    """

    doc_ids: list[str]
    n_pages: np.ndarray
    conditions: list[Condition]
    pages: list[dict[int, tuple[int, ...]]]
    params: MineParams = field(default_factory=MineParams)


@dataclass
class _Tokens:
    orig: np.ndarray  # int32 id into surface vocabulary
    brk: np.ndarray
    hyph: np.ndarray
    head: np.ndarray
    hend: np.ndarray
    row: np.ndarray  # int32 global page row


DOCS_PER_TASK = 16


def tokenize_documents(documents: list[list[str]]) -> list[list[PageTokens]]:
    """:func:`~nclue.bench.text.tokenize_document` of each document's page texts (shipped to engines)."""
    return [tokenize_document(split_pages(pages)) for pages in documents]


def _tokenized(store: PageStore, engine: Engine | None) -> Iterator[list[PageTokens]]:
    """Every document's page tokens, in document order (computed here or on ``engine``)."""
    texts, offsets = store.texts, store.doc_offsets
    documents = [texts[int(offsets[d]) : int(offsets[d + 1])] for d in range(len(store.doc_ids))]
    if engine is None:
        for pages in documents:
            yield tokenize_document(split_pages(pages))
        return
    blocks = [documents[i : i + DOCS_PER_TASK] for i in range(0, len(documents), DOCS_PER_TASK)]
    results: list = [None] * len(blocks)
    done = 0
    for position, tokenized in engine.imap(tokenize_documents, ((block,) for block in blocks)):
        results[position] = tokenized
        while done < len(results) and results[done] is not None:  # keep document order (vocabulary ids)
            yield from results[done]
            results[done] = None
            done += 1


def _tokenize_store(
    store: PageStore, tick: Callable[[int], None], engine: Engine | None = None
) -> tuple[_Tokens, list[str]]:
    vocab: dict[str, int] = {}
    ids: list[np.ndarray] = []
    brks, hyphs, heads, hends, rows = [], [], [], [], []
    offsets = store.doc_offsets
    for d, pages in enumerate(_tokenized(store, engine)):
        start = int(offsets[d])
        for k, pt in enumerate(pages):
            ids.append(
                np.fromiter((vocab.setdefault(w, len(vocab)) for w in pt.words), dtype=np.int32, count=len(pt.words))
            )
            brks.append(pt.brk)
            hyphs.append(pt.hyph)
            heads.append(pt.head)
            hends.append(pt.hend)
            rows.append(np.full(len(pt.words), start + k, dtype=np.int32))
        tick(1)
    surface = [""] * len(vocab)
    for w, i in vocab.items():
        surface[i] = w

    def cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
        return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)

    tokens = _Tokens(
        cat(ids, np.int32), cat(brks, bool), cat(hyphs, bool), cat(heads, bool), cat(hends, bool), cat(rows, np.int32)
    )
    return tokens, surface


def _acronym_pairs(texts: list[str]) -> dict[str, tuple[str, ...]]:
    """Acronym → expansion words (S-stemmed, lower) for pairs the corpus writes as ``Long Form (LF)``.

    An expansion qualifies when the initials of its last ``len(LF)`` words spell ``LF``;
    the most frequent expansion wins (ties: lexicographic).
    """
    seen: dict[str, Counter[tuple[str, ...]]] = defaultdict(Counter)
    for text in texts:
        if "(" not in text:
            continue
        for match in _ACRONYM.finditer(text):
            acro = match.group(2)
            words = re.split(r"[\s\-]+", match.group(1))[-len(acro) :]
            if len(words) == len(acro) and all(w[0].lower() == a.lower() for w, a in zip(words, acro)):
                key = tuple(s_stem(w.lower()) for w in words)
                if all(len(w) >= 3 for w in key) and key[0] not in STOPWORDS and key[-1] not in STOPWORDS:
                    seen[acro][key] += 1
    return {a: sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] for a, c in sorted(seen.items())}


def ngram_occurrences(
    norm: np.ndarray,
    content: np.ndarray,
    of_word: np.ndarray,
    brk: np.ndarray,
    row: np.ndarray,
    acro_key: np.ndarray,
    vsize: int,
    max_n: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every valid word n-gram occurrence (n = 1..max_n) as ``(key, start, length)`` arrays.

    Token arrays in, occurrence arrays out, one vectorised pass per ``n``: an occurrence is
    valid when no break lies inside it, it stays on one page, its first and last words are
    content words and an inner word is a content word or *of*. The key packs the normalised
    word ids base ``vsize`` (``((w1·V + w2)·V + w3)``, zero-padded), so all lengths share one
    int64 space; a token with ``acro_key > 0`` (a paired acronym) takes its expansion's key.
    """
    n_tok = len(norm)
    keys, starts, lens = [], [], []
    for n in range(1, max_n + 1):
        if n_tok < n:
            break
        m = n_tok - n + 1
        ok = content[:m] & content[n - 1 : n_tok]
        for j in range(1, n):
            ok &= ~brk[j : m + j]
            ok &= row[j : m + j] == row[:m]
            if j < n - 1:
                ok &= content[j : m + j] | of_word[j : m + j]
        key = np.zeros(m, dtype=np.int64)
        for j in range(max_n):
            key = key * np.int64(vsize) + (norm[j : m + j] if j < n else 0)
        if n == 1:
            ok = ok | (acro_key > 0)
            key = np.where(acro_key > 0, acro_key, key)
        sel = np.nonzero(ok)[0]
        keys.append(key[sel])
        starts.append(sel)
        lens.append(np.full(len(sel), n, dtype=np.int64))
    if not keys:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(keys), np.concatenate(starts), np.concatenate(lens)


def count_pairs(
    keys: np.ndarray, rows: np.ndarray, n_rows: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Count occurrences per (key, page row) with one sort instead of a hash map.

    Returns ``uniq`` (sorted distinct keys), ``order`` (the sorting permutation of the
    occurrences), ``grp`` (start of each (key, row) group in sorted order), ``counts``,
    ``p_key`` (index into ``uniq``) and ``p_row`` per group.
    """
    uniq, kidx = np.unique(keys, return_inverse=True)
    pair = kidx.astype(np.int64) * np.int64(n_rows) + rows
    order = np.argsort(pair, kind="stable")
    pair_sorted = pair[order]
    if len(pair_sorted):
        grp = np.flatnonzero(np.r_[True, pair_sorted[1:] != pair_sorted[:-1]])
    else:
        grp = np.zeros(0, dtype=np.int64)
    counts = np.diff(np.r_[grp, len(pair_sorted)])
    p_pair = pair_sorted[grp]
    return uniq, order, grp, counts, p_pair // n_rows, (p_pair % n_rows).astype(np.int64)


def mine(
    store: PageStore,
    params: MineParams = MineParams(),
    tick: Callable[[int], None] = lambda n: None,
    engine: Engine | None = None,
) -> Inventory:
    """Mine candidate conditions and their establishing pages over a whole page store.

    With an ``engine`` (:mod:`nclue.engine`) the documents are tokenised on its workers; the
    inventory is identical.
    """
    tokens, surface = _tokenize_store(store, tick, engine)
    n_tok = len(tokens.orig)
    lower = [w.lower() for w in surface]
    norm_vocab: dict[str, int] = {"": 0}
    norm_of = np.fromiter(
        (norm_vocab.setdefault(s_stem(w), len(norm_vocab)) for w in lower), dtype=np.int64, count=len(lower)
    )
    norm_words = [""] * len(norm_vocab)
    for w, i in norm_vocab.items():
        norm_words[i] = w
    content = np.array([len(w) >= params.min_word_len and w not in STOPWORDS for w in lower], dtype=bool)
    is_of = np.array([w == "of" for w in lower], dtype=bool)

    acronyms = _acronym_pairs(store.texts)
    vsize = np.int64(len(norm_vocab) + 1)
    if int(vsize) ** params.max_n >= 2**62:
        raise NclueError(
            f"{store.root}: {int(vsize)} distinct words are too many for int64 {params.max_n}-gram keys; build from a smaller collection"
        )

    def key_of(words: tuple[str, ...]) -> int | None:
        ids = [norm_vocab.get(w) for w in words]
        if any(i is None for i in ids) or len(ids) > params.max_n:
            return None
        k = 0
        for j in range(params.max_n):
            k = k * int(vsize) + (ids[j] if j < len(ids) else 0)
        return k

    orig = tokens.orig
    norm = norm_of[orig] if n_tok else np.zeros(0, dtype=np.int64)
    cont = content[orig] if n_tok else np.zeros(0, dtype=bool)
    ofw = is_of[orig] if n_tok else np.zeros(0, dtype=bool)
    low_ids = {w: i for i, w in enumerate(lower)}

    def flag(words: frozenset[str]) -> np.ndarray:
        mask = np.zeros(len(lower), dtype=bool)
        for w in words:
            if w in low_ids:
                mask[low_ids[w]] = True
        return mask[orig] if n_tok else np.zeros(0, dtype=bool)

    f_after1, f_is, f_after2, f_before = flag(_DEF_AFTER_1), flag(_DEF_IS), flag(_DEF_AFTER_2), flag(_DEF_BEFORE)
    f_known, f_as = flag(frozenset({"known"})), flag(frozenset({"as"}))

    # acronym occurrences (exact upper-case form, optionally plural) count as the expansion
    surface_index = {w: i for i, w in enumerate(surface)}
    acro_key = np.zeros(len(surface), dtype=np.int64)
    for acro, words in acronyms.items():
        k = key_of(words)
        if k is None:
            continue
        for w in (acro, acro + "s"):
            if w in surface_index:
                acro_key[surface_index[w]] = k

    keys, starts, lens = ngram_occurrences(
        norm, cont, ofw, tokens.brk, tokens.row, acro_key[orig], int(vsize), params.max_n
    )
    rows = tokens.row[starts]
    heads = tokens.head[starts]
    hends = tokens.hend[starts + lens - 1]
    ends = starts + lens - 1
    nxt1 = np.minimum(ends + 1, max(n_tok - 1, 0))
    nxt2 = np.minimum(ends + 2, max(n_tok - 1, 0))
    ok1 = (ends + 1 < n_tok) & ~tokens.brk[nxt1]
    ok2 = (ends + 2 < n_tok) & ~tokens.brk[nxt2]
    defs = ok1 & (f_after1[nxt1] | (f_is[nxt1] & ok2 & f_after2[nxt2]))
    prev1 = np.maximum(starts - 1, 0)
    prev2 = np.maximum(starts - 2, 0)
    joined = (starts >= 1) & ~tokens.brk[starts]
    defs |= joined & f_before[prev1]
    defs |= joined & (starts >= 2) & ~tokens.brk[prev1] & f_known[prev2] & f_as[prev1]

    n_rows = np.int64(store.n_pages)
    uniq, order, grp, counts, p_key, p_row = count_pairs(keys, rows, int(n_rows))
    p_head = np.logical_or.reduceat(heads[order], grp) if len(grp) else np.zeros(0, dtype=bool)
    p_def = np.logical_or.reduceat(defs[order], grp) if len(grp) else np.zeros(0, dtype=bool)
    p_hend = np.logical_or.reduceat(hends[order], grp) if len(grp) else np.zeros(0, dtype=bool)
    kidx = np.searchsorted(uniq, keys)
    single = uniq[p_key] % (vsize ** (params.max_n - 1)) == 0 if len(p_key) else np.zeros(0, dtype=bool)
    establish = ((counts >= 2) & ~single) | p_head | p_def
    page_doc = store.page_doc
    p_doc = page_doc[p_row] if len(p_row) else np.zeros(0, dtype=np.int32)

    n_docs = len(store.doc_ids)
    en_tok = np.array([w in ENGLISH_STOPWORDS for w in lower], dtype=float)[orig] if n_tok else np.zeros(0)
    fo_tok = np.array([w in FOREIGN_WORDS for w in lower], dtype=float)[orig] if n_tok else np.zeros(0)
    page_tokens = np.maximum(np.bincount(tokens.row, minlength=int(n_rows)), 1)
    english = (np.bincount(tokens.row, weights=en_tok, minlength=int(n_rows)) >= params.min_english * page_tokens) & (
        np.bincount(tokens.row, weights=fo_tok, minlength=int(n_rows)) < params.max_foreign * page_tokens
    )
    est_en = establish & english[p_row]

    def doc_freq(mask: np.ndarray) -> np.ndarray:
        kd = np.unique(p_key[mask] * n_docs + p_doc[mask])
        return np.bincount(kd // n_docs, minlength=len(uniq))

    df_est = doc_freq(establish)
    df_any = doc_freq(np.ones(len(p_key), dtype=bool))
    df_est_en = doc_freq(est_en)
    df_head = doc_freq(p_head & english[p_row])
    df_hend = doc_freq(p_hend & english[p_row])

    vs = int(vsize)

    def key_words(k: int) -> tuple[str, ...]:
        parts = []
        for _ in range(params.max_n):
            parts.append(int(k % vs))
            k //= vs
        return tuple(norm_words[i] for i in reversed(parts) if i)

    max_df = params.max_df(n_docs)
    chosen: list[int] = []
    topical = df_est >= params.min_topicality * np.maximum(df_any, 1)
    eligible = (df_est_en >= params.min_df) & (df_est <= max_df) & (df_head >= params.min_heading_df) & topical
    for ki in np.nonzero(eligible)[0].tolist():
        words = key_words(int(uniq[ki]))
        if any(w in STRUCTURAL for w in words if w != "of") or words[-1].endswith("ed"):
            continue
        if len(words) == 1 and (
            df_hend[ki] < params.min_heading_df
            or len(words[0]) < params.min_single_len
            or _ROMAN.fullmatch(words[0])
            or words[0].endswith(("ed", "ly"))
        ):
            continue
        chosen.append(ki)

    chosen_arr = np.array(chosen, dtype=np.int64)
    pos = np.searchsorted(chosen_arr, p_key) if len(chosen_arr) else np.zeros(len(p_key), dtype=np.int64)
    hit = (
        (pos < len(chosen_arr)) & (chosen_arr[np.minimum(pos, max(len(chosen_arr) - 1, 0))] == p_key)
        if len(chosen_arr)
        else np.zeros(len(p_key), dtype=bool)
    )
    pages_of: list[dict[int, list[int]]] = [defaultdict(list) for _ in chosen]
    page_number = store.page_number
    for ci, r in zip(pos[hit & establish].tolist(), p_row[hit & establish].tolist()):
        pages_of[ci][int(page_doc[r])].append(int(page_number[r]))

    surfaces = _surface_forms(kidx, chosen_arr, starts, lens, tokens, surface)
    acro_by_key: dict[int, list[str]] = defaultdict(list)
    for acro, words in acronyms.items():
        k = key_of(words)
        if k is not None:
            acro_by_key[k].append(acro)

    conditions: list[Condition] = []
    page_sets: list[dict[int, tuple[int, ...]]] = []
    for ci, ki in enumerate(chosen):
        forms = surfaces.get(ci, Counter())
        acros = tuple(sorted(acro_by_key.get(int(uniq[ki]), [])))
        words = key_words(int(uniq[ki]))
        if not forms or (not acros and all(_is_name(f) and not _keeps_case(f, forms) for f in forms)):
            continue
        name = _canonical(Counter({f: n for f, n in forms.items() if f not in acros}) or forms)
        aliases = tuple(sorted(set(f.lower() if not _keeps_case(f, forms) else f for f in forms) | set(acros)))
        conditions.append(
            Condition(
                name=name,
                aliases=aliases,
                key=words,
                acronyms=acros,
                heading_df=int(df_head[ki]),
                mention_df=int(df_any[ki]),
            )
        )
        page_sets.append({d: tuple(sorted(set(p))) for d, p in sorted(pages_of[ci].items())})
    order_c = sorted(range(len(conditions)), key=lambda i: conditions[i].name)
    conditions = [conditions[i] for i in order_c]
    page_sets = [page_sets[i] for i in order_c]
    conditions, page_sets = dedupe_names(conditions, page_sets)
    n_pages = np.diff(store.doc_offsets).astype(np.int64)
    return Inventory(
        doc_ids=store.doc_ids.tolist(), n_pages=n_pages, conditions=conditions, pages=page_sets, params=params
    )


def _surface_forms(
    kidx: np.ndarray,
    chosen: np.ndarray,
    starts: np.ndarray,
    lens: np.ndarray,
    tokens: _Tokens,
    surface: list[str],
) -> dict[int, Counter[str]]:
    """Observed surface strings (case kept, ``-`` where the words were hyphen-joined) per chosen key."""
    out: dict[int, Counter[str]] = defaultdict(Counter)
    if not len(chosen):
        return out
    pos = np.searchsorted(chosen, kidx)
    hit = (pos < len(chosen)) & (chosen[np.minimum(pos, len(chosen) - 1)] == kidx)
    orig, hyph = tokens.orig, tokens.hyph
    for s_i in np.nonzero(hit)[0].tolist():
        start, n = int(starts[s_i]), int(lens[s_i])
        text = surface[int(orig[start])]
        for j in range(1, n):
            text += ("-" if hyph[start + j] else " ") + surface[int(orig[start + j])]
        out[int(pos[s_i])][text] += 1
    return out


def _is_name(form: str) -> bool:
    """A form whose every word is capitalised (a person, place or product name when never lower-case)."""
    return all(w[:1].isupper() for w in re.split(r"[ \-]", form) if w != "of")


def _keeps_case(form: str, forms: Counter[str]) -> bool:
    """A form keeps its case when it is not plain lower/Title case of a form seen in lower case."""
    lower_seen = any(f == f.lower() and f.lower() == form.lower() for f in forms)
    return not lower_seen and form != form.lower() and form != form.capitalize() and not form.istitle()


def _canonical(forms: Counter[str]) -> str:
    """Most frequent surface form after case folding (acronym-like forms keep their case)."""
    folded: Counter[str] = Counter()
    for form, count in forms.items():
        folded[form if _keeps_case(form, forms) else form.lower()] += count
    return sorted(folded.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


def dedupe_names(
    conditions: list[Condition], page_sets: list[dict[int, tuple[int, ...]]]
) -> tuple[list[Condition], list[dict[int, tuple[int, ...]]]]:
    """Keep one condition per canonical name (the one established in more documents)."""
    best: dict[str, int] = {}
    for i, c in enumerate(conditions):
        j = best.get(c.name.lower())
        if j is None or len(page_sets[i]) > len(page_sets[j]):
            best[c.name.lower()] = i
    keep = sorted(best.values())
    return [conditions[i] for i in keep], [page_sets[i] for i in keep]
