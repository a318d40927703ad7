"""Difficulty diagnostics (the seed's Table S5b rows; ``docs/report.md#difficulty-diagnostics``).

Which properties of a query make complete-first success harder? Per query:

* ``rarity = −(1/n) Σ_i ln df(c_i)``, with ``df(c)`` the number of documents whose pages
  establish condition ``c`` in the release's ``inventory.jsonl``;
* ``n = 3`` (indicator, against ``n = 2``);
* gold-document length ``ln L_min`` (the shortest gold, in pages);
* judged-pool size ``ln |D+|`` (nonzero qrels).

For every fair system, a logistic regression (``statsmodels`` ``Logit``, maximum
likelihood with an intercept) of per-query n-Clue success on the four covariates, the
continuous ones standardised (β per standard deviation); its in-sample AUC
(Mann–Whitney: the probability that a random success gets a higher fitted probability than
a random failure, ties counting one half) and the AUC of the same model without the length
covariate, which shows how much length adds.

**Density-matched n = 2 vs n = 3.** More conditions also mean a denser judged pool, so the
raw n-stratum gap mixes the two. Queries are binned by the quintiles of ``|D+|``; within
each bin that holds both kinds, the success rates of ``n = 2`` and ``n = 3`` queries are
compared and the bins are weighted by their number of ``n = 3`` queries (the effect on the
three-condition queries). The 95% interval is the exact-family bootstrap of that weighted
difference (the same replicate weights for every system).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from nclue.io import iter_jsonl, json_safe
from nclue.tables import Table, Tabular, fmt_ci, fmt_p, fmt_pp

if TYPE_CHECKING:
    from nclue.scoring import Benchmark, Scores

COVARIATES = ("rarity", "n3", "log_length", "log_pool")
LABELS = {"rarity": "rarity", "n3": "n = 3", "log_length": "ln gold length", "log_pool": "ln |D+|"}
BINS = 5


def condition_df(inventory_path: Path) -> dict[str, int]:
    """Documents establishing each condition, from ``inventory.jsonl`` (one row per condition and document)."""
    docs: dict[str, set[str]] = {}
    for _, row in iter_jsonl(inventory_path):
        docs.setdefault(row["condition"], set()).add(row["doc_id"])
    return {c: len(d) for c, d in docs.items()}


def covariates(bench: Benchmark, df: Mapping[str, int]) -> dict[str, np.ndarray]:
    """The four raw (unstandardised) covariates of every query, in benchmark order."""
    rarity = np.array([-np.mean([np.log(max(df.get(c, 1), 1)) for c in conds]) for conds in bench.conditions])
    return {
        "rarity": rarity,
        "n3": (bench.n == 3).astype(np.float64),
        "log_length": np.log(bench.l_min),
        "log_pool": np.log(bench.d_plus.astype(np.float64)),
    }


def auc(y: np.ndarray, score: np.ndarray) -> float | None:
    """Mann–Whitney AUC of ``score`` for binary ``y`` (average ranks for ties); ``None`` if one class is empty."""
    from scipy.stats import rankdata

    pos = y > 0.5
    n1, n0 = int(pos.sum()), int((~pos).sum())
    if not n1 or not n0:
        return None
    ranks = rankdata(score)
    return float((ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def _design(cov: Mapping[str, np.ndarray], names: Sequence[str]) -> np.ndarray:
    """Intercept plus the named covariates, continuous ones standardised (mean 0, SD 1)."""
    columns = [np.ones_like(cov["n3"])]
    for name in names:
        x = cov[name]
        columns.append(x if name == "n3" else (x - x.mean()) / (x.std() or 1.0))
    return np.column_stack(columns)


def fit(y: np.ndarray, cov: Mapping[str, np.ndarray], names: Sequence[str] = COVARIATES) -> dict | None:
    """``{"beta": {name: β}, "se", "p", "auc"}`` of the logistic regression, or ``None`` when it cannot be fitted.

    Covariates that do not vary are left out (their β is ``None``); a constant outcome,
    perfect separation or a failed convergence gives ``None``.
    """
    import warnings

    import statsmodels.api as sm
    from statsmodels.tools.sm_exceptions import ConvergenceWarning, PerfectSeparationError, PerfectSeparationWarning

    if y.min() == y.max():
        return None
    used = [n for n in names if np.ptp(cov[n]) > 0]
    design = _design(cov, used)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            warnings.simplefilter("error", PerfectSeparationWarning)
            result = sm.Logit(y, design).fit(disp=0, maxiter=200)
    except (PerfectSeparationError, PerfectSeparationWarning, ConvergenceWarning, np.linalg.LinAlgError):
        return None
    params, se, p = np.asarray(result.params), np.asarray(result.bse), np.asarray(result.pvalues)
    index = {n: i + 1 for i, n in enumerate(used)}
    return {
        "beta": {n: float(params[index[n]]) if n in index else None for n in names},
        "se": {n: float(se[index[n]]) if n in index else None for n in names},
        "p": {n: float(p[index[n]]) if n in index else None for n in names},
        "auc": auc(y, design @ params),
    }


def matched_bins(pool: np.ndarray, n: np.ndarray, bins: int = BINS) -> np.ndarray:
    """Bin id of every query by the quantiles of ``|D+|`` (``-1`` when its bin lacks n = 2 or n = 3 queries)."""
    edges = np.unique(np.quantile(pool, np.linspace(0, 1, bins + 1)))
    ids = np.clip(np.searchsorted(edges, pool, side="right") - 1, 0, max(len(edges) - 2, 0))
    for b in np.unique(ids):
        inside = ids == b
        if not ((n[inside] == 2).any() and (n[inside] == 3).any()):
            ids[inside] = -1
    return ids


def matched_difference(y: np.ndarray, n: np.ndarray, bins: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted density-matched ``rate(n=3) − rate(n=2)`` for each row of query ``weights (R, Q)``."""
    out = np.zeros(weights.shape[0])
    total = np.zeros(weights.shape[0])
    for b in np.unique(bins[bins >= 0]):
        three, two = (bins == b) & (n == 3), (bins == b) & (n == 2)
        w3, w2 = weights @ three, weights @ two
        ok = (w3 > 0) & (w2 > 0)
        rate3 = np.where(ok, (weights @ (y * three)) / np.where(ok, w3, 1), 0.0)
        rate2 = np.where(ok, (weights @ (y * two)) / np.where(ok, w2, 1), 0.0)
        out += np.where(ok, w3 * (rate3 - rate2), 0.0)
        total += np.where(ok, w3, 0.0)
    return np.where(total > 0, out / np.where(total > 0, total, 1), np.nan)


