"""``nclue build`` (collection → benchmark release) and ``nclue bench verify``."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from nclue.bench.construction_params import BuildOptions, ComposeParams, MineParams, ReaderParams
from nclue.cli.llm_options import LLMApi
from nclue.engine import EngineName
from nclue.errors import NclueError

bench_app = typer.Typer(
    help="Benchmark releases: verify, paraphrase.\n\nExample: nclue bench verify ./bench", no_args_is_help=True
)

_BUILD, _MINE, _COMPOSE, _READER = BuildOptions(), MineParams(), ComposeParams(), ReaderParams()


class Conditions(str, Enum):
    """What a condition is (``docs/structure.md#section-concepts``)."""

    lexical = "lexical"
    sections = "sections"


class SinglePage(str, Enum):
    """What a document whose conditions all meet on one page does to its candidate (the J061 case)."""

    drop = "drop"
    partial = "partial"


class LabelUnit(str, Enum):
    """What a gold must cover: distinct pages (the page-grounded rule) or the document (SourceShift)."""

    page = "page"
    document = "document"


class Judge(str, Enum):
    """Who decides that a page establishes a condition (``docs/construction.md#judge-gates``)."""

    offline = "offline"
    embedding = "embedding"
    llm = "llm"
    reader = "reader"


def build(
    collection: Path = typer.Argument(..., help="Collection directory written by `nclue ingest`."),
    out: Path = typer.Option(..., "-o", "--out", help="Release directory to write."),
    queries: int = typer.Option(_COMPOSE.n_queries, "--queries", min=1, help="Number of queries to select (at most)."),
    seed: int = typer.Option(_COMPOSE.seed, "--seed", min=0, help="Seed for candidate generation and selection."),
    judge: Judge = typer.Option(
        Judge(_BUILD.judge),
        "--judge",
        help="offline | embedding | llm (rule labels, optional gates) | reader (labels read by blind readers).",
    ),
    conditions: Conditions = typer.Option(
        Conditions(_BUILD.conditions),
        "--conditions",
        help="lexical (mined n-grams) | sections (heading concepts with aliases; needs `nclue structure`).",
    ),
    min_df: int = typer.Option(_MINE.min_df, "--min-df", min=1, help="Minimum documents establishing a condition."),
    max_df_frac: float = typer.Option(
        _MINE.max_df_frac,
        "--max-df-frac",
        min=0.0,
        max=1.0,
        help="Maximum share of documents establishing a condition.",
    ),
    max_golds: int = typer.Option(_COMPOSE.max_golds, "--max-golds", min=1, help="Most golds a (rare) query may have."),
    max_condition_reuse: int = typer.Option(
        _COMPOSE.max_condition_reuse, "--max-condition-reuse", min=1, help="Most queries per condition."
    ),
    max_gold_reuse: int = typer.Option(
        _COMPOSE.max_gold_reuse, "--max-gold-reuse", min=1, help="Most queries per gold document."
    ),
    max_contested: int = typer.Option(
        _COMPOSE.max_contested,
        "--max-contested",
        min=0,
        help="Most judged (document, condition) pairs of a query labelled absent while the document mentions the "
        "condition (a large number allows any).",
    ),
    labels: LabelUnit = typer.Option(
        LabelUnit(_COMPOSE.labels),
        "--labels",
        help="page: gold = every condition on distinct pages (qrels carry evidence pages); document: gold = every "
        "condition somewhere in the document, no pages stored (SourceShift's document-level labels).",
    ),
    single_page: SinglePage = typer.Option(
        SinglePage(_COMPOSE.single_page),
        "--single-page",
        help="A document whose conditions all meet on one page: drop its candidate, or keep it as a partial "
        "(the supplement's J061 decision; MANIFEST counts single_page_partials).",
    ),
    embed_threshold: float = typer.Option(
        _BUILD.embed_threshold, "--embed-threshold", min=-1.0, max=1.0, help="Cosine floor of the embedding gate."
    ),
    gate_threshold: float = typer.Option(
        _BUILD.gate_threshold,
        "--gate-threshold",
        min=0.0,
        max=1.0,
        help="Extraction gate: share of usable pages a source needs to enter the release.",
    ),
    gate_min_chars: int = typer.Option(
        _BUILD.gate_min_chars, "--gate-min-chars", min=0, help="Non-space characters that make a page usable."
    ),
    allow_ungated: list[str] = typer.Option(
        [], "--allow-ungated", help="Include this source although it fails the gate (repeatable; recorded)."
    ),
    llm_url: str = typer.Option(None, "--llm-url", help="Endpoint base URL (or NCLUE_LLM_URL)."),
    llm_model: str = typer.Option(None, "--llm-model", help="Model name (or NCLUE_LLM_MODEL); keys the cache."),
    llm_key: str = typer.Option(None, "--llm-key", help="API key (or NCLUE_LLM_KEY)."),
    llm_api: LLMApi = typer.Option(LLMApi.openai, "--llm-api", help="Chat format of the endpoint and batch files."),
    llm_cache: Path = typer.Option(None, "--llm-cache", help="Response cache (default OUT/judge/llm_cache.jsonl)."),
    llm_batch_out: Path = typer.Option(
        None, "--llm-batch-out", help="Judge offline: write unanswered prompts to this batch file and stop."
    ),
    llm_batch_in: Path = typer.Option(None, "--llm-batch-in", help="Import the replies of a batch file, then go on."),
    llm_answered_by: str = typer.Option("", "--llm-answered-by", help="Who answered the imported batch (recorded)."),
    llm_answered_on: str = typer.Option(
        None, "--llm-answered-on", help="The date (YYYY-MM-DD) the imported batch was answered (default: today)."
    ),
    reader_candidates: int = typer.Option(
        _READER.candidates, "--reader-candidates", min=1, help="--judge reader: candidate conjunctions to read."
    ),
    pool_system: list[str] = typer.Option(
        list(_READER.pool_systems), "--pool-system", help="--judge reader: a system that pools documents (repeatable)."
    ),
    pool_depth: int = typer.Option(
        _READER.pool_depth, "--pool-depth", min=1, help="--judge reader: pool depth per system."
    ),
    pool_docs: int = typer.Option(
        _READER.max_docs, "--pool-docs", min=2, help="--judge reader: most judged documents per query."
    ),
    pages_per_condition: int = typer.Option(
        _READER.pages_per_condition, "--pages-per-condition", min=1, max=9, help="--judge reader: pages a reader sees."
    ),
    engine: EngineName = typer.Option(
        EngineName.local, "--engine", help="Tokenise documents and embed excerpts here or on Ray (same release)."
    ),
    workers: int = typer.Option(1, "--workers", "-w", min=1, help="Parallel workers (local processes or Ray CPUs)."),
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="An existing Ray cluster (HOST:PORT or auto); default: a local Ray instance."
    ),
) -> None:
    """Build an n-Clue benchmark release from a collection.

    Sources whose pages fail the extraction gate are left out (queries, documents, qrels);
    --allow-ungated SOURCE keeps one in and records it in MANIFEST.json and the dataset card.

    --conditions sections builds semantic conditions (section concepts clustered from the
    headings that `nclue structure COLL` extracted) instead of lexical n-grams.

    Example: nclue build ./coll -o ./bench --queries 1000 --seed 11 --judge embedding

    Example (LLM judge with no endpoint: rounds of batch files): nclue build ./coll -o ./bench --judge llm
    --llm-model gpt-4o-mini --llm-batch-out round1.jsonl, fill it, then rerun with --llm-batch-in replies1.jsonl

    Example (labels read by blind readers): nclue build ./coll -o ./bench-read --judge reader --llm-model reader-A
    --llm-batch-out reading.jsonl; fill it (any batch API, script or people), then rerun with
    --llm-batch-in replies.jsonl --llm-answered-by "who read"
    """
    from dataclasses import replace

    from rich.console import Console

    from nclue.bench.pipeline import build as run_build
    from nclue.engine import open_engine
    from nclue.progress import progress_bars

    options = replace(
        _BUILD,
        judge=judge.value,
        conditions=conditions.value,
        mine=replace(_MINE, min_df=min_df, max_df_frac=max_df_frac),
        compose=replace(
            _COMPOSE,
            n_queries=queries,
            seed=seed,
            max_golds=max_golds,
            max_condition_reuse=max_condition_reuse,
            max_gold_reuse=max_gold_reuse,
            max_contested=max_contested,
            single_page=single_page.value,
            labels=labels.value,
        ),
        embed_threshold=embed_threshold,
        gate_threshold=gate_threshold,
        gate_min_chars=gate_min_chars,
        allow_ungated=tuple(allow_ungated),
        llm_url=llm_url,
        llm_model=llm_model,
        llm_key=llm_key,
        llm_cache=llm_cache,
        llm_api=llm_api.value,
        llm_batch_out=llm_batch_out,
        llm_batch_in=llm_batch_in,
        llm_answered_by=llm_answered_by,
        llm_answered_on=llm_answered_on,
        reader=replace(
            _READER,
            candidates=reader_candidates,
            pool_systems=tuple(pool_system),
            pool_depth=pool_depth,
            max_docs=pool_docs,
            pages_per_condition=pages_per_condition,
        ),
    )
    console = Console(stderr=True)
    with progress_bars() as tick:
        with open_engine(engine.value, workers, ray_address) as runner:
            if judge is Judge.reader:
                from nclue.reader.build import build_read_benchmark

                summary = build_read_benchmark(collection, out, options, tick, runner)
            else:
                summary = run_build(collection, out, options, tick, runner)
    counts = summary.manifest["counts"]
    console.print(
        f"built {summary.out}: {counts['queries']} queries, {counts['qrel_rows']} qrels "
        f"({counts['gold_rows']} gold, {counts['partial_rows']} partial), {counts['conditions_mined']} conditions mined",
        markup=False,
        highlight=False,
    )
    if counts["queries"] < queries:
        drops = summary.manifest["drops"]
        why = ", ".join(f"{reason}: {n}" for reason, n in sorted(drops.items(), key=lambda kv: -kv[1])) or "none"
        console.print(
            f"  asked for {queries} queries; this collection gave {counts['queries']} "
            f"({counts['candidates']} candidate conjunctions, selection drops: {why}). More documents, "
            "a lower --min-df or a higher --max-condition-reuse / --max-gold-reuse give more.",
            markup=False,
            highlight=False,
        )
    gate = summary.manifest["gate"]
    for row in gate["sources"]:
        if not row["included"] or row["reason"] != "passed":
            console.print(
                f"  gate: {row['source']} {100 * row['usable_share']:.2f}% usable → "
                + ("excluded" if not row["included"] else "included (--allow-ungated)"),
                markup=False,
                highlight=False,
            )
    for name, score in summary.manifest["controls"].items():
        console.print(f"  control {name}: n-Clue@10 {score['nclue@10']:.1f}", markup=False, highlight=False)
    if summary.problems:
        raise NclueError(f"{summary.out}: validation failed: {summary.problems[0]}", exit_code=1)


