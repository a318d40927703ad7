"""``make demo``: the whole study on the real Debian corpus in one command.

fetch the ``debian-docs`` corpus → ingest → page indexes (lexical, dense + token index in
one encoder pass, document structure) → build the benchmark → run the default matrix (in
parallel) → report → coverage selection; ``--full`` adds condition masking, SourceShift, the
semantic benchmark and, with ``readers`` (committed blind-reader replies), the two reader-judged
benchmarks (development and shift corpus), each scored by the whole matrix.
Every stage is cached or resumable, so a second run takes seconds: the fetch is cached,
ingest skips unchanged PDFs, indexes are kept while current
(:func:`nclue.index.builders.build_all`), the benchmark is rebuilt only when missing or
failing ``bench verify``, the matrix skips runs whose spec and inputs are unchanged, and
the report is kept when its inputs — release checksums, run manifest, nclue's source — are.

Each stage's wall time, with the load average before and after it, is printed and written
to ``OUT/report/timings.json`` (:class:`DemoTimings`), so a slower stage shows up in the
next run's record.

Run it with ``nclue demo [--out nclue-demo] [--dense-backend torch-bf16] [--full]`` (``make demo``,
``make demo-full``).
"""

from __future__ import annotations

import os
import platform
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from nclue.corpus.store import META_FILE as COLLECTION_RECORD
from nclue.errors import NclueError
from nclue.io import atomic_write_text
from nclue.matrix.runset import MANIFEST as RUN_MANIFEST
from nclue.progress import progress_bars
from nclue.release import MANIFEST_FILE
from nclue.report.masking import MASK_DIR
from nclue.report.paper import PaperReport
from nclue.tables import Table

console = Console()
TIMINGS_FILE = "timings.json"
REPORT_STAMP = ".inputs.sha256"
"""SHA-256 of a stage's inputs (:func:`_inputs_digest`): a rerun with the same inputs keeps its outputs
(the report, the coverage study)."""


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


