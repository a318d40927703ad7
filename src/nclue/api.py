"""nclue's public Python API, re-exported lazily by ``import nclue``.

::

    import nclue
    coll = nclue.open_collection("coll")                  # after `nclue ingest` / nclue.ingest(...)
    hits = coll.search('"footnotes"; "line numbering"', system="bm25.decompose(distinct)", k=10)
    bench = nclue.open_release("bench")                   # a Release: typed queries, judgments, corpus
    run = nclue.run_system(bench, coll, "bm25.and")       # a Run; run.write(dir) -> [TREC, JSONL paths]
    card = nclue.evaluate(bench, [run])                   # a Scorecard
    print(card.to_markdown()); card["bm25.and"].n_clue_score; card.to_json()

Every call is quiet by default; a long one takes ``progress``, a callback of the one progress
protocol (:mod:`nclue.progress`): ``from nclue.progress import progress_bars`` and then
``with progress_bars() as bar: nclue.ingest(..., progress=bar)`` draws bars on stderr, as the
command line does.
Bad input raises :class:`~nclue.errors.NclueError` with a message naming the file, the record
and the fix; so does an argument of the wrong type or range, named with an example of a right
value (:mod:`nclue.api_args`).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from nclue.api_args import (
    bool_arg,
    choice_arg,
    int_at_least,
    optional_bool,
    optional_path,
    optional_text,
    path_arg,
    positive_int,
    received,
    seed_arg,
    text_arg,
    text_list,
    text_or_list,
)
from nclue.errors import NclueError
from nclue.progress import Progress, as_progress, quiet
from nclue.release import Release
from nclue.types import DEFAULT_FORM, DEFAULT_SEED, Form, Qrels, RankedDoc, Run

if TYPE_CHECKING:
    from nclue.bench.construction_params import BuildOptions
    from nclue.corpus.ingest import IngestSummary
    from nclue.corpus.store import PageStore
    from nclue.scoring import Benchmark, Comparison, Scorecard
    from nclue.systems.registry import Workspace

PathLike = str | os.PathLike[str]
QrelsLike = PathLike | Qrels | Mapping[str, Mapping[str, int]]
"""A qrels file path, :class:`~nclue.types.Qrels` or ``{qid: {doc_id: grade}}``; a DataFrame is accepted too."""
DEFAULT_SYSTEM = "bm25.decompose(distinct)"
FORMS: tuple[str, ...] = tuple(f.value for f in Form)


class Collection:
    """An ingested collection: its page store, its indexes and every system that runs on them."""

    def __init__(self, path: PathLike) -> None:
        from nclue.corpus.store import PageStore

        self.path = path_arg("path", path)
        self.store: PageStore = PageStore.open(self.path)

    def __repr__(self) -> str:
        return f"Collection({str(self.path)!r}: {self.n_docs} documents, {self.n_pages} pages)"

    @cached_property
    def workspace(self) -> Workspace:
        """The collection's systems and loaded indexes (built on first use, then cached)."""
        from nclue.systems.registry import Workspace

        return Workspace(self.path, self.store)

    @property
    def n_docs(self) -> int:
        """Number of documents with pages."""
        return len(self.store.doc_ids)

    @property
    def n_pages(self) -> int:
        """Number of pages."""
        return self.store.n_pages

    @property
    def doc_ids(self) -> list[str]:
        """Document ids, sorted."""
        return [str(d) for d in self.store.doc_ids.tolist()]

    def page_text(self, doc_id: str, page: int) -> str:
        """The extracted text of page ``page`` (an integer, 1-based) of document ``doc_id``.

        A page number given as a string (``'1'``) is refused, not read as page 1; a page the
        document does not have is refused with the document's range of pages.
        """
        text_arg("doc_id", doc_id, "'manuals/R-FAQ'")
        number = int_at_least("page", page, 1, 1)
        numbers = self._page_numbers(doc_id)
        if number not in numbers:
            raise NclueError(f"{self.path}: document {doc_id!r} has {_page_range(numbers)}; page {number} is not one")
        return self.store.page_text(doc_id, number)

    def _page_numbers(self, doc_id: str) -> list[int]:
        """The page numbers stored for ``doc_id``, in order; an unknown id is refused."""
        i = self.store.doc_index.get(doc_id)
        if i is None:
            raise NclueError(f"{self.path}: unknown document {doc_id!r}; Collection.doc_ids lists the documents")
        start, stop = int(self.store.doc_offsets[i]), int(self.store.doc_offsets[i + 1])
        return sorted(int(n) for n in self.store.page_number[start:stop])

    def search(
        self,
        query: str | Sequence[str],
        system: str = DEFAULT_SYSTEM,
        k: int = 10,
        text: str | None = None,
    ) -> list[RankedDoc]:
        """The ``k`` best documents for a conjunctive query, best first, with evidence pages.

        ``query`` is ``'"A"; "B"'`` (or the natural template, or ``A; B``) or a list of conditions;
        ``text`` overrides the rendered query text that joint systems score (default: the
        ``clean_v2`` rendering, or ``query`` itself when it is a string).
        """
        from nclue.query import parse_conditions, render_clean_v2
        from nclue.systems.backbone import Request

        query = text_or_list("query", query, "['footnotes', 'line numbering']")
        text_arg("system", system, repr(DEFAULT_SYSTEM))
        k = positive_int("k", k)
        optional_text("text", text, "'footnotes and line numbering'")
        conditions = parse_conditions(query) if isinstance(query, str) else parse_conditions("", list(query))
        joint = text if text is not None else (query if isinstance(query, str) else render_clean_v2(conditions))
        return self.workspace.system(system).search(Request(conditions, joint), k)


