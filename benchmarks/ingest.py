"""Benchmark: `nclue ingest` against a bare pypdfium2 loop over the same PDFs, in one run.

Peer: the loop ``for page in pdf: page.get_textpage().get_text_range()`` over every
distinct PDF (duplicates removed beforehand, untimed, since ingest skips them too), run
in this process (no interpreter start-up: the peer's best case). Contender: the real
command line ``nclue ingest PDF_DIR NEW_DIR --workers N --ocr off --no-progress`` in a
fresh interpreter, timed end to end (start-up, hashing, extraction, shard and store
writes). ``--ocr off`` makes both do the same work; ``--ocr auto`` (the default, which
also OCRs image-only pages) is timed once for the record. The library call
``ingest(workers=1)`` is also timed in this process, like the peer. Each repeat runs the
peer then every contender; a contender's ratio is taken against the peer of the same
repeat and the median ratio over ``--repeats`` is reported, so background load hits both
sides alike. Two clocks: wall time (what a user waits) and CPU time (user + sys of the
process and its children: robust when other jobs share the machine, and the honest
cost measure for one worker). Goal: ``--workers 1`` ≥ 0.9 × the peer's pages/s.

Usage: .venv/bin/python benchmarks/ingest.py [--pdf-dir DIR] [--repeats 3]
(default corpus: debian-docs, fetched into $NCLUE_CACHE/debian-docs or ~/.cache/nclue).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path


@dataclass
class Timing:
    """Pages processed, wall seconds and CPU seconds (user + sys, children included)."""

    pages: int
    wall: float
    cpu: float


class _Clock:
    """Wall and CPU time of this process plus its waited-for children."""

    def __enter__(self) -> _Clock:
        self.wall = time.perf_counter()
        self.cpu = self._cpu()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall
        self.cpu = self._cpu() - self.cpu

    @staticmethod
    def _cpu() -> float:
        own = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def bare_loop(paths: list[Path]) -> Timing:
    """The peer: a bare pypdfium2 loop over ``paths``."""
    import pypdfium2 as pdfium

    pages = 0
    with _Clock() as clock:
        for path in paths:
            pdf = pdfium.PdfDocument(str(path))
            for index in range(len(pdf)):
                pdf[index].get_textpage().get_text_range()
                pages += 1
            pdf.close()
    return Timing(pages, clock.wall, clock.cpu)


def nclue_ingest(pdf_dir: Path, workers: int, ocr: str) -> Timing:
    """One `nclue ingest` command into a fresh collection, in a fresh interpreter."""
    from nclue.corpus.store import PageStore

    work = Path(tempfile.mkdtemp(prefix="nclue-bench-"))
    try:
        command = [sys.executable, "-c", "from nclue.cli import main; main()", "ingest", str(pdf_dir), str(work / "c")]
        command += ["--workers", str(workers), "--ocr", ocr, "--no-progress"]
        with _Clock() as clock:
            subprocess.run(command, check=True, capture_output=True)
        return Timing(PageStore.open(work / "c").n_pages, clock.wall, clock.cpu)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def library_ingest(pdf_dir: Path) -> Timing:
    """``nclue.corpus.ingest.ingest(workers=1, ocr="off")`` in this process."""
    from nclue.corpus.ingest import ingest

    work = Path(tempfile.mkdtemp(prefix="nclue-bench-"))
    try:
        with _Clock() as clock:
            summary = ingest(pdf_dir, work / "c", workers=1, ocr="off")
        return Timing(summary.n_pages, clock.wall, clock.cpu)
    finally:
        shutil.rmtree(work, ignore_errors=True)


PEER = "bare pypdfium2 loop"
CONTENDERS: dict[str, Callable[[Path], Timing]] = {
    "ingest() library, 1 worker": library_ingest,
    "nclue ingest --workers 1": partial(nclue_ingest, workers=1, ocr="off"),
    "nclue ingest --workers 2": partial(nclue_ingest, workers=2, ocr="off"),
}


def _line(label: str, t: Timing, peer: Timing | None) -> str:
    text = f"{label:<28} {t.pages:>6} pages  wall {t.wall:7.2f} s {t.pages / t.wall:7.1f} p/s"
    text += f"  cpu {t.cpu:7.2f} s {t.pages / t.cpu:7.1f} p/cpu-s"
    if peer is not None:
        text += f"  ratio wall {peer.wall / t.wall:5.2f} cpu {peer.cpu / t.cpu:5.2f}"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf-dir", type=Path, default=None, help="PDF folder (default: the debian-docs corpus)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from nclue.corpus.fetch import fetch_recipe
    from nclue.corpus.ingest import scan_pdf_dir

    pdf_dir = args.pdf_dir
    if pdf_dir is None:
        cache = Path(os.environ.get("NCLUE_CACHE") or Path.home() / ".cache" / "nclue")
        pdf_dir = fetch_recipe("debian-docs", cache / "debian-docs").dest
    seen: set[str] = set()
    distinct = [f.abspath for f in scan_pdf_dir(pdf_dir) if not (f.sha256 in seen or seen.add(f.sha256))]
    print(
        f"data: {pdf_dir} ({len(distinct)} distinct PDFs); {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load {os.getloadavg()[0]:.2f}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    wall: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    cpu: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    for repeat in range(args.repeats):
        peer = bare_loop(distinct)
        print(f"  repeat {repeat + 1}: {_line(PEER, peer, None)}", flush=True)
        for name, run in CONTENDERS.items():
            timing = run(pdf_dir)
            assert timing.pages == peer.pages, f"{name}: {timing.pages} pages, peer {peer.pages}"
            wall[name].append(peer.wall / timing.wall)
            cpu[name].append(peer.cpu / timing.cpu)
            print(f"  repeat {repeat + 1}: {_line(name, timing, peer)}", flush=True)
    auto = nclue_ingest(pdf_dir, 1, "auto")
    print(f"  once:     {_line('nclue ingest -w 1 --ocr auto', auto, None)} (also OCRs image-only pages)")
    print(f"\nmedian ratio over {args.repeats} repeats (contender pages/s ÷ {PEER} pages/s, same repeat):")
    for name in CONTENDERS:
        print(f"  {name:<28} wall {statistics.median(wall[name]):5.2f}   cpu {statistics.median(cpu[name]):5.2f}")
    print(f"  load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
