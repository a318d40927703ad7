"""``nclue corpus fetch``, ``nclue ingest`` and ``nclue collection info``."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from nclue.engine import EngineName

corpus_app = typer.Typer(
    help="Bring corpora of real PDFs.\n\nExample: nclue corpus fetch debian-docs ./pdfs", no_args_is_help=True
)
collection_app = typer.Typer(
    help="Inspect a collection (page store).\n\nExample: nclue collection info ./coll", no_args_is_help=True
)


class OcrMode(str, Enum):
    """When to OCR a page (Tesseract): pages without a text layer, never, or always."""

    auto = "auto"
    off = "off"
    force = "force"


class InfoFormat(str, Enum):
    """Output of ``collection info``."""

    table = "table"
    json = "json"


def fetch(
    recipe: str = typer.Argument(
        ..., help="Recipe name: debian-docs or debian-docs-shift (any name when --packages is given)."
    ),
    dest: Path = typer.Argument(..., help="Folder to fill with PDFs (created; cached on reruns)."),
    packages: str = typer.Option(None, "--packages", help="Comma-separated Debian packages instead of the recipe's."),
    mirror: str = typer.Option(None, "--mirror", help="Debian mirror URL; default: apt-get download."),
    suite: str = typer.Option("bookworm", "--suite", help="Suite whose index --mirror uses."),
) -> None:
    """Download a recipe's Debian packages and extract their PDFs into DEST.

    debian-docs = texlive-science-doc, texlive-humanities-doc, r-doc-pdf (487 PDFs).
    debian-docs-shift = eight other documentation packages, one source each (131 PDFs; SourceShift).
    A second call finds everything cached and does no network work.

    Example: nclue corpus fetch debian-docs ./pdfs
    """
    from rich.console import Console

    from nclue.corpus.fetch import fetch_recipe

    console = Console(stderr=True)
    with console.status(f"fetching {recipe} into {dest}"):
        summary = fetch_recipe(
            recipe, dest, packages=packages.split(",") if packages else None, mirror=mirror, suite=suite
        )
    how = f"fetched {', '.join(summary.fetched)}" if summary.fetched else "all cached, no download"
    typer.echo(
        f"{summary.n_pdfs} PDFs ({summary.n_bytes / 1e6:,.1f} MB, {summary.n_symlinks} via symlinks) "
        f"in {summary.dest} [{how}]; manifest {summary.manifest}"
    )


def ingest(
    pdf_dir: Path = typer.Argument(..., help="Folder of PDFs (searched recursively)."),
    collection_dir: Path = typer.Argument(..., help="Collection folder to write (docs.parquet, pages.parquet)."),
    workers: int = typer.Option(1, "--workers", "-w", min=0, help="Processes (0 = one per CPU)."),
    ocr: OcrMode = typer.Option(OcrMode.auto, "--ocr", help="auto: pages without a text layer; off; force."),
    show_progress: bool = typer.Option(True, "--progress/--no-progress", help="Show the progress bars."),
    engine: EngineName = typer.Option(EngineName.local, "--engine", help="Run extraction here (local) or on Ray."),
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="An existing Ray cluster (HOST:PORT or auto); default: a local Ray instance."
    ),
) -> None:
    """Extract every page's text into a Parquet page store; resumable and deterministic.

    Example: nclue ingest ./pdfs ./coll --workers 2

    Example: nclue ingest ./pdfs ./coll --engine ray --ray-address auto   (the same bytes as a local run)
    """
    from nclue.corpus.ingest import ingest as run_ingest
    from nclue.progress import progress_bars

    with progress_bars(enabled=show_progress) as bar:
        summary = run_ingest(
            pdf_dir,
            collection_dir,
            workers=workers,
            ocr=ocr.value,
            progress=bar,
            engine=engine.value,
            ray_address=ray_address,
        )
    failures = ", ".join(f"{count} {reason}" for reason, count in summary.failures.items()) or "none"
    typer.echo(
        f"{summary.n_docs:,} documents, {summary.n_pages:,} pages ({summary.n_ocr_pages:,} by OCR) from "
        f"{summary.n_files:,} files in {summary.seconds:.1f} s; extracted {summary.n_extracted:,} "
        f"({summary.pages_per_s:,.0f} pages/s), reused {summary.n_reused:,}; "
        f"duplicates {len(summary.duplicates):,}; failed: {failures}"
    )
    for doc_id, first in summary.duplicates:
        typer.echo(f"  duplicate: {doc_id} = {first}")


def info(
    collection_dir: Path = typer.Argument(..., help="Collection folder written by `nclue ingest`."),
    fmt: InfoFormat = typer.Option(InfoFormat.table, "--format", help="table or json."),
    threshold: float = typer.Option(
        0.98, "--threshold", min=0.0, max=1.0, help="Gate: minimum share of usable pages per source."
    ),
    min_chars: int = typer.Option(10, "--min-chars", min=0, help="Non-space characters that make a page usable."),
) -> None:
    """Documents, pages, characters, failures by reason and the per-source extraction gate.

    Example: nclue collection info ./coll --format json
    """
    from nclue.corpus.info import collection_info, render_info
    from nclue.io import dumps_canonical

    data = collection_info(collection_dir, threshold=threshold, min_chars=min_chars)
    if fmt is InfoFormat.json:
        typer.echo(dumps_canonical(data))
    else:
        from rich.console import Console

        Console().print(render_info(data))


corpus_app.command("fetch")(fetch)
collection_app.command("info")(info)


def register(app: typer.Typer) -> None:
    """Add ``corpus fetch``, ``ingest`` and ``collection info``."""
    app.add_typer(corpus_app, name="corpus")
    app.command("ingest")(ingest)
    app.add_typer(collection_app, name="collection")
