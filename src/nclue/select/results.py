"""Typed coverage results: paired task-bootstrap intervals, the results / effects / case tables, and
the :class:`CoverageReport` that ``nclue coverage evaluate`` writes.

Paired task bootstrap (``docs/statistics.md``): for a contrast ``a − b`` with per-task
differences ``δ_t`` over T tasks, each of 10,000 draws resamples T tasks with replacement
(:func:`nclue.stats.bootstrap_replicates` with the protocol's seed, :data:`nclue.types.COVERAGE_SEED`) and records the mean
of ``δ`` over the draw; the interval is the 2.5th and 97.5th percentile of the draw means. One
set of draws per task list is shared by every contrast and metric (fully paired). Percentile
intervals describe this task set; they are not confirmatory tests.

Layouts follow the coverage report: one results row per selection (means over tasks, lost/gained summed),
one effects row per contrast (difference [95% bootstrap interval]), and per task and method
a case table ``Rank / ID | Document | Mean grade | Agreed requirements (one-based) | New
requirements at rank``. Every table is a :class:`~nclue.tables.Table`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import scipy.sparse as sp

from nclue.errors import NclueError
from nclue.io import json_safe
from nclue.stats import bootstrap_replicates, crossed_weights
from nclue.tables import Table, Tabular
from nclue.types import COVERAGE_SEED


@dataclass(frozen=True)
class BootstrapPlan:
    """How coverage intervals are drawn: ``draws`` replicates from ``seed``, a central ``level`` interval.

    :data:`PROTOCOL` is the coverage study's declared plan; another plan is for exploration.
    """

    draws: int = 10_000
    seed: int = COVERAGE_SEED
    level: float = 0.95

    def __post_init__(self) -> None:
        for name in ("draws", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | np.integer):
                raise NclueError(f"BootstrapPlan: {name} must be an integer, got {value!r}")
        if self.draws < 1:
            raise NclueError(f"BootstrapPlan: draws must be at least 1, got {self.draws}")
        if isinstance(self.level, bool) or not isinstance(self.level, int | float) or not 0.0 < self.level < 1.0:
            raise NclueError(f"BootstrapPlan: level must be a number strictly between 0 and 1, got {self.level!r}")

    def percentiles(self) -> tuple[float, float]:
        """The lower and upper percentile of the central ``level`` interval."""
        tail = (1.0 - self.level) / 2.0 * 100.0
        return tail, 100.0 - tail


PROTOCOL = BootstrapPlan()
"""The coverage protocol's plan: 10,000 draws, seed :data:`nclue.types.COVERAGE_SEED`, 95% intervals."""


def recorded_plan(record: object, where: object) -> BootstrapPlan:
    """The :class:`BootstrapPlan` a ``summary.json`` records under ``bootstrap`` (``where`` names the file)."""
    if not isinstance(record, Mapping) or set(record) != {"draws", "seed", "level"}:
        raise NclueError(
            f"{where}: 'bootstrap' must record draws, seed and level, got {record!r}; re-run `nclue coverage evaluate`"
        )
    try:
        return BootstrapPlan(**record)
    except NclueError as exc:
        raise NclueError(f"{where}: {exc}; re-run `nclue coverage evaluate`") from None


LABELS: dict[str, str] = {
    "dense": "Dense",
    "coverage": "Fixed coverage",
    "gated": "Gated coverage (ours)",
    "evidence": "Evidence order",
    "expected": "Expected coverage",
    "xquad": "xQuAD",
    "pm2": "PM2",
    "mmr": "MMR",
    "facility": "Facility location",
    "retriever": "Retriever order",
    "typed": "Typed (fixed historical)",
    "oracle": "Labeled oracle — diagnostic",
}
RESULT_HEADER = (
    "Selection",
    "nDCG@5",
    "Agreed coverage@5",
    "α-nDCG@5",
    "Subtopic recall@5",
    "Label redundancy",
    "Mean positive pair cosine",
    "Docs with no agreed obligation",
    "Unique obligations lost / gained vs dense",
)
EFFECT_HEADER = (
    "Exploratory paired effect",
    "nDCG difference [95% bootstrap interval]",
    "Coverage difference [95% bootstrap interval]",
    "α-nDCG difference [95% bootstrap interval]",
)
CASE_HEADER = ("Rank / ID", "Document", "Mean grade", "Agreed requirements (one-based)", "New requirements at rank")
TABLE_NOTE = (
    "Coverage uses all written requirements as denominator. Label redundancy is repeated agreed "
    "document–obligation assignments divided by total assignments; it is zero when there are no assignments. "
    "Subtopic recall counts only requirements some pool document covers (1 when none does). "
    "“Lost / gained” sums task-specific distinct obligations, counted once per task. The labeled oracle reads "
    "the labels and is a diagnostic ceiling, never a baseline."
)


