"""``nclue audit …``: sample, packet, score, repair, adjudicate, challenge, impact, machine (``docs/audit.md``)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from nclue.audit.audit_params import ChallengeParams, PoolParams, SampleParams
from nclue.cli.llm_options import LLMApi
from nclue.progress import progress_bars
from nclue.tables import Format
from nclue.types import DEFAULT_SEED

audit_app = typer.Typer(
    help=(
        "Label audit: blind evidence packets, agreement, evidence-asymmetric repair, adjudication, new qrels.\n\n"
        "Example: nclue audit sample ./bench -o ./audit && nclue audit packet ./audit ./coll -o packet.html"
    ),
    no_args_is_help=True,
)

_SAMPLE, _POOL, _CHALLENGE = SampleParams(), PoolParams(), ChallengeParams()


class Allocation(str, Enum):
    """How the sample is split across strata (``docs/audit.md#sampling``)."""

    equal = "equal"
    proportional = "proportional"


class ExcludeLevel(str, Enum):
    """What an excluded earlier audit takes out of the population (``nclue.audit.sample.EXCLUDE_LEVELS``)."""

    condition = "condition"
    pair = "pair"


class Metric(str, Enum):
    """The per-query metric whose A − B contrast a challenge addresses."""

    n_clue_score = "n_clue_score"
    gold_ndcg = "gold_ndcg"
    graded_ndcg = "graded_ndcg"
    gold_hit = "gold_hit"


class ImpactMetric(str, Enum):
    """The metric the impact table ranks runs and tests its contrasts by (``IMPACT_METRICS``)."""

    gold_ndcg = "gold_ndcg"
    n_clue_score = "n_clue_score"


def _emit(text: str, report: Path | None) -> None:
    from nclue.errors import NclueError
    from nclue.io import atomic_write_text

    if report is None:
        typer.echo(text, nl=not text.endswith("\n"))
        return
    if report.is_dir():
        raise NclueError(f"{report}: is a directory; give a file name for --report")
    atomic_write_text(report, text)


def _notes(lines: tuple[str, ...] | list[str]) -> None:
    from rich.console import Console

    console = Console(stderr=True)
    for line in lines:
        console.print(f"note: {line}", style="yellow", markup=False, highlight=False)


FORMAT = typer.Option(Format.table, "--format", help="Output format of the report.")
REPORT = typer.Option(None, "--report", help="Write the report here instead of stdout.")


def sample(
    bench: Path = typer.Argument(..., help="Benchmark release directory."),
    out: Path = typer.Option(..., "-o", "--out", help="Audit directory to write."),
    pairs: int = typer.Option(_SAMPLE.pairs, "--pairs", min=1, help="Query–document pairs to sample."),
    seed: int = typer.Option(_SAMPLE.seed, "--seed", min=0, help="Seed of the draw and of the packet order."),
    strata: str = typer.Option(",".join(_SAMPLE.strata), "--strata", help="Comma-separated: source, label, n, grade."),
    allocation: Allocation = typer.Option(Allocation(_SAMPLE.allocation), "--allocation", help="equal | proportional."),
    qrels: Path | None = typer.Option(None, "--qrels", help="Audit this qrels file instead of BENCH's own."),
    exclude: list[Path] = typer.Option(
        [],
        "--exclude",
        help="An earlier audit: leave out pairs sharing a document and a condition with it (repeatable).",
    ),
    exclude_level: ExcludeLevel = typer.Option(
        ExcludeLevel.condition,
        "--exclude-level",
        help="condition: no (document, condition) read before | pair: no same document with the same conditions.",
    ),
    fmt: Format = FORMAT,
    report: Path | None = REPORT,
) -> None:
    """Draw a stratified sample of judged pairs and write the administrator key.

    Example: nclue audit sample ./bench -o ./audit --pairs 300 --seed 11 --strata source,label,n

    Example (a fresh sample, disjoint from the audit a rule was tuned on):
    nclue audit sample ./bench -o ./audit2 --pairs 160 --seed 12 --exclude ./audit
    """
    from nclue.audit.sample import sample as run

    params = SampleParams(pairs, seed, tuple(s.strip() for s in strata.split(",") if s.strip()), allocation.value)
    _emit(run(bench, out, params, qrels, exclude, exclude_level.value).render(fmt), report)


def packet(
    audit: Path = typer.Argument(..., help="Audit directory (from `nclue audit sample` or `challenge`)."),
    collection: Path = typer.Argument(..., help="Collection the benchmark was built from (with its lexical index)."),
    out: Path = typer.Option(..., "-o", "--out", help="HTML packet to write."),
    evaluator: str | None = typer.Option(None, "--evaluator", help="Fix the evaluator label inside the packet."),
    pdf_dir: Path | None = typer.Option(None, "--pdf-dir", help="Ingested PDF folder: embed page images."),
    image_width: int = typer.Option(420, "--image-width", min=120, max=2000, help="Page image width in pixels."),
    rubric_file: Path | None = typer.Option(None, "--rubric", help="JSON with per-condition rubric fields."),
    fmt: Format = FORMAT,
    report: Path | None = REPORT,
) -> None:
    """Build the self-contained HTML packet for blind evaluators.

    Example: nclue audit packet ./audit ./coll -o packet-A.html --evaluator A
    """
    from nclue.audit.packet import build_packet

    with progress_bars(transient=True) as tick:
        summary = build_packet(audit, collection, out, evaluator, pdf_dir, rubric_file, _POOL, image_width, tick)
    _emit(summary.render(fmt), report)


def score(
    audit: Path = typer.Argument(..., help="Audit directory."),
    exports: list[Path] = typer.Argument(..., help="Evaluator exports of one packet."),
    fmt: Format = FORMAT,
    report: Path | None = REPORT,
) -> None:
    """Agreement (Wilson CIs, weighted and Cohen's κ, Fleiss' κ, confusion) and integrity of exports.

    Example: nclue audit score ./audit audit-A.json audit-E.json --format markdown
    """
    from nclue.audit.score import score as run

    result = run(audit, exports)
    _notes(result.notes)
    _emit(result.render(fmt), report)


def repair(
    audit: Path = typer.Argument(..., help="Audit directory."),
    collection: Path = typer.Argument(..., help="Collection (for the expanded-page pools)."),
    exports: list[Path] = typer.Argument(..., help="Exports of the initial blind packet (two or more evaluators)."),
    out: Path = typer.Option(..., "-o", "--out", help="HTML of the expanded-page poll to write."),
    pdf_dir: Path | None = typer.Option(None, "--pdf-dir", help="Ingested PDF folder: embed page images."),
    rubric_file: Path | None = typer.Option(None, "--rubric", help="JSON with per-condition rubric fields."),
    fmt: Format = FORMAT,
    report: Path | None = REPORT,
) -> None:
    """Apply the evidence-asymmetric policy; queue splits and decreases for an expanded-page poll.

    Example: nclue audit repair ./audit ./coll audit-A.json audit-E.json -o poll.html
    """
    from nclue.audit.repair import repair as run

    with progress_bars(transient=True) as tick:
        result = run(audit, exports, collection, out, _POOL, rubric_file, pdf_dir, tick)
    _notes(result.notes)
    _emit(result.render(fmt), report)


def adjudicate(
    audit: Path = typer.Argument(..., help="Audit directory."),
    exports: list[Path] = typer.Argument(None, help="Exports of the poll packet(s) and tie-breaks."),
    overrides: Path | None = typer.Option(None, "--overrides", help="JSON list of reasoned administrative decisions."),
    tiebreak: Path | None = typer.Option(None, "--tiebreak", help="Where to write a tie-break packet if needed."),
    bench: Path | None = typer.Option(None, "--bench", help="The release, if it moved since sampling."),
    fmt: Format = FORMAT,
    report: Path | None = REPORT,
) -> None:
    """Decide polled conditions by majority, apply the distinct-page rule, write qrels.vN.

    Example: nclue audit adjudicate ./audit poll-A.json poll-E.json poll-F.json --format markdown
    """
    from nclue.audit.adjudicate import adjudicate as run

    result = run(audit, exports or [], overrides, tiebreak, bench)
    _notes(list(result.warnings))
    if result.tiebreak is not None:
        _notes(
            [f"{result.unresolved} conditions are tied: give {result.tiebreak.path} to a fresh evaluator, then rerun"]
        )
    _emit(result.render(fmt), report)


def challenge(
    bench: Path = typer.Argument(..., help="Benchmark release directory."),
    run_a: Path = typer.Argument(..., help="Run A of the headline contrast A − B."),
    run_b: Path = typer.Argument(..., help="Run B."),
    out: Path = typer.Option(..., "-o", "--out", help="Audit directory of the challenge."),
    k: int = typer.Option(_CHALLENGE.k, "--k", "-k", min=1, max=1000, help="Rank cutoff."),
    controls: int = typer.Option(_CHALLENGE.controls, "--controls", min=0, help="Neutral controls to interleave."),
    metric: Metric = typer.Option(
        Metric(_CHALLENGE.metric),
        "--metric",
        help="Per-query metric of the contrast (gold_ndcg: the metric the paper's challenge was selected on).",
    ),
    seed: int = typer.Option(_CHALLENGE.seed, "--seed", min=0, help="Seed of the control draw and packet order."),
    qrels: Path | None = typer.Option(
        None, "--qrels", help="Challenge this qrels version (e.g. AUDIT/qrels.v2.jsonl)."
    ),
    fmt: Format = FORMAT,
    report: Path | None = REPORT,
) -> None:
    """Select every judged subset whose promotion could shrink A − B, plus hidden neutral controls.

    Example: nclue audit challenge ./bench runs/bm25.cover.jsonl runs/bm25.and.jsonl -o ./challenge --k 10 --controls 25

    Example (select on the n-Clue Score contrast instead of Gold-NDCG):
    nclue audit challenge ./bench runs/bm25.cover.jsonl runs/bm25.and.jsonl -o ./challenge --metric n_clue_score
    """
    from nclue.audit.challenge import challenge as run

    params = ChallengeParams(k=k, controls=controls, metric=metric.value, seed=seed)
    _emit(run(bench, run_a, run_b, out, params, qrels).render(fmt), report)


def impact(
    bench: Path = typer.Argument(..., help="Benchmark release directory."),
    runs: list[Path] = typer.Argument(..., help="Run files or directories of runs."),
    qrels: list[Path] = typer.Option(..., "--qrels", help="A qrels version (repeat: v1, v2, …)."),
    k: int = typer.Option(10, "--k", "-k", min=1, max=1000, help="Rank cutoff."),
    contrast: list[str] = typer.Option([], "--contrast", help='A headline contrast "VARIANT vs BASE" (repeatable).'),
    metric: ImpactMetric = typer.Option(
        ImpactMetric.gold_ndcg,
        "--metric",
        help="Metric of the contrasts, ranks and movements (gold_ndcg, the paper's; or n_clue_score).",
    ),
    keep_zero_gold: bool = typer.Option(
        False,
        "--keep-zero-gold",
        help="Keep queries a repair left without a gold (scored as misses) instead of dropping them and their qrels.",
    ),
    draws: int = typer.Option(10000, "--draws", min=1, max=1_000_000, help="Randomization draws (query and family)."),
    bootstrap: int = typer.Option(
        1000, "--bootstrap", min=1, max=100_000, help="Crossed query/document bootstrap replicates."
    ),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", min=0, help="Seed of the randomization tests and bootstraps."),
    fmt: Format = FORMAT,
    report: Path | None = REPORT,
) -> None:
    """Rescore every run on every qrels version: ρ, largest movement, contrasts before/after.

    Per version, each contrast's gap, query-paired and gold-family p, crossed query/gold-doc and query/judged-doc 95% CIs.

    Scores, ranks and contrasts are Gold-NDCG (the paper's pre/post table) unless --metric n_clue_score.

    A query with a gold on BENCH's own qrels and none on a version is dropped there with its qrels (--keep-zero-gold keeps it).

    Example: nclue audit impact ./bench ./runs --qrels ./bench/qrels.jsonl --qrels ./audit/qrels.v2.jsonl

    Example (n-Clue Score, zero-gold queries kept, one named contrast):
    nclue audit impact ./bench ./runs --qrels ./bench/qrels.jsonl --qrels ./audit/qrels.v2.jsonl --metric n_clue_score --keep-zero-gold --contrast "bm25.cover vs bm25.and"
    """
    from nclue.audit.impact import impact as run
    from nclue.errors import NclueError

    pairs = []
    for text in contrast:
        parts = [p.strip() for p in text.split(" vs ")]
        if len(parts) != 2 or not all(parts):
            raise NclueError(f'--contrast {text!r}: write "VARIANT vs BASE"')
        pairs.append((parts[0], parts[1]))
    result = run(
        bench,
        qrels,
        runs,
        k=k,
        contrasts=pairs,
        draws=draws,
        seed=seed,
        metric=metric.value,
        bootstrap=bootstrap,
        keep_zero_gold=keep_zero_gold,
    )
    _emit(result.render(fmt), report)


def machine(
    audit: Path = typer.Argument(..., help="Audit directory."),
    endpoint: str | None = typer.Option(None, "--endpoint", help="Endpoint base URL (or NCLUE_LLM_URL)."),
    model: str | None = typer.Option(None, "--model", help="Model name (or NCLUE_LLM_MODEL); keys the cache."),
    key: str | None = typer.Option(None, "--key", help="API key (or NCLUE_LLM_KEY)."),
    api: LLMApi = typer.Option(LLMApi.openai, "--api", help="Chat format of the endpoint and of batch files."),
    packet_id: str | None = typer.Option(None, "--packet", help="Packet id (default: the audit's initial packet)."),
    evaluator: str = typer.Option("M", "--evaluator", help="Evaluator label of the machine's export."),
    out: Path | None = typer.Option(None, "-o", "--out", help="Export to write (default AUDIT/machine-LABEL.json)."),
    cache: Path | None = typer.Option(None, "--cache", help="Response cache (default AUDIT/machine/llm_cache.jsonl)."),
    batch_out: Path | None = typer.Option(
        None, "--batch-out", help="Write the prompts without a reply to this batch request file (no endpoint needed)."
    ),
    batch_in: Path | None = typer.Option(
        None,
        "--batch-in",
        help="Import the replies of a batch file (OpenAI/Anthropic batch output or {custom_id, reply}).",
    ),
    answered_by: str = typer.Option("", "--answered-by", help="Who answered the imported batch (recorded per reply)."),
    fmt: Format = FORMAT,
    report: Path | None = REPORT,
) -> None:
    """Fill an export with an LLM evaluator (frozen response cache, same validation as people).

    Example: nclue audit machine ./audit --endpoint http://localhost:8000/v1 --model qwen -o machine.json

    Offline, in two steps: nclue audit machine ./audit --model M --batch-out requests.jsonl, then fill
    requests.jsonl with any batch API, script or reader and run
    nclue audit machine ./audit --model M --batch-in replies.jsonl --answered-by "who answered".
    """
    from nclue.audit.machine import machine as run

    with progress_bars(transient=True) as tick:
        result = run(
            audit,
            endpoint,
            model,
            key,
            packet_id,
            out,
            evaluator,
            cache,
            tick=tick,
            api=api.value,
            batch_out=batch_out,
            batch_in=batch_in,
            answered_by=answered_by,
        )
    _notes(list(result.reasons[:10]))
    _emit(result.render(fmt), report)


for _name, _command in (
    ("sample", sample),
    ("packet", packet),
    ("score", score),
    ("repair", repair),
    ("adjudicate", adjudicate),
    ("challenge", challenge),
    ("impact", impact),
    ("machine", machine),
):
    audit_app.command(_name)(_command)


def register(app: typer.Typer) -> None:
    """Add the ``audit`` group."""
    app.add_typer(audit_app, name="audit")