def run_demo(
    out: Path,
    dense_backend: str | None = None,
    workers: int = 2,
    queries: int = 1000,
    full: bool = False,
    audit: Path | None = None,
    readers: Path | None = None,
) -> Path:
    """Run every stage into ``out``; return the report's ``index.md``.

    To keep the first run short on two CPU cores, the dense index encodes each page's first
    window (254 word pieces) only, on the fast bfloat16 path by default; ``nclue index
    --dense`` encodes whole pages by default. The benchmark uses the embedding judge
    (MiniLM semantic gate). ``workers`` processes run the ingest and the matrix.

    The default run reproduces the development scorecard, contrasts, shared-document and
    difficulty studies, the label figure, the HTML report and the coverage-selection tables.
    ``full`` adds the studies that need more data or more runs — condition masking (Table
    S5a), SourceShift over other Debian documentation packages (Tables S3–S4) and the semantic
    (section-concept) benchmark — and the default run names them with this command.
    ``audit`` is a committed audit folder (``data/debian-docs/audit``): when it belongs to the
    release just built (:func:`audited_qrels`), the report is written on its repaired qrels too.
    ``readers`` is the folder of committed reader replies (``data``: ``data/debian-docs/reader``
    and ``data/debian-docs-shift/reader``); with ``full``, the reader-judged benchmarks are
    rebuilt from them (no reader is asked), scored by the default matrix, and each gets the coverage
    protocol's study on its judged pools (grade-0 documents included; ``OUT/coverage-reader``,
    ``OUT/coverage-shift-reader``).
    """
    from nclue.bench.construction_params import BuildOptions
    from nclue.bench.pipeline import build
    from nclue.bench.verify import verify as verify_release
    from nclue.corpus.fetch import fetch_recipe
    from nclue.corpus.info import collection_info, render_info
    from nclue.corpus.ingest import ingest
    from nclue.index.builders import IndexOptions, build_all, remove_other_dense_indexes
    from nclue.index.options import DenseOptions
    from nclue.matrix.runner import run_matrix
    from nclue.matrix.spec import load_matrix
    from nclue.models.encoder import DEFAULT_BACKEND

    backend = dense_backend or DEFAULT_BACKEND
    timings = DemoTimings()
    pdfs, collection, bench, runs, report = (out / d for d in ("pdfs", "collection", "bench", "runs", "report"))
    n = (11 if readers is not None else 10) if full else 7
    step = iter(range(1, n + 1))

    def title(text: str) -> str:
        return f"{next(step)}/{n} {text}"

    with timings.stage("fetch", title("fetch the Debian documentation corpus")):
        fetch_recipe("debian-docs", pdfs)

    with timings.stage("ingest", title("ingest PDFs into the page store")):
        with progress_bars(transient=True) as bar:
            ingest(pdfs, collection, workers=workers, ocr="auto", progress=bar)
        console.print(render_info(collection_info(collection)))

    options = IndexOptions(dense=DenseOptions(backend=backend, max_chunks_per_page=1, workers=workers))
    for name in remove_other_dense_indexes(collection, options):  # the matrix reads one dense index
        console.print(f"removed the dense index {name}: built with other settings than the demo's", markup=False)
    with timings.stage(
        "indexes",
        title(f"page indexes: lexical, dense + tokens (MiniLM, {backend}, first 254 tokens), structure"),
    ) as stage:
        with progress_bars(transient=True) as bar:
            steps = build_all(collection, options, progress=bar)
        for s in steps:
            console.print(f"{s.name}: {s.action} ({s.seconds:.1f} s)", highlight=False)
        stage.detail = {"steps": [{"index": s.name, "action": s.action, "seconds": round(s.seconds, 1)} for s in steps]}

    build_options = BuildOptions(judge="embedding", compose=replace(BuildOptions().compose, n_queries=queries))
    with timings.stage(
        "build", title("build the benchmark (inventory → rare conjunctions → validated release)")
    ) as stage:
        stage.detail = {"action": _build_release(collection, bench, build_options, build, verify_release)}
        repaired, note = audited_qrels(bench, audit)
        console.print(note, highlight=False, markup=False)

    spec = load_matrix()
    with timings.stage("matrix", title(f"run the default capability matrix ({workers} worker processes)")) as stage:
        stage.detail = _run_matrix(run_matrix, spec, bench, collection, runs, workers)

    shift = _earlier_shift(out)  # a `--full` run's SourceShift study stays in the report
    if full:
        from nclue.report.masking import run_masking, systems_to_mask

        with timings.stage("masking", title("condition masking: every fair system without each condition (S5a)")):
            fair = [r.name for r in spec.runs if r.form == spec.form]
            with progress_bars(transient=True) as bar:
                run_masking(bench, collection, report / MASK_DIR, systems_to_mask(fair), spec.form, progress=bar)
        shift = _sourceshift(timings, title, out, workers, backend, build_options)

    with timings.stage("report", title("report: tables, studies, label figure, index.html")) as stage:
        data, kept = _report(bench, runs, report, collection, shift, repaired)
        stage.detail = {"action": "kept" if kept else "written"}

    with timings.stage("coverage", title("coverage selection: retrieved pools, calibrated evidence, freeze")) as stage:
        coverage, kept = _coverage(bench, collection, out / "coverage")
        stage.detail = {"action": "kept" if kept else "written"}

    if full:
        with timings.stage("semantic", title("semantic benchmark: section concepts, the matrix, its report")):
            _semantic(out, collection, spec, workers, build_options)
    if full and readers is not None:
        with timings.stage(
            "reader", title("reader-judged benchmarks (development, shift): committed replies, the matrix, reports")
        ) as stage:
            stage.detail = _reader_benchmarks(out, collection, readers, spec, workers, backend)

    if data is None:
        console.print(f"report unchanged (same benchmark, runs and nclue code): {report}", markup=False)
    else:
        _print_top(data)
    console.print(coverage.to_rich())
    for line in _skipped(out, data, shift):
        console.print(f"[yellow]not run:[/] {escape(line)}", highlight=False)
    _print_timings(timings)
    path = timings.write(report / TIMINGS_FILE)
    console.print(
        f"\nreport: [bold]{report / 'index.md'}[/]   timings: {path}   (total {timings.to_json()['total_seconds']:.0f} s)"
    )
    return report / "index.md"