@dataclass(frozen=True)
class Interval:
    """Observed mean difference and its percentile bootstrap interval."""

    estimate: float
    low: float
    high: float


def paired_intervals(deltas: np.ndarray, plan: BootstrapPlan = PROTOCOL) -> list[Interval]:
    """Bootstrap interval of the mean of each row of ``deltas (M, T)`` (per-task differences), shared draws."""
    deltas = np.atleast_2d(np.asarray(deltas, dtype=np.float64))
    means = bootstrap_replicates(deltas, None, plan.draws, plan.seed)
    low, high = np.percentile(means, plan.percentiles(), axis=1)
    return [Interval(float(d.mean()), float(lo), float(hi)) for d, lo, hi in zip(deltas, low, high)]


def requirement_incidence(requirements: Sequence[Sequence[str]]) -> tuple[sp.csr_matrix, int]:
    """``(distinct requirements, tasks)`` 0/1 matrix: which task writes which requirement (compared
    case-folded, whitespace collapsed), and the number of distinct requirements."""
    index: dict[str, int] = {}
    rows, cols = [], []
    for t, reqs in enumerate(requirements):
        for r in dict.fromkeys(" ".join(q.split()).casefold() for q in reqs):
            rows.append(index.setdefault(r, len(index)))
            cols.append(t)
    shape = (max(len(index), 1), len(requirements))
    return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=shape), len(index)


def crossed_intervals(deltas: np.ndarray, incidence: sp.spmatrix, plan: BootstrapPlan = PROTOCOL) -> list[Interval]:
    """Crossed task × requirement bootstrap interval of the mean of each row of ``deltas (M, T)``.

    Tasks that write the same requirement are not independent, so a task-only bootstrap is too
    narrow when requirements recur. Owen's (2007) pigeonhole bootstrap: independent Poisson(1)
    weights ``w_t`` on tasks and ``u_r`` on distinct requirements; task t weighs
    ``w_t · Π_{r ∈ R(t)} u_r`` (the product rule of the n-Clue crossed bootstrap,
    :func:`nclue.stats.crossed_weights`). A replicate's estimate is the weighted mean; replicates
    of total weight 0 are dropped. Percentile interval; the point estimate is the plain mean.
    """
    deltas = np.atleast_2d(np.asarray(deltas, dtype=np.float64))
    weight = crossed_weights(incidence, "product", plan.draws, plan.seed)
    total = weight.sum(axis=0)
    valid = total > 0
    means = (deltas @ weight[:, valid]) / total[valid]
    low, high = np.percentile(means, plan.percentiles(), axis=1)
    return [Interval(float(d.mean()), float(lo), float(hi)) for d, lo, hi in zip(deltas, low, high, strict=True)]


def label(method: str) -> str:
    """Display name of a method (the name itself when unknown)."""
    return LABELS.get(method, method)


def results_table(summaries: Mapping[str, Mapping[str, float]], caption: str = "") -> Table:
    """One row per method (in mapping order) from :func:`nclue.select.metrics.summarise` outputs."""
    rows = tuple(
        (
            label(name),
            f"{s['ndcg']:.4f}",
            f"{s['coverage']:.4f}",
            f"{s['alpha_ndcg']:.4f}",
            f"{s['subtopic_recall']:.4f}",
            f"{s['redundancy']:.4f}",
            f"{s['pair_cosine']:.4f}",
            f"{s['no_obligation']:.4f}",
            f"{int(s['lost'])} / {int(s['gained'])}",
        )
        for name, s in summaries.items()
    )
    return Table(RESULT_HEADER, rows, caption=caption, notes=(TABLE_NOTE,))


def _interval(iv: Interval) -> str:
    return f"{iv.estimate:+.4f} [{iv.low:+.4f}, {iv.high:+.4f}]"


def effects_table(
    effects: Mapping[str, Mapping[str, Interval]],
    caption: str = "",
    crossed: bool = False,
    shared: str = "",
    plan: BootstrapPlan = PROTOCOL,
) -> Table:
    """One row per contrast ``a-minus-b`` with nDCG, coverage and α-nDCG intervals."""
    rows = tuple(
        (name, _interval(iv["ndcg"]), _interval(iv["coverage"]), _interval(iv["alpha_ndcg"]))
        for name, iv in effects.items()
    )
    note = (
        f"{plan.draws:,} crossed task × requirement bootstrap draws (Poisson weights on tasks and on distinct "
        f"requirements, product rule), seed {plan.seed}; {shared}; percentile intervals, exploratory."
        if crossed
        else f"{plan.draws:,} paired task bootstrap draws, seed {plan.seed}; percentile intervals, exploratory."
    )
    return Table(EFFECT_HEADER, rows, caption=caption, notes=(note,))


