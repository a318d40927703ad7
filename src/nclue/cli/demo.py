"""``nclue demo``: the whole study on the real Debian corpus in one command (``make demo`` calls it)."""

from __future__ import annotations

from pathlib import Path

import typer

from nclue.cli.index import Backend
from nclue.models.encoder import DEFAULT_BACKEND


def demo(
    out: Path = typer.Option(
        Path("nclue-demo"), "--out", help="Demo directory (PDFs, collection, bench, runs, report)."
    ),
    dense_backend: Backend = typer.Option(
        Backend(DEFAULT_BACKEND), "--dense-backend", help="Encoder backend of the dense and token indexes."
    ),
    workers: int = typer.Option(2, "--workers", min=1, help="Processes for the ingest and the matrix."),
    queries: int = typer.Option(1000, "--queries", min=1, help="Benchmark size (at most)."),
    full: bool = typer.Option(
        False, "--full", help="Also condition masking, SourceShift and the semantic benchmark (~12 more minutes)."
    ),
    audit: Path | None = typer.Option(
        None,
        "--audit",
        help="A committed label audit (e.g. data/debian-docs/audit): its repaired qrels are reported too when it "
        "belongs to the release built.",
    ),
    readers: Path | None = typer.Option(
        None,
        "--readers",
        help="Folder of committed blind-reader replies (e.g. data): with --full, the reader-judged benchmarks are "
        "rebuilt from them and scored.",
    ),
) -> None:
    """Fetch the Debian documentation corpus, ingest, index, build the benchmark, run the matrix, report.

    Every stage is cached or resumable: a second run takes seconds. Each stage's wall time
    is printed and written to OUT/report/timings.json.

    Example: nclue demo --out nclue-demo

    Example: nclue demo --full   (adds masking, SourceShift and the semantic benchmark)

    Example: nclue demo --audit data/debian-docs/audit   (what `make demo` runs)

    Example: nclue demo --full --audit data/debian-docs/audit --readers data   (what `make demo-full` runs)
    """
    from nclue.demo import run_demo

    run_demo(out, dense_backend.value, workers, queries, full, audit, readers)


def register(app: typer.Typer) -> None:
    """Add ``demo``."""
    app.command("demo")(demo)