def _build_release(collection: Path, bench: Path, options, build, verify_release) -> str:  # noqa: ANN001
    """Build the release unless a verified one built from the same pages, options and code is there; say which."""
    if _release_ok(bench, verify_release) and _release_current(bench, collection, options):
        return "kept"
    summary = build(collection, bench, options)
    console.print(f"{summary.manifest['counts'].get('queries')} queries written to {bench}", markup=False)
    return "built"


def _run_matrix(run_matrix, spec, bench: Path, collection: Path, runs: Path, workers: int) -> dict:  # noqa: ANN001
    with progress_bars(transient=True) as bar:
        result = run_matrix(spec, bench, collection, runs, progress=bar, workers=workers)
    console.print(f"{len(result.ran)} run(s) produced, {len(result.skipped)} unchanged and skipped")
    for name, problem in result.failed.items():
        console.print(f"[yellow]{escape(name)}[/]: {escape(problem)}")
    return {"ran": len(result.ran), "skipped": len(result.skipped), "run_seconds": _run_seconds(runs)}


def _sourceshift(timings: DemoTimings, title, out: Path, workers: int, backend: str, options) -> tuple[Path, Path]:  # noqa: ANN001
    """Fetch, ingest, index and benchmark the SourceShift packages; run the shift matrix."""
    from nclue.bench.pipeline import build
    from nclue.bench.verify import verify as verify_release
    from nclue.corpus.fetch import fetch_recipe
    from nclue.corpus.info import collection_info, render_info
    from nclue.corpus.ingest import ingest
    from nclue.index.dense import build_dense_index
    from nclue.index.lexical import build_lexical_index
    from nclue.matrix.runner import run_matrix
    from nclue.matrix.spec import load_matrix

    pdfs, coll, bench, runs = (out / d for d in ("shift-pdfs", "shift-collection", "shift-bench", "shift-runs"))
    with timings.stage(
        "sourceshift", title("SourceShift: other Debian doc packages, gate per source (S3–S4)")
    ) as stage:
        fetch_recipe("debian-docs-shift", pdfs)
        with progress_bars(transient=True) as bar:
            ingest(pdfs, coll, workers=workers, ocr="auto", progress=bar)
        console.print(render_info(collection_info(coll)))
        if not _lexical_ok(coll):
            build_lexical_index(coll)
        with progress_bars(transient=True) as bar:
            build_dense_index(coll, backend=backend, max_chunks_per_page=1, progress=bar, workers=workers)
        stage.detail = {"build": _build_release(coll, bench, options, build, verify_release)}
        stage.detail |= _run_matrix(run_matrix, load_matrix("shift"), bench, coll, runs, workers)
    return bench, runs


def _report(  # noqa: ANN202
    bench: Path, runs: Path, report: Path, collection: Path, shift: tuple[Path, Path] | None, qrels: Path | None = None
):
    """Write the report unless its inputs are unchanged; ``(report data or None, kept)``.

    With ``qrels`` (a repaired version), every table is also written on it into
    ``REPORT/qrels-vN/`` and the effect of the repair (``nclue audit impact``) into
    ``REPORT/label_repair.md``.
    """
    from nclue.report.paper import compute_report, write_report

    files = [bench / "SHA256SUMS", runs / RUN_MANIFEST, *([qrels] if qrels is not None else [])]
    if shift is not None:
        files += [shift[0] / "SHA256SUMS", shift[1] / RUN_MANIFEST]
    masking = report / MASK_DIR
    stamp = _inputs_digest(files, [masking])
    if (report / "index.md").is_file() and _read_stamp(report) == stamp:
        return None, True
    data = compute_report(bench, runs, shift=shift, masking_dir=masking)
    write_report(data, report, collection)
    if qrels is not None:
        repaired = compute_report(bench, runs, shift=shift, qrels=qrels, masking_dir=masking)
        write_report(repaired, report / f"qrels-v{repaired.qrels['version']}", collection)  # type: ignore[index]
        _label_repair(bench, runs, qrels, report)
    atomic_write_text(report / REPORT_STAMP, stamp + "\n")
    return data, False


