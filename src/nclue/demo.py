"""``make demo``: the whole study on the real Debian corpus in one command.

fetch the ``debian-docs`` corpus → ingest → page indexes (lexical, dense + token index in
one encoder pass) → build the benchmark → run the default matrix (in parallel) → report.
Every stage is cached or resumable, so a second run takes seconds: the fetch is cached,
ingest skips unchanged PDFs, indexes are kept while current
(:func:`nclue.index.builders.build_all`), the benchmark is rebuilt only when missing or
failing ``bench verify``, the matrix skips runs whose spec and inputs are unchanged, and
the report is kept when its inputs — release checksums, run manifest, nclue's source — are.

Each stage's wall time, with the load average before and after it, is printed and written
to ``OUT/report/timings.json`` (:class:`DemoTimings`), so a slower stage shows up in the
next run's record.

Run it with ``nclue demo [--out nclue-demo] [--dense-backend torch-bf16]`` (``make demo``).
"""

from __future__ import annotations

import os
import platform
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console

from nclue.errors import NclueError
from nclue.io import atomic_write_text
from nclue.report.paper import PaperReport

console = Console()
TIMINGS_FILE = "timings.json"
REPORT_STAMP = ".inputs.sha256"
"""SHA-256 of the report's inputs (:func:`_report_inputs`): a rerun with the same inputs keeps the report."""


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


@dataclass
class DemoTimings:
    """Wall time of every demo stage, with the 1/5/15-minute load average before and after it."""

    stages: list[dict] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)
    date: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))

    def stage(self, name: str, title: str) -> _Stage:
        """Context manager timing one stage (prints its rule and its time)."""
        return _Stage(self, name, title)

    def to_json(self) -> dict:
        """The record written to ``timings.json``."""
        from nclue._version import __version__

        return {
            "what": "nclue demo wall time per stage (seconds) and load average [1, 5, 15 min] around it",
            "date": self.date,
            "nclue": __version__,
            "machine": {
                "cpus": os.cpu_count(),
                "platform": platform.platform(),
                "python": platform.python_version(),
            },
            "total_seconds": round(time.perf_counter() - self.started, 1),
            "stages": self.stages,
        }

    def write(self, path: Path) -> Path:
        """Write :meth:`to_json` atomically to ``path``."""
        from nclue.io import write_json

        write_json(path, self.to_json())
        return path


class _Stage:
    def __init__(self, timings: DemoTimings, name: str, title: str) -> None:
        self.timings, self.name, self.title = timings, name, title
        self.detail: dict = {}

    def __enter__(self) -> _Stage:
        console.rule(f"[bold]{self.title}")
        self.load = _load()
        self.started = time.perf_counter()
        return self

    def __exit__(self, kind, value, traceback) -> None:  # noqa: ANN001
        if kind is not None:
            return
        seconds = time.perf_counter() - self.started
        self.timings.stages.append(
            {"stage": self.name, "seconds": round(seconds, 1), "load_before": self.load, "load_after": _load()}
            | self.detail
        )
        console.print(f"[dim]{seconds:.1f} s[/]")


