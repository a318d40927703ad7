"""``make demo``: the whole study on the real Debian corpus in one command.

fetch the ``debian-docs`` corpus → ingest → lexical + dense page indexes → build the
benchmark → run the default matrix → report. Every stage is cached or resumable, so a
second run takes seconds: the fetch is cached, ingest skips unchanged PDFs, indexes are
kept, the benchmark is rebuilt only when missing or failing ``bench verify``, and the
matrix skips runs whose spec and inputs are unchanged.

Run it with ``nclue demo [--out nclue-demo] [--dense-backend onnx]`` (``make demo``).
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from nclue.errors import NclueError
from nclue.report.paper import PaperReport

console = Console()


def _stage(title: str) -> float:
    console.rule(f"[bold]{title}")
    return time.perf_counter()


def _done(started: float) -> None:
    console.print(f"[dim]{time.perf_counter() - started:.1f} s[/]")


def run_demo(out: Path, dense_backend: str = "onnx", workers: int = 2, queries: int = 1000) -> Path:
    """Run every stage into ``out``; return the report's ``index.md``.

    To stay within a half-hour first run on two CPU cores, the dense index encodes each
    page's first window (254 word pieces) only; ``nclue index --dense`` encodes whole
    pages by default. The benchmark uses the embedding judge (MiniLM semantic gate).
    """
    from nclue.bench.params import BuildOptions
    from nclue.bench.pipeline import build
    from nclue.bench.verify import verify as verify_release
    from nclue.corpus.fetch import fetch_recipe
    from nclue.corpus.info import collection_info, render_info
    from nclue.corpus.ingest import ingest
    from nclue.index.dense import build_dense_index
    from nclue.index.lexical import build_lexical_index
    from nclue.matrix.runner import run_matrix
    from nclue.matrix.spec import load_matrix
    from nclue.report.paper import compute_report, write_report

    total = time.perf_counter()
    pdfs, collection, bench, runs, report = (out / d for d in ("pdfs", "collection", "bench", "runs", "report"))

    t = _stage("1/7 fetch the Debian documentation corpus")
    fetch_recipe("debian-docs", pdfs)
    _done(t)

    t = _stage("2/7 ingest PDFs into the page store")
    ingest(pdfs, collection, workers=workers, ocr="auto", progress=True)
    console.print(render_info(collection_info(collection)))
    _done(t)

    t = _stage("3/7 lexical page index (bm25s)")
    if not _lexical_ok(collection):
        build_lexical_index(collection)
    _done(t)

    t = _stage(f"4/7 dense page index (bundled all-MiniLM-L6-v2, {dense_backend}, first 254 tokens of each page)")
    build_dense_index(collection, None, backend=dense_backend, progress=True, max_chunks_per_page=1)
    _done(t)

    t = _stage("5/7 build the benchmark (inventory → rare conjunctions → validated release)")
    if not _release_ok(bench, verify_release):
        defaults = BuildOptions()
        options = BuildOptions(judge="embedding", compose=replace(defaults.compose, n_queries=queries))
        summary = build(collection, bench, options)
        console.print(f"{summary.manifest['counts'].get('queries')} queries written to {bench}")
    _done(t)

    t = _stage("6/7 run the default capability matrix")
    spec = load_matrix()
    result = run_matrix(spec, bench, collection, runs, progress=True)
    console.print(f"{len(result.ran)} run(s) produced, {len(result.skipped)} unchanged and skipped")
    for name, problem in result.failed.items():
        console.print(f"[yellow]{name}[/]: {problem}")
    _done(t)

    t = _stage("7/7 report")
    data = compute_report(bench, runs)
    write_report(data, report, runs)
    _done(t)

    _print_top(data)
    console.print(f"\nreport: [bold]{report / 'index.md'}[/]   (total {time.perf_counter() - total:.0f} s)")
    return report / "index.md"


def _lexical_ok(collection: Path) -> bool:
    """The lexical index is reused only when it opens: present, current format, fresh, undamaged."""
    from nclue.index.lexical import LexicalIndex

    try:
        LexicalIndex(collection)
    except NclueError:
        return False
    return True


def _release_ok(bench: Path, verify_release) -> bool:  # noqa: ANN001 - nclue.bench.release.verify
    """A release is reused only when it exists and ``bench verify`` finds no problem."""
    if not (bench / "MANIFEST.json").is_file():
        return False
    try:
        problems, _, _ = verify_release(bench)
    except NclueError:
        return False
    return not problems


def _print_top(data: PaperReport, rows: int = 10) -> None:
    from nclue.scoring.results import scorecard_table

    table = scorecard_table(data.card, data.fair[:rows], data.categories)
    Console(width=max(console.width, 170)).print(table.to_rich())
