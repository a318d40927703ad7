"""``nclue audit impact``: every run rescored on every qrels version (``docs/audit.md#effect-on-evaluation``).

For qrels versions ``v_1 … v_m`` (the release's own qrels and each repaired copy) every run is
scored with the project's scorer on each version. The report gives, per version, the qrels
(queries, queries with a gold, nonzero, gold and partial rows) and every run's n-Clue Score and
Gold-NDCG; per consecutive pair of versions, Spearman's ρ between the runs' n-Clue orderings, the
largest score movement and the largest rank movement; and the headline contrasts before and
after — both runs' scores, their gap and the family-level paired randomization p
(``docs/statistics.md#paired-randomization-test``), families recomputed on each version because
repairs change gold sets. Without ``contrasts`` the headline is the first version's best run
against its runner-up.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nclue.errors import NclueError
from nclue.runfile import run_name
from nclue.scoring import Benchmark, from_records, score_runs
from nclue.scoring.summary import metric_matrix
from nclue.stats import paired_randomization, spearman_matrix
from nclue.tables import METRIC_LABELS, Table, Tabular, fmt_p, fmt_pp
from nclue.types import DEFAULT_SEED, Run


@dataclass(frozen=True)
class VersionScores:
    """One qrels version: its counts and every run's headline scores (pp)."""

    name: str
    path: Path
    counts: dict[str, int]
    n_clue: dict[str, float]
    gold_ndcg: dict[str, float]


@dataclass(frozen=True)
class ContrastRow:
    """A headline contrast on one version: both scores (pp), the gap and its family-level p."""

    version: str
    variant: str
    base: str
    variant_score: float
    base_score: float
    p_family: float

    @property
    def gap(self) -> float:
        """``variant − base`` (pp)."""
        return self.variant_score - self.base_score


