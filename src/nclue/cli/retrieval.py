"""``nclue search`` (one query, table or JSON), ``nclue run`` (a release → run files, or a matrix) and ``nclue tune``."""

from __future__ import annotations

import json
import re
from enum import Enum
from pathlib import Path

import typer

from nclue.engine import EngineName
from nclue.errors import NclueError
from nclue.types import Form

SNIPPET = 70


class SearchFormat(str, Enum):
    """Output of ``search``."""

    table = "table"
    json = "json"


def snippet(text: str, condition: str, width: int = SNIPPET) -> tuple[str, list[tuple[int, int]]]:
    """A short window of ``text`` around the first match of ``condition``'s words, plus the
    ``(start, end)`` spans of every condition word inside it (for highlighting)."""
    words = [w for w in re.findall(r"\w\w+", condition.lower())]
    if not words:
        return text[:width].replace("\n", " "), []
    pattern = re.compile(
        r"\b(?:" + "|".join(re.escape(w[: max(4, len(w) - 2)]) for w in words) + r")\w*", re.IGNORECASE
    )
    first = pattern.search(text)
    centre = first.start() if first else 0
    start = max(0, centre - width // 3)
    window = text[start : start + width].replace("\n", " ")
    return window, [(m.start(), m.end()) for m in pattern.finditer(window)]


def _warn_split(conditions: tuple[str, ...]) -> None:
    """Say which conditions a sentence was split into (stderr), and how to set them instead."""
    from rich.console import Console

    from nclue.tables import terminal_text

    shown = terminal_text("; ".join(f'"{c}"' for c in conditions))
    Console(stderr=True).print(
        f"conditions split from the sentence: {shown} (set them yourself with --require A --require B)",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def _snippets(doc, collection) -> dict[str, dict]:  # noqa: ANN001 - RankedDoc, Collection
    """Per condition with evidence: its first evidence page, the text window shown in the table and
    the highlighted spans (character offsets into the window)."""
    out = {}
    for condition, pages in doc.evidence.items():
        if pages:
            window, spans = snippet(collection.page_text(doc.doc_id, pages[0]), condition)
            out[condition] = {"page": int(pages[0]), "text": window, "spans": [[a, b] for a, b in spans]}
    return out


def _render_table(results, conditions, title, collection) -> None:  # noqa: ANN001 - rich types imported lazily
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from nclue.tables import terminal_text

    table = Table(title=Text(terminal_text(title)), show_lines=True)
    table.add_column("rank", justify="right")
    table.add_column("document", overflow="fold")
    table.add_column("score", justify="right")
    for condition in conditions:
        table.add_column(Text(terminal_text(condition)))
    for rank, doc in enumerate(results, start=1):
        cells = []
        for condition in conditions:
            pages = doc.evidence.get(condition, ())
            if not pages:
                cells.append(Text("—" if doc.evidence else "", style="dim"))
                continue
            cell = Text(f"p. {', '.join(map(str, pages))}\n", style="bold")
            window, spans = snippet(collection.page_text(doc.doc_id, pages[0]), condition)
            body = Text(terminal_text(window))
            for a, b in spans:
                body.stylize("bold yellow", a, b)
            cell.append_text(body)
            cells.append(cell)
        table.add_row(str(rank), Text(terminal_text(doc.doc_id)), f"{doc.score:.4g}", *cells)
    Console().print(table)


def search(
    collection: Path = typer.Argument(..., help="Collection directory (with `nclue index COLLECTION --lexical`)."),
    query: str = typer.Argument(
        "", help='Query: "A"; "B"; "C", A; B; C, the natural template, or a sentence (split into conditions).'
    ),
    query_option: str = typer.Option("", "--query", "-q", help="The query, as an option (as in `coverage select`)."),
    require: list[str] = typer.Option(
        [],
        "--require",
        "-r",
        "--condition",
        "-c",
        help="A condition the documents must cover (repeatable); with it the query is only the question text.",
    ),
    system: str = typer.Option("bm25.decompose(distinct)", "--system", "-s", help="System name (docs/systems.md)."),
    k: int = typer.Option(10, "-k", min=1, max=1000, help="Number of documents to show."),
    fmt: SearchFormat = typer.Option(SearchFormat.table, "--format", help="table or json."),
) -> None:
    """Find the documents that cover every condition, with the pages that prove it.

    The conditions are the --require flags when given (the query is then the question that joint
    systems read, as in `coverage select`); else the query's quoted concepts ("A"; "B"), its
    semicolon-separated parts (A; B), or — for a plain sentence — its parts split on commas, "and",
    "with" and similar joiners, printed so a wrong split can be fixed with --require.

    Example: nclue search ./coll '"package maintainer"; "kernel module"' --system 'bm25.decompose(distinct)' -k 5

    Example: nclue search ./coll --query "typeset a critical edition" -r "line numbering" -r footnotes

    Example: nclue search ./coll "how do I typeset a critical edition with line numbers and footnotes"
    """
    from nclue.api import open_collection
    from nclue.errors import NclueError
    from nclue.query import parse_conditions, render_clean_v2, split_sentence

    if query.strip() and query_option.strip():
        raise NclueError("give the query once: as the argument or with --query, not both")
    question = (query_option or query).strip()
    if require:
        conditions = parse_conditions("", require)
        text = question or render_clean_v2(conditions)
    elif '"' in question or ";" in question:
        conditions = parse_conditions(question)
        text = question
    else:
        conditions = parse_conditions("", split_sentence(question))
        text = question
        _warn_split(conditions)
    coll = open_collection(collection)
    results = coll.search(conditions, system=system, k=k, text=text)
    if fmt is SearchFormat.json:
        rows = [
            {
                "rank": i,
                "doc_id": d.doc_id,
                "score": d.score,
                "evidence": {c: list(p) for c, p in d.evidence.items()},
                "snippets": _snippets(d, coll),
            }
            for i, d in enumerate(results, start=1)
        ]
        typer.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    if not results:
        typer.echo("no document matches")
        return
    _render_table(results, conditions, text, coll)


def run(
    bench: Path = typer.Argument(..., help="Benchmark release directory (needs queries.jsonl)."),
    collection: Path = typer.Argument(..., help="Collection directory with its indexes."),
    system: list[str] = typer.Option([], "--system", "-s", help="System name (repeatable)."),
    matrix: Path | None = typer.Option(
        None, "--matrix", help="Matrix TOML naming systems, forms and contrasts ('default' = the shipped one)."
    ),
    form: Form = typer.Option(Form.clean_v2, "--form", help="Query rendering."),
    output: Path = typer.Option(..., "--output", "-o", help="Run directory to write TREC + JSONL runs into."),
    depth: int = typer.Option(100, "--depth", min=1, max=10000, help="Documents per query."),
    force: bool = typer.Option(False, "--force", help="With --matrix: rerun even unchanged runs."),
    engine: EngineName = typer.Option(EngineName.local, "--engine", help="Rank query batches here or on Ray."),
    workers: int | None = typer.Option(
        None,
        "--workers",
        "-w",
        min=1,
        help="Parallel workers: local processes or Ray CPUs (default: 1 for --system; one per CPU for --matrix).",
    ),
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="An existing Ray cluster (HOST:PORT or auto); default: a local Ray instance."
    ),
) -> None:
    """Run systems on a release's queries; write one TREC and one JSONL run per system.

    Example: nclue run ./bench ./coll -s bm25.joint -s 'bm25.decompose(distinct)' --form clean_v2 -o ./runs

    Example: nclue run ./bench ./coll --matrix default -o ./runs   (skips runs whose spec and inputs are unchanged)

    Example: nclue run ./bench ./coll -s bm25.cover -o ./runs --engine ray --ray-address auto   (same run files)

    Example: nclue run ./bench ./coll --matrix default -o ./runs --engine ray   (runs spread over a local Ray instance)
    """
    from rich.console import Console

    from nclue.engine import open_engine
    from nclue.progress import progress_bars

    console = Console(stderr=True)
    if matrix is not None:
        if system:
            raise NclueError("give either --matrix or --system, not both")
        from nclue.matrix.runner import run_matrix
        from nclue.matrix.runset import MANIFEST
        from nclue.matrix.spec import load_matrix

        spec = load_matrix(None if str(matrix) == "default" else matrix)
        with open_engine(engine.value, workers, ray_address) as runner, progress_bars() as bar:
            result = run_matrix(
                spec, bench, collection, output, progress=bar, force=force, workers=workers, engine=runner
            )
        console.print(
            f"matrix: {len(result.ran)} run(s) produced, {len(result.skipped)} unchanged and skipped; "
            f"manifest {output / MANIFEST}",
            highlight=False,
            markup=False,
        )
        for name, problem in result.failed.items():
            console.print(f"{name}: {problem}", highlight=False, markup=False, style="yellow")
        return
    if not system:
        raise NclueError("name at least one --system (e.g. -s 'bm25.decompose(distinct)') or give --matrix FILE")
    from nclue.io import exclusive_lock, writable_dir
    from nclue.systems.preflight import require_indexes
    from nclue.systems.run import run_systems

    require_indexes(collection, system, "running " + ", ".join(system))  # before an engine starts
    out = writable_dir(output, "run folder")
    with (
        exclusive_lock(out, "run folder"),
        open_engine(engine.value, workers, ray_address) as runner,
        progress_bars(transient=True) as bar,
    ):
        report = run_systems(
            bench, collection, system, form=form.value, out_dir=out, depth=depth, progress=bar, engine=runner
        )
    for path in report.files:
        console.print(f"wrote {path}", highlight=False, markup=False)
    console.print(report.summary(), highlight=False, markup=False)


def tune(
    bench: Path = typer.Argument(..., help="Benchmark release with qrels (the tuning and held-out queries)."),
    collection: Path = typer.Argument(..., help="Collection directory with its lexical index."),
    form: Form = typer.Option(Form.raw, "--form", help="Query rendering the tuned system will run on."),
    seed: int = typer.Option(0, "--seed", help="Seed of the tuning split."),
    fraction: float = typer.Option(0.5, "--fraction", help="Share of the queries used for tuning (the rest held out)."),
) -> None:
    """Tune k1 and b of bm25.and on a declared split and grid; `bm25.and_tuned` then runs with them.

    The split, the 35-pair grid, every pair's n-Clue Score@10 on the tuning queries and the
    held-out scores of the chosen and the index's own parameters are written to
    COLLECTION/tuning/bm25.and_tuned.json. Quote the held-out figures, never the tuning ones.

    Example: nclue tune ./bench ./coll --form raw --seed 0 && nclue run ./bench ./coll -s bm25.and_tuned --form raw -o ./runs
    """
    from rich.console import Console

    from nclue.matrix.bm25_tuning import tune_bm25_and
    from nclue.progress import progress_bars
    from nclue.systems.tuning import TUNING_FILE

    with progress_bars(transient=True) as bar:
        record = tune_bm25_and(bench, collection, form=form.value, seed=seed, fraction=fraction, progress=bar)
    console = Console(stderr=True)
    held = record.heldout
    console.print(
        f"bm25.and_tuned: k1={record.chosen['k1']}, b={record.chosen['b']} "
        f"(tuned on {len(record.tuning_qids)} queries); held-out n-Clue@10 over {held['queries']} queries: "
        f"{held['tuned']:.1f} tuned vs {held['default']:.1f} at the index's k1={record.default['k1']}, "
        f"b={record.default['b']}; record {collection / TUNING_FILE}",
        highlight=False,
        markup=False,
    )


def register(app: typer.Typer) -> None:
    """Add ``search``, ``run`` and ``tune``."""
    app.command("search")(search)
    app.command("run")(run)
    app.command("tune")(tune)
