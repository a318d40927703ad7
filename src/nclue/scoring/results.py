"""Typed scoring results and their tables: :class:`Scorecard` and :class:`Comparison`.

Every value is in percentage points except p-values, Spearman's ρ and counts. Each result
is a :class:`~nclue.tables.Tabular`: ``to_json()`` is exactly what ``nclue evaluate`` /
``nclue compare`` print with ``--format json``, and ``to_markdown()`` / ``to_latex()`` /
``str()`` render the same tables as the CLI and the paper-style report. The table builders
below are the only ones for these statistics, so a row or column name exists once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

from nclue.io import json_safe
from nclue.tables import METRIC_LABELS, Table, Tabular, fmt_ci, fmt_p, fmt_pp

if TYPE_CHECKING:
    from nclue.scoring.runs import RunCoverage

HEADLINE = ("n_clue_score", "gold_hit", "gold_ndcg", "graded_ndcg")
SHARES = ("miss", "subset_first", "gold_first")
PAGE_METRICS = ("gold_support", "page_coverage_condition", "page_coverage_all")
CI_HEADERS = {"family": "Exact-family 95% CI", "query": "Query 95% CI"}

Interval = tuple[float, float]


@dataclass(frozen=True)
class RunSummary:
    """One run's metrics over the benchmark (pp) and the bootstrap intervals of the headline ones.

    Page metrics are ``None`` for runs that are not page-aware.
    """

    name: str
    n_clue_score: float
    gold_hit: float
    gold_ndcg: float
    graded_ndcg: float
    miss: float
    subset_first: float
    gold_first: float
    gold_support: float | None = None
    page_coverage_condition: float | None = None
    page_coverage_all: float | None = None
    ci: Mapping[str, Interval] = field(default_factory=dict)

    @property
    def page_aware(self) -> bool:
        """Whether the run surfaces evidence pages (Gold+Support is defined)."""
        return self.gold_support is not None

    @property
    def completion(self) -> float | None:
        """n-Clue Score / Gold Hit: how often a found gold is also ranked first (None without a hit)."""
        return self.n_clue_score / self.gold_hit if self.gold_hit else None

    def to_json(self) -> dict:
        """Metric values (absent page metrics left out) and ``ci`` as ``{metric: [lo, hi]}``."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("name", "ci")}
        out = {k: v for k, v in out.items() if v is not None}
        if self.ci:
            out["ci"] = {m: [float(lo), float(hi)] for m, (lo, hi) in self.ci.items()}
        return json_safe(out)


@dataclass(frozen=True)
class Scorecard(Tabular):
    """Scores of several runs on one benchmark at cutoff ``k`` (``nclue evaluate``).

    ``card["bm25.and"].n_clue_score`` reads one value; ``strata`` (when asked for) is
    ``{factor: {stratum: {"queries": count, "runs": {run: {metric: pp}}}}}``.
    """

    k: int
    queries: int
    families: int
    ci_kind: str
    seed: int
    bootstrap: int
    runs: Mapping[str, RunSummary]
    spearman: Mapping[str, Mapping[str, float | None]] | None = None
    strata: Mapping[str, Mapping[str, dict]] | None = None
    unknown_qids: Mapping[str, int] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    coverage: Mapping[str, RunCoverage] = field(default_factory=dict)
    """Per run, how much of the benchmark it covers (:class:`nclue.scoring.runs.RunCoverage`)."""
    measures: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """Standard measures asked for, ``{run: {measure: value in [0, 1]}}`` (:mod:`nclue.scoring.standard`)."""

    @property
    def problems(self) -> list[str]:
        """Every run's shortfalls against the benchmark, one sentence each (empty: all runs cover it)."""
        return [p for c in self.coverage.values() for p in c.problems()]

    def __getitem__(self, name: str) -> RunSummary:
        return self.runs[name]

    def __iter__(self):  # noqa: ANN204 - iterator over run names
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)

    def ranked(self, names: Iterable[str] | None = None) -> list[str]:
        """Run names by n-Clue Score descending, equal scores by name."""
        chosen = list(self.runs) if names is None else list(names)
        return sorted(chosen, key=lambda n: (-self.runs[n].n_clue_score, n))

    def to_json(self) -> dict:
        out: dict = {
            "k": self.k,
            "queries": self.queries,
            "families": self.families,
            "ci": self.ci_kind,
            "seed": self.seed,
            "bootstrap": self.bootstrap,
            "runs": {n: r.to_json() for n, r in self.runs.items()},
        }
        if self.spearman is not None:
            out["spearman"] = self.spearman
        if self.strata is not None:
            out["strata"] = self.strata
        if self.unknown_qids:
            out["unknown_qids"] = dict(self.unknown_qids)
        if self.coverage:
            out["coverage"] = {n: c.to_json() for n, c in self.coverage.items()}
        if self.measures:
            out["measures"] = {n: dict(m) for n, m in self.measures.items()}
        return json_safe(out)

    def to_pandas(self):  # noqa: ANN201 - a pandas DataFrame
        """One row per run (index ``system``, in :meth:`ranked` order): every metric in pp, each
        headline interval as ``METRIC_lo``/``METRIC_hi``, then the standard measures asked for."""
        rows = []
        for name in self.ranked():
            row = {"system": name, **flat(self.runs[name].to_json())}
            rows.append({**row, **dict(self.measures.get(name, {}))})
        return frame(rows, "system")

    def tables(self) -> list[Table]:
        out = [scorecard_table(self)]
        if self.measures:
            out.append(measures_table(self))
        if any(r.page_aware for r in self.runs.values()):
            out.append(page_support_table(self))
        if self.strata:
            out.append(strata_table(self))
        if self.problems:
            out.append(coverage_table(self.coverage.values()))
        return out