@dataclass(frozen=True)
class ImpactReport(Tabular):
    """Scores, correlations, movements and contrasts across qrels versions."""

    k: int
    versions: tuple[VersionScores, ...]
    contrasts: tuple[ContrastRow, ...]
    draws: int
    seed: int

    def ranks(self, version: VersionScores) -> dict[str, int]:
        """1-based rank of each run by n-Clue Score (ties by name)."""
        order = sorted(version.n_clue, key=lambda r: (-version.n_clue[r], r))
        return {r: i for i, r in enumerate(order, start=1)}

    def movements(self) -> list[dict]:
        """Per consecutive version pair: Spearman's ρ, the largest score and rank movements."""
        out = []
        for a, b in zip(self.versions, self.versions[1:]):
            runs = sorted(a.n_clue)
            va = np.array([a.n_clue[r] for r in runs])
            vb = np.array([b.n_clue[r] for r in runs])
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
            "contrasts": [
                {
                    "version": c.version,
                    "variant": c.variant,
                    "base": c.base,
                    "variant_score": c.variant_score,
                    "base_score": c.base_score,
                    "gap": c.gap,
                    "p_family": c.p_family,
                }
                for c in self.contrasts
            ],
            "draws": self.draws,
            "seed": self.seed,
        }

    def tables(self) -> list[Table]:
        names = [v.name for v in self.versions]
        count_rows = [
            (
                "Queries / with a gold",
                *(f"{v.counts['queries']} / {v.counts['queries_with_gold']}" for v in self.versions),
            ),
            ("Nonzero qrels", *(str(v.counts["rows"]) for v in self.versions)),
            ("Gold / partial rows", *(f"{v.counts['gold']} / {v.counts['partial']}" for v in self.versions)),
        ]
        for pair in {(c.variant, c.base) for c in self.contrasts}:
            rows = [c for c in self.contrasts if (c.variant, c.base) == pair]
            count_rows += [
                (f"{pair[0]}", *(fmt_pp(c.variant_score) for c in rows)),
                (f"{pair[1]}", *(fmt_pp(c.base_score) for c in rows)),
                (f"{pair[0]} − {pair[1]}", *(fmt_pp(c.gap, sign=True) for c in rows)),
                ("Paired test (family)", *(f"p = {fmt_p(c.p_family)}" for c in rows)),
            ]
        pre_post = Table(
            ("Quantity", *names),
            tuple(count_rows),
            "l" + "r" * len(names),
            f"Evaluation impact of each qrels version. Scores are {METRIC_LABELS['n_clue_score']}@{self.k} (pp).",
        )
        last = self.versions[-1]
        first = self.versions[0]
        ranks = [self.ranks(v) for v in self.versions]
        run_rows = tuple(
            (
                run,
                *(fmt_pp(v.n_clue[run]) for v in self.versions),
                fmt_pp(last.n_clue[run] - first.n_clue[run], sign=True),
                *(fmt_pp(v.gold_ndcg[run]) for v in self.versions),
                " → ".join(str(r[run]) for r in ranks),
            )
            for run in sorted(first.n_clue, key=lambda r: (ranks[0][r], r))
        )
        runs_table = Table(
            (
                "Run",
                *(f"n-Clue {n}" for n in names),
                "Δ",
                *(f"Gold-NDCG {n}" for n in names),
                "Rank",
            ),
            run_rows,
            "l" + "r" * (2 * len(names) + 1) + "l",
            "Every run rescored on every qrels version (pp).",
        )
        move_rows = tuple(
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
        moves = Table(
            ("Versions", "Spearman ρ", "Largest score change (pp)", "Largest rank change"),
            move_rows,
            "lrll",
            "Rank correlation and largest movements between consecutive versions.",
        )
        return [pre_post, runs_table, moves]


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


def impact(
    bench: str | os.PathLike[str],
    qrels: Sequence[str | os.PathLike[str]],
    runs: Sequence[str | os.PathLike[str]],
    k: int = 10,
    contrasts: Sequence[tuple[str, str]] = (),
    draws: int = 10000,
    seed: int = DEFAULT_SEED,
) -> ImpactReport:
    """Rescore every run on every qrels version (see the module docstring)."""
    from nclue.release import Release

    if len(qrels) < 2:
        raise NclueError("give at least two qrels versions to compare (e.g. BENCH/qrels.jsonl AUDIT/qrels.v2.jsonl)")
    files = run_files(runs)
    parsed = [Run.read(f) for f in files]
    own = Release.open(bench, with_qrels=True).files.get("qrels")
    versions: list[VersionScores] = []
    per_query: list[tuple[Benchmark, dict[str, np.ndarray]]] = []
    for q in qrels:
        path = Path(q)
        benchmark = Benchmark.open(bench, path)
        loaded = [from_records(r, benchmark) for r in parsed]
        scores = score_runs(benchmark, loaded, k)
        nclue = metric_matrix(scores, "n_clue_score")
        ndcg = metric_matrix(scores, "gold_ndcg")
        names = [r.name for r in loaded]
        counts = {
            "queries": benchmark.n_queries,
            "queries_with_gold": int((benchmark.n_gold > 0).sum()),
            "rows": len(benchmark.j_label),
            "gold": int((benchmark.j_label == 2).sum()),
            "partial": int((benchmark.j_label == 1).sum()),
        }
        versions.append(
            VersionScores(
                version_name(path, own),
                path,
                counts,
                {n: float(100 * nclue[i].mean()) for i, n in enumerate(names)},
                {n: float(100 * ndcg[i].mean()) for i, n in enumerate(names)},
            )
        )
        per_query.append((benchmark, {n: nclue[i] for i, n in enumerate(names)}))
    names = set(versions[0].n_clue)
    wanted = list(contrasts)
    if not wanted:
        if len(names) < 2:
            raise NclueError("give at least two runs (or a --contrast) to compare")
        ranked = sorted(names, key=lambda r: (-versions[0].n_clue[r], r))
        wanted = [(ranked[0], ranked[1])]
    for variant, base in wanted:
        for run in (variant, base):
            if run not in names:
                raise NclueError(f"contrast run {run!r} is not among the runs ({', '.join(sorted(names))})")
    rows = []
    for variant, base in wanted:
        for v, (benchmark, values) in zip(versions, per_query):
            diffs = (values[variant] - values[base])[None, :]
            p = float(paired_randomization(diffs, benchmark.family, draws, seed)[0])
            rows.append(ContrastRow(v.name, variant, base, v.n_clue[variant], v.n_clue[base], p))
    return ImpactReport(k, tuple(versions), tuple(rows), draws, seed)
