"""Score a verified freeze against judgments (``docs/coverage.md``): metrics, oracle, bootstrap, tables.

Order of operations is the protocol: :func:`nclue.select.freeze.verify_freeze` first (a
changed freeze or a missing one refuses before the judgments file is touched), then the
judgments are read, the labeled oracle is enumerated per task, every frozen ranking is
scored, and each split gets its results table and paired bootstrap effects.

Outputs in ``OUT``: ``scores.jsonl`` (task × method), ``summary.json``, ``results.md`` /
``results.tex`` (per split: results and effects tables), ``cases.md`` / ``cases.tex``
(the per-task case tables). :func:`verify_report` recomputes ``summary.json`` from the
freeze and the judgments and names every cell that does not reproduce.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from nclue.errors import NclueError
from nclue.io import atomic_write_text, json_leaves, read_json_object, sha256_file, write_json, write_jsonl
from nclue.progress import Advance
from nclue.select.diversify import SELECTORS as EVIDENCE_AND_RETRIEVER
from nclue.select.encode import load_vectors
from nclue.select.freeze import (
    MANIFEST_FILE,
    VECTORS_FILE,
    judgments_as_frozen,
    load_rankings,
    scoring_code_sha256,
    verify_freeze,
)
from nclue.select.metrics import METRICS, TaskScore, score_task, summarise
from nclue.select.oracle import labeled_oracle
from nclue.select.results import (
    PROTOCOL,
    BootstrapPlan,
    CoverageReport,
    CoverageSplit,
    Interval,
    case_table,
    crossed_intervals,
    label,
    paired_intervals,
    recorded_plan,
    requirement_incidence,
)
from nclue.select.tasks import ALL_SPLIT, MissingPolicy, Task, load_docs, load_judgments, load_tasks, split_names
from nclue.tables import render

ORACLE = "oracle"
REFERENCE = "dense"
CONTRASTS: tuple[tuple[str, str], ...] = (
    ("coverage", "dense"),
    ("gated", "dense"),
    ("gated", "coverage"),
    *((name, "dense") for name in EVIDENCE_AND_RETRIEVER),
    ("expected", "evidence"),
    ("expected", "retriever"),
    ("expected", "typed"),
)
"""Every declared contrast ``a − b``; those whose selectors were frozen are reported."""
SUMMARY_FILE = "summary.json"


def _effects(
    scores: dict[str, list[TaskScore]],
    methods: list[str],
    plan: BootstrapPlan,
    incidence: sp.spmatrix | None = None,
) -> dict[str, dict[str, Interval]]:
    """Intervals of every declared contrast and metric, from one shared set of draws: paired task
    bootstrap, or the crossed task × requirement bootstrap when ``incidence`` is given."""
    pairs = [(a, b) for a, b in CONTRASTS if a in methods and b in methods]
    if not pairs:
        return {}
    rows = np.stack(
        [
            np.array([getattr(s, metric) for s in scores[a]], dtype=float)
            - np.array([getattr(s, metric) for s in scores[b]], dtype=float)
            for a, b in pairs
            for metric in METRICS
        ]
    )
    intervals = iter(paired_intervals(rows, plan) if incidence is None else crossed_intervals(rows, incidence, plan))
    return {f"{a}-minus-{b}": {metric: next(intervals) for metric in METRICS} for a, b in pairs}


@dataclass
class Scored:
    """A computed report with the per-task material the output files are written from."""

    report: CoverageReport
    rows: list[dict]
    chosen: dict[str, dict[str, list[str]]]
    tasks: list[Task]
    labels: dict
    methods: list[str]
    oracle_note: str


def score_freeze(
    task_dir: str | Path,
    freeze_dir: str | Path,
    judgments: str | Path,
    on_missing: MissingPolicy = "error",
    on_task: Advance | None = None,
    freeze_id: str | None = None,
    bootstrap: BootstrapPlan = PROTOCOL,
) -> Scored:
    """Verify the freeze, then score it (module docstring); nothing is written.

    ``bootstrap`` draws the effect intervals (the protocol's declared plan unless another is given)."""
    manifest, method = verify_freeze(task_dir, freeze_dir, freeze_id)
    frozen = Path(manifest["freeze"])
    if REFERENCE not in method["selectors"]:
        raise NclueError(f"{frozen}: the freeze lacks the '{REFERENCE}' ranking that lost/gained are counted against")
    k, selectors = int(method["k"]), list(method["selectors"])
    tasks = load_tasks(task_dir, warn=lambda _: None)
    vectors = load_vectors(frozen / VECTORS_FILE)
    rankings = load_rankings(frozen)
    labels = load_judgments(judgments, tasks, on_missing)
    methods = [*selectors, ORACLE]

    per_task: dict[str, dict[str, TaskScore]] = {}
    chosen: dict[str, dict[str, list[str]]] = {}
    rows: list[dict] = []
    oracle_stats = {"enumerated": 0, "subsets": 0, "obligations": 0, "unreachable": 0, "attainable_covered": 0}
    for task in tasks:
        lab, tv = labels[task.task_id], vectors.task_vectors(task)
        position = {d: i for i, d in enumerate(task.pool)}
        oracle = labeled_oracle(lab.grade, lab.agreed, task.pool, k)
        ranks = {name: [position[d] for d in rankings[(task.task_id, name)]] for name in selectors}
        ranks[ORACLE] = oracle.positions
        reference = score_task(lab.grade, lab.agreed, tv.docs, ranks[REFERENCE], k).covered
        per_task[task.task_id] = {
            name: score_task(lab.grade, lab.agreed, tv.docs, ranks[name], k, reference) for name in methods
        }
        chosen[task.task_id] = {name: [task.pool[p] for p in ranks[name]] for name in methods}
        attainable = int(lab.agreed.any(axis=0).sum())
        oracle_stats["enumerated"] += oracle.enumerated
        oracle_stats["subsets"] += oracle.total
        oracle_stats["obligations"] += task.m
        oracle_stats["unreachable"] += task.m - attainable
        oracle_stats["attainable_covered"] += int(oracle.coverage == attainable)
        for name in methods:
            score = asdict(per_task[task.task_id][name])
            score["covered"] = sorted(r + 1 for r in score["covered"])
            rows.append({"task_id": task.task_id, "method": name, "ranking": chosen[task.task_id][name], **score})
        if on_task is not None:
            on_task(1)

    splits: dict[str, CoverageSplit] = {}
    for split in split_names(tasks):
        members = [t for t in tasks if split == ALL_SPLIT or split in t.splits]
        scores = {name: [per_task[t.task_id][name] for t in members] for name in methods}
        incidence, distinct = requirement_incidence([t.requirements for t in members])
        splits[split] = CoverageSplit(
            split,
            len(members),
            {name: summarise(scores[name]) for name in methods},
            _effects(scores, methods, bootstrap),
            _effects(scores, methods, bootstrap, incidence),
            distinct,
        )
    digest = sha256_file(judgments)
    report = CoverageReport(
        k=k,
        freeze=frozen.name,
        freeze_manifest_sha256=sha256_file(frozen / MANIFEST_FILE),
        judgments_sha256=digest,
        judgments_as_frozen=judgments_as_frozen(manifest, judgments, digest),
        scoring_code_as_frozen=manifest.get("scoring_code_sha256") == scoring_code_sha256(),
        missing_judgments={t.task_id: labels[t.task_id].missing for t in tasks if labels[t.task_id].missing},
        oracle=oracle_stats,
        splits=splits,
        bootstrap=bootstrap,
    )
    oracle_note = (
        f"The oracle enumerated {oracle_stats['enumerated']:,} {k}-document subsets, exactly representing all "
        f"{oracle_stats['subsets']:,} across {len(tasks)} pools; {oracle_stats['unreachable']} of "
        f"{oracle_stats['obligations']} obligations have no agreed supporting document anywhere in their pool.\n"
    )
    return Scored(report, rows, chosen, tasks, labels, methods, oracle_note)


def evaluate(
    task_dir: str | Path,
    freeze_dir: str | Path,
    judgments: str | Path,
    out_dir: str | Path,
    on_missing: MissingPolicy = "error",
    on_task: Advance | None = None,
    freeze_id: str | None = None,
    bootstrap: BootstrapPlan = PROTOCOL,
) -> CoverageReport:
    """Verify the freeze, score it and write the outputs (module docstring); returns the report."""
    scored = score_freeze(task_dir, freeze_dir, judgments, on_missing, on_task, freeze_id, bootstrap)
    report = scored.report
    docs = load_docs(task_dir, scored.tasks)
    out = Path(out_dir)
    atomic_write_text(
        out / "results.md", "# Coverage selection results\n\n" + report.to_markdown() + "\n" + scored.oracle_note
    )
    atomic_write_text(out / "results.tex", report.to_latex())
    _write_cases(out, scored.tasks, docs, scored.labels, scored.chosen, scored.methods)
    write_jsonl(out / "scores.jsonl", scored.rows)
    write_json(out / SUMMARY_FILE, report.to_json())
    _append_ledger(out, report, judgments)
    return report


LEDGER_FILE = "ledger.jsonl"


def read_ledger(out_dir: str | Path) -> list[dict]:
    """Every evaluation written to ``out_dir`` (one row each, oldest first; empty when none)."""
    from nclue.io import iter_jsonl

    path = Path(out_dir) / LEDGER_FILE
    return [row for _, row in iter_jsonl(path)] if path.is_file() else []


def _append_ledger(out: Path, report: CoverageReport, judgments: str | Path) -> None:
    """One row per evaluation — which freeze, judgments, scoring code and summary — never rewritten,
    so an evaluation run and then replaced by another freeze's stays on record."""
    from datetime import UTC, datetime

    row = {
        "evaluated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "freeze": report.freeze,
        "freeze_manifest_sha256": report.freeze_manifest_sha256,
        "judgments": str(judgments),
        "judgments_sha256": report.judgments_sha256,
        "judgments_as_frozen": report.judgments_as_frozen,
        "scoring_code_sha256": scoring_code_sha256(),
        "scoring_code_as_frozen": report.scoring_code_as_frozen,
        "summary_sha256": sha256_file(out / SUMMARY_FILE),
    }
    write_jsonl(out / LEDGER_FILE, [*read_ledger(out), row])


def _write_cases(out: Path, tasks: list[Task], docs: dict, labels: dict, chosen: dict, methods: list[str]) -> None:
    titles = {d: doc.title or d for d, doc in docs.items()}
    md, tex = ["# Per-task case tables\n"], []
    for task in tasks:
        lab = labels[task.task_id]
        grades = {d: float(lab.grade[i]) for i, d in enumerate(task.pool)}
        agreed = {d: [int(r) + 1 for r in np.nonzero(lab.agreed[i])[0]] for i, d in enumerate(task.pool)}
        reqs = "; ".join(f"({i}) {r}" for i, r in enumerate(task.requirements, start=1))
        md.append(f"## Task `{task.task_id}`\n\n{task.question}\n\nRequirements: {reqs}\n")
        tex.append(f"% task {task.task_id}")
        for name in methods:
            table = case_table(chosen[task.task_id][name], titles, grades, agreed)
            md += [f"**{label(name)}**\n", render(table, "markdown")]
            tex += [f"% {label(name)}", render(table, "latex")]
    atomic_write_text(out / "cases.md", "\n".join(md))
    atomic_write_text(out / "cases.tex", "\n".join(tex))


@dataclass
class CoverageVerification:
    """Outcome of :func:`verify_report`: cells that did not reproduce (empty = reproduced)."""

    failures: list[str] = field(default_factory=list)
    cells_checked: int = 0
    report: CoverageReport | None = None
    ledger: list[dict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every recorded cell was recomputed to within the tolerance."""
        return not self.failures


def verify_report(
    task_dir: str | Path,
    freeze_dir: str | Path,
    judgments: str | Path,
    out_dir: str | Path,
    tolerance: float = 1e-9,
    freeze_id: str | None = None,
) -> CoverageVerification:
    """Recompute the coverage report from the freeze and the judgments and compare it, cell by
    cell, with ``OUT/summary.json``: numbers within ``tolerance``, everything else equal.

    The freeze is verified first (hashes, code, re-derived rankings). ``freeze_id`` defaults to
    the freeze the summary names, so a newer freeze does not hide a stale summary; the intervals
    are redrawn with the bootstrap plan the summary records.
    """
    path = Path(out_dir) / SUMMARY_FILE
    if not path.is_file():
        raise NclueError(f"{path}: nothing to verify; run `nclue coverage evaluate ... -o {out_dir}` first")
    recorded = read_json_object(path, "re-run `nclue coverage evaluate`", "coverage summary")
    if freeze_id is None and not (Path(freeze_dir) / MANIFEST_FILE).is_file():
        freeze_id = recorded.get("freeze") or None
    plan = recorded_plan(recorded.get("bootstrap"), path)
    fresh = score_freeze(task_dir, freeze_dir, judgments, freeze_id=freeze_id, bootstrap=plan).report
    result = CoverageVerification(report=fresh, ledger=read_ledger(out_dir))
    new = dict(json_leaves(fresh.to_json()))
    old = dict(json_leaves(recorded))
    for key in sorted(set(new) | set(old)):
        name = "/".join(key)
        if key not in old or key not in new:
            result.failures.append(
                f"{name}: {'missing from the recorded summary' if key not in old else 'no longer computed'}"
            )
            continue
        a, b = old[key], new[key]
        result.cells_checked += 1
        numeric = isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool)
        if numeric and not (math.isclose(float(a), float(b), rel_tol=0.0, abs_tol=tolerance)):
            result.failures.append(f"{name}: recorded {a!r}, recomputed {b!r}")
        elif not numeric and a != b:
            result.failures.append(f"{name}: recorded {a!r}, recomputed {b!r}")
    return result