def run_demo(out: Path, dense_backend: str | None = None, workers: int = 2, queries: int = 1000) -> Path:
    """Run every stage into ``out``; return the report's ``index.md``.

    To keep the first run short on two CPU cores, the dense index encodes each page's first
    window (254 word pieces) only, on the fast bfloat16 path by default; ``nclue index
    --dense`` encodes whole pages by default. The benchmark uses the embedding judge
    (MiniLM semantic gate). ``workers`` processes run the ingest and the matrix.
    """
    from nclue.bench.params import BuildOptions
    from nclue.bench.pipeline import build
    from nclue.bench.verify import verify as verify_release
    from nclue.corpus.fetch import fetch_recipe
    from nclue.corpus.info import collection_info, render_info
    from nclue.corpus.ingest import ingest
    from nclue.index.builders import IndexOptions, build_all
    from nclue.matrix.runner import run_matrix
    from nclue.matrix.spec import load_matrix
    from nclue.models.encoder import DEFAULT_BACKEND
    from nclue.report.paper import compute_report, write_report

    backend = dense_backend or DEFAULT_BACKEND
    timings = DemoTimings()
    pdfs, collection, bench, runs, report = (out / d for d in ("pdfs", "collection", "bench", "runs", "report"))

    with timings.stage("fetch", "1/6 fetch the Debian documentation corpus"):
        fetch_recipe("debian-docs", pdfs)

    with timings.stage("ingest", "2/6 ingest PDFs into the page store"):
        ingest(pdfs, collection, workers=workers, ocr="auto", progress=True)
        console.print(render_info(collection_info(collection)))

    options = IndexOptions(dense_backend=backend, dense_max_chunks=1, workers=workers)
    with timings.stage(
        "indexes", f"3/6 page indexes: lexical (bm25s), dense + token index (MiniLM, {backend}, first 254 tokens)"
    ) as stage:
        steps = build_all(
            collection,
            options,
            progress=True,
            on_step=lambda s: console.print(f"{s.name}: {s.action} ({s.seconds:.1f} s)", highlight=False),
        )
        stage.detail = {"steps": [{"index": s.name, "action": s.action, "seconds": round(s.seconds, 1)} for s in steps]}

    with timings.stage("build", "4/6 build the benchmark (inventory → rare conjunctions → validated release)") as stage:
        reused = _release_ok(bench, verify_release)
        if not reused:
            defaults = BuildOptions()
            opts = BuildOptions(judge="embedding", compose=replace(defaults.compose, n_queries=queries))
            summary = build(collection, bench, opts)
            console.print(f"{summary.manifest['counts'].get('queries')} queries written to {bench}")
        stage.detail = {"action": "kept" if reused else "built"}

    with timings.stage("matrix", f"5/6 run the default capability matrix ({workers} worker processes)") as stage:
        result = run_matrix(load_matrix(), bench, collection, runs, progress=True, workers=workers)
        console.print(f"{len(result.ran)} run(s) produced, {len(result.skipped)} unchanged and skipped")
        for name, problem in result.failed.items():
            console.print(f"[yellow]{name}[/]: {problem}")
        stage.detail = {"ran": len(result.ran), "skipped": len(result.skipped), "run_seconds": _run_seconds(runs)}

    with timings.stage("report", "6/6 report") as stage:
        stamp = _report_inputs(bench, runs)
        kept = (report / "index.md").is_file() and _read_stamp(report) == stamp
        if not kept:
            data = compute_report(bench, runs)
            write_report(data, report, runs)
            atomic_write_text(report / REPORT_STAMP, stamp + "\n")
        stage.detail = {"action": "kept" if kept else "written"}

    if kept:
        console.print(f"report unchanged (same benchmark, runs and nclue code): {report}")
    else:
        _print_top(data)
    _print_timings(timings)
    path = timings.write(report / TIMINGS_FILE)
    console.print(
        f"\nreport: [bold]{report / 'index.md'}[/]   timings: {path}   (total {timings.to_json()['total_seconds']:.0f} s)"
    )
    return report / "index.md"


def _report_inputs(bench: Path, runs: Path) -> str:
    """SHA-256 of everything the report is computed from: the release's checksums, the run
    manifest (every run file's SHA-256) and the source of the installed nclue package."""
    import hashlib

    digest = hashlib.sha256()
    for path in (bench / "SHA256SUMS", runs / "matrix.json"):
        digest.update(path.read_bytes() if path.is_file() else b"absent")
    package = Path(__file__).resolve().parent  # the nclue package
    for source in sorted(package.rglob("*.py")):
        digest.update(source.relative_to(package).as_posix().encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()


def _read_stamp(report: Path) -> str | None:
    path = report / REPORT_STAMP
    return path.read_text(encoding="utf-8").strip() if path.is_file() else None


def _run_seconds(runs: Path) -> dict[str, float]:
    """Seconds each run of the matrix took when it was last produced (``matrix.json``)."""
    import json

    try:
        manifest = json.loads((runs / "matrix.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {name: entry.get("seconds", 0.0) for name, entry in sorted(manifest.get("runs", {}).items())}


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


def _print_timings(timings: DemoTimings) -> None:
    from rich.table import Table

    table = Table(title="demo wall time per stage")
    for column in ("stage", "seconds", "load before (1/5/15 min)", "load after"):
        table.add_column(column, justify="right" if column == "seconds" else "left")
    for stage in timings.stages:
        table.add_row(
            stage["stage"],
            f"{stage['seconds']:.1f}",
            " ".join(f"{x:.1f}" for x in stage["load_before"]),
            " ".join(f"{x:.1f}" for x in stage["load_after"]),
        )
    table.add_row("total", f"{timings.to_json()['total_seconds']:.1f}", "", "")
    console.print(table)
