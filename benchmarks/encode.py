"""Encoding speed of nclue's dense backends against bare ``SentenceTransformer.encode``.

Run: ``.venv/bin/python benchmarks/encode.py [COLLECTION] [--pages 400] [--seed 0]``
(default collection: ``$NCLUE_DEV_COLLECTION`` or ``nclue-demo/collection``, built by ``make demo``).

A seeded random sample of pages is chunked once (MiniLM tokenizer, window 254 tokens,
overlap 32 — the dense index defaults); every path encodes the *same* chunk texts:

* peer — ``SentenceTransformer(bundled MiniLM).encode(chunks, batch_size=32, normalize_embeddings=True)``
  (32 is sentence-transformers' own default batch size and nclue's);
* nclue ``torch``, ``torch-bf16`` (bfloat16 weights, SDPA attention, length-sorted batches),
  ``onnx`` (fp32), ``onnx-int8`` and ``static`` (model2vec) encoders, each one process with
  one thread per CPU;
* ``index`` — what ``nclue index --dense`` runs by default: ``torch-bf16`` in one worker
  process per CPU, one thread each (:mod:`nclue.index.encoding`), each block split between
  the workers; its queries are encoded by ``onnx`` fp32, as at search time.

Reported per path: chunks/s, pages/s, ratio to the peer (pages/s ÷ peer pages/s), the
extrapolated time for the full collection, and top-10 page agreement with the torch path
(mean |top10(path) ∩ top10(torch)| / 10 over fixed real-topic queries, a page scored by
its best chunk cosine, ranking over the sampled pages). One-time costs (ONNX export,
int8 quantisation, static distillation) are cached in ``$NCLUE_CACHE`` and reported apart.

The machine may be shared, so paths are timed *interleaved*: the chunks are cut into
blocks of ``--block`` chunks and every block is encoded by every path, in an order that
rotates from block to block; a path's time is the sum over blocks. Background load then
hits all paths alike instead of whichever happened to run during a busy minute.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

BACKENDS: tuple[str, ...] = ("torch", "torch-bf16", "onnx", "onnx-int8", "static")
QUERIES: tuple[str, ...] = (
    "installing R packages from source",
    "importing data from spreadsheets and CSV files",
    "lazy evaluation of function arguments",
    "S4 classes and generic methods",
    "environments and lexical scoping rules",
    "writing pseudocode algorithms in LaTeX",
    "chemical equations and reaction arrows",
    "typesetting poetry and verse stanzas",
    "linguistic glosses and numbered examples",
    "legal documents with numbered paragraphs",
    "citing Bible verses",
    "functional analysis notation for operators",
    "probability distributions and statistical tests",
    "critical edition footnotes and apparatus",
    "Greek and Hebrew fonts",
    "drawing trees with TikZ",
    "physical units and the SI system",
    "theorem environments and proofs",
    "commutative diagrams",
    "bibliography management with biblatex",
    "line numbering in the margin",
    "phonetic symbols in the IPA",
    "family trees and genealogy",
    "package options and loading order",
    "frequently asked questions about R",
    "reading binary files and connections",
    "regular expressions for text matching",
    "loops, if statements and control flow",
    "copyright and license of the package",
    "examples of tables with column alignment",
)


def sample_chunks(collection: str, n_pages: int, seed: int):  # noqa: ANN201
    from nclue.corpus.store import PageStore
    from nclue.models.chunking import chunk_pages
    from nclue.models.encoder import load_tokenizer

    store = PageStore.open(collection)
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(store.n_pages, size=min(n_pages, store.n_pages), replace=False))
    texts = [store.texts[int(r)] for r in rows]
    chunks = chunk_pages(texts, load_tokenizer(), window=254, overlap=32)
    return store.n_pages, texts, chunks, chunks.texts(texts)


def page_top10(query_vecs: np.ndarray, chunk_vecs: np.ndarray, chunk_page: np.ndarray, n_pages: int) -> np.ndarray:
    sims = query_vecs @ chunk_vecs.T
    starts = np.flatnonzero(np.r_[True, chunk_page[1:] != chunk_page[:-1]])
    pages = np.full((len(query_vecs), n_pages), -np.inf, np.float32)
    pages[:, chunk_page[starts]] = np.maximum.reduceat(sims, starts, axis=1)
    return np.argsort(-pages, axis=1, kind="stable")[:, :10]


def timed(fn, texts):  # noqa: ANN001, ANN201
    start = time.perf_counter()
    out = fn(texts)
    return time.perf_counter() - start, np.asarray(out, dtype=np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "collection", nargs="?", default=os.environ.get("NCLUE_DEV_COLLECTION", "nclue-demo/collection")
    )
    parser.add_argument("--pages", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--block", type=int, default=128, help="chunks per interleaved timing block")
    args = parser.parse_args()

    import torch
    from sentence_transformers import SentenceTransformer

    from nclue.models.encoder import load_encoder
    from nclue.models.identity import bundled_model_path

    threads = os.cpu_count() or 1
    torch.set_num_threads(threads)
    total_pages, texts, chunks, chunk_texts = sample_chunks(args.collection, args.pages, args.seed)
    n = len(texts)
    print(
        f"collection {args.collection}: {total_pages} pages; sample {n} pages (seed {args.seed}) → {len(chunks)} chunks"
    )
    print(f"cpu threads {threads}, batch size {args.batch_size}, load average {os.getloadavg()[0]:.1f}", flush=True)

    peer = SentenceTransformer(str(bundled_model_path()), device="cpu")
    peer_fn = lambda t: peer.encode(t, batch_size=args.batch_size, normalize_embeddings=True, show_progress_bar=False)  # noqa: E731
    setup: dict[str, float] = {}
    encoders = {}
    for backend in BACKENDS:
        start = time.perf_counter()
        encoders[backend] = load_encoder(None, backend=backend, batch_size=args.batch_size, threads=threads)
        setup[backend] = time.perf_counter() - start
    peer_fn(chunk_texts[:32])
    for enc in encoders.values():
        enc.encode(chunk_texts[:32])

    from nclue.engine import LocalEngine
    from nclue.index.encoding import encode_shard

    pool = LocalEngine(threads)
    model = str(bundled_model_path())
    batch_size = args.batch_size

    def index_path(block: list[str]) -> np.ndarray:
        cut = [block[i :: pool.workers] for i in range(pool.workers)]
        jobs = [(model, "torch-bf16", batch_size, 1, part, True, None) for part in cut]
        out = np.empty((len(block), 384), np.float32)
        for position, (vectors, _) in pool.imap(encode_shard, jobs):
            out[position :: pool.workers] = vectors
        return out

    start = time.perf_counter()
    index_path(chunk_texts[: 2 * threads])  # start the workers and load their encoders
    setup["index"] = time.perf_counter() - start
    paths = {"peer": peer_fn, **{b: encoders[b].encode for b in BACKENDS}, "index": index_path}
    names = list(paths)
    seconds = dict.fromkeys(names, 0.0)
    parts: dict[str, list[np.ndarray]] = {name: [] for name in names}
    blocks = range(0, len(chunk_texts), args.block)
    for b, lo in enumerate(blocks):
        block = chunk_texts[lo : lo + args.block]
        for name in names[b % len(names) :] + names[: b % len(names)]:
            s, v = timed(paths[name], block)
            seconds[name] += s
            parts[name].append(v)
        print(f"block {b + 1}/{len(blocks)}: " + ", ".join(f"{k} {seconds[k]:.1f}s" for k in names), flush=True)
    vectors = {name: np.concatenate(parts[name]) for name in names}

    pool.close()
    query_encoder = {"peer": "torch", "index": "onnx"}
    query_vecs = {name: encoders[query_encoder.get(name, name)].encode(list(QUERIES)) for name in seconds}
    top = {name: page_top10(query_vecs[name], vectors[name], chunks.page, n) for name in seconds}
    peer_rate = n / seconds["peer"]
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")
    print(
        "| path | chunks/s | pages/s | × peer | full collection (extrapolated) | top-10 agreement with torch | cosine to torch (min) | one-time setup s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in ("peer", *BACKENDS, "index"):
        rate = n / seconds[name]
        agree = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(top[name], top["torch"])])
        same_space = vectors[name].shape == vectors["torch"].shape
        cos = (
            f"{float((vectors[name] * vectors['torch']).sum(axis=1).min()):.4f}" if same_space else "n/a (other model)"
        )
        label = {
            "peer": "SentenceTransformer.encode (peer)",
            "index": f"nclue index path (torch-bf16, {threads} processes)",
        }
        label = label.get(name, f"nclue {name}")
        print(
            f"| {label} | {len(chunks) / seconds[name]:.1f} | {rate:.2f} | {rate / peer_rate:.2f} | "
            f"{total_pages / rate / 60:.1f} min | {agree:.3f} | {cos} | {setup.get(name, 0.0):.1f} |"
        )


if __name__ == "__main__":
    main()