def _page_range(numbers: list[int]) -> str:
    """The pages of a document in words: ``pages 1–12``, or how many lie between the ends."""
    if not numbers:
        return "no pages"
    if len(numbers) == numbers[-1] - numbers[0] + 1:
        return f"pages {numbers[0]}–{numbers[-1]}"
    return f"{len(numbers)} pages between {numbers[0]} and {numbers[-1]}"


def open_collection(path: PathLike) -> Collection:
    """Open a collection written by ``nclue ingest`` (or :func:`ingest`)."""
    return Collection(path)


def ingest(
    pdf_dir: PathLike, collection_dir: PathLike, workers: int = 1, ocr: str = "auto", progress: Progress = quiet
) -> IngestSummary:
    """Extract every PDF page's text under ``pdf_dir`` into the page store ``collection_dir`` (resumable).

    ``workers``: processes (1 = in this process, 0 = one per CPU); ``ocr``: ``auto``, ``off`` or ``force``;
    ``progress``: a :class:`~nclue.progress.Progress` callback (stages ``"documents"`` and ``"pages"``;
    ``True``/``False`` are deprecated, :func:`~nclue.progress.as_progress`).
    """
    from nclue.corpus.ingest import ingest as run
    from nclue.corpus.pdftext import OCR_MODES

    source = path_arg("pdf_dir", pdf_dir, "'pdfs'")
    target = path_arg("collection_dir", collection_dir)
    count = int_at_least("workers", workers, 0, 4)
    mode = choice_arg("ocr", ocr, OCR_MODES)
    with as_progress(progress, "nclue.ingest") as report:
        return run(source, target, workers=count, ocr=mode, progress=report)


def build_benchmark(collection: PathLike, out: PathLike, options: BuildOptions | None = None) -> Release:
    """Build a benchmark release from a collection into ``out`` and open it (``judge="reader"``: reader-judged)."""
    from nclue.bench.construction_params import BuildOptions
    from nclue.bench.pipeline import build
    from nclue.reader.build import build_read_benchmark

    source = path_arg("collection", collection)
    target = path_arg("out", out, "'bench'")
    if options is not None and not isinstance(options, BuildOptions):
        raise NclueError(
            f"options must be nclue.bench.construction_params.BuildOptions or None, got {received(options)}; "
            "e.g. options=BuildOptions(judge='offline')"
        )
    chosen = options or BuildOptions()
    summary = (build_read_benchmark if chosen.judge == "reader" else build)(source, target, chosen)
    if summary.problems:
        raise NclueError(f"{summary.out}: validation failed: {summary.problems[0]}", exit_code=1)
    return Release.open(target)


