"""Benchmark: what ``nclue structure`` adds to ``nclue ingest`` on the same PDFs, in one run.

Peer: the library call ``ingest(PDF_DIR, NEW_COLLECTION, workers=1, ocr="off")`` (what
``nclue ingest --workers 1 --ocr off`` does, without interpreter start-up). Contender:
``build_structure(NEW_COLLECTION, StructureParams(fonts=MODE))`` on the collection just written
(outline, text-layer headings, page roles, and font reading per ``MODE``), once per mode. Both
run in this process, one after the other, so background load hits both alike; the ratio
structure ÷ ingest is reported on two clocks, wall and CPU (``time.process_time``, robust when
other jobs share the machine). Goal (issue 18): structure ≤ 30% of ingest on the development
corpus, with the default ``--fonts auto``.

Usage: .venv/bin/python benchmarks/structure_extract.py [--pdf-dir DIR] [--fonts auto,off,all]
(default corpus: debian-docs in $NCLUE_CACHE/debian-docs or ~/.cache/nclue).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from nclue.corpus.ingest import ingest
from nclue.corpus.structure import StructureParams, build_structure


def clocked(fn):  # noqa: ANN001, ANN201
    """``(result, wall seconds, CPU seconds)`` of ``fn()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    cache = Path(os.environ.get("NCLUE_CACHE") or Path.home() / ".cache" / "nclue")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pdf-dir", type=Path, default=cache / "debian-docs")
    parser.add_argument("--fonts", default="auto,off")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nclue-structure-bench-") as tmp:
        coll = Path(tmp) / "coll"
        summary, wall, cpu = clocked(lambda: ingest(args.pdf_dir, coll, workers=1, ocr="off"))
        print(f"load average {os.getloadavg()[0]:.1f}")
        print(f"ingest (workers 1, ocr off): {wall:.1f} s wall, {cpu:.1f} s CPU")
        for mode in args.fonts.split(","):
            result, s_wall, s_cpu = clocked(
                lambda mode=mode: build_structure(coll, StructureParams(fonts=mode), rebuild=True)
            )
            print(
                f"structure --fonts {mode}: {s_wall:.1f} s wall, {s_cpu:.1f} s CPU = "
                f"{100 * s_wall / wall:.0f}% of ingest wall, {100 * s_cpu / cpu:.0f}% of ingest CPU; "
                f"{result.rows} rows {result.counts}"
            )
    del summary


if __name__ == "__main__":
    main()