def _numbers(values: Sequence[int]) -> str:
    return ", ".join(str(v) for v in values) if values else "None"


def case_rows(
    ranking: Sequence[str], titles: Mapping[str, str], grades: Mapping[str, float], agreed: Mapping[str, Sequence[int]]
) -> tuple[tuple[str, ...], ...]:
    """Rows of one case table: rank / ID, title, mean grade, agreed and newly covered requirements.

    A title equal to its path-like ID is shortened to the ID's last ``/`` part.
    """
    seen: set[int] = set()
    rows = []
    for rank, doc_id in enumerate(ranking, start=1):
        reqs = list(agreed.get(doc_id, []))
        new = [r for r in reqs if r not in seen]
        seen.update(reqs)
        title = titles.get(doc_id, doc_id)
        if title == doc_id:  # ID-only titles (the benchmark adapter's): show the last path part
            title = doc_id.rsplit("/", 1)[-1]
        rows.append((f"{rank} / {doc_id}", title, f"{grades.get(doc_id, 0.0):g}", _numbers(reqs), _numbers(new)))
    return tuple(rows)


def case_table(
    ranking: Sequence[str],
    titles: Mapping[str, str],
    grades: Mapping[str, float],
    agreed: Mapping[str, Sequence[int]],
    caption: str = "",
) -> Table:
    """The per-task case table for one ranking."""
    return Table(CASE_HEADER, case_rows(ranking, titles, grades, agreed), caption=caption)


@dataclass(frozen=True)
class CoverageSplit:
    """Results of one split: per-method task means and the paired effects."""

    name: str
    tasks: int
    methods: Mapping[str, Mapping[str, float]]
    effects: Mapping[str, Mapping[str, Interval]]
    crossed: Mapping[str, Mapping[str, Interval]] = field(default_factory=dict)
    """The same contrasts with crossed task × requirement intervals (:func:`crossed_intervals`)."""
    requirements: int = 0
    """Distinct requirements among the split's tasks."""

    def to_json(self) -> dict:
        return {
            "tasks": self.tasks,
            "requirements": self.requirements,
            "methods": {n: dict(v) for n, v in self.methods.items()},
            "effects": {n: {m: asdict(iv) for m, iv in ivs.items()} for n, ivs in self.effects.items()},
            "effects_crossed": {n: {m: asdict(iv) for m, iv in ivs.items()} for n, ivs in self.crossed.items()},
        }


@dataclass(frozen=True)
class CoverageReport(Tabular):
    """Everything ``nclue coverage evaluate`` reports (``summary.json`` is :meth:`to_json`)."""

    k: int
    freeze: str
    freeze_manifest_sha256: str
    judgments_sha256: str
    missing_judgments: Mapping[str, int]
    oracle: Mapping[str, int]
    splits: Mapping[str, CoverageSplit]
    judgments_as_frozen: bool | None = None
    """Whether the judgments scored are the file the freeze fingerprinted (``None``: none recorded)."""
    scoring_code_as_frozen: bool | None = None
    """Whether the scoring code is the code the freeze hashed."""
    bootstrap: BootstrapPlan = PROTOCOL
    """How the intervals were drawn."""

    def __getitem__(self, split: str) -> CoverageSplit:
        return self.splits[split]

    def to_json(self) -> dict:
        return json_safe(
            {
                "k": self.k,
                "freeze": self.freeze,
                "freeze_manifest_sha256": self.freeze_manifest_sha256,
                "judgments_sha256": self.judgments_sha256,
                "judgments_as_frozen": self.judgments_as_frozen,
                "scoring_code_as_frozen": self.scoring_code_as_frozen,
                "missing_judgments": dict(self.missing_judgments),
                "oracle": dict(self.oracle),
                "bootstrap": asdict(self.bootstrap),
                "splits": {n: s.to_json() for n, s in self.splits.items()},
            }
        )

    def tables(self) -> list[Table]:
        out = []
        for name, split in self.splits.items():
            out.append(results_table(split.methods, f"Coverage selection, split {name} ({split.tasks} tasks)"))
            if split.effects:
                out.append(
                    effects_table(
                        split.effects, f"Paired effects, split {name} ({split.tasks} tasks)", plan=self.bootstrap
                    )
                )
            if split.crossed:
                out.append(
                    effects_table(
                        split.crossed,
                        f"Paired effects with shared requirements, split {name} ({split.tasks} tasks)",
                        crossed=True,
                        shared=f"{split.tasks} tasks write {split.requirements} distinct requirements",
                        plan=self.bootstrap,
                    )
                )
        return out