def verify(directory: Path = typer.Argument(..., help="Release directory written by `nclue build`.")) -> None:
    """Re-check SHA256SUMS, re-derive every label and the control invariants.

    Example: nclue bench verify ./bench
    """
    from rich.console import Console

    from nclue.bench.verify import verify as run_verify

    problems, validation, scores = run_verify(directory)
    console = Console()
    if problems:
        for line in problems[:20]:
            console.print(f"✗ {line}", style="red", markup=False, highlight=False)
        raise NclueError(f"{directory}: {len(problems)} problem(s); first: {problems[0]}", exit_code=1)
    c = validation.counts
    console.print(
        f"ok {directory}: {c['queries']} queries, {c['qrel_rows']} qrels = Σ union sizes, "
        f"{c['single_page_solvable_golds']} single-page-solvable golds; controls "
        + ", ".join(f"{k} {v['nclue@10']:.1f}" for k, v in scores.items()),
        markup=False,
        highlight=False,
    )


def paraphrase(
    directory: Path = typer.Argument(..., help="Release directory written by `nclue build`."),
    endpoint: str = typer.Option(None, "--endpoint", help="Endpoint base URL (or NCLUE_LLM_URL)."),
    model: str = typer.Option(None, "--model", help="Model name (or NCLUE_LLM_MODEL); keys the cache."),
    key: str = typer.Option(None, "--key", help="API key (or NCLUE_LLM_KEY)."),
    api: LLMApi = typer.Option(LLMApi.openai, "--api", help="Chat format of the endpoint and batch files."),
    attempts: int = typer.Option(3, "--attempts", min=1, max=10, help="Tries per query when a reply is rejected."),
    cache: Path = typer.Option(None, "--cache", help="Reply cache (default DIR/judge/paraphrase_cache.jsonl)."),
    batch_out: Path = typer.Option(None, "--batch-out", help="Write unanswered prompts to this batch file and stop."),
    batch_in: Path = typer.Option(None, "--batch-in", help="Import the replies of a batch file, then go on."),
    answered_by: str = typer.Option("", "--answered-by", help="Who answered the imported batch (recorded)."),
) -> None:
    """Fill the release's frozen paraphrase cache (the `paraphrase` query form) through a chat endpoint.

    Every reply is frozen, so a rerun reads the cache and calls nothing; the texts go to
    DIR/paraphrases.jsonl (hashed in SHA256SUMS) and `nclue run --form paraphrase` reads them.

    Example: nclue bench paraphrase ./bench --endpoint http://localhost:8000/v1 --model my-model

    Example (no endpoint): nclue bench paraphrase ./bench --model M --batch-out requests.jsonl, fill it,
    then nclue bench paraphrase ./bench --model M --batch-in replies.jsonl --answered-by "who"
    """
    from rich.console import Console

    from nclue.bench.paraphrase_fill import fill_paraphrases
    from nclue.llm.client import LLMConfig
    from nclue.progress import progress_bars, stage_advance
    from nclue.release import Release

    config = LLMConfig.from_env(endpoint, model, key, api.value)
    total = len(Release.open(directory, with_qrels=False).queries)
    console = Console(stderr=True)
    with progress_bars(transient=True) as bar:
        summary = fill_paraphrases(
            directory,
            config,
            attempts,
            cache,
            tick=stage_advance(bar, "paraphrase", total),
            batch_out=batch_out,
            batch_in=batch_in,
            answered_by=answered_by,
        )
    console.print(
        f"{summary.accepted} of {total} queries paraphrased ({summary.fresh} replies from {config.url or 'the batch'}, "
        f"{summary.cached} from the cache, {summary.rejected_replies} rejected); written to "
        f"{directory / 'paraphrases.jsonl'}",
        markup=False,
        highlight=False,
    )
    if summary.missing:
        raise NclueError(
            f"{directory}: {len(summary.missing)} queries have no paraphrase after {attempts} attempts "
            f"(e.g. {summary.missing[0]}); `--form paraphrase` needs every query — rerun with more --attempts "
            "or another --model",
            exit_code=1,
        )


