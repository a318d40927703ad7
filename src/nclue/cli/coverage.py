"""``nclue coverage …``: pick k documents that cover a query's requirements (one query, or a
benchmark through adapt → freeze → evaluate → verify; the evidence model is ``nclue evidence``)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from nclue.cli.llm_options import LLMApi
from nclue.select.selection_defaults import BARRIER_PATTERNS, VERIFY_FLOOR, VERIFY_PAGES, SelectOptions
from nclue.tables import Format

_SELECT = SelectOptions()

coverage_app = typer.Typer(
    help=(
        "Coverage selection: pick k documents that together cover every requirement, for one query "
        "(select) or over a benchmark with a pre-outcome freeze and a labeled oracle.\n\n"
        'Example: nclue coverage select coll --query "critical edition" --require "line numbering" '
        '--require "footnotes" --k 5'
    ),
    no_args_is_help=True,
)

POOL_HELP = (
    "Pool: a system name (e.g. bm25.decompose(distinct)), a run file, 'judged' (every judged document, grade-0 "
    "documents included: a reader-judged release), or 'qrels' (oracle pool, labels)."
)
SELECTOR_HELP = (
    "Selector: expected (default), xquad, pm2, mmr, facility, evidence, retriever, typed, or the vector-only dense, coverage, gated; "
    "select also takes setcover (the smallest set covering every coverable requirement; ignores --k)."
)


class Encoder(str, Enum):
    """The selection encoder's backend: ONNX Runtime (default) or torch (the cross-check path)."""

    onnx = "onnx"
    torch = "torch"


class OnMissing(str, Enum):
    """What a pool document without a judge's row counts as."""

    error = "error"
    zero = "zero"


def _warn(messages: list[str] | tuple[str, ...]) -> None:
    from rich.console import Console

    console = Console(stderr=True)
    for message in messages:
        console.print(f"warning: {message}", style="yellow", markup=False, highlight=False, soft_wrap=True)


def select(
    collection: Path = typer.Argument(..., help="Collection with its lexical and dense page indexes."),
    query: str = typer.Option("", "--query", "-q", help='The question; "A; B; C" also gives the requirements.'),
    require: list[str] = typer.Option([], "--require", "-r", help="A requirement (repeatable)."),
    k: int = typer.Option(_SELECT.k, help="Documents to select."),
    pool: str = typer.Option(_SELECT.pool, help="Retrieval system that makes the pool."),
    pool_depth: int = typer.Option(_SELECT.pool_depth, help="Documents in the pool."),
    selector: str = typer.Option(_SELECT.selector, help=SELECTOR_HELP),
    calibration: Path | None = typer.Option(
        None, help="Evidence calibration file (default: the shipped one fitted on reader judgments of another corpus)."
    ),
    near_duplicates: float = typer.Option(
        _SELECT.near_duplicates,
        min=0.05,
        help="Word-shingle resemblance at which two documents are near-copies; a near-copy gets a slot only "
        "when it covers a requirement nothing above it covers (above 1 turns the rule off).",
    ),
    fmt: Format = typer.Option(Format.table, "--format", help="table, markdown, latex or json."),
    verify_model: str | None = typer.Option(
        None,
        "--verify-model",
        help="Have a reader (this LLM, or people answering a batch file) confirm each pool pair with "
        "P ≥ --verify-floor on its best pages before selecting; the name keys the frozen cache.",
    ),
    verify_floor: float = typer.Option(VERIFY_FLOOR, help="Pairs with P at least this are read."),
    verify_pages: int = typer.Option(VERIFY_PAGES, min=1, help="Best evidence pages shown per pair."),
    llm_url: str | None = typer.Option(None, help="OpenAI- or Anthropic-compatible endpoint (or NCLUE_LLM_URL)."),
    llm_api: LLMApi | None = typer.Option(None, help="Endpoint format (or NCLUE_LLM_API; default openai)."),
    verify_cache: Path | None = typer.Option(
        None, help="Frozen reply cache (default COLLECTION/llm/coverage_verify.jsonl)."
    ),
    verify_batch_out: Path | None = typer.Option(
        None, help="Batch mode: write the prompts still unanswered here and stop (exit 3)."
    ),
    verify_batch_in: Path | None = typer.Option(
        None, help="Batch mode: import these replies ({custom_id, reply} lines)."
    ),
    answered_by: str = typer.Option("", help="Who answered the imported replies (recorded in the cache)."),
    answered_on: str | None = typer.Option(None, help="When (YYYY-MM-DD; default today)."),
) -> None:
    """Select k documents that together cover every requirement of one query, with evidence pages.

    Example: nclue coverage select coll --query "typeset a critical edition" -r "line numbering" -r "critical apparatus" -r footnotes --format json

    Example (a reader confirms the evidence; offline, through a batch file):
    nclue coverage select coll -q "critical edition" -r "line numbering" -r footnotes --verify-model reader:A --verify-batch-out ask.jsonl,
    answer ask.jsonl, then rerun with --verify-batch-in replies.jsonl
    """
    from nclue.reader.verified_coverage import VerifyOptions, open_verifier
    from nclue.select.single import select_documents

    verifier = None
    given = [name for name, value, default in (
        ("--verify-batch-out", verify_batch_out, None), ("--verify-batch-in", verify_batch_in, None),
        ("--verify-cache", verify_cache, None), ("--llm-url", llm_url, None), ("--llm-api", llm_api, None),
        ("--verify-floor", verify_floor, VERIFY_FLOOR), ("--verify-pages", verify_pages, VERIFY_PAGES),
        ("--answered-by", answered_by, ""), ("--answered-on", answered_on, None),
    ) if value != default]  # fmt: skip
    if verify_model is None and given:
        from nclue.errors import NclueError

        raise NclueError(f"{given[0]} belongs to reader verification; name the reader with --verify-model MODEL")
    if verify_model is not None:
        verifier = open_verifier(
            collection, verify_model, llm_url, None, llm_api.value if llm_api else None, verify_cache,
            verify_batch_out, verify_batch_in, answered_by, answered_on, VerifyOptions(verify_floor, verify_pages),
        )  # fmt: skip
    result = select_documents(
        collection, query, require, k, pool, pool_depth, selector, calibration, near_duplicates, verifier
    )
    typer.echo(result.render(fmt), nl=False)


