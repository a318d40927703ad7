"""``nclue coverage …``: adapt a benchmark, freeze label-free rankings, evaluate a freeze (R03)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

coverage_app = typer.Typer(
    help=(
        "Coverage selection (R03): pick k documents that cover a task's requirements, "
        "with a pre-outcome freeze and a labeled oracle.\n\n"
        "Example: nclue coverage freeze examples/coverage -o frz && "
        "nclue coverage evaluate examples/coverage frz --judgments examples/coverage/judgments.jsonl -o out"
    ),
    no_args_is_help=True,
)


class Encoder(str, Enum):
    """R03's encoder backend: ONNX Runtime (default) or torch (the cross-check path)."""

    onnx = "onnx"
    torch = "torch"


class OnMissing(str, Enum):
    """What a pool document without a judge's row counts as."""

    error = "error"
    zero = "zero"


def adapt(
    bench: Path = typer.Argument(..., help="Benchmark release directory (queries.jsonl, qrels.jsonl, corpus.jsonl)."),
    collection: Path = typer.Argument(..., help="Collection (page store) the release was built from."),
    out: Path = typer.Option(..., "-o", "--out", help="Task-set directory to write."),
    k: int = typer.Option(5, min=2, help="Selection size; queries with smaller pools are skipped and listed."),
    distractors: int = typer.Option(0, min=0, help="Grade-0 corpus documents added to each pool (seeded)."),
    seed: int = typer.Option(0, help="Seed of the distractor draw."),
    max_chars: int = typer.Option(2000, min=1, help="Characters of leading page text per document."),
) -> None:
    """Turn an nclue benchmark into tasks.jsonl / docs.jsonl / judgments.jsonl.

    Example: nclue coverage adapt bench/v1 coll -o tasks/debian --distractors 5
    """
    from nclue.select.adapter import adapt_release

    report = adapt_release(bench, collection, out, k=k, distractors=distractors, seed=seed, max_chars=max_chars)
    typer.echo(
        f"{report['tasks']} tasks, {report['documents']} documents → {out} "
        f"({len(report['skipped_small_pools'])} queries skipped: pool < k)"
    )


def freeze(
    tasks: Path = typer.Argument(..., help="Task-set directory (tasks.jsonl, docs.jsonl)."),
    out: Path = typer.Option(..., "-o", "--out", help="Freeze directory to write."),
    k: int = typer.Option(5, min=2, help="Documents per selection."),
    encoder: Encoder = typer.Option(Encoder.onnx, help="onnx (R03's encoder via ONNX Runtime) or torch."),
) -> None:
    """Encode facets and documents and write every label-free ranking, with SHA-256 manifest.

    Judgment files (*judgment*, *qrels*) cannot be opened while this runs.

    Example: nclue coverage freeze examples/coverage -o runs/coverage-freeze
    """
    from rich.progress import Progress

    from nclue.select.freeze import freeze as run_freeze
    from nclue.select.tasks import load_tasks

    tasks_list = load_tasks(tasks)
    total = len({d for t in tasks_list for d in t.pool}) + sum(t.m + 1 for t in tasks_list)
    with Progress(transient=True) as progress:
        bar = progress.add_task("encoding", total=total)
        manifest = run_freeze(tasks, out, encoder_kind=encoder.value, k=k, on_block=lambda n: progress.advance(bar, n))
    typer.echo(f"froze {manifest['tasks']} tasks, {manifest['documents']} documents → {out}")


def evaluate(
    tasks: Path = typer.Argument(..., help="Task-set directory the freeze was made from."),
    freeze_dir: Path = typer.Argument(..., help="Freeze directory written by `nclue coverage freeze`."),
    judgments: Path = typer.Option(..., "--judgments", help="judgments.jsonl to score against."),
    out: Path = typer.Option(..., "-o", "--out", help="Output directory for tables and scores."),
    on_missing: OnMissing = typer.Option(OnMissing.error, help="A judge missing for a pool document: error, or zero."),
) -> None:
    """Verify the freeze (refusing a changed one), then score dense / coverage / gated and the oracle.

    Example: nclue coverage evaluate examples/coverage frz --judgments examples/coverage/judgments.jsonl -o out
    """
    from rich.progress import Progress

    from nclue.select.evaluate import evaluate as run_evaluate
    from nclue.select.tasks import load_tasks

    with Progress(transient=True) as progress:
        bar = progress.add_task("scoring", total=len(load_tasks(tasks)))
        report = run_evaluate(
            tasks,
            freeze_dir,
            judgments,
            out,
            on_missing=on_missing.value,  # type: ignore[arg-type]
            on_task=lambda: progress.advance(bar),
        )
    typer.echo(f"scored {report['all'].tasks} tasks → {out / 'results.md'}")


coverage_app.command("adapt")(adapt)
coverage_app.command("freeze")(freeze)
coverage_app.command("evaluate")(evaluate)


def register(app: typer.Typer) -> None:
    """Add the ``coverage`` group."""
    app.add_typer(coverage_app, name="coverage")