@dataclass(frozen=True)
class Contrast:
    """One paired contrast ``variant − base`` (pp), with tests, intervals and sensitivity analyses.

    ``block``/``tried``/``p_selection`` are set for a displayed contrast of a declared block:
    the block name, every endpoint tried, and the selection-aware p (blockwise max-|T| over
    the tried endpoints, Holm across blocks). Sensitivity fields are ``None`` when not computed.
    """

    variant: str
    base: str
    delta: Mapping[str, float]
    ci: Mapping[str, Interval]
    p_query: float
    p_family: float
    p_holm: float
    common_n: int
    delta_d: float | None
    base_mpg: tuple[float, float, float]
    variant_mpg: tuple[float, float, float]
    promotion_bound: Mapping[str, float]
    crossed_gold: Interval | None = None
    crossed_gold_valid_replicates: int | None = None
    crossed_judged: Interval | None = None
    leave_one_gold_doc: Interval | None = None
    leave_one_judged_doc: Interval | None = None
    remove_top20_gold: Mapping[str, float] | None = None
    remove_top20_judged: Mapping[str, float] | None = None
    block: str | None = None
    tried: tuple[str, ...] | None = None
    p_block: float | None = None
    p_selection: float | None = None

    @property
    def name(self) -> str:
        """``block: variant − base`` for a displayed block contrast, else ``variant − base``."""
        pair = f"{self.variant} − {self.base}"
        return f"{self.block}: {pair}" if self.block else pair

    @property
    def has_sensitivity(self) -> bool:
        """Whether the shared-document analyses were computed."""
        return self.crossed_judged is not None

    def to_json(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["ci"] = {m: list(v) for m, v in self.ci.items()}
        return json_safe({k: v for k, v in out.items() if v is not None})


@dataclass(frozen=True)
class BlockTest:
    """Blockwise max-|T| over every tried endpoint of one operation against one base."""

    name: str
    base: str
    display: str
    endpoints: Mapping[str, Mapping[str, float]]
    p_block: float
    p_holm: float

    def to_json(self) -> dict:
        return json_safe(
            {
                "base": self.base,
                "display": self.display,
                "endpoints": self.endpoints,
                "p_block": self.p_block,
                "p_holm": self.p_holm,
            }
        )


@dataclass(frozen=True)
class Comparison(Tabular):
    """Paired contrasts of variants against a base (``nclue compare``), keyed by variant run name."""

    base: str
    k: int
    seed: int
    bootstrap: int
    draws: int
    contrasts: Mapping[str, Contrast]
    blocks: Mapping[str, BlockTest] = field(default_factory=dict)
    spearman: Mapping[str, Mapping[str, float | None]] | None = None
    warnings: tuple[str, ...] = ()
    coverage: Mapping[str, RunCoverage] = field(default_factory=dict)
    """Per run (base and variants), how much of the benchmark it covers."""

    @property
    def problems(self) -> list[str]:
        """Every run's shortfalls against the benchmark, one sentence each."""
        return [p for c in self.coverage.values() for p in c.problems()]

    def __getitem__(self, variant: str) -> Contrast:
        return self.contrasts[variant]

    def to_json(self) -> dict:
        out: dict = {
            "base": self.base,
            "k": self.k,
            "seed": self.seed,
            "bootstrap": self.bootstrap,
            "draws": self.draws,
            "contrasts": {n: c.to_json() for n, c in self.contrasts.items()},
        }
        if self.blocks:
            out["blocks"] = {n: b.to_json() for n, b in self.blocks.items()}
        if self.spearman is not None:
            out["spearman"] = self.spearman
        if self.coverage:
            out["coverage"] = {n: c.to_json() for n, c in self.coverage.items()}
        return json_safe(out)

    def to_pandas(self):  # noqa: ANN201 - a pandas DataFrame
        """One row per contrast (index ``variant``): the effects, tests and sensitivity values of
        :class:`Contrast`, each interval as ``NAME_lo``/``NAME_hi``."""
        return frame([{"variant": n, **flat(c.to_json())} for n, c in self.contrasts.items()], "variant")

    def tables(self) -> list[Table]:
        contrasts = list(self.contrasts.values())
        out = [contrast_table(contrasts, self.draws), support_table(contrasts), promotion_table(contrasts)]
        if any(c.has_sensitivity for c in contrasts):
            out.insert(2, sensitivity_table(contrasts))
        if self.blocks:
            out.append(blocks_table(self.blocks.values()))
        if self.problems:
            out.append(coverage_table(self.coverage.values()))
        return [t for t in out if t.rows]


def flat(record: Mapping) -> dict:
    """A JSON record for a frame: a nested mapping spread into ``KEY_SUB`` columns (``ci``'s into
    ``SUB``), every ``[lo, hi]`` pair of numbers into ``NAME_lo``/``NAME_hi``; other lists dropped."""

    def pair(value: object) -> bool:
        return isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value)

    def put(key: str, value: object) -> None:
        if pair(value):
            out[f"{key}_lo"], out[f"{key}_hi"] = value  # type: ignore[misc]
        elif not isinstance(value, (Mapping, list, tuple)):
            out[key] = value

    out: dict = {}
    for key, value in record.items():
        if isinstance(value, Mapping):
            for sub, item in value.items():
                put(sub if key == "ci" else f"{key}_{sub}", item)
        else:
            put(key, value)
    return out