def open_release(path: PathLike, qrels: QrelsLike | None = None) -> Release:
    """Open a benchmark release (nclue or BEIR layout) as a typed :class:`~nclue.release.Release`.

    ``qrels`` replaces its judgments: a qrels file (nclue JSONL, BEIR ``.tsv``, TREC), or
    :class:`~nclue.types.Qrels`, ``{qid: {doc_id: grade}}`` or a DataFrame (checked against the
    release's queries, :meth:`Release.with_qrels`).
    """
    root = path_arg("path", path, "'bench'")
    judgments = _qrels_arg(qrels)
    if judgments is None or isinstance(judgments, Path):
        return Release.open(root, judgments)
    return Release.open(root, with_qrels=False).with_qrels(judgments)


def load_benchmark(path: PathLike, qrels: QrelsLike | None = None) -> Release:
    """Deprecated name of :func:`open_release` (it returns a :class:`~nclue.release.Release`, not the
    scorer's :class:`nclue.scoring.Benchmark`)."""
    warnings.warn(
        "nclue.load_benchmark is deprecated: use nclue.open_release (same arguments, the same Release)",
        DeprecationWarning,
        stacklevel=2,
    )
    return open_release(path, qrels)


def load_run(path: PathLike, name: str | None = None) -> Run:
    """Read a TREC or nclue JSONL run file (the name defaults to the file stem)."""
    return Run.read(path_arg("path", path, "'runs/bm25.jsonl'"), optional_text("name", name, "'bm25'"))


def _bench_arg(bench: object) -> Release | Path:
    """``bench`` as given: a :class:`Release`, or a path to one."""
    return bench if isinstance(bench, Release) else path_arg("bench", bench, "'bench'")


def _collection_arg(collection: object) -> Collection | Path:
    """``collection`` as given: a :class:`Collection`, or a path to one."""
    return collection if isinstance(collection, Collection) else path_arg("collection", collection)


def _qrels_arg(qrels: object) -> Path | Qrels | None:
    """``qrels`` as ``None``, a qrels file path or :class:`Qrels` (from a dict or a frame)."""
    if qrels is None:
        return None
    if isinstance(qrels, (str, os.PathLike)):
        return path_arg("qrels", qrels, "'qrels.jsonl'")
    return _as_qrels(qrels)


def _release(bench: Release | Path) -> Release:
    return bench if isinstance(bench, Release) else Release.open(bench)


def _collection(collection: Collection | Path) -> Collection:
    return collection if isinstance(collection, Collection) else Collection(collection)


def run_system(
    bench: Release | PathLike,
    collection: Collection | PathLike,
    system: str,
    form: str = DEFAULT_FORM,
    depth: int = 100,
    progress: Progress = quiet,
) -> Run:
    """Run one system (a name such as ``bm25.decompose(distinct)``) on every query of a release.

    Returns its :class:`Run`: the ``depth`` (≥ 1) best documents of each query. ``progress``: a
    :class:`~nclue.progress.Progress` callback (stage ``"queries: <system>"``; ``True``/``False``
    are deprecated, :func:`~nclue.progress.as_progress`).
    """
    from nclue.systems.run import run_systems

    release, coll = _bench_arg(bench), _collection_arg(collection)
    name = text_arg("system", system, "'bm25.and'")
    rendering = choice_arg("form", form, FORMS)
    depth = positive_int("depth", depth, 100)
    with as_progress(progress, "nclue.run_system") as report:
        ran = run_systems(
            _release(release), _collection(coll).workspace, [name], form=rendering, depth=depth, progress=report
        )
    return next(iter(ran.runs.values()))


def _benchmark(bench: Release | Path, qrels: Path | Qrels | None) -> Benchmark:
    """The benchmark to score on: ``bench`` with its own judgments, or with ``qrels``."""
    from nclue.scoring import Benchmark

    if isinstance(bench, Release) and qrels is None:
        return Benchmark.from_release(bench)
    if isinstance(qrels, Qrels):
        release = bench if isinstance(bench, Release) else Release.open(bench, with_qrels=False)
        return Benchmark.from_release(release.with_qrels(qrels))
    root = bench.root if isinstance(bench, Release) else bench
    if root is None:
        raise NclueError(
            "an in-memory release cannot take a qrels file; pass the judgments as nclue.Qrels, a dict or a frame"
        )
    return Benchmark.open(root, qrels)


