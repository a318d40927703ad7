"""The default matrix in parallel worker processes against the same matrix in one process.

Run: ``.venv/bin/python benchmarks/matrix.py [COLLECTION] [BENCH] [--workers 2]``
(defaults: ``nclue-demo/collection`` and ``nclue-demo/bench``, built by ``make demo``).

Both produce every run of ``nclue/matrix/default.toml`` from scratch into temporary folders
(the serial peer with ``workers=1``, in this process; then ``workers=N`` spawn processes).
Reported: wall seconds of each, the ratio, the per-run seconds of the slowest runs, and
whether every run file is byte-identical between the two. The load average is printed
before and after each: on a shared machine read the ratio.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collection", nargs="?", default="nclue-demo/collection")
    parser.add_argument("bench", nargs="?", default="nclue-demo/bench")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()

    import json

    from nclue.matrix.runner import MANIFEST, run_matrix
    from nclue.matrix.spec import load_matrix

    spec = load_matrix()
    seconds, folders = {}, {}
    with tempfile.TemporaryDirectory(prefix="nclue-matrix-bench-") as tmp:
        for label, workers in (("serial (peer)", 1), (f"{args.workers} workers", args.workers)):
            out = Path(tmp) / str(workers)
            print(f"{label}: load average before {os.getloadavg()}", flush=True)
            started = time.perf_counter()
            result = run_matrix(spec, args.bench, args.collection, out, workers=workers)
            seconds[label] = time.perf_counter() - started
            folders[label] = out
            print(
                f"{label}: {len(result.ran)} runs in {seconds[label]:.1f} s; load after {os.getloadavg()}", flush=True
            )
        serial, parallel = folders.values()
        names = sorted(p.name for p in serial.iterdir() if p.suffix in (".trec", ".jsonl"))
        differ = [n for n in names if (serial / n).read_bytes() != (parallel / n).read_bytes()]
        runs = json.loads((serial / MANIFEST).read_text())["runs"]
        slowest = sorted(runs.items(), key=lambda kv: -kv[1]["seconds"])[:5]
    (a, sa), (b, sb) = seconds.items()
    print(f"\n| matrix ({len(spec.runs)} runs, {len(names)} files) | wall s | × serial |")
    print("|---|---:|---:|")
    print(f"| {a} | {sa:.1f} | 1.00 |")
    print(f"| {b} | {sb:.1f} | {sa / sb:.2f} |")
    print(
        f"\nrun files identical: {len(names) - len(differ)} / {len(names)}" + (f" (differ: {differ})" if differ else "")
    )
    print("slowest runs (serial): " + ", ".join(f"{n} {e['seconds']:.1f} s" for n, e in slowest))


if __name__ == "__main__":
    main()