def frame(rows: list[dict], index: str):  # noqa: ANN201 - a pandas DataFrame
    """``rows`` as a pandas DataFrame indexed by ``index`` (pandas is imported here, on demand)."""
    try:
        import pandas as pd
    except ImportError:
        from nclue.errors import NclueError

        raise NclueError("to_pandas needs pandas; install it with `pip install pandas`") from None
    return pd.DataFrame(rows).set_index(index) if rows else pd.DataFrame(columns=[index]).set_index(index)


# --- the table builders ----------------------------------------------------------------------


def _mpg(values: Sequence[float]) -> str:
    return "/".join(fmt_pp(v) for v in values)


def measures_table(card: Scorecard) -> Table:
    """The standard measures asked for, one column each, in the scorecard's run order."""
    order = card.ranked([n for n in card.runs if n in card.measures])
    names = list(next(iter(card.measures.values())))
    return Table(
        ("System", *names),
        tuple((n, *(f"{card.measures[n][m]:.4f}" for m in names)) for n in order),
        "l" + "r" * len(names),
        f"Standard measures (ir_measures) over {card.queries} queries; unanswered queries score 0",
    )


def coverage_table(coverage: Iterable[RunCoverage]) -> Table:
    """What each run covers of the benchmark: queries answered, unknown ids, documents, pages."""
    rows = tuple(
        (
            c.name,
            f"{c.answered}/{c.queries}",
            str(len(c.unknown_qids)),
            "—" if c.unknown_docs is None else f"{c.unknown_docs}/{c.ranked}",
            f"{c.pages_out_of_range}/{c.cited_pages}" if c.cited_pages else "—",
        )
        for c in coverage
    )
    return Table(
        ("Run", "Queries answered", "Unknown query ids", "Documents outside the corpus", "Pages out of range"),
        rows,
        "lrrrr",
        "Run coverage: unanswered queries are scored as misses, unknown documents as non-relevant",
    )


