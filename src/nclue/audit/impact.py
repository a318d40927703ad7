"""``nclue audit impact``: every run rescored on every qrels version (``docs/audit.md#effect-on-evaluation``).

For qrels versions ``v_1 … v_m`` (the release's own qrels and each repaired copy) every run is
scored with the project's scorer on each version. A repair can demote a query's only gold: as the
supplement removes its zero-gold SourceShift query "and its nine qrels", a query that has a gold
on the **reference** qrels (the release's own; the first version given when the release has none)
and none on a version is dropped from that version together with its qrels rows
(``keep_zero_gold=True`` keeps it, scored as an unavoidable miss). Every score on a version is the
mean over that version's remaining queries.

The report gives, per version, the qrels (queries, queries with a gold, nonzero, gold and partial
rows, the queries that lost every gold and their rows) and every run's n-Clue Score and Gold-NDCG. Runs are
ordered by ``metric`` (default Gold-NDCG, the metric of the supplement's pre/post table; or n-Clue
Score): per consecutive pair of versions, Spearman's ρ between the runs' orderings, the largest
score movement and the largest rank movement. Each headline contrast ``V − B`` is given on every
version from the per-query differences ``δ_q = V_q − B_q`` of ``metric``: both runs' scores, the
gap ``mean_q δ_q``, the query-paired and the shared-gold-family paired randomization p
(``docs/statistics.md#paired-randomization-test``; families recomputed on each version because
repairs change gold sets), and the crossed query × gold-document (product weights) and query ×
all-judged-document (membership weights) bootstrap 95% intervals
(``docs/statistics.md#crossed-query-document-bootstrap``), as ``nclue compare`` draws them.
Without ``contrasts`` the headline is the first version's best run by ``metric`` against its
runner-up.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from nclue.audit.audit_params import IMPACT_METRICS
from nclue.errors import NclueError, require_seed
from nclue.release import Release
from nclue.runfile import run_name
from nclue.scoring import Benchmark, score_runs
from nclue.scoring.benchmark import GOLD, PARTIAL
from nclue.scoring.run_cache import run_columns
from nclue.scoring.runs import encode_columns
from nclue.scoring.summary import metric_matrix
from nclue.stats import crossed_bootstrap, paired_randomization, spearman_matrix
from nclue.stats.sensitivity import CrossedInterval
from nclue.tables import METRIC_LABELS, Table, Tabular, fmt_ci, fmt_p, fmt_pp
from nclue.types import DEFAULT_SEED

PP = 100.0
SHORT_LABELS = {"gold_ndcg": "Gold-NDCG", "n_clue_score": "n-Clue"}
"""Column-header names of the two per-run scores."""


@dataclass(frozen=True)
class VersionScores:
    """One qrels version: its counts and every run's headline scores (pp) over its remaining queries."""

    name: str
    path: Path
    counts: dict[str, int]
    n_clue: dict[str, float]
    gold_ndcg: dict[str, float]

    def scores(self, metric: str) -> dict[str, float]:
        """Every run's score (pp) by ``metric``: n-Clue Score or Gold-NDCG."""
        return self.n_clue if metric == "n_clue_score" else self.gold_ndcg


@dataclass(frozen=True)
class ContrastRow:
    """A headline contrast ``variant − base`` on one version (pp): both scores, the query-paired and
    gold-family p, and the crossed query/gold-document and query/judged-document 95% intervals."""

    version: str
    variant: str
    base: str
    variant_score: float
    base_score: float
    p_query: float
    p_family: float
    crossed_gold: CrossedInterval
    crossed_judged: CrossedInterval

    @property
    def gap(self) -> float:
        """``variant − base`` (pp)."""
        return self.variant_score - self.base_score

    def to_json(self) -> dict:
        return {
            "version": self.version,
            "variant": self.variant,
            "base": self.base,
            "variant_score": self.variant_score,
            "base_score": self.base_score,
            "gap": self.gap,
            "p_query": self.p_query,
            "p_family": self.p_family,
            "crossed_gold": _interval_json(self.crossed_gold),
            "crossed_gold_valid_replicates": self.crossed_gold.valid_replicates,
            "crossed_judged": _interval_json(self.crossed_judged),
            "crossed_judged_valid_replicates": self.crossed_judged.valid_replicates,
        }


