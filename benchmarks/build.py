"""Benchmark ``nclue build``: wall time and peak memory on a collection, plus a kernel ratio.

1. The whole build (``nclue.bench.pipeline.build``) runs in a child process; we report its
   wall time and peak resident memory (``getrusage(RUSAGE_CHILDREN).ru_maxrss``).
2. Kernel ratio: enumerating every valid word n-gram (n = 1..3) and counting
   ``(n-gram, page)`` pairs — nclue's :func:`~nclue.bench.inventory.ngram_occurrences` +
   :func:`~nclue.bench.inventory.count_pairs` (NumPy keys, one sort) against a named peer,
   a plain-Python ``collections.Counter`` loop with the same validity rules over the
   *same* token arrays. Tokenisation (shared by both) is reported separately.

Usage: ``.venv/bin/python benchmarks/build.py [COLLECTION] [--judge offline|embedding]``
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

DEV = Path("nclue-demo/collection")  # built by `make demo`

CHILD = """
import sys, time
from nclue.bench.pipeline import BuildOptions, build
t = time.perf_counter()
s = build(sys.argv[1], sys.argv[2], BuildOptions(judge=sys.argv[3]))
c = s.manifest["counts"]
print(f"{time.perf_counter() - t:.2f} {c['queries']} {c['qrel_rows']} {c['conditions_mined']}")
"""


def full_build(collection: Path, judge: str) -> tuple[float, float, str]:
    """(wall seconds, peak RSS GiB, child summary) of one build in a fresh process."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(collection), str(Path(tmp) / "bench"), judge],
            check=True,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    return wall, peak, out.stdout.strip().splitlines()[-1]


def kernel_ratio(collection: Path) -> tuple[float, float, float, int]:
    """(tokenise s, NumPy kernel s, Counter peer s, distinct (n-gram, page) pairs)."""
    import numpy as np

    from nclue.bench.inventory import _tokenize_store, count_pairs, ngram_occurrences
    from nclue.bench.text import STOPWORDS, s_stem
    from nclue.corpus.store import PageStore

    store = PageStore.open(collection)
    t = time.perf_counter()
    tokens, surface = _tokenize_store(store, lambda n: None)
    t_tok = time.perf_counter() - t

    lower = [w.lower() for w in surface]
    vocab: dict[str, int] = {"": 0}
    norm_of = np.array([vocab.setdefault(s_stem(w), len(vocab)) for w in lower], dtype=np.int64)
    content_of = np.array([len(w) >= 3 and w not in STOPWORDS for w in lower], dtype=bool)
    of_of = np.array([w == "of" for w in lower], dtype=bool)
    orig = tokens.orig
    norm, content, of_word = norm_of[orig], content_of[orig], of_of[orig]

    t = time.perf_counter()
    keys, starts, _ = ngram_occurrences(
        norm, content, of_word, tokens.brk, tokens.row, np.zeros(len(orig), dtype=np.int64), len(vocab) + 1, 3
    )
    _, _, grp, _, _, _ = count_pairs(keys, tokens.row[starts], store.n_pages)
    t_np = time.perf_counter() - t

    norm_l, content_l, of_l = norm.tolist(), content.tolist(), of_word.tolist()
    brk, row = tokens.brk.tolist(), tokens.row.tolist()
    n_tok = len(norm_l)
    t = time.perf_counter()
    counts: Counter[tuple[tuple[int, ...], int]] = Counter()
    for i in range(n_tok):
        for n in (1, 2, 3):
            j = i + n - 1
            if j >= n_tok or row[j] != row[i] or (n > 1 and brk[j]):
                break
            if not (content_l[i] and content_l[j]):
                continue
            if n == 3 and not (content_l[i + 1] or of_l[i + 1]):
                continue
            counts[(tuple(norm_l[i : j + 1]), row[i])] += 1
    t_peer = time.perf_counter() - t
    if len(counts) != len(grp):
        raise SystemExit(f"kernel mismatch: {len(counts)} Counter pairs vs {len(grp)} NumPy groups")
    return t_tok, t_np, t_peer, len(grp)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collection", nargs="?", type=Path, default=DEV)
    parser.add_argument("--judge", default="offline")
    args = parser.parse_args()
    wall, peak, summary = full_build(args.collection, args.judge)
    seconds, queries, qrels, conditions = summary.split()
    print(
        f"build ({args.judge}) on {args.collection}: wall {wall:.1f} s (in-process {seconds} s), "
        f"peak RSS {peak:.2f} GiB; {queries} queries, {qrels} qrels, {conditions} conditions"
    )
    t_tok, t_np, t_peer, pairs = kernel_ratio(args.collection)
    print(
        f"n-gram enumeration + (n-gram, page) counting, {pairs} pairs: nclue NumPy {t_np:.2f} s "
        f"vs Python Counter peer {t_peer:.2f} s -> {t_peer / t_np:.1f}x faster (tokenisation, shared: {t_tok:.2f} s)"
    )


if __name__ == "__main__":
    main()