def scorecard_table(
    card: Scorecard,
    names: Iterable[str] | None = None,
    categories: Mapping[str, str] | None = None,
    ranked: bool = True,
    caption: str | None = None,
) -> Table:
    """The scorecard: runs by n-Clue Score (rank shown when ``ranked``) with the headline metrics,
    the n-Clue interval, the Miss/Subset-first/Gold-first shares and Gold+Support for page-aware runs."""
    order = card.ranked(names)
    with_ci = any("n_clue_score" in card[n].ci for n in order)
    page = any(card[n].page_aware for n in order)
    headers = (["Rank"] if ranked else []) + ["System"] + (["Cat."] if categories else [])
    headers += [METRIC_LABELS["n_clue_score"]] + ([CI_HEADERS.get(card.ci_kind, "95% CI")] if with_ci else [])
    headers += [METRIC_LABELS[m] for m in ("gold_hit", "gold_ndcg", "graded_ndcg")] + ["M/P/G"]
    headers += [METRIC_LABELS["gold_support"]] if page else []
    align = ("r" if ranked else "") + "l" + ("c" if categories else "") + "r" + ("c" if with_ci else "") + "rrrc"
    align += "r" if page else ""
    rows = []
    for rank, name in enumerate(order, start=1):
        r = card[name]
        cells = ([str(rank)] if ranked else []) + [name] + ([categories.get(name, "")] if categories else [])
        cells += [fmt_pp(r.n_clue_score)] + ([fmt_ci(r.ci.get("n_clue_score"))] if with_ci else [])
        cells += [fmt_pp(r.gold_hit), fmt_pp(r.gold_ndcg), fmt_pp(r.graded_ndcg)]
        cells += [_mpg((r.miss, r.subset_first, r.gold_first))]
        cells += [fmt_pp(r.gold_support)] if page else []
        rows.append(tuple(cells))
    ci_note = f"{card.ci_kind} bootstrap, {card.bootstrap} replicates" if with_ci else "no intervals"
    default = (
        f"Scorecard at k = {card.k} over {card.queries} queries ({card.families} exact gold families; {ci_note}); "
        "percentage points. M/P/G = Miss / Subset-first / Gold-first shares."
    )
    return Table(tuple(headers), tuple(rows), align, caption or default)


def page_support_table(card: Scorecard, names: Iterable[str] | None = None) -> Table:
    """Gold+Support and conditional page coverage of the page-aware runs."""
    order = [n for n in card.ranked(names) if card[n].page_aware]
    rows = tuple(
        (n, fmt_pp(card[n].gold_support), fmt_pp(card[n].page_coverage_condition), fmt_pp(card[n].page_coverage_all))
        for n in order
    )
    return Table(
        ("System", *(METRIC_LABELS[m] for m in PAGE_METRICS)),
        rows,
        "lrrr",
        "Gold+Support: a top-k gold's three best surfaced pages meet the stored support of every condition "
        "(all queries as denominator); page coverage is conditional on retrieving a gold.",
    )


def strata_table(card: Scorecard, names: Iterable[str] | None = None) -> Table:
    """Task-factor strata: each cell is ``n-Clue Score / Gold Hit`` (pp); slices overlap."""
    strata = card.strata or {}
    columns = [(factor, name, cell) for factor, cells in strata.items() for name, cell in cells.items()]
    headers = ["System"] + [
        f"{name if factor == 'n' else factor + ' ' + name} ({cell['queries']})" for factor, name, cell in columns
    ]
    rows = []
    for run in card.ranked(names):
        cells = [run]
        for _, _, cell in columns:
            values = cell["runs"][run]
            cells.append(f"{fmt_pp(values['n_clue_score'])}/{fmt_pp(values['gold_hit'])}")
        rows.append(tuple(cells))
    return Table(
        tuple(headers),
        tuple(rows),
        "l" + "c" * len(columns),
        "Task-factor strata: n-Clue Score / Gold Hit (pp) by number of conditions, L_min (minimum gold page "
        "count) and |D+| (nonzero qrels); slices overlap and are descriptive.",
    )


