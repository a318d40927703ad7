"""Retrieval engine benchmark on a real page store (default: the Debian development collection).

Run: ``.venv/bin/python benchmarks/retrieve.py [COLLECTION] [--queries 1000] [--quality 300]``

In one process, on the same page texts:

1. **Index build** — ``nclue.index.lexical.build_lexical_index`` (page index + document
   view, saved) against a bare bm25s index of the page texts (``bm25s.tokenize`` with
   PyStemmer + ``BM25().index`` + ``save``); median of 3 alternating runs each. Goal ≤ 1.2×.
2. **Query speed** — 1,000 seeded three-condition queries: ``bm25.decompose(distinct)`` at
   depth 100 (ranked documents with evidence pages) against bare bm25s retrieval of the
   joint query text (``bm25s.tokenize`` + ``BM25.retrieve(k=100)``). Throughput and p50/p95
   latency. Goal ≥ 300 queries/s.
3. **Evidence validity** — for every query, every ``distinct`` evidence set uses distinct
   pages and each assigned page scores positive for, and contains a term of, its condition.
4. **Quality (indicative)** — a phrase pseudo-benchmark: a condition is a two-word phrase
   taken from a page; its inventory ``P(d, c)`` is every page containing the phrase
   (word-boundary match); gold/partial labels follow docs/labels.md (distinct-page Hall matching,
   no single page holding every condition). n-Clue Score@10 and Gold Hit@10 per system.

The collection's parquet files are linked into a temporary directory so the index is
built there and the source stays read-only.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DEFAULT_COLLECTION = Path("nclue-demo/collection")  # built by `make demo`
SEED = 11
SYSTEMS = [
    "bm25.joint",
    "bm25.and",
    "bm25.or",
    "bm25.page_max",
    "bm25.ptop3",
    "bm25.decompose(min)",
    "bm25.decompose(product)",
    "bm25.decompose(hmean)",
    "bm25.decompose(distinct)",
    "bm25.cover(terms)",
    "bm25.cover",
    "rrf(bm25.and, bm25.decompose(distinct))",
    "rrf(bm25.and, bm25.cover)",
]
_WORD = re.compile(r"[a-z]{4,}")


def link_collection(src: Path, dst: Path) -> Path:
    for name in ("docs.parquet", "pages.parquet"):
        os.symlink(src / name, dst / name)
    return dst


def time_builds(coll: Path, store, runs: int = 3) -> tuple[float, float]:  # noqa: ANN001
    import bm25s
    import Stemmer

    from nclue.index.lexical import build_lexical_index

    ours, bare = [], []
    texts = store.texts
    for _ in range(runs):
        t = time.perf_counter()
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=Stemmer.Stemmer("english"), show_progress=False)
        model = bm25s.BM25()
        model.index(tokens, show_progress=False)
        with tempfile.TemporaryDirectory() as tmp:
            model.save(tmp, show_progress=False)
        bare.append(time.perf_counter() - t)
        t = time.perf_counter()
        build_lexical_index(coll, store=store)
        ours.append(time.perf_counter() - t)
    return statistics.median(ours), statistics.median(bare)


def phrase_page_counts(store) -> dict[str, int]:  # noqa: ANN001
    """Number of pages containing each two-word phrase of content words (4+ letters, no stopwords)."""
    from collections import Counter

    from bm25s.stopwords import STOPWORDS_EN

    stop = set(STOPWORDS_EN)
    counts: Counter[str] = Counter()
    for text in store.texts:
        words = re.findall(r"\w+", text.lower())
        counts.update(
            {
                f"{a} {b}"
                for a, b in zip(words, words[1:])
                if a != b and _WORD.fullmatch(a) and _WORD.fullmatch(b) and a not in stop and b not in stop
            }
        )
    return counts


def make_queries(
    store,
    count: int,
    counts: dict[str, int],
    seed: int = SEED,  # noqa: ANN001
    min_pages: int = 3,
    max_pages: int = 150,
) -> list[tuple[str, str, str]]:
    """Seeded three-condition queries: from three distinct pages of one random document, one
    two-word phrase each that occurs on ``min_pages``–``max_pages`` pages of the collection."""
    rng = np.random.default_rng(seed)
    offsets = store.doc_offsets
    eligible = np.flatnonzero(np.diff(offsets) >= 3)
    queries: list[tuple[str, str, str]] = []
    while len(queries) < count:
        d = int(rng.choice(eligible))
        rows = rng.choice(np.arange(offsets[d], offsets[d + 1]), size=3, replace=False)
        phrases = []
        for r in rows:
            words = re.findall(r"\w+", store.texts[int(r)].lower())
            pairs = sorted(
                {f"{a} {b}" for a, b in zip(words, words[1:]) if min_pages <= counts.get(f"{a} {b}", 0) <= max_pages}
            )
            if not pairs:
                break
            phrases.append(pairs[int(rng.integers(len(pairs)))])
        if len(phrases) == 3 and len(set(phrases)) == 3:
            queries.append(tuple(phrases))
    return queries


def bench_queries(workspace, store, queries) -> dict:  # noqa: ANN001
    import bm25s
    import Stemmer

    from nclue.query import render_clean_v2
    from nclue.systems.backbone import Request

    system = workspace.system("bm25.decompose(distinct)")
    requests = [Request(q, render_clean_v2(q)) for q in queries]
    for r in requests[:20]:
        system.search(r, 100)
    ours, ours_cpu = [], []
    results = []
    for r in requests:
        t, c = time.perf_counter(), time.process_time()
        results.append(system.search(r, 100))
        ours.append(time.perf_counter() - t)
        ours_cpu.append(time.process_time() - c)

    stemmer = Stemmer.Stemmer("english")
    tokens = bm25s.tokenize(store.texts, stopwords="en", stemmer=stemmer, show_progress=False)
    bare_model = bm25s.BM25()
    bare_model.index(tokens, show_progress=False)
    bare, bare_cpu = [], []
    for r in requests:
        t, c = time.perf_counter(), time.process_time()
        q = bm25s.tokenize([r.text], stopwords="en", stemmer=stemmer, show_progress=False, return_ids=False)
        bare_model.retrieve(q, k=100, show_progress=False, n_threads=1)
        bare.append(time.perf_counter() - t)
        bare_cpu.append(time.process_time() - c)
    return {
        "ours": np.array(ours),
        "bare": np.array(bare),
        "ours_cpu": np.array(ours_cpu),
        "bare_cpu": np.array(bare_cpu),
        "results": results,
        "requests": requests,
    }


def check_evidence(workspace, requests, results) -> tuple[int, int]:  # noqa: ANN001
    """Count (documents checked, violations) of the distinct-evidence invariants."""
    bb = workspace.backbone("bm25")
    analyzer = bb.index.analyzer
    store = workspace.store
    checked = bad = 0
    for request, ranked in zip(requests, results):
        scores = bb.page_scores(list(request.conditions))
        for doc in ranked:
            checked += 1
            pages = [p for c in request.conditions for p in doc.evidence[c]]
            if len(pages) != len(set(pages)):
                bad += 1
                continue
            d = store.doc_index[doc.doc_id]
            start, stop = int(store.doc_offsets[d]), int(store.doc_offsets[d + 1])
            numbers = store.page_number[start:stop]
            for i, c in enumerate(request.conditions):
                for p in doc.evidence[c]:
                    row = start + int(np.flatnonzero(numbers == p)[0])
                    has_term = set(analyzer.terms(c)) & set(analyzer.terms(store.texts[row]))
                    if scores[i, row] <= 0 or not has_term:
                        bad += 1
    return checked, bad


def pseudo_qrels(store, queries) -> list[dict[str, str]]:  # noqa: ANN001
    """Phrase inventory → labels per docs/labels.md (gold needs a distinct-page assignment and no all-in-one page)."""
    from nclue.systems.aggregate import distinct_assign

    norm = [" " + " ".join(re.findall(r"\w+", t.lower())) + " " for t in store.texts]
    page_doc = store.page_doc
    doc_ids = store.doc_ids
    out = []
    cache: dict[str, np.ndarray] = {}
    for q in queries:
        masks = []
        for c in q:
            if c not in cache:
                needle = f" {c} "
                cache[c] = np.fromiter((needle in t for t in norm), dtype=bool, count=len(norm))
            masks.append(cache[c])
        m = np.stack(masks)
        labels: dict[str, str] = {}
        for d in np.unique(page_doc[m.any(axis=0)]):
            lo, hi = int(store.doc_offsets[d]), int(store.doc_offsets[d + 1])
            block = m[:, lo:hi]
            grade = int(block.any(axis=1).sum())
            gold = False
            if grade == len(q) and not block.all(axis=0).any():
                rows = np.full((1, len(q), len(q)), -1, np.int64)
                vals = np.zeros((1, len(q), len(q)), np.float32)
                for c in range(len(q)):
                    hits = np.flatnonzero(block[c])[: len(q)]
                    rows[0, c, : len(hits)] = hits
                    vals[0, c, : len(hits)] = 1.0
                total, _ = distinct_assign(rows, vals)
                gold = total[0] == len(q)
            labels[str(doc_ids[d])] = "gold" if gold else "partial"
        out.append(labels)
    return out


def quality(workspace, queries, qrels, k: int = 10) -> dict[str, tuple[float, float, int]]:  # noqa: ANN001
    from nclue.query import render_clean_v2
    from nclue.systems.backbone import Request

    keep = [i for i, lab in enumerate(qrels) if "gold" in lab.values() and "partial" in lab.values()]
    table = {}
    for name in SYSTEMS:
        system = workspace.system(name)
        first = hit = 0
        for i in keep:
            labels = qrels[i]
            ranked = system.search(Request(queries[i], render_clean_v2(queries[i])), 100)[:k]
            tags = [labels.get(d.doc_id) for d in ranked]
            if "gold" in tags:
                hit += 1
                if "partial" not in tags[: tags.index("gold")]:
                    first += 1
        table[name] = (100 * first / len(keep), 100 * hit / len(keep), len(keep))
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collection", nargs="?", type=Path, default=DEFAULT_COLLECTION)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--quality", type=int, default=300, help="queries in the phrase pseudo-benchmark (0 = skip)")
    args = parser.parse_args()

    from nclue.corpus.store import PageStore
    from nclue.systems.registry import Workspace

    print(
        f"date {time.strftime('%Y-%m-%d %H:%M:%S %Z')}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    with tempfile.TemporaryDirectory() as tmp:
        coll = link_collection(args.collection.resolve(), Path(tmp))
        store = PageStore.open(coll)
        store.texts, store.page_doc, store.doc_offsets  # noqa: B018 - load before timing
        print(f"collection {args.collection}: {store.n_pages} pages, {len(store.doc_ids)} documents")

        ours_build, bare_build = time_builds(coll, store)
        print(
            f"index build: nclue {ours_build:.2f} s (pages + document view, saved) vs bare bm25s "
            f"{bare_build:.2f} s (tokenize + index + save) -> ratio {ours_build / bare_build:.2f}x (goal <= 1.2x)"
        )

        workspace = Workspace(coll, store)
        queries = make_queries(store, args.queries, phrase_page_counts(store))
        q = bench_queries(workspace, store, queries)
        ours, bare = q["ours"], q["bare"]
        print(f"{len(queries)} three-condition queries, depth 100:")
        print(
            f"  bm25.decompose(distinct): {len(ours) / ours.sum():.0f} q/s, p50 {np.median(ours) * 1e3:.2f} ms, "
            f"p95 {np.percentile(ours, 95) * 1e3:.2f} ms"
        )
        print(
            f"  bare bm25s joint retrieve: {len(bare) / bare.sum():.0f} q/s, p50 {np.median(bare) * 1e3:.2f} ms, "
            f"p95 {np.percentile(bare, 95) * 1e3:.2f} ms"
        )
        print(f"  throughput ratio nclue/bare: {bare.sum() / ours.sum():.2f}x (goal >= 300 q/s)")
        oc, bc = q["ours_cpu"], q["bare_cpu"]
        print(
            f"  CPU time per query (process_time; robust to other load on the machine): "
            f"bm25.decompose(distinct) {oc.mean() * 1e3:.2f} ms = {len(oc) / oc.sum():.0f} q/s per core, "
            f"bare bm25s {bc.mean() * 1e3:.2f} ms = {len(bc) / bc.sum():.0f} q/s per core"
        )
        print(f"  machine load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")

        checked, bad = check_evidence(workspace, q["requests"], q["results"])
        print(f"distinct evidence: {checked} ranked documents checked, {bad} violations")

        if args.quality > 0:
            sub = queries[: args.quality]
            qrels = pseudo_qrels(store, sub)
            table = quality(workspace, sub, qrels)
            n_used = next(iter(table.values()))[2]
            print(f"phrase pseudo-benchmark: {n_used} of {len(sub)} queries with >= 1 gold and >= 1 partial")
            print("| system | n-Clue Score@10 | Gold Hit@10 |")
            print("|---|---:|---:|")
            for name, (score, hit, _) in table.items():
                print(f"| `{name}` | {score:.1f} | {hit:.1f} |")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
