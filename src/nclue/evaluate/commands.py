"""CLI: ``nclue evaluate`` (scorecard with CIs) and ``nclue compare`` (paired contrasts).

Thin wrappers over :mod:`nclue.evaluate`; output goes to stdout or ``--output``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer

FORMATS = ("table", "markdown", "latex", "json")
CI_KINDS = ("family", "query", "none")


def _check_choice(value: str, choices: tuple[str, ...], flag: str) -> str:
    from nclue.errors import NclueError

    if value not in choices:
        raise NclueError(f"{flag} {value!r} is not one of {', '.join(choices)}")
    return value


def _load(bench_dir: Path, run_paths: list[Path], qrels: Path | None):  # noqa: ANN202 - lazy types
    from rich.console import Console
    from rich.progress import track

    from nclue.errors import NclueError
    from nclue.evaluate import load_benchmark, load_run

    bench = load_benchmark(bench_dir, qrels)
    stems = [p.stem for p in run_paths]
    dupes = sorted({s for s in stems if stems.count(s) > 1})
    if dupes:
        raise NclueError(f"run names must be unique (a run's name is its file stem); repeated: {', '.join(dupes)}")
    console = Console(stderr=True)
    runs = [load_run(p, bench) for p in track(run_paths, description="reading runs", console=console, transient=True)]
    for run in runs:
        if run.unknown_qids:
            shown = ", ".join(run.unknown_qids[:5]) + (" …" if len(run.unknown_qids) > 5 else "")
            console.print(
                f"[yellow]warning:[/] run {run.name}: {len(run.unknown_qids)} queries not in the benchmark were ignored ({shown})",
                highlight=False,
            )
    return bench, runs


def _emit(text: str, output: Path | None) -> None:
    from nclue.io import atomic_write_text

    if output is None:
        typer.echo(text, nl=not text.endswith("\n"))
    else:
        atomic_write_text(output, text)


def register(app: typer.Typer) -> None:
    """Add ``evaluate`` and ``compare`` to the ``nclue`` app."""

    @app.command("evaluate")
    def evaluate_command(
        bench: Path = typer.Argument(..., help="Benchmark release directory (queries.jsonl + qrels)."),
        runs: list[Path] = typer.Argument(..., help="Run files: TREC six-column or nclue JSONL (.jsonl)."),
        k: int = typer.Option(10, "-k", "--k", min=1, help="Rank cutoff."),
        fmt: str = typer.Option("table", "--format", help="table | markdown | latex | json."),
        ci: str = typer.Option("family", "--ci", help="Bootstrap unit: family | query | none."),
        bootstrap: int = typer.Option(1000, "--bootstrap", min=1, help="Bootstrap replicates."),
        seed: int = typer.Option(11, "--seed", help="Seed of every random step."),
        per_query: Path | None = typer.Option(None, "--per-query", help="Write per-query outcomes (JSONL) here."),
        qrels: Path | None = typer.Option(
            None, "--qrels", help="Qrels file to use instead of BENCH's (JSONL, BEIR .tsv, TREC)."
        ),
        with_strata: bool = typer.Option(False, "--strata", help="Add task-factor strata (n, L_min, |D+|)."),
        output: Path | None = typer.Option(None, "--output", "-o", help="Write the report here instead of stdout."),
        plot: Path | None = typer.Option(
            None, "--plot", help="Write the ranked scorecard figure to PLOT.png and PLOT.pdf."
        ),
    ) -> None:
        """Score runs: n-Clue Score, Gold Hit, Gold-NDCG, graded NDCG, M/P/G (percentage points).

        Example: nclue evaluate ./bench runs/bm25.trec runs/fusion.jsonl --format markdown --strata
        """
        from nclue.evaluate import per_query_rows, score_runs, scorecard
        from nclue.evaluate.views import json_safe, scorecard_table, strata_table
        from nclue.io import write_jsonl
        from nclue.report.tables import render

        _check_choice(fmt, FORMATS, "--format")
        ci_kind: Literal["family", "query", "none"] = _check_choice(ci, CI_KINDS, "--ci")  # type: ignore[assignment]
        benchmark, loaded = _load(bench, runs, qrels)
        scores = score_runs(benchmark, loaded, k)
        card = scorecard(benchmark, scores, ci_kind, bootstrap, seed, with_strata)
        unknown = {r.name: len(r.unknown_qids) for r in loaded if r.unknown_qids}
        if unknown:
            card["unknown_qids"] = unknown
        if per_query is not None:
            write_jsonl(per_query, per_query_rows(scores, benchmark))
        if plot is not None:
            from nclue.report.plots import scorecard_plot

            scorecard_plot(card["runs"], plot, label=f"n-Clue Score@{k} (pp)")
        if fmt == "json":
            import json

            _emit(json.dumps(json_safe(card), indent=2, sort_keys=True, allow_nan=False) + "\n", output)
            return
        text = render(scorecard_table(card), fmt)  # type: ignore[arg-type]
        if with_strata:
            text += "\n" + render(strata_table(card), fmt)  # type: ignore[arg-type]
        _emit(text, output)

    @app.command("compare")
    def compare_command(
        bench: Path = typer.Argument(..., help="Benchmark release directory."),
        base: Path = typer.Argument(..., help="The base run file."),
        variants: list[Path] = typer.Argument(..., help="Variant run files, each contrasted with BASE."),
        blocks: Path | None = typer.Option(
            None,
            "--blocks",
            help='JSON {"blocks": [{"name", "endpoints": [run, ...], "base"?, "display"?}]} for max-|T|.',
        ),
        k: int = typer.Option(10, "-k", "--k", min=1, help="Rank cutoff."),
        fmt: str = typer.Option("table", "--format", help="table | markdown | latex | json."),
        bootstrap: int = typer.Option(1000, "--bootstrap", min=1, help="Bootstrap replicates (family and crossed)."),
        draws: int = typer.Option(10000, "--draws", min=1, help="Randomization draws."),
        seed: int = typer.Option(11, "--seed", help="Seed of every random step."),
        qrels: Path | None = typer.Option(None, "--qrels", help="Qrels file to use instead of BENCH's."),
        sensitivity: bool = typer.Option(
            True, "--sensitivity/--no-sensitivity", help="Shared-document sensitivity analyses."
        ),
        output: Path | None = typer.Option(None, "--output", "-o", help="Write the report here instead of stdout."),
        plot: Path | None = typer.Option(
            None, "--plot", help="Write the Gold-Hit vs n-Clue delta plane to PLOT.png/.pdf."
        ),
    ) -> None:
        """Paired contrasts VARIANT − BASE with family CIs, randomization tests, Holm, sensitivity.

        Example: nclue compare ./bench runs/bm25.trec runs/bm25.min.trec runs/bm25.distinct.trec --blocks blocks.json
        """
        from nclue.evaluate import compare_runs, read_blocks, score_runs
        from nclue.evaluate.views import blocks_table, contrast_table, json_safe, sensitivity_table, support_table
        from nclue.report.tables import render

        _check_choice(fmt, FORMATS, "--format")
        benchmark, loaded = _load(bench, [base, *variants], qrels)
        scores = score_runs(benchmark, loaded, k)
        declared = read_blocks(blocks, loaded[0].name) if blocks is not None else []
        result = compare_runs(
            benchmark,
            scores,
            loaded[0].name,
            [r.name for r in loaded[1:]],
            declared,
            bootstrap,
            draws,
            seed,
            sensitivity,
        )
        if plot is not None:
            from nclue.report.plots import delta_plane_plot

            delta_plane_plot(result["contrasts"], plot)
        if fmt == "json":
            import json

            _emit(json.dumps(json_safe(result), indent=2, sort_keys=True, allow_nan=False) + "\n", output)
            return
        tables = [contrast_table(result), support_table(result)]
        if sensitivity:
            tables.append(sensitivity_table(result))
        if declared:
            tables.append(blocks_table(result))
        _emit("\n".join(render(t, fmt) for t in tables), output)  # type: ignore[arg-type]
