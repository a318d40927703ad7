"""``nclue index COLLECTION --all`` from scratch, against bare sentence-transformers on the same chunks.

Run: ``.venv/bin/python benchmarks/index_all.py COLLECTION [--repeats 2]`` (an ingested collection;
issue 27 measures a 275-page one — see ``benchmarks/RESULTS.md`` for the eight Debian PDFs used).

Each repeat copies the collection's page store to a temporary folder (no index) and times a fresh
``nclue index COPY --all`` process to exit, with its peak RSS and the stage times it prints. The
**peer** is the arithmetic that cannot be skipped: a bare ``SentenceTransformer.encode`` (fp32, the
model's own batching, all threads) of the very chunk texts the dense pass encodes, timed in this
process after the model is loaded. A ratio near 1 means the build is the encoder and little else.
Reported: median wall seconds of each, the ratio, and the chunk count.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STORE_FILES = ("collection.json", "docs.parquet", "pages.parquet")


def index_once(collection: Path) -> tuple[float, int, str]:
    """``(wall s, peak RSS KiB, printed stage lines)`` of one ``nclue index --all`` on a fresh copy."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "collection"
        copy.mkdir()
        for name in STORE_FILES:
            shutil.copyfile(collection / name, copy / name)
        nclue = Path(sys.executable).with_name("nclue")
        command = ["/usr/bin/time", "-f", "%M", str(nclue), "index", str(copy), "--all"]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=os.environ | {"HF_HUB_OFFLINE": "1"})
        wall = time.perf_counter() - start
        if done.returncode:
            raise SystemExit(f"nclue index --all failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
        lines = [line for line in (done.stdout + done.stderr).splitlines() if re.search(r": (built|kept) \(", line)]
        return wall, int(done.stderr.strip().splitlines()[-1]), "; ".join(lines)


def peer_seconds(collection: Path) -> tuple[float, int]:
    """``(seconds, chunks)`` of bare ``SentenceTransformer.encode`` over the dense pass's chunk texts."""
    from sentence_transformers import SentenceTransformer

    from nclue.corpus.store import PageStore
    from nclue.index.options import DenseOptions
    from nclue.models.chunking import chunk_pages
    from nclue.models.encoder import load_tokenizer
    from nclue.models.identity import bundled_model_path

    texts = PageStore.open(collection).texts
    options = DenseOptions()
    model = SentenceTransformer(str(bundled_model_path()), device="cpu")
    window = options.window or model.max_seq_length - 2
    chunks = chunk_pages(texts, load_tokenizer(bundled_model_path()), window, options.overlap)
    inputs = [texts[p][s:e] for p, s, e in zip(chunks.page, chunks.start, chunks.end)]
    start = time.perf_counter()
    model.encode(inputs, batch_size=options.batch_size, show_progress_bar=False)
    return time.perf_counter() - start, len(inputs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collection", type=Path)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    os.environ["HF_HUB_OFFLINE"] = "1"
    runs = [index_once(args.collection) for _ in range(args.repeats)]
    for wall, rss, stages in runs:
        print(f"nclue index --all: {wall:.1f} s wall, peak RSS {rss / 1024:.0f} MiB ({stages})")
    peer, n_chunks = peer_seconds(args.collection)
    median = statistics.median(w for w, _, _ in runs)
    print(f"peer SentenceTransformer.encode of the same {n_chunks} chunks: {peer:.1f} s")
    print(f"median {median:.1f} s; ÷ peer {median / peer:.2f}")


if __name__ == "__main__":
    main()
