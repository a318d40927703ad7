"""nclue's public Python API, re-exported lazily by ``import nclue``.

::

    import nclue
    coll = nclue.open_collection("coll")                  # after `nclue ingest` / nclue.ingest(...)
    hits = coll.search('"footnotes"; "line numbering"', system="bm25.decompose(distinct)", k=10)
    bench = nclue.load_benchmark("bench")                 # a Release: typed queries, judgments, corpus
    run = nclue.run_system(bench, coll, "bm25.and")       # a Run; run.write(dir) -> [TREC, JSONL paths]
    card = nclue.evaluate(bench, [run])                   # a Scorecard
    print(card.to_markdown()); card["bm25.and"].n_clue_score; card.to_json()

Every call is quiet by default (``progress=False``); the command line turns progress bars on.
Bad input raises :class:`~nclue.errors.NclueError` with a message naming the file, the record
and the fix.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from nclue.errors import NclueError, require_seed
from nclue.release import Release
from nclue.types import DEFAULT_FORM, DEFAULT_SEED, Qrels, RankedDoc, Run

if TYPE_CHECKING:
    from nclue.bench.params import BuildOptions
    from nclue.corpus.ingest import IngestSummary
    from nclue.corpus.store import PageStore
    from nclue.scoring import Benchmark, Comparison, Scorecard
    from nclue.systems.registry import Workspace

PathLike = str | os.PathLike[str]
QrelsLike = PathLike | Qrels | Mapping[str, Mapping[str, int]]
"""A qrels file path, :class:`~nclue.types.Qrels` or ``{qid: {doc_id: grade}}``; a DataFrame is accepted too."""
DEFAULT_SYSTEM = "bm25.decompose(distinct)"


class Collection:
    """An ingested collection: its page store, its indexes and every system that runs on them."""

    def __init__(self, path: PathLike) -> None:
        from nclue.corpus.store import PageStore

        self.path = Path(path)
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
        """The extracted text of one page (1-based)."""
        return self.store.page_text(doc_id, page)

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

        if k < 1:
            raise NclueError(f"k={k}: ask for at least one document")
        conditions = parse_conditions(query) if isinstance(query, str) else parse_conditions("", list(query))
        joint = text if text is not None else (query if isinstance(query, str) else render_clean_v2(conditions))
        return self.workspace.system(system).search(Request(conditions, joint), k)


def open_collection(path: PathLike) -> Collection:
    """Open a collection written by ``nclue ingest`` (or :func:`ingest`)."""
    return Collection(path)


def ingest(
    pdf_dir: PathLike, collection_dir: PathLike, workers: int = 1, ocr: str = "auto", progress: bool = False
) -> IngestSummary:
    """Extract every PDF page's text under ``pdf_dir`` into the page store ``collection_dir`` (resumable)."""
    from nclue.corpus.ingest import ingest as run

    return run(pdf_dir, collection_dir, workers=workers, ocr=ocr, progress=progress)


def build_benchmark(collection: PathLike, out: PathLike, options: BuildOptions | None = None) -> Release:
    """Build a benchmark release from a collection into ``out`` and open it (``judge="reader"``: reader-judged)."""
    from nclue.bench.params import BuildOptions
    from nclue.bench.pipeline import build
    from nclue.reader.build import build_read_benchmark

    chosen = options or BuildOptions()
    summary = (build_read_benchmark if chosen.judge == "reader" else build)(collection, out, chosen)
    if summary.problems:
        raise NclueError(f"{summary.out}: validation failed: {summary.problems[0]}", exit_code=1)
    return Release.open(out)


def load_benchmark(path: PathLike, qrels: QrelsLike | None = None) -> Release:
    """Open a benchmark release (nclue or BEIR layout).

    ``qrels`` replaces its judgments: a qrels file (nclue JSONL, BEIR ``.tsv``, TREC), or
    :class:`~nclue.types.Qrels`, ``{qid: {doc_id: grade}}`` or a DataFrame (checked against the
    release's queries, :meth:`Release.with_qrels`).
    """
    if qrels is None or isinstance(qrels, (str, os.PathLike)):
        return Release.open(path, qrels)
    return Release.open(path, with_qrels=False).with_qrels(_as_qrels(qrels))