def _interval_json(interval: CrossedInterval) -> list[float] | None:
    """``[lo, hi]`` (pp), ``None`` when no replicate was usable."""
    return [interval.lo, interval.hi] if interval.valid_replicates else None


@dataclass(frozen=True)
class ImpactReport(Tabular):
    """Scores, correlations, movements and contrasts across qrels versions."""

    k: int
    metric: str
    versions: tuple[VersionScores, ...]
    contrasts: tuple[ContrastRow, ...]
    reference: Path
    keep_zero_gold: bool
    draws: int
    bootstrap: int
    seed: int

    def scope(self) -> str:
        """The sentence saying which queries each version's scores average over."""
        if self.keep_zero_gold:
            return (
                "every query of the release on every version; a query whose every gold a repair removed "
                "is kept and scored as a miss"
            )
        return (
            f"each version's remaining queries: a query with a gold on {self.reference.name} and none on "
            "a version is dropped from that version with its qrels rows"
        )

    def ranks(self, version: VersionScores) -> dict[str, int]:
        """1-based rank of each run by the report's metric (ties by name)."""
        scores = version.scores(self.metric)
        order = sorted(scores, key=lambda r: (-scores[r], r))
        return {r: i for i, r in enumerate(order, start=1)}

    def movements(self) -> list[dict]:
        """Per consecutive version pair, by the report's metric: Spearman's ρ, the largest score and rank movements."""
        out = []
        for a, b in zip(self.versions, self.versions[1:]):
            runs = sorted(a.n_clue)
            va = np.array([a.scores(self.metric)[r] for r in runs])
            vb = np.array([b.scores(self.metric)[r] for r in runs])
            rho = spearman_matrix({"a": va, "b": vb})["a"]["b"] if len(runs) >= 2 else float("nan")
            delta = vb - va
            ra, rb = self.ranks(a), self.ranks(b)
            shift = {r: rb[r] - ra[r] for r in runs}
            i = int(np.argmax(np.abs(delta))) if len(runs) else 0
            worst = max(runs, key=lambda r: (abs(shift[r]), r)) if runs else ""
            out.append(
                {
                    "from": a.name,
                    "to": b.name,
                    "spearman": None if np.isnan(rho) else rho,
                    "largest_score_change": {"run": runs[i], "delta": float(delta[i])} if runs else None,
                    "largest_rank_change": {"run": worst, "positions": shift.get(worst, 0)},
                }
            )
        return out

    def to_json(self) -> dict:
        return {
            "k": self.k,
            "metric": self.metric,
            "reference_qrels": str(self.reference),
            "keep_zero_gold": self.keep_zero_gold,
            "scored_queries": self.scope(),
            "versions": [
                {
                    "name": v.name,
                    "path": str(v.path),
                    "counts": v.counts,
                    "n_clue_score": v.n_clue,
                    "gold_ndcg": v.gold_ndcg,
                }
                for v in self.versions
            ],
            "movements": self.movements(),
            "contrasts": [c.to_json() for c in self.contrasts],
            "draws": self.draws,
            "bootstrap": self.bootstrap,
            "seed": self.seed,
        }

    def tables(self) -> list[Table]:
        return [self._pre_post(), self._runs(), self._moves()]

    def _pre_post(self) -> Table:
        """Per version: the qrels counts, then each contrast's scores, gap, p values and crossed intervals."""
        names = [v.name for v in self.versions]
        rows = [
            (
                "Queries / with a gold",
                *(f"{v.counts['queries']} / {v.counts['queries_with_gold']}" for v in self.versions),
            ),
            ("Nonzero qrels", *(str(v.counts["rows"]) for v in self.versions)),
            ("Gold / partial rows", *(f"{v.counts['gold']} / {v.counts['partial']}" for v in self.versions)),
            (
                "Queries that lost every gold / their qrels (" + ("kept" if self.keep_zero_gold else "dropped") + ")",
                *(f"{v.counts['lost_gold_queries']} / {v.counts['lost_gold_rows']}" for v in self.versions),
            ),
        ]
        for variant, base in dict.fromkeys((c.variant, c.base) for c in self.contrasts):
            on = [c for c in self.contrasts if (c.variant, c.base) == (variant, base)]
            rows += [
                (variant, *(fmt_pp(c.variant_score) for c in on)),
                (base, *(fmt_pp(c.base_score) for c in on)),
                (f"{variant} − {base}", *(fmt_pp(c.gap, sign=True) for c in on)),
                ("Paired test (query)", *(f"p = {fmt_p(c.p_query)}" for c in on)),
                ("Paired test (gold family)", *(f"p = {fmt_p(c.p_family)}" for c in on)),
                ("Crossed query/gold-doc 95% CI", *(_fmt_crossed(c.crossed_gold) for c in on)),
                ("Crossed query/judged-doc 95% CI", *(_fmt_crossed(c.crossed_judged) for c in on)),
            ]
        return Table(
            ("Quantity", *names),
            tuple(rows),
            "l" + "r" * len(names),
            f"Evaluation impact of each qrels version. Scores are {METRIC_LABELS[self.metric]}@{self.k} (pp) "
            f"over {self.scope()}.",
        )

    def _runs(self) -> Table:
        """Every run's scores on every version: the report's metric, its change, the other metric, the ranks."""
        other = next(m for m in SHORT_LABELS if m != self.metric)
        first, last = self.versions[0], self.versions[-1]
        ranks = [self.ranks(v) for v in self.versions]
        rows = tuple(
            (
                run,
                *(fmt_pp(v.scores(self.metric)[run]) for v in self.versions),
                fmt_pp(last.scores(self.metric)[run] - first.scores(self.metric)[run], sign=True),
                *(fmt_pp(v.scores(other)[run]) for v in self.versions),
                " → ".join(str(r[run]) for r in ranks),
            )
            for run in sorted(first.n_clue, key=lambda r: (ranks[0][r], r))
        )
        names = [v.name for v in self.versions]
        return Table(
            (
                "Run",
                *(f"{SHORT_LABELS[self.metric]} {n}" for n in names),
                "Δ",
                *(f"{SHORT_LABELS[other]} {n}" for n in names),
                "Rank",
            ),
            rows,
            "l" + "r" * (2 * len(names) + 1) + "l",
            f"Every run rescored on every qrels version (pp); Δ and ranks by {METRIC_LABELS[self.metric]}@{self.k}.",
        )

    def _moves(self) -> Table:
        """Spearman's ρ and the largest movements between consecutive versions."""
        rows = tuple(
            (
                f"{m['from']} → {m['to']}",
                "–" if m["spearman"] is None else f"{m['spearman']:.4f}",
                f"{m['largest_score_change']['run']} ({m['largest_score_change']['delta']:+.2f})"
                if m["largest_score_change"]
                else "–",
                f"{m['largest_rank_change']['run']} ({m['largest_rank_change']['positions']:+d})",
            )
            for m in self.movements()
        )
        return Table(
            ("Versions", "Spearman ρ", "Largest score change (pp)", "Largest rank change"),
            rows,
            "lrll",
            f"Rank correlation and largest movements between consecutive versions "
            f"({METRIC_LABELS[self.metric]}@{self.k}).",
        )