def _as_qrels(qrels: object) -> Qrels:
    """``qrels`` as :class:`Qrels`: itself, a ``{qid: {doc_id: grade}}`` dict or a DataFrame."""
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, Mapping):
        return Qrels.from_dict(qrels)
    if hasattr(qrels, "columns"):
        return Qrels.from_pandas(qrels)
    raise NclueError(
        f"qrels must be a qrels file path, nclue.Qrels, a {{qid: {{doc_id: grade}}}} dict or a DataFrame, "
        f"got {received(qrels)}; e.g. qrels='qrels.jsonl'"
    )


def _as_run(item: object, position: int, name: str) -> Run | Path:
    """A run of argument ``name`` given as a :class:`Run`, a run file, ``{qid: {doc_id: score}}``
    or a DataFrame (the last two are named ``run1``, ``run2``, … by position)."""
    if isinstance(item, Run):
        return item
    if isinstance(item, (str, os.PathLike)):
        return path_arg(f"{name}: run {position}", item, "'runs/bm25.jsonl'")
    if isinstance(item, Mapping):
        return Run(f"run{position}", dict(item))
    if hasattr(item, "columns") and hasattr(item, "__getitem__"):
        return Run.from_pandas(item, f"run{position}")
    raise NclueError(
        f"{name}: run {position}: expected a Run, a run file path, {{qid: {{doc_id: score}}}} or a pandas DataFrame, "
        f"got {received(item)}"
    )


def _runs_arg(name: str, runs: object, first: int = 1) -> list[Run | Path]:
    """The runs of argument ``name``, a non-empty list (a single run is refused: wrap it in a list);
    each is numbered from ``first`` in messages."""
    if isinstance(runs, (str, os.PathLike, Mapping, Run)) or not isinstance(runs, Sequence):
        raise NclueError(
            f"{name} must be a list of runs (Run objects, run file paths, {{qid: {{doc_id: score}}}} dicts or "
            f"DataFrames), got {received(runs)}; wrap a single run in a list, e.g. {name}=[run]"
        )
    if not runs:
        raise NclueError(f"{name} is an empty list; give at least one run, e.g. {name}=[nclue.load_run('run.jsonl')]")
    return [_as_run(r, i, name) for i, r in enumerate(runs, start=first)]


def _run_matrices(bench: Benchmark, given: list[Run | Path]) -> list:
    """Each run encoded against ``bench``; run names must be unique."""
    from nclue.scoring import from_records
    from nclue.scoring import load_run_matrix as encode_file

    loaded = [from_records(r, bench) if isinstance(r, Run) else encode_file(r, bench) for r in given]
    names = [r.name for r in loaded]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise NclueError(
            f"run names must be unique (a file's run name is the one recorded in it, else its stem); repeated: {', '.join(repeated)}"
        )
    return loaded


def evaluate(
    bench: Release | PathLike,
    runs: Sequence[Run | PathLike],
    k: int = 10,
    ci: str = "family",
    bootstrap: int = 1000,
    seed: int = DEFAULT_SEED,
    strata: bool = False,
    qrels: QrelsLike | None = None,
    per_query: PathLike | None = None,
    strict: bool = False,
    measures: Sequence[str] = (),
) -> Scorecard:
    """Score runs: n-Clue Score, Gold Hit, Gold-NDCG, graded NDCG, M/P/G with intervals.

    A run is a :class:`Run`, a run file (TREC or nclue JSONL), a ranx-style ``{qid: {doc_id:
    score}}`` dict or a PyTerrier/ranx DataFrame (the last two named ``run1``, ``run2``, … by
    position; build a :class:`Run` to name one).

    ``qrels`` scores on other judgments: a qrels file, :class:`~nclue.types.Qrels`, a
    ``{qid: {doc_id: grade}}`` dict or a DataFrame (:meth:`Qrels.from_pandas
    <nclue.types.Qrels.from_pandas>` reads PyTerrier, ir_measures and ranx columns).
    ``per_query`` names a JSONL file to receive one row per (run, query) with its outcome. Every
    run's coverage of the benchmark is in ``card.coverage`` and its shortfalls in
    ``card.problems`` (unanswered queries score as misses); ``strict=True`` refuses to score a
    run that falls short. ``measures`` adds standard IR measures by their ir_measures names
    (``["nDCG@10", "AP", "R@100"]``) to ``card.measures`` (:mod:`nclue.scoring.standard`).

    ``runs`` is always a list: a single run (a :class:`Run`, a path, a dict) is refused with
    "wrap a single run in a list", as :func:`compare` refuses a single run for ``variants``.
    """
    from nclue.scoring import CI_KINDS, per_query_rows
    from nclue.scoring.scorecard import evaluate as score

    release, given = _bench_arg(bench), _runs_arg("runs", runs)
    k, interval = positive_int("k", k), choice_arg("ci", ci, CI_KINDS)
    bootstrap, seed = positive_int("bootstrap", bootstrap, 1000), seed_arg(seed)
    strata, strict = bool_arg("strata", strata), bool_arg("strict", strict)
    judgments, rows_to = _qrels_arg(qrels), optional_path("per_query", per_query)
    measures = text_list("measures", measures, "['nDCG@10', 'AP']")
    benchmark = _benchmark(release, judgments)
    scores, card = score(benchmark, _run_matrices(benchmark, given), k, interval, bootstrap, seed, strata, measures)  # type: ignore[arg-type]
    if strict and card.problems:
        raise NclueError(_refusal(card.problems, "drop --strict (strict=False) to score them as written"))
    if rows_to is not None:
        from nclue.io import write_jsonl

        write_jsonl(rows_to, per_query_rows(scores, benchmark))
    return card