def adapt(
    bench: Path = typer.Argument(..., help="Benchmark release directory (queries.jsonl, qrels.jsonl, corpus.jsonl)."),
    collection: Path = typer.Argument(..., help="Collection (page store) the release was built from."),
    out: Path = typer.Option(..., "-o", "--out", help="Task-set directory to write."),
    pool: str = typer.Option(_SELECT.pool, help=POOL_HELP),
    pool_depth: int = typer.Option(_SELECT.pool_depth, min=1, help="Documents per pool (system or run file)."),
    k: int = typer.Option(5, min=2, help="Selection size; queries with smaller pools are skipped and listed."),
    distractors: int = typer.Option(0, min=0, help="Grade-0 corpus documents added to each pool (seeded)."),
    seed: int = typer.Option(0, help="Seed of the distractor draw."),
    max_chars: int = typer.Option(
        2000, min=1, help="Characters of leading page text per document (the selectors' document vectors)."
    ),
) -> None:
    """Turn an nclue benchmark into tasks.jsonl / docs.jsonl / judgments.jsonl with retrieved pools.

    Example: nclue coverage adapt bench/v1 coll -o tasks/debian --pool 'bm25.decompose(distinct)' --pool-depth 30
    """
    from nclue.progress import progress_bars
    from nclue.select.adapter import adapt_release

    with progress_bars(transient=True) as bar:
        report = adapt_release(
            bench, collection, out, k=k, distractors=distractors, seed=seed, max_chars=max_chars, pool=pool,
            depth=pool_depth, progress=bar,
        )  # fmt: skip
    typer.echo(
        f"{report['tasks']} tasks, {report['documents']} documents → {out} "
        f"({len(report['skipped_small_pools'])} queries skipped: pool < k; pool: {report['pool']['rule']})"
    )


def freeze(
    tasks: Path = typer.Argument(..., help="Task-set directory (tasks.jsonl, docs.jsonl)."),
    out: Path = typer.Option(
        ..., "-o", "--out", help="Folder of freezes; each freeze is a new time-stamped subfolder."
    ),
    k: int = typer.Option(5, min=2, help="Documents per selection."),
    encoder: Encoder = typer.Option(Encoder.onnx, help="onnx (the selection encoder via ONNX Runtime) or torch."),
    selector: list[str] = typer.Option([], "--selector", help="Selector to freeze (repeatable; default: all)."),
    collection: Path | None = typer.Option(None, help="Collection the evidence reads (default: from adapter.json)."),
    calibration: Path | None = typer.Option(
        None, help="Evidence calibration file (default: the shipped one fitted on reader judgments of another corpus)."
    ),
    crossfit: bool = typer.Option(False, help="Score each requirement with the calibration fold fitted without it."),
    barrier_pattern: list[str] = typer.Option(
        list(BARRIER_PATTERNS), "--barrier-pattern", help="Path-component pattern refused while freezing."
    ),
    protect: list[Path] = typer.Option([], "--protect", help="A labels file refused under any name (repeatable)."),
    near_duplicates: float = typer.Option(
        _SELECT.near_duplicates,
        min=0.05,
        help="Word-shingle resemblance at which two pool documents are near-copies (above 1 turns the rule off).",
    ),
) -> None:
    """Encode, compute requirement evidence and write every label-free ranking, with a SHA-256 manifest.

    Judgment and outcome files (any path component matching a barrier pattern, or a protected file
    under any name) cannot be opened while this runs: the freeze runs in a child process the kernel
    forbids to read them (Landlock, Linux 5.13+), and behind an audit hook that refuses them by name.

    Example: nclue coverage freeze examples/coverage -o runs/coverage-freeze
    """
    from nclue.progress import progress_bars, stage_advance
    from nclue.select.freeze import freeze as run_freeze
    from nclue.select.tasks import load_tasks

    tasks_list = load_tasks(tasks, warn=lambda _: None)
    total = len({d for t in tasks_list for d in t.pool}) + sum(t.m + 1 for t in tasks_list)
    with progress_bars(transient=True) as bar:
        result = run_freeze(
            tasks, out, encoder_kind=encoder.value, k=k, selectors=list(selector) or None,
            on_block=stage_advance(bar, "encoding", total), collection=collection, calibration=calibration,
            crossfit=crossfit, patterns=tuple(barrier_pattern), protect=tuple(protect), near_duplicates=near_duplicates,
        )  # fmt: skip
    _warn(result.warnings)
    typer.echo(
        f"froze {result.manifest['tasks']} tasks, {result.manifest['documents']} documents → {result.path} "
        f"(barrier: {result.manifest['barrier']['kind']})"
    )