class ExportUnit(str, Enum):
    """What one corpus row of an export is."""

    document = "document"
    page = "page"


def export(
    directory: Path = typer.Argument(..., help="Release directory."),
    collection: Path = typer.Argument(..., help="The release's collection (its page text goes into the corpus)."),
    out: Path = typer.Option(..., "-o", "--out", help="New folder to write the dataset into."),
    fmt: str = typer.Option("beir", "--format", help="Dataset layout: beir (the only one so far)."),
    unit: ExportUnit = typer.Option(
        ExportUnit.document, "--unit", help="document: one corpus row per document; page: one per page."
    ),
    form: str = typer.Option(
        "clean_v2", "--form", help="Query rendering for queries.jsonl's text (all forms go in metadata)."
    ),
) -> None:
    """Write a release as a BEIR dataset (corpus.jsonl with page text, queries.jsonl, qrels/test.tsv).

    Example: nclue bench export ./bench ./coll -o ./bench-beir

    Example: nclue bench export ./bench ./coll -o ./bench-beir-pages --unit page --form natural
    """
    from nclue.bench.export import export_beir

    if fmt != "beir":
        raise NclueError(f"--format {fmt!r}: the export layouts are: beir")
    counts = export_beir(directory, collection, out, unit.value, form)
    typer.echo(
        f"wrote {out} ({fmt}, one corpus row per {unit.value}): {counts['corpus']:,} corpus rows, "
        f"{counts['queries']:,} queries, {counts['qrels']:,} qrels"
    )