def _label_repair(bench: Path, runs: Path, qrels: Path, report: Path) -> None:
    """``REPORT/label_repair.md`` (+ ``.json``): every fair run rescored on both qrels versions, with the
    matrix's headline pair (fusion − BM25-AND, as in the seed's pre/post table) as the contrast."""
    from nclue.audit.impact import impact
    from nclue.io import write_json
    from nclue.matrix.runset import RunSet
    from nclue.release import Release

    runset = RunSet.open(runs)
    fair = [runset.path(n) for n in runset.fair()]

    own = Release.open(bench, require_qrels=True).files["qrels"]
    headline = [(runset.headline[1], runset.headline[0])] if runset.headline else []  # (variant, base)
    result = impact(bench, [own, qrels], fair, contrasts=headline, draws=2000)
    atomic_write_text(report / "label_repair.md", result.render("markdown"))
    write_json(report / "label_repair.json", result.to_json())


def audited_qrels(bench: Path, audit: Path | None) -> tuple[Path | None, str]:
    """The committed audit's repaired qrels when the audit belongs to this release, and a sentence saying which.

    An audit belongs to the release whose ``queries.jsonl``, ``qrels.jsonl`` and ``corpus.jsonl``
    have the SHA-256 its ``audit.json`` records — the corpus either as a file or as its documents
    (:meth:`nclue.release.Release.corpus_documents_sha256`: an audit made before the corpus rows
    carried their URL and licence still belongs); a rebuild that changed any label does not get
    another release's repairs.
    """
    import json

    from nclue.release import CORPUS_FILE, QRELS_FILE, QUERIES_FILE, Release

    if audit is None:
        return None, "no committed audit given (--audit DIR)"
    record, repaired = audit / "audit.json", sorted(audit.glob("qrels.v*.jsonl"))
    if not record.is_file() or not repaired:
        return None, f"{audit}: no audit with a repaired qrels version (audit.json, qrels.vN.jsonl)"
    audited = json.loads(record.read_text(encoding="utf-8")).get("bench_files", {})
    release = Release.open(bench, require_qrels=True)
    built = dict(release.hashes)
    if audited.get(CORPUS_FILE) == release.corpus_documents_sha256:
        built[CORPUS_FILE] = audited[CORPUS_FILE]  # the same documents; only where they are published was added
    differ = [name for name in (QUERIES_FILE, QRELS_FILE, CORPUS_FILE) if audited.get(name) != built.get(name)]
    if differ:
        detail = "; ".join(
            f"{name}: audited {str(audited.get(name))[:12]}…, built {str(built.get(name))[:12]}…" for name in differ
        )
        return None, (
            f"the committed audit {audit} belongs to another release ({detail}), so the report uses the "
            "release's own labels only"
        )
    return repaired[-1], f"the committed audit {audit} belongs to this release: the report adds {repaired[-1].name}"


def _semantic(out: Path, collection: Path, spec, workers: int, options) -> None:  # noqa: ANN001
    """Build the section-concept benchmark on the same collection, run the matrix on it, report."""
    from nclue.bench.pipeline import build
    from nclue.bench.verify import verify as verify_release
    from nclue.matrix.runner import run_matrix

    bench, runs, report = (out / d for d in ("bench-sections", "runs-sections", "report-sections"))
    _build_release(collection, bench, replace(options, conditions="sections"), build, verify_release)
    _run_matrix(run_matrix, spec, bench, collection, runs, workers)
    _report(bench, runs, report, collection, None)
    console.print(f"semantic benchmark report: {report / 'index.md'}", markup=False)


READER_DATA = {"reader": "debian-docs", "shift-reader": "debian-docs-shift"}
"""Reader-judged benchmark → the corpus folder under ``readers`` that holds its replies."""


