"""``nclue coverage …``: adapt a benchmark, freeze label-free rankings, evaluate a freeze.

Thin wrappers over :mod:`nclue.select.adapter`, :mod:`nclue.select.freeze` and
:mod:`nclue.select.evaluate`; heavy imports happen inside the command bodies.
"""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    """Add the ``coverage`` sub-app (``adapt``, ``freeze``, ``evaluate``) to ``app``."""
    coverage = typer.Typer(
        help=(
            "Coverage selection (R03): pick k documents that cover a task's requirements, "
            "with a pre-outcome freeze and a labeled oracle.\n\n"
            "Example: nclue coverage freeze examples/coverage -o frz && "
            "nclue coverage evaluate examples/coverage frz --judgments examples/coverage/judgments.jsonl -o out"
        ),
        no_args_is_help=True,
    )

    @coverage.command("adapt")
    def adapt(
        bench: Path = typer.Argument(..., help="Benchmark release directory (queries.jsonl, qrels.jsonl, corpus.jsonl)."),
        collection: Path = typer.Argument(..., help="Collection (page store) the release was built from."),
        out: Path = typer.Option(..., "-o", "--out", help="Task-set directory to write."),
        k: int = typer.Option(5, help="Selection size; queries with smaller pools are skipped and listed."),
        distractors: int = typer.Option(0, help="Grade-0 corpus documents added to each pool (seeded)."),
        seed: int = typer.Option(0, help="Seed of the distractor draw."),
        max_chars: int = typer.Option(2000, help="Characters of leading page text per document."),
    ) -> None:
        """Turn an nclue benchmark into tasks.jsonl / docs.jsonl / judgments.jsonl.

        Example: nclue coverage adapt bench/v1 coll -o tasks/debian --distractors 5
        """
        from rich.console import Console

        from nclue.select.adapter import adapt_release

        report = adapt_release(bench, collection, out, k=k, distractors=distractors, seed=seed, max_chars=max_chars)
        Console().print(f"{report['tasks']} tasks, {report['documents']} documents → {out} "
                        f"({len(report['skipped_small_pools'])} queries skipped: pool < k)")

    @coverage.command("freeze")
    def freeze_cmd(
        tasks: Path = typer.Argument(..., help="Task-set directory (tasks.jsonl, docs.jsonl)."),
        out: Path = typer.Option(..., "-o", "--out", help="Freeze directory to write."),
        k: int = typer.Option(5, help="Documents per selection."),
        encoder: str = typer.Option("onnx", help="onnx (seed encoder via ONNX Runtime) or st (sentence-transformers)."),
        onnx_dir: Path = typer.Option(None, help="ONNX export cache root (default ~/.cache/nclue/onnx)."),
    ) -> None:
        """Encode facets and documents and write every label-free ranking, with SHA-256 manifest.

        Judgment files (*judgment*, *qrels*) cannot be opened while this runs.

        Example: nclue coverage freeze examples/coverage -o runs/coverage-freeze
        """
        from rich.console import Console
        from rich.progress import Progress

        from nclue.select.freeze import freeze
        from nclue.select.tasks import load_tasks

        tasks_list = load_tasks(tasks)
        total = len({d for t in tasks_list for d in t.pool}) + sum(t.m + 1 for t in tasks_list)
        with Progress(transient=True) as progress:
            bar = progress.add_task("encoding", total=total)
            manifest = freeze(tasks, out, encoder_kind=encoder, k=k, onnx_dir=onnx_dir,
                              on_block=lambda n: progress.advance(bar, n))
        Console().print(f"froze {manifest['tasks']} tasks, {manifest['documents']} documents → {out}")

    @coverage.command("evaluate")
    def evaluate_cmd(
        tasks: Path = typer.Argument(..., help="Task-set directory the freeze was made from."),
        freeze_dir: Path = typer.Argument(..., help="Freeze directory written by `nclue coverage freeze`."),
        judgments: Path = typer.Option(..., "--judgments", help="judgments.jsonl to score against."),
        out: Path = typer.Option(..., "-o", "--out", help="Output directory for tables and scores."),
        on_missing: str = typer.Option("error", help="A judge missing for a pool document: error, or zero."),
    ) -> None:
        """Verify the freeze (refusing a changed one), then score dense / coverage / gated and the oracle.

        Example: nclue coverage evaluate examples/coverage frz --judgments examples/coverage/judgments.jsonl -o out
        """
        from rich.console import Console
        from rich.progress import Progress

        from nclue.errors import NclueError
        from nclue.select.evaluate import evaluate
        from nclue.select.tasks import load_tasks

        if on_missing not in ("error", "zero"):
            raise NclueError(f"--on-missing {on_missing!r}: choose error or zero")
        with Progress(transient=True) as progress:
            bar = progress.add_task("scoring", total=len(load_tasks(tasks)))
            summary = evaluate(tasks, freeze_dir, judgments, out, on_missing=on_missing,  # type: ignore[arg-type]
                               on_task=lambda: progress.advance(bar))
        Console().print(f"scored {summary['splits']['all']['tasks']} tasks → {out / 'results.md'}")

    app.add_typer(coverage, name="coverage")