def reference(
    directory: Path = typer.Argument(..., help="Release directory written by `nclue build`."),
    runs: list[Path] = typer.Argument(..., help="JSONL run files whose scores you publish."),
    collection: Path = typer.Option(..., "--collection", "-c", help="The collection the runs were made on."),
) -> None:
    """Ship reference rankings in a release: the runs, their scores and the models and indexes behind them.

    Writes reference/<run>.jsonl.gz, reference/scores.json and reference/models.json (model weights
    SHA-256, backend, window, BM25 parameters) and rewrites SHA256SUMS; the release's standard-library
    verify_release.py then rescores every reference run.

    Example: nclue bench reference ./bench runs/bm25.cover.jsonl runs/bm25.and.jsonl -c ./coll
    """
    from nclue.bench.reference import write_reference

    scores = write_reference(directory, runs, collection)
    for name, values in scores.items():
        typer.echo(f"{name}: n-Clue@10 {values['nclue@10']:.1f}, Gold Hit@10 {values['gold_hit@10']:.1f}")
    typer.echo(f"wrote {len(scores)} reference run(s) into {directory / 'reference'}; SHA256SUMS rewritten")


bench_app.command("verify")(verify)
bench_app.command("reference")(reference)
bench_app.command("paraphrase")(paraphrase)
bench_app.command("export")(export)


def register(app: typer.Typer) -> None:
    """Add ``build`` and the ``bench`` group."""
    app.command("build")(build)
    app.add_typer(bench_app, name="bench")