def reader_options(data: Path):  # noqa: ANN201 - a BuildOptions
    """``nclue build --judge reader`` options that import the replies committed in ``data``.

    ``data/provenance.json`` names the model label the requests were written for (part of every
    prompt's cache key) and who answered; ``data/replies.jsonl`` holds every round's replies.
    """
    import json

    from nclue.bench.construction_params import BuildOptions

    meta = json.loads((data / "provenance.json").read_text(encoding="utf-8"))
    return BuildOptions(
        judge="reader",
        name=meta.get("name", "nclue-reader"),
        llm_model=meta["model"],
        llm_batch_in=data / "replies.jsonl",
        llm_answered_by=meta["answered_by"],
        llm_answered_on=meta.get("date"),
    )


def _reader_benchmarks(out: Path, collection: Path, readers: Path, spec, workers: int, backend: str) -> dict:  # noqa: ANN001
    """Rebuild each reader-judged benchmark from its committed replies; run the matrix; write its report."""
    from nclue.bench.verify import verify as verify_release
    from nclue.index.builders import IndexOptions, build_all
    from nclue.index.options import DenseOptions
    from nclue.llm.cache import BatchPending
    from nclue.matrix.runner import run_matrix
    from nclue.reader.build import build_read_benchmark

    detail = {}
    for name, corpus in READER_DATA.items():
        data = readers / corpus / "reader"
        coll = collection if corpus == "debian-docs" else out / "shift-collection"
        if not (data / "replies.jsonl").is_file() or not (coll / "pages.parquet").is_file():
            console.print(
                f"[yellow]{escape(name)}:[/] needs {escape(str(data / 'replies.jsonl'))} and {escape(str(coll))}; skipped"
            )
            continue
        if coll != collection:  # the whole matrix reads the structure and token indexes too
            build_all(coll, IndexOptions(dense=DenseOptions(backend=backend, max_chunks_per_page=1, workers=workers)))
        bench, runs, report = (out / f"{d}-{name}" for d in ("bench", "runs", "report"))
        try:
            action = _build_release(coll, bench, reader_options(data), build_read_benchmark, verify_release)
        except BatchPending as exc:
            console.print(
                f"[yellow]{name}:[/] the committed replies in {data} do not answer {exc.pending} reading prompts "
                "(the pools or prompts changed since they were read); read them (docs/construction.md#reader-judged-construction)",
                highlight=False,
            )
            continue
        _run_matrix(run_matrix, spec, bench, coll, runs, workers)
        _report(bench, runs, report, coll, None)
        console.print(f"{name} benchmark report: {report / 'index.md'}", markup=False)
        from nclue.select.selection_defaults import JUDGED_POOL

        coverage, _ = _coverage(bench, coll, out / f"coverage-{name}", pool=JUDGED_POOL)
        console.print(coverage.to_rich())
        detail[name] = action
    return detail


def _earlier_shift(out: Path) -> tuple[Path, Path] | None:
    """The SourceShift release and runs a ``--full`` run left in ``out``, if both are there."""
    bench, runs = out / "shift-bench", out / "shift-runs"
    return (bench, runs) if (bench / MANIFEST_FILE).is_file() and (runs / RUN_MANIFEST).is_file() else None


def _skipped(out: Path, data: PaperReport | None, shift: tuple[Path, Path] | None) -> list[str]:
    """What this demo folder lacks, and the command that produces it."""
    lines = [
        line for line in (data.skipped() if data is not None else []) if not line.startswith(("Table S5a", "Tables S3"))
    ]
    missing = [
        study
        for study, present in (
            ("condition masking (Table S5a)", (out / "report" / MASK_DIR).is_dir()),
            ("SourceShift (Tables S3–S4)", shift is not None),
            ("the semantic section-concept benchmark", (out / "report-sections" / "index.md").is_file()),
        )
        if not present
    ]
    if missing:
        lines.append(
            f"{', '.join(missing)}: `nclue demo --full` (`make demo-full`; about 12 more minutes on two cores)"
        )
    readers = [name for name in READER_DATA if not (out / f"report-{name}" / "index.md").is_file()]
    if readers:
        lines.append(
            f"the reader-judged benchmarks ({', '.join(readers)}): `nclue demo --full --readers data` "
            "(`make demo-full`), rebuilt from the committed blind-reader replies"
        )
    return lines


