"""Semantic conditions: section concepts clustered from heading titles (``nclue build --conditions sections``).

The lexical inventory (:mod:`nclue.bench.inventory`) mines word n-grams; this one mines *section
concepts* (``docs/structure.md#section-concepts``), read from the collection's document structure
(:mod:`nclue.corpus.structure`, ``nclue structure COLLECTION``):

1. **Headings.** Every heading of origin ``outline``, ``numbered`` or ``font`` (by default; see
   :class:`~nclue.bench.construction_params.SectionParams`) outside table-of-contents and index pages. Its
   *key* is its title folded: lower case, leading numbering and trailing punctuation dropped,
   words S-stemmed (:func:`nclue.bench.text.s_stem`), stopwords dropped. Skipped: titles that
   are not plain capitalised words (a digit, ``.``/``,`` inside, code such as ``as.environment``
   or docstrip guards, non-ASCII glyph soup), of more than ``max_words`` content words or none
   of ≥ 3 letters, or that only label the document's parts (*Contents*, *Index*, *Chapter*).
2. **Seeds.** Keys that head a section in at least ``min_df`` and at most
   ``max(min_df, ⌊max_df_frac·N⌋)`` documents.
3. **Aliases** (the judge). ``offline``: a concept is one key (aliases: its surface titles — case,
   inflection and numbering variants). ``embedding``: keys are clustered by the bundled MiniLM's
   cosine between their most frequent titles: in order of decreasing document frequency, a key
   joins the concept whose founding key is nearest if that cosine is ≥ ``alias_threshold``, else
   founds a new concept (greedy leader clustering; deterministic). The canonical name is the
   founding key's most frequent surface title.
4. **Establishes rule.** Page ``p`` of ``d`` establishes concept ``c`` iff a heading of one of
   ``c``'s keys starts on ``p``. Queries then give the canonical name only; the aliases are
   stored in ``inventory.jsonl`` and ``queries.jsonl`` (for the privileged controls).

The result is an :class:`~nclue.bench.inventory.Inventory`, so composition, Hall matching,
validation and release are the lexical mode's own (:mod:`nclue.bench.compose`).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import asdict
from typing import Any

import numpy as np

from nclue.bench.construction_params import SectionParams
from nclue.bench.inventory import Condition, Inventory, dedupe_names
from nclue.bench.text import STOPWORDS, s_stem
from nclue.corpus.store import PageStore
from nclue.corpus.structure import Structure, open_structure
from nclue.errors import NclueError
from nclue.progress import Advance

PART_LABELS = frozenset(
    "contents content index chapter section part appendix appendice figure table list page preface abstract".split()
)
_LEAD = re.compile(
    r"^\s*(?:(?:chapter|appendix|part|section)\s+[0-9a-z]{1,3}[:.]?\s+|[0-9a-z]{1,2}(?:\.[0-9]{1,2})+\.?\s+|[0-9]{1,2}\.?\s+)",
    re.I,
)
_WORD = re.compile(r"[A-Za-z]+")
_APPENDIX = re.compile(r"^[A-Z]\s+(?=[A-Z][a-z])")
_PLAIN = re.compile(r"[A-Za-z][A-Za-z '’&/()-]*")
SIGNALS = (
    "headings from structure.parquet (origins: {origins}) outside table-of-contents and index pages; "
    "titles folded to keys (lower case, S-stemmed, stopwords dropped); aliases by the {judge} judge"
)


def title_key(title: str, max_words: int) -> tuple[str, ...] | None:
    """The folded key of a heading title, or ``None`` when it cannot name a section concept."""
    text = _surface(title)
    if not _PLAIN.fullmatch(text) or not text[:1].isupper():
        return None
    words = [w.lower() for w in _WORD.findall(text)]
    content = tuple(s_stem(w) for w in words if w not in STOPWORDS)
    if not content or len(content) > max_words or max(len(w) for w in content) < 3:
        return None
    if all(w in PART_LABELS or w.rstrip("s") in PART_LABELS for w in content):
        return None
    if len(text) > 60:
        return None
    return content


def _surface(title: str) -> str:
    """The title without its numbering (``2.3``, ``Chapter 4``, an appendix letter) and end punctuation."""
    text = _APPENDIX.sub("", _LEAD.sub("", title).strip())
    return re.sub(r"\s+", " ", text).strip().rstrip(".:;,?").strip()


def mine_sections(
    store: PageStore,
    collection: str,
    params: SectionParams = SectionParams(),
    judge: str = "embedding",
    tick: Advance = lambda n: None,
) -> tuple[Inventory, dict[str, Any]]:
    """Mine the section-concept inventory of ``store`` (module docstring); returns it and its record."""
    if judge == "llm":
        raise NclueError(
            "--conditions sections groups aliases with the offline or embedding judge; the LLM judge is "
            "not available for section concepts — use --judge embedding"
        )
    structure = open_structure(collection)
    doc_of = {d: i for i, d in enumerate(store.doc_ids.tolist())}
    where, forms = _heading_keys(structure, doc_of, params)
    tick(len(doc_of))
    n_docs = len(doc_of)
    max_df = max(params.min_df, int(params.max_df_frac * n_docs))
    seeds = sorted(
        (k for k, by_doc in where.items() if params.min_df <= len(by_doc) <= max_df),
        key=lambda k: (-len(where[k]), k),
    )
    if not seeds:
        raise NclueError(
            f"{collection}: no heading title recurs in {params.min_df}–{max_df} documents; "
            "check `nclue structure` found headings, or lower --min-df"
        )
    names = {k: _canonical(forms[k]) for k in seeds}
    groups = _cluster(seeds, names, params.alias_threshold) if judge != "offline" else [[k] for k in seeds]
    conditions: list[Condition] = []
    page_sets: list[dict[int, tuple[int, ...]]] = []
    for group in groups:
        merged: dict[int, set[int]] = defaultdict(set)
        surface: Counter[str] = Counter()
        for key in group:
            for d, ps in where[key].items():
                merged[d] |= ps
            surface.update(forms[key])
        if len(merged) > max_df:
            continue
        aliases = tuple(sorted({f for f in surface} | {names[k] for k in group}, key=str.lower))
        conditions.append(
            Condition(
                name=names[group[0]],
                aliases=aliases,
                key=group[0],
                heading_df=len(merged),
                mention_df=len(merged),
            )
        )
        page_sets.append({d: tuple(sorted(ps)) for d, ps in sorted(merged.items())})
    order = sorted(range(len(conditions)), key=lambda i: conditions[i].name.lower())
    conditions, page_sets = [conditions[i] for i in order], [page_sets[i] for i in order]
    keep = dedupe_names(conditions, page_sets)
    conditions, page_sets = [conditions[i] for i in keep], [page_sets[i] for i in keep]
    inventory = Inventory(
        doc_ids=store.doc_ids.tolist(),
        n_pages=np.diff(store.doc_offsets).astype(np.int64),
        conditions=conditions,
        pages=page_sets,
    )
    record = {
        "kind": "sections",
        "signals": SIGNALS.format(origins=", ".join(params.origins), judge=judge),
        "judge": judge,
        "parameters": asdict(params),
        "structure": {"pages_sha256": structure.meta["pages_sha256"], "counts": structure.meta["counts"]},
        "seed_keys": len(seeds),
        "concepts": len(conditions),
        "multi_key_concepts": sum(1 for g in groups if len(g) > 1),
    }
    return inventory, record


def _heading_keys(
    structure: Structure, doc_of: dict[str, int], params: SectionParams
) -> tuple[dict[tuple[str, ...], dict[int, set[int]]], dict[tuple[str, ...], Counter[str]]]:
    """``(pages by document, surface forms)`` of every heading title key of an allowed origin,
    outside pages that are themselves a table of contents or an index."""
    allowed = set(params.origins)
    titles = structure.table.column("title").to_pylist()
    origins = structure.table.column("origin").to_pylist()
    docs = structure.table.column("doc_id").to_pylist()
    pages = structure.table.column("page").to_pylist()
    roles = {(d, p) for d, p, o in zip(docs, pages, origins) if o in ("toc", "index")}
    where: dict[tuple[str, ...], dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))
    forms: dict[tuple[str, ...], Counter[str]] = defaultdict(Counter)
    for doc_id, page, title, origin in zip(docs, pages, titles, origins):
        if origin not in allowed or doc_id not in doc_of or (doc_id, page) in roles:
            continue
        key = title_key(title, params.max_words)
        if key is None:
            continue
        where[key][doc_of[doc_id]].add(int(page))
        forms[key][_surface(title)] += 1
    return where, forms


def _canonical(forms: Counter[str]) -> str:
    """The most frequent surface title after case folding, written in its most frequent casing."""
    folded: Counter[str] = Counter()
    for form, n in forms.items():
        folded[form.lower()] += n
    best = sorted(folded.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    return sorted(((n, f) for f, n in forms.items() if f.lower() == best), key=lambda t: (-t[0], t[1]))[0][1]


def _cluster(seeds: list[tuple[str, ...]], names: dict[tuple[str, ...], str], threshold: float) -> list[list]:
    """Greedy leader clustering of seed keys by MiniLM cosine of their canonical titles (module docstring)."""
    from nclue.models.encoder import load_encoder

    encoder = load_encoder(None, "onnx", batch_size=64, max_length=32)
    vectors = encoder.encode([names[k] for k in seeds])
    leaders: list[int] = []
    groups: list[list] = []
    for i, key in enumerate(seeds):
        if leaders:
            sims = vectors[leaders] @ vectors[i]
            j = int(np.argmax(sims))
            if sims[j] >= threshold:
                groups[j].append(key)
                continue
        leaders.append(i)
        groups.append([key])
    return groups


def card_section(card: str, record: dict[str, Any]) -> str:
    """The dataset card with its establishes-rule section replaced by the section-concept rule."""
    rule = [
        "## Establishes rule",
        "",
        "**Conditions: `sections`** — section concepts, not lexical n-grams. A page establishes a",
        "concept when a heading of the document *starts* on that page and its title belongs to the",
        "concept (one of its aliases). Queries give the canonical name only.",
        "",
        f"Signals that built this benchmark: {record['signals']}.",
        f"Alias judge: `{record['judge']}`; parameters: "
        + ", ".join(f"{k}={v}" for k, v in record["parameters"].items())
        + f"; {record['concepts']} concepts from {record['seed_keys']} recurring title keys "
        f"({record['multi_key_concepts']} concepts group several keys).",
        "",
        "A system that reads the same headings (`nclue structure`) or the same MiniLM shares this",
        "benchmark's signal; its gain over systems that do not is partly by construction",
        "(see docs/structure.md#circularity).",
        "",
    ]
    start = card.find("## Establishes rule")
    if start < 0:
        return card.rstrip("\n") + "\n\n" + "\n".join(rule)
    end = card.find("\n## ", start + 1)
    tail = card[end + 1 :] if end >= 0 else ""
    return card[:start] + "\n".join(rule) + "\n" + tail