def load_run(path: PathLike, name: str | None = None) -> Run:
    """Read a TREC or nclue JSONL run file (the name defaults to the file stem)."""
    return Run.read(path, name)


def _release(bench: Release | PathLike) -> Release:
    return bench if isinstance(bench, Release) else Release.open(bench)


def _collection(collection: Collection | PathLike) -> Collection:
    return collection if isinstance(collection, Collection) else Collection(collection)


def run_system(
    bench: Release | PathLike,
    collection: Collection | PathLike,
    system: str,
    form: str = DEFAULT_FORM,
    depth: int = 100,
    progress: bool = False,
) -> Run:
    """Run one system (a name such as ``bm25.decompose(distinct)``) on every query of a release."""
    from nclue.systems.run import run_systems

    report = run_systems(
        _release(bench), _collection(collection).workspace, [system], form=form, depth=depth, progress=progress
    )
    return next(iter(report.runs.values()))


def _benchmark(bench: Release | PathLike, qrels: QrelsLike | None) -> Benchmark:
    from nclue.scoring import Benchmark

    if isinstance(bench, Release) and qrels is None:
        return Benchmark.from_release(bench)
    if qrels is not None and not isinstance(qrels, (str, os.PathLike)):
        release = bench if isinstance(bench, Release) else Release.open(bench, with_qrels=False)
        return Benchmark.from_release(release.with_qrels(_as_qrels(qrels)))
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
        f"got {type(qrels).__name__}"
    )


def _as_run(item: object, position: int) -> Run | PathLike:
    """A run given as a :class:`Run`, a run file, ``{qid: {doc_id: score}}`` or a DataFrame
    (the last two are named ``run1``, ``run2``, … by position)."""
    if isinstance(item, (Run, str, os.PathLike)):
        return item
    if isinstance(item, Mapping):
        return Run(f"run{position}", dict(item))
    if hasattr(item, "columns") and hasattr(item, "__getitem__"):
        return Run.from_pandas(item, f"run{position}")
    raise NclueError(
        f"run {position}: expected a Run, a run file path, {{qid: {{doc_id: score}}}} or a pandas DataFrame, "
        f"got {type(item).__name__}"
    )


def _run_matrices(bench: Benchmark, runs: Sequence[Run | PathLike]) -> list:
    from nclue.scoring import from_records
    from nclue.scoring import load_run as encode_file

    if isinstance(runs, (str, os.PathLike, Mapping, Run)) or not isinstance(runs, Sequence):
        raise NclueError(
            f"runs must be a list of runs (Run objects, run file paths, {{qid: {{doc_id: score}}}} dicts or "
            f"DataFrames), got {type(runs).__name__}; wrap a single run in a list"
        )
    given = [_as_run(r, i) for i, r in enumerate(runs, start=1)]
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
    """
    from nclue.scoring import CI_KINDS, per_query_rows
    from nclue.scoring.scorecard import evaluate as score

    if ci not in CI_KINDS:
        raise NclueError(f"ci={ci!r} is not one of {', '.join(CI_KINDS)}")
    if k < 1:
        raise NclueError(f"k={k}: the cutoff must be at least 1")
    require_seed(seed)
    benchmark = _benchmark(bench, qrels)
    scores, card = score(benchmark, _run_matrices(benchmark, runs), k, ci, bootstrap, seed, strata, measures)  # type: ignore[arg-type]
    if strict and card.problems:
        raise NclueError(_refusal(card.problems, "drop --strict (strict=False) to score them as written"))
    if per_query is not None:
        from nclue.io import write_jsonl

        write_jsonl(per_query, per_query_rows(scores, benchmark))
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
    """
    from dataclasses import replace

    from nclue.scoring import compare_runs, coverage_of, read_blocks, score_runs

    if not variants:
        raise NclueError("give at least one variant run to compare with the base")
    require_seed(seed)
    benchmark = _benchmark(bench, qrels)
    loaded = _run_matrices(benchmark, [base, *variants])
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