def _coverage(bench: Path, collection: Path, out: Path, pool: str | None = None) -> tuple[Table, bool]:
    """Run the coverage study unless its inputs are unchanged; ``(its main table, kept)``.

    Its inputs: the release's checksums, the page store (``collection.json`` holds its
    fingerprint), the indexes, the pool (default: the retrieved one) and the nclue source (the
    freeze itself refuses changed code).
    """
    import json

    from nclue.select.evaluate import SUMMARY_FILE
    from nclue.select.pipeline import RESULTS_DIR, run_coverage
    from nclue.select.results import results_table
    from nclue.select.selection_defaults import DEFAULT_POOL

    pool = pool or DEFAULT_POOL
    summary = out / RESULTS_DIR / SUMMARY_FILE
    stamp = _inputs_digest([bench / "SHA256SUMS", collection / COLLECTION_RECORD], [collection / "index"])
    stamp = f"{stamp} {pool}"
    kept = summary.is_file() and _read_stamp(out) == stamp
    if not kept:
        with progress_bars(transient=True) as bar:
            run_coverage(bench, collection, out, pool=pool, progress=bar, log=console.print)
        atomic_write_text(out / REPORT_STAMP, stamp + "\n")
    split = json.loads(summary.read_text(encoding="utf-8"))["splits"]["all"]
    caption = f"Coverage selection, split all ({split['tasks']} tasks): {out / RESULTS_DIR / 'results.md'}"
    return results_table(split["methods"], caption), kept


def _inputs_digest(files: list[Path], trees: list[Path]) -> str:
    """SHA-256 of a stage's inputs: the bytes of ``files``, the file listing (size, mtime) of
    ``trees`` and the source of the installed nclue package."""
    import hashlib

    from nclue.matrix.runner import tree_fingerprint

    digest = hashlib.sha256()
    for path in files:
        digest.update(path.read_bytes() if path.is_file() else b"absent")
    for tree in trees:
        digest.update(tree_fingerprint(tree).encode())
    package = Path(__file__).resolve().parent  # the nclue package
    for source in sorted(package.rglob("*.py")):
        digest.update(source.relative_to(package).as_posix().encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()


def _read_stamp(folder: Path) -> str | None:
    path = folder / REPORT_STAMP
    return path.read_text(encoding="utf-8").strip() if path.is_file() else None


def _run_seconds(runs: Path) -> dict[str, float]:
    """Seconds each run of the matrix took when it was last produced (``matrix.json``)."""
    from nclue.matrix.runset import RunSet

    try:
        return dict(sorted(RunSet.open(runs).seconds().items()))
    except NclueError:
        return {}


def _lexical_ok(collection: Path) -> bool:
    """The lexical index is reused only when it opens: present, current format, fresh, undamaged."""
    from nclue.index.lexical import LexicalIndex

    try:
        LexicalIndex(collection)
    except NclueError:
        return False
    return True


def _release_current(bench: Path, collection: Path, options) -> bool:  # noqa: ANN001 - BuildOptions
    """The release's construction record (pages, options, code) is today's."""
    from nclue.bench.pipeline import construction_record
    from nclue.release import read_manifest

    try:
        manifest = read_manifest(bench)
    except NclueError:
        return False
    return manifest.get("construction") == construction_record(collection, options)


def _release_ok(bench: Path, verify_release) -> bool:  # noqa: ANN001 - nclue.bench.release.verify
    """A release is reused only when it exists and ``bench verify`` finds no problem."""
    if not (bench / MANIFEST_FILE).is_file():
        return False
    try:
        problems, _, _ = verify_release(bench)
    except NclueError:
        return False
    return not problems


def _print_top(data: PaperReport, rows: int = 10) -> None:
    from nclue.scoring.results import scorecard_table

    table = scorecard_table(data.card, data.ranking[:rows], data.categories)  # Table S1's first rows
    Console(width=max(console.width, 170)).print(table.to_rich())


def _print_timings(timings: DemoTimings) -> None:
    from rich.table import Table as RichTable

    table = RichTable(title="demo wall time per stage")
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
