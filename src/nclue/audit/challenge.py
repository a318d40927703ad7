"""``nclue audit challenge``: re-judge the subsets that could shrink a headline contrast (``docs/audit.md#targeted-challenge``).

A stratified audit is not built to find the false negatives that decide one comparison. For
runs A and B and a per-query metric at cutoff ``k`` (default Gold-NDCG, on which the
supplement selected its challenge; n-Clue Score, graded NDCG or Gold Hit on request), the
observed contrast is ``Δ = mean_q (A_q − B_q)``. Every judged subset (label ``partial``) in the union
of the two top-k lists is promoted to gold on its own — grade ``n``, everything else
unchanged — and both runs are rescored with the project's scorer; it is a **target** when its
promotion moves ``Δ`` toward zero (``(ΔA_q − ΔB_q) · sign(Δ) < 0``). Promotions in different
queries do not interact, so all queries are handled at once: round ``r`` promotes each
query's ``r``-th candidate, and one scoring per round gives every candidate's effect.

``controls`` neutral pairs — judged subsets whose promotion leaves the contrast where it is,
first from the top-k union, then from the same queries' other judged subsets — are drawn with
the seed and interleaved. Target/control status, runs, ranks and grades stay in the key; the
packet shows every pair with the expanded 6–9-page pools, and the same validation, tie-break
and new qrels version follow (``nclue audit packet`` / ``score`` / ``adjudicate``).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from nclue.audit.audit_params import CHALLENGE_METRICS, ChallengeParams
from nclue.audit.sample import pair_key, release_manifest, stratum_of
from nclue.audit.store import AuditDir
from nclue.errors import NclueError
from nclue.io import sha256_file
from nclue.release import Release
from nclue.scoring import Benchmark, benchmark_from_judgments, load_run_matrix, score_runs
from nclue.scoring.benchmark import PARTIAL
from nclue.scoring.summary import metric_matrix
from nclue.tables import METRIC_LABELS, Table, Tabular, fmt_pp
from nclue.types import Judgment


@dataclass(frozen=True)
class ChallengeSummary(Tabular):
    """The challenge set: contrast, targets and controls (``nclue audit challenge``)."""

    audit: Path
    run_a: str
    run_b: str
    metric: str
    k: int
    contrast: float
    candidates: int
    targets: int
    controls: int
    queries: int

    def to_json(self) -> dict:
        return {
            "audit": str(self.audit),
            "runs": [self.run_a, self.run_b],
            "metric": self.metric,
            "k": self.k,
            "contrast": self.contrast,
            "judged_subsets_in_top_k_union": self.candidates,
            "targets": self.targets,
            "controls": self.controls,
            "queries": self.queries,
        }

    def tables(self) -> list[Table]:
        rows = (
            ("Contrast", f"{self.run_a} − {self.run_b}"),
            (
                f"Observed Δ {METRIC_LABELS.get(self.metric, self.metric)}@{self.k} (pp)",
                fmt_pp(100 * self.contrast, 1, sign=True),
            ),
            ("Judged subsets in the top-k union", str(self.candidates)),
            ("Targets (promotion shrinks the contrast)", str(self.targets)),
            ("Neutral controls (interleaved, hidden)", str(self.controls)),
            ("Queries with a target or control", str(self.queries)),
        )
        return [Table(("Challenge", "Value"), rows, "lr", "Targeted residual-qrel challenge.")]


def promotion_effects(
    bench: Benchmark, runs: list, rows: list[Judgment], candidates: dict[int, list[int]], metric: str, k: int
) -> dict[tuple[int, int], float]:
    """``{(query, membership row): Δ(A − B)}`` after promoting that one subset to gold (0..1 scale)."""
    base = metric_matrix(score_runs(bench, runs, k), metric)
    base_diff = base[0] - base[1]
    qids = list(bench.qids)
    n_pages = {d: int(n) for d, n in zip(bench.doc_ids, bench.n_pages) if n >= 0}
    out: dict[tuple[int, int], float] = {}
    for r in range(max((len(c) for c in candidates.values()), default=0)):
        promoted = {q: c[r] for q, c in candidates.items() if r < len(c)}
        changed = list(rows)
        for q, j in promoted.items():
            changed[j] = Judgment(rows[j].qid, rows[j].doc_id, int(bench.n[q]), "gold", None)
        # same documents, same order: the runs' doc codes stay valid for the trial benchmark
        trial = benchmark_from_judgments(None, qids, list(bench.conditions), changed, n_pages)
        values = metric_matrix(score_runs(trial, runs, k), metric)
        diff = values[0] - values[1]
        for q, j in promoted.items():
            out[(q, j)] = float(diff[q] - base_diff[q])
    return out


def challenge(
    bench: str | os.PathLike[str],
    run_a: str | os.PathLike[str],
    run_b: str | os.PathLike[str],
    out: str | os.PathLike[str],
    params: ChallengeParams = ChallengeParams(),
    qrels: str | os.PathLike[str] | None = None,
) -> ChallengeSummary:
    """Select targets and controls for runs ``run_a`` − ``run_b`` and write the challenge's audit directory."""
    if params.metric not in CHALLENGE_METRICS:
        raise NclueError(f"metric {params.metric!r} is not one of {', '.join(CHALLENGE_METRICS)}")
    release = Release.open(bench, qrels=qrels, require_qrels=True)
    benchmark = Benchmark.from_release(release)
    runs = [load_run_matrix(run_a, benchmark), load_run_matrix(run_b, benchmark)]
    if runs[0].name == runs[1].name:
        raise NclueError(f"{run_a} and {run_b} have the same run name {runs[0].name!r}; contrast two different runs")
    rows = [Judgment(j.qid, j.doc_id, j.grade, j.label, None) for j in release.judgments]
    index = {(j.qid, j.doc_id): i for i, j in enumerate(rows)}
    member = {
        i: index[(benchmark.qids[q], benchmark.doc_ids[d])]
        for i, (q, d) in enumerate(zip(benchmark.j_query, benchmark.j_doc))
    }
    scores = metric_matrix(score_runs(benchmark, runs, params.k), params.metric)
    contrast = float(scores[0].mean() - scores[1].mean())
    sign = 1.0 if contrast >= 0 else -1.0
    candidates: dict[int, list[int]] = {}
    for q in range(benchmark.n_queries):
        top = {int(d) for run in runs for d in run.docs[q, : params.k] if d >= 0}
        found = benchmark.lookup(np.full(len(top), q), np.array(sorted(top), dtype=np.int64)) if top else []
        subsets = sorted(member[int(m)] for m in found if m >= 0 and benchmark.j_label[m] == PARTIAL)
        if subsets:
            candidates[q] = subsets
    effects = promotion_effects(benchmark, runs, rows, candidates, params.metric, params.k)
    targets = sorted(j for (q, j), d in effects.items() if d * sign < -1e-12)
    neutral = sorted(j for (q, j), d in effects.items() if abs(d) <= 1e-12)
    touched = {rows[j].qid for j in targets}
    tried = {j for _, j in effects}
    others = [
        i for i, j in enumerate(release.judgments) if j.label == "partial" and j.qid in touched and i not in tried
    ]
    pool = neutral + others
    rng = np.random.default_rng(params.seed)
    controls = sorted(rng.choice(pool, size=min(params.controls, len(pool)), replace=False).tolist()) if pool else []
    queries = {q.qid: q for q in release.queries}
    sources = {d.doc_id: d.source or "unknown" for d in release.corpus}
    chosen = sorted(
        [(j, "target") for j in targets] + [(j, "control") for j in controls],
        key=lambda jr: (rows[jr[0]].qid, rows[jr[0]].doc_id),
    )
    pairs = []
    for i, (j, role) in enumerate(chosen, start=1):
        judgment = release.judgments[j]
        q = queries[judgment.qid]
        source = sources.get(judgment.doc_id, "unknown")
        stratum = dict(zip(("source", "n"), stratum_of(judgment, q, source, ("source", "n"))))
        pairs.append(pair_key(f"c{i:04d}", judgment, q, source, {**stratum, "role": role}, role))
    manifest = {
        **release_manifest(release, "challenge"),
        "seed": params.seed,
        "params": {**asdict(params), "strata": ["source", "n", "role"]},
        "runs": {
            "a": {"name": runs[0].name, "path": str(Path(run_a).resolve()), "sha256": sha256_file(run_a)},
            "b": {"name": runs[1].name, "path": str(Path(run_b).resolve()), "sha256": sha256_file(run_b)},
        },
        "contrast": contrast,
        "counts": {"pairs": len(pairs), "targets": len(targets), "controls": len(controls), "candidates": len(effects)},
    }
    audit = AuditDir.create(out, manifest, pairs)
    return ChallengeSummary(
        audit=audit.root,
        run_a=runs[0].name,
        run_b=runs[1].name,
        metric=params.metric,
        k=params.k,
        contrast=contrast,
        candidates=len(effects),
        targets=len(targets),
        controls=len(controls),
        queries=len({p.qid for p in pairs}),
    )