def compare(
    bench: Release | PathLike,
    base: Run | PathLike,
    variants: Sequence[Run | PathLike],
    k: int = 10,
    bootstrap: int = 1000,
    draws: int = 10000,
    seed: int = DEFAULT_SEED,
    sensitivity: bool = True,
    blocks: PathLike | None = None,
    qrels: QrelsLike | None = None,
    strict: bool | None = None,
) -> Comparison:
    """Paired contrasts ``variant − base`` with family intervals, randomization tests, Holm and sensitivity.

    ``blocks`` names a JSON file of max-|T| blocks (``nclue compare --help``). Every run's
    coverage is in ``result.coverage`` and its shortfalls in ``result.problems``. ``strict``:
    ``None`` (the default) refuses runs that answer different sets of queries — a contrast would
    then set one run's answers against the other's misses; ``True`` refuses any shortfall;
    ``False`` contrasts them as written.

    ``base`` is one run; ``variants`` is always a list (a single run is refused with "wrap a
    single run in a list", as in :func:`evaluate`).
    """
    from dataclasses import replace

    from nclue.scoring import compare_runs, coverage_of, read_blocks, score_runs

    release, first = _bench_arg(bench), _as_run(base, 1, "base")
    others = _runs_arg("variants", variants, first=2)
    k, draws = positive_int("k", k), positive_int("draws", draws, 10000)
    bootstrap = positive_int("bootstrap", bootstrap, 1000)
    seed, sensitivity = seed_arg(seed), bool_arg("sensitivity", sensitivity)
    blocks, strict = optional_path("blocks", blocks, "'blocks.json'"), optional_bool("strict", strict)
    benchmark = _benchmark(release, _qrels_arg(qrels))
    loaded = _run_matrices(benchmark, [first, *others])
    coverage = {r.name: coverage_of(r, benchmark) for r in loaded}
    problems = [p for c in coverage.values() for p in c.problems()]
    if strict and problems:
        raise NclueError(_refusal(problems, "drop --strict to contrast them as written"))
    if strict is None:
        differ = [r.name for r in loaded[1:] if (r.answered != loaded[0].answered).any()]
        if differ:
            counts = ", ".join(f"{c.name} {c.answered}" for c in coverage.values())
            raise NclueError(
                f"the runs answer different queries (answered of {benchmark.n_queries}: {counts}), so a paired "
                f"contrast would set one run's answers against the other's misses ({', '.join(differ)} differ from "
                f"the base {loaded[0].name}); rerun them on the same queries, or pass --no-strict (strict=False) to "
                "contrast them with the unanswered queries scored as misses"
            )
    scores = score_runs(benchmark, loaded, k)
    declared = read_blocks(blocks, loaded[0].name) if blocks is not None else []
    result = compare_runs(
        benchmark, scores, loaded[0].name, [r.name for r in loaded[1:]], declared, bootstrap, draws, seed, sensitivity
    )
    return replace(result, coverage=coverage)


def _refusal(problems: list[str], fix: str) -> str:
    """The error of a strict evaluation: every shortfall, then the way out."""
    return "; ".join(problems) + f"; {fix}"