def _fmt_crossed(interval: CrossedInterval) -> str:
    """``[lo, hi]`` in pp, ``–`` when no replicate was usable."""
    return fmt_ci((interval.lo, interval.hi), sign=True) if interval.valid_replicates else "–"


def run_files(paths: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """Run files from files and directories (a directory contributes ``*.jsonl``, else ``*.trec``); unique names."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(p.glob("*.jsonl")) or sorted(p.glob("*.trec"))
            if not found:
                raise NclueError(f"{p}: no run files (*.jsonl or *.trec)")
            out += found
        elif p.is_file():
            out.append(p)
        else:
            raise NclueError(f"{p}: run file or directory not found")
    names = [run_name(p) for p in out]
    repeated = sorted({s for s in names if names.count(s) > 1})
    if repeated:
        raise NclueError(
            f"run names must be unique (the name recorded in the file, else its stem); repeated: {', '.join(repeated)}"
        )
    return out


def version_name(path: Path, release_qrels: Path | None) -> str:
    """``v1`` for the release's own qrels, ``vN`` for ``qrels.vN.*``, else the file stem."""
    from nclue.audit.store import qrels_version

    if release_qrels is not None and path.resolve() == release_qrels.resolve():
        return "v1"
    if ".v" in path.name:
        return f"v{qrels_version(path)}"
    return path.stem


def reference_release(bench: str | os.PathLike[str], home: Release, first: Path) -> Release:
    """The release judged by the reference qrels: ``home`` (``bench`` as opened) with its own qrels,
    else ``bench`` with the first qrels version given."""
    return home if home.has_qrels else Release.open(bench, first, require_qrels=True)


def lost_gold(release: Release, had_gold: frozenset[str]) -> frozenset[str]:
    """The queries of ``had_gold`` (those with a gold on the reference) without a gold on ``release``'s qrels."""
    return had_gold - {j.qid for j in release.judgments if j.label == "gold"}


def without_queries(release: Release, qids: frozenset[str]) -> Release:
    """``release`` less the queries ``qids`` and every qrels row of theirs."""
    kept = tuple(q for q in release.queries if q.qid not in qids)
    if not kept:
        raise NclueError(
            f"{release.files['qrels']}: every query lost its gold on this qrels version, so none is left to score; "
            "check that it is a version of this release, or pass --keep-zero-gold to score them as misses"
        )
    return replace(release, queries=kept, judgments=tuple(j for j in release.judgments if j.qid not in qids))


def qrels_counts(benchmark: Benchmark, lost: int, lost_rows: int) -> dict[str, int]:
    """The version's scored queries and nonzero qrels, and the queries that lost every gold with their rows."""
    return {
        "queries": benchmark.n_queries,
        "queries_with_gold": int((benchmark.n_gold > 0).sum()),
        "rows": len(benchmark.j_label),
        "gold": int((benchmark.j_label == GOLD).sum()),
        "partial": int((benchmark.j_label == PARTIAL).sum()),
        "lost_gold_queries": lost,
        "lost_gold_rows": lost_rows,
    }


def contrast_rows(
    version: VersionScores,
    benchmark: Benchmark,
    values: dict[str, np.ndarray],
    wanted: Sequence[tuple[str, str]],
    metric: str,
    draws: int,
    bootstrap: int,
    seed: int,
) -> list[ContrastRow]:
    """Every contrast on one version from the per-query ``metric`` values (0..1) of its runs.

    ``δ_q = V_q − B_q`` over the version's queries; p values by sign flips of queries and of gold
    families (one draw set for every contrast); crossed intervals by
    ``crossed_bootstrap(δ, incidence("gold"), "product")`` and
    ``crossed_bootstrap(δ, incidence("judged"), "membership")`` (one weight set each), as in
    ``nclue compare``.
    """
    diffs = np.array([values[v] - values[b] for v, b in wanted])
    p_query = paired_randomization(diffs, None, draws, seed)
    p_family = paired_randomization(diffs, benchmark.family, draws, seed)
    gold = crossed_bootstrap(diffs, benchmark.incidence("gold"), "product", bootstrap, seed)
    judged = crossed_bootstrap(diffs, benchmark.incidence("judged"), "membership", bootstrap, seed)
    scores = version.scores(metric)
    return [
        ContrastRow(
            version.name,
            v,
            b,
            scores[v],
            scores[b],
            float(p_query[i]),
            float(p_family[i]),
            _in_pp(gold[i]),
            _in_pp(judged[i]),
        )
        for i, (v, b) in enumerate(wanted)
    ]


def _in_pp(interval: CrossedInterval) -> CrossedInterval:
    """``interval`` with its ends from the 0..1 scale to pp."""
    return CrossedInterval(PP * interval.lo, PP * interval.hi, interval.valid_replicates)


def headline_contrasts(
    contrasts: Sequence[tuple[str, str]], first: VersionScores, metric: str
) -> list[tuple[str, str]]:
    """The contrasts asked for (each once), checked against the runs; else the first version's best run
    by ``metric`` against its runner-up."""
    scores = first.scores(metric)
    if not contrasts:
        if len(scores) < 2:
            raise NclueError("give at least two runs (or a --contrast) to compare")
        ranked = sorted(scores, key=lambda r: (-scores[r], r))
        return [(ranked[0], ranked[1])]
    wanted = list(dict.fromkeys(contrasts))
    for variant, base in wanted:
        for run in (variant, base):
            if run not in scores:
                raise NclueError(f"contrast run {run!r} is not among the runs ({', '.join(sorted(scores))})")
        if variant == base:
            raise NclueError(f'contrast "{variant} vs {base}" sets a run against itself; name two different runs')
    return wanted


def impact(
    bench: str | os.PathLike[str],
    qrels: Sequence[str | os.PathLike[str]],
    runs: Sequence[str | os.PathLike[str]],
    k: int = 10,
    contrasts: Sequence[tuple[str, str]] = (),
    draws: int = 10000,
    seed: int = DEFAULT_SEED,
    metric: str = "gold_ndcg",
    bootstrap: int = 1000,
    keep_zero_gold: bool = False,
) -> ImpactReport:
    """Rescore every run on every qrels version (see the module docstring)."""
    if metric not in IMPACT_METRICS:
        raise NclueError(f"impact metric {metric!r} is not one of {', '.join(IMPACT_METRICS)}")
    require_seed(seed, "impact seed")
    if len(qrels) < 2:
        raise NclueError("give at least two qrels versions to compare (e.g. BENCH/qrels.jsonl AUDIT/qrels.v2.jsonl)")
    files = run_files(runs)
    parsed = [(run_name(f), run_columns(f), f) for f in files]  # parsed once, through the run cache
    home = Release.open(bench)
    reference = reference_release(bench, home, Path(qrels[0]))
    had_gold = frozenset(j.qid for j in reference.judgments if j.label == "gold")
    scored: list[tuple[VersionScores, Benchmark, dict[str, np.ndarray]]] = []
    for q in qrels:
        path = Path(q)
        release = Release.open(bench, path, require_qrels=True)
        lost = lost_gold(release, had_gold)
        lost_rows = sum(j.qid in lost for j in release.judgments)
        benchmark = Benchmark.from_release(release if keep_zero_gold else without_queries(release, lost))
        loaded = [encode_columns(name, columns, benchmark, f) for name, columns, f in parsed]
        scores = score_runs(benchmark, loaded, k)
        values = {m: metric_matrix(scores, m) for m in IMPACT_METRICS}
        names = [r.name for r in loaded]
        version = VersionScores(
            version_name(path, home.files.get("qrels")),
            path,
            qrels_counts(benchmark, len(lost), lost_rows),
            {n: PP * float(values["n_clue_score"][i].mean()) for i, n in enumerate(names)},
            {n: PP * float(values["gold_ndcg"][i].mean()) for i, n in enumerate(names)},
        )
        scored.append((version, benchmark, {n: values[metric][i] for i, n in enumerate(names)}))
    wanted = headline_contrasts(contrasts, scored[0][0], metric)
    by_version = [contrast_rows(v, b, x, wanted, metric, draws, bootstrap, seed) for v, b, x in scored]
    rows = tuple(on[i] for i in range(len(wanted)) for on in by_version)
    return ImpactReport(
        k,
        metric,
        tuple(v for v, _, _ in scored),
        rows,
        reference.files["qrels"],
        keep_zero_gold,
        draws,
        bootstrap,
        seed,
    )