@dataclass(frozen=True)
class DifficultyStudy(Tabular):
    """Regression, AUC and density-matched rows of every fair system."""

    queries: int
    bootstrap: int
    covariates: Mapping[str, Mapping[str, float]]
    models: Mapping[str, dict | None]
    auc_without_length: Mapping[str, float | None]
    matched: Mapping[str, Mapping[str, object]]
    matched_queries: Mapping[str, int]

    def sections(self) -> Iterator[tuple[str, str, Table]]:
        """``(file key, title, table)`` of both tables."""
        yield "table_s5b_difficulty", "Difficulty regression (Table S5b)", self.regression_table()
        yield "table_s5b_density_matched", "Density-matched n = 2 vs n = 3 (Table S5b)", self.matched_table()

    def tables(self) -> list[Table]:
        return [t for _, _, t in self.sections()]

    def regression_table(self) -> Table:
        rows = []
        for system, model in self.models.items():
            if model is None:
                rows.append((system, *(["–"] * (len(COVARIATES) + 2))))
                continue
            cells = [
                "–" if model["beta"][c] is None else f"{model['beta'][c]:+.2f} ({fmt_p(model['p'][c])})"
                for c in COVARIATES
            ]
            no_length = self.auc_without_length.get(system)
            rows.append(
                (
                    system,
                    *cells,
                    "–" if model["auc"] is None else f"{model['auc']:.3f}",
                    "–" if no_length is None else f"{no_length:.3f}",
                )
            )
        return Table(
            ("System", *(f"β {LABELS[c]} (p)" for c in COVARIATES), "AUC", "AUC w/o length"),
            tuple(rows),
            "l" + "r" * (len(COVARIATES) + 2),
            f"Difficulty: logistic regression of per-query n-Clue success on condition rarity "
            f"(−mean ln df), n = 3, ln gold length (L_min pages) and ln |D+| over {self.queries} queries; continuous "
            "covariates standardised (β per SD); in-sample AUC with and without the length covariate. Queries without a gold (no length) are left out.",
            number="S5b",
            key="s5b-difficulty",
        )

    def matched_table(self) -> Table:
        rows = tuple(
            (
                system,
                fmt_pp(m["n2"]),  # type: ignore[arg-type]
                fmt_pp(m["n3"]),  # type: ignore[arg-type]
                fmt_pp(m["delta"], sign=True),  # type: ignore[arg-type]
                fmt_ci(m["ci"], 1, sign=True),  # type: ignore[arg-type]
            )
            for system, m in self.matched.items()
        )
        q = self.matched_queries
        return Table(
            ("System", "n = 2 (matched)", "n = 3", "Δ (n=3 − n=2)", "Exact-family 95% CI"),
            rows,
            "lrrrc",
            f"Density-matched n = 2 vs n = 3: n-Clue Score (pp) of n = 2 and n = 3 queries within quintile bins of |D+|, "
            f"weighted by the bins' n = 3 counts ({q.get('n2', 0)} n = 2 and {q.get('n3', 0)} n = 3 queries in shared "
            f"bins); {self.bootstrap} exact-family bootstrap replicates.",
            number="S5b",
            key="s5b-density-matched",
        )

    def to_json(self) -> dict:
        return json_safe(
            {
                "queries": self.queries,
                "bootstrap": self.bootstrap,
                "covariates": self.covariates,
                "models": self.models,
                "auc_without_length": self.auc_without_length,
                "matched": self.matched,
                "matched_queries": self.matched_queries,
            }
        )