def contrast_table(contrasts: Sequence[Contrast], draws: int) -> Table:
    """Primary-metric inference for each contrast; selection-aware p where the contrast was selected."""
    selected = any(c.p_selection is not None for c in contrasts)
    headers = ["Contrast", "ΔScore", "Exact-family 95% CI", "ΔHit", "ΔNDCG", "p (query)", "p (family)", "Holm p"]
    headers += ["Tried", "Sel.+Holm p"] if selected else []
    rows = []
    for c in contrasts:
        cells = [
            c.name,
            fmt_pp(c.delta["n_clue_score"], sign=True),
            fmt_ci(c.ci["n_clue_score"], 2, sign=True),
            fmt_pp(c.delta["gold_hit"], sign=True),
            fmt_pp(c.delta["gold_ndcg"], sign=True),
            fmt_p(c.p_query),
            fmt_p(c.p_family),
            fmt_p(c.p_holm),
        ]
        if selected:
            cells += [str(len(c.tried or ())), fmt_p(c.p_selection)]
        rows.append(tuple(cells))
    caption = f"Paired contrasts, variant − base (pp); {draws} sign-flip draws; Holm across the listed contrasts."
    if selected:
        caption += (
            " Each block shows its best n-Clue endpoint; Sel.+Holm p is blockwise max-|T| over every tried "
            "endpoint, Holm-adjusted across blocks."
        )
    return Table(tuple(headers), tuple(rows), "lrcrrrrr" + ("rr" if selected else ""), caption)


def support_table(contrasts: Sequence[Contrast]) -> Table:
    """Common-support ordering ΔD and the unconditional Miss/Subset-first/Gold-first shares."""
    rows = tuple(
        (c.name, str(c.common_n), fmt_pp(c.delta_d, sign=True), _mpg(c.base_mpg), _mpg(c.variant_mpg))
        for c in contrasts
    )
    return Table(
        ("Contrast", "Common n", "ΔD", "Base M/P/G", "Variant M/P/G"),
        rows,
        "lrrcc",
        "ΔD: variant minus base in 1 − P(subset before gold) on queries where both retrieve a gold; M/P/G are "
        "unconditional Miss / Subset-first / Gold-first shares (pp).",
    )


def sensitivity_table(contrasts: Sequence[Contrast]) -> Table:
    """Shared-document sensitivity of each n-Clue contrast (pp)."""

    def removed(value: Mapping[str, float] | None) -> str:
        return "–" if value is None else f"{fmt_pp(value['delta'], sign=True)} ({int(value['queries'])} q.)"

    rows = tuple(
        (
            c.name,
            fmt_pp(c.delta["n_clue_score"], sign=True),
            fmt_ci(c.crossed_gold, 2, sign=True),
            fmt_ci(c.crossed_judged, 2, sign=True),
            fmt_ci(c.leave_one_gold_doc, 2, sign=True),
            removed(c.remove_top20_gold),
            removed(c.remove_top20_judged),
        )
        for c in contrasts
        if c.has_sensitivity
    )
    return Table(
        (
            "Contrast",
            "Observed",
            "Crossed gold 95% CI",
            "Crossed all-judged 95% CI",
            "Leave-one-gold-doc range",
            "Remove top-20 gold docs",
            "Remove top-20 judged docs",
        ),
        rows,
        "lrcccrr",
        "Shared-document sensitivity of ΔScore (pp): crossed query × document bootstraps over gold and over all "
        "judged memberships, the leave-one-gold-document range, and the contrast after removing the queries of "
        "the 20 highest-degree documents.",
    )


def promotion_table(contrasts: Sequence[Contrast]) -> Table:
    """The exact adversarial promotion bound of each n-Clue contrast (pp)."""
    rows = tuple(
        (
            c.name,
            fmt_pp(c.delta["n_clue_score"], sign=True),
            *(fmt_pp(c.promotion_bound[str(k)], sign=True) for k in (1, 2, 3)),
        )
        for c in contrasts
    )
    return Table(
        ("Contrast", "Observed", "Promote ≤1", "≤2", "≤3"),
        rows,
        "lrrrr",
        "Adversarial promotion bound: the lowest ΔScore (pp) after promoting up to k judged top-k subsets per "
        "query to gold — an exact bound, not an error model.",
    )


def blocks_table(blocks: Iterable[BlockTest]) -> Table:
    """Blockwise max-|T| with Holm across blocks."""
    rows = tuple(
        (
            b.name,
            b.base,
            b.display,
            fmt_pp(b.endpoints[b.display]["delta"], sign=True),
            fmt_p(b.p_block),
            fmt_p(b.p_holm),
            str(len(b.endpoints)),
        )
        for b in blocks
    )
    return Table(
        ("Block", "Base", "Displayed", "ΔScore", "max-|T| p", "Holm p", "Endpoints"),
        rows,
        "lllrrrr",
        "Blockwise max-|T| family sign-flip tests over every tried endpoint; Holm across blocks.",
    )