def evaluate(
    tasks: Path = typer.Argument(..., help="Task-set directory the freeze was made from."),
    freeze_dir: Path = typer.Argument(..., help="A freeze, or the folder of freezes (the latest is used)."),
    judgments: Path = typer.Option(..., "--judgments", help="judgments.jsonl to score against."),
    out: Path = typer.Option(..., "-o", "--out", help="Output directory for tables and scores."),
    freeze_id: str | None = typer.Option(None, help="Which freeze of the folder (its time-stamped name)."),
    on_missing: OnMissing = typer.Option(OnMissing.error, help="A judge missing for a pool document: error, or zero."),
) -> None:
    """Verify the freeze (refusing a changed one), then score every frozen selector and the oracle.

    Example: nclue coverage evaluate examples/coverage frz --judgments examples/coverage/judgments.jsonl -o out
    """
    from nclue.progress import progress_bars, stage_advance
    from nclue.select.evaluate import evaluate as run_evaluate
    from nclue.select.tasks import load_tasks

    with progress_bars(transient=True) as bar:
        report = run_evaluate(
            tasks,
            freeze_dir,
            judgments,
            out,
            on_missing=on_missing.value,  # type: ignore[arg-type]
            on_task=stage_advance(bar, "scoring", len(load_tasks(tasks, warn=lambda _: None))),
            freeze_id=freeze_id,
        )
    if report.judgments_as_frozen is False:
        _warn([f"{judgments} is not the judgments file the freeze fingerprinted; the ledger records it"])
    if report.scoring_code_as_frozen is False:
        _warn(["the scoring code changed since the freeze; the ledger records it"])
    typer.echo(f"scored {report['all'].tasks} tasks (freeze {report.freeze}) → {out / 'results.md'}")


def verify(
    tasks: Path = typer.Argument(..., help="Task-set directory."),
    freeze_dir: Path = typer.Argument(..., help="A freeze, or the folder of freezes."),
    results: Path = typer.Argument(..., help="Output directory of `nclue coverage evaluate` (summary.json)."),
    judgments: Path = typer.Option(..., "--judgments", help="judgments.jsonl the results were scored against."),
    freeze_id: str | None = typer.Option(None, help="Which freeze (default: the one summary.json names)."),
) -> None:
    """Recompute summary.json from the freeze and the judgments; exit 1 naming every cell that differs.

    Example: nclue coverage verify examples/coverage frz out --judgments examples/coverage/judgments.jsonl
    """
    from nclue.select.evaluate import verify_report

    result = verify_report(tasks, freeze_dir, judgments, results, freeze_id=freeze_id)
    for failure in result.failures:
        typer.echo(f"differs: {failure}", err=True)
    typer.echo(f"{result.cells_checked} cells checked, {len(result.failures)} differ")
    freezes = sorted({row["freeze"] for row in result.ledger})
    typer.echo(
        f"ledger: {len(result.ledger)} evaluation(s) written to {results} "
        f"(freezes: {', '.join(freezes) or 'none recorded'})"
    )
    for row in result.ledger:
        typer.echo(
            f"  {row['evaluated_at']}  freeze {row['freeze']}  judgments {row['judgments_sha256'][:12]}"
            f"{_as_frozen(row.get('judgments_as_frozen'))}  scoring code {row['scoring_code_sha256'][:12]}"
            f"{_as_frozen(row.get('scoring_code_as_frozen'))}  summary {row['summary_sha256'][:12]}"
        )
    if not result.ok:
        raise typer.Exit(1)


def _as_frozen(same: bool | None) -> str:
    return "" if same is None else (" (as frozen)" if same else " (NOT the frozen one)")


coverage_app.command("select")(select)
coverage_app.command("adapt")(adapt)
coverage_app.command("freeze")(freeze)
coverage_app.command("evaluate")(evaluate)
coverage_app.command("verify")(verify)


def register(app: typer.Typer) -> None:
    """Add the ``coverage`` group."""
    app.add_typer(coverage_app, name="coverage")