def difficulty_study(
    bench: Benchmark,
    scores: Scores,
    runs: Sequence[str],
    inventory_path: Path,
    n_boot: int,
    seed: int,
) -> DifficultyStudy:
    """Table S5b's rows for ``runs`` (names in ``scores``)."""
    from nclue.scoring import metric_matrix
    from nclue.stats import cluster_weights

    cov = covariates(bench, condition_df(inventory_path))
    valid = np.all([np.isfinite(v) for v in cov.values()], axis=0)
    cov = {c: v[valid] for c, v in cov.items()}
    primary = metric_matrix(scores, "n_clue_score")
    bins = matched_bins(bench.d_plus.astype(np.float64), bench.n)
    _, family = np.unique(bench.family, return_inverse=True)
    weights = cluster_weights(int(family.max()) + 1, n_boot, seed)[:, family]
    ones = np.ones((1, bench.n_queries))
    models, no_length, matched = {}, {}, {}
    for name in runs:
        y = primary[scores.index(name)]
        models[name] = fit(y[valid], cov)
        reduced = fit(y[valid], cov, [c for c in COVARIATES if c != "log_length"])
        no_length[name] = None if reduced is None else reduced["auc"]
        point = float(matched_difference(y, bench.n, bins, ones)[0])
        reps = matched_difference(y, bench.n, bins, weights)
        reps = reps[~np.isnan(reps)]
        ci = (100.0 * float(np.quantile(reps, 0.025)), 100.0 * float(np.quantile(reps, 0.975))) if reps.size else None
        three, two = (bins >= 0) & (bench.n == 3), (bins >= 0) & (bench.n == 2)
        matched[name] = {
            "n2": 100.0 * float(_reweighted_rate(y, bins, two, three)),
            "n3": 100.0 * float(y[three].mean()) if three.any() else None,
            "delta": 100.0 * point,
            "ci": ci,
        }
    summary = {c: {"mean": float(v.mean()), "sd": float(v.std())} for c, v in cov.items()}
    counts = {"n2": int(((bins >= 0) & (bench.n == 2)).sum()), "n3": int(((bins >= 0) & (bench.n == 3)).sum())}
    return DifficultyStudy(
        queries=int(valid.sum()),
        bootstrap=n_boot,
        covariates=summary,
        models=models,
        auc_without_length=no_length,
        matched=matched,
        matched_queries=counts,
    )


def _reweighted_rate(y: np.ndarray, bins: np.ndarray, two: np.ndarray, three: np.ndarray) -> float:
    """The n = 2 success rate reweighted to the n = 3 queries' bin distribution."""
    total = 0.0
    for b in np.unique(bins[bins >= 0]):
        total += three[bins == b].sum() * y[two & (bins == b)].mean()
    return total / max(three.sum(), 1)
