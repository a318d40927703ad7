"""The SourceShift study (the seed's Tables S3–S4; ``docs/report.md#sourceshift``).

A second benchmark built from other Debian documentation packages (the
``debian-docs-shift`` fetch recipe), each package a *source*, with the per-source
extraction gate enforced at build time (``docs/construction.md#extraction-gate``), and a
matrix of systems run on the three verbatim forms (``nclue/matrix/shift.toml``). From its
release and run directory:

* **per-source extraction and query counts** — the gate record of its ``MANIFEST.json``
  (documents, failed files, pages, usable share, pass/fail, included) and, per source, the
  queries whose gold documents it holds (``n = 2`` / ``n = 3``); queries whose golds span
  several sources are counted as ``mixed``;
* **Table S3** — n-Clue Score@10 of every system on every form;
* **Table S4** — each declared contrast ``variant − base`` per form: the mean paired
  difference (pp) and the two-sided query-level sign-flip p (``n_draws`` draws, +1
  correction; ``docs/statistics.md#paired-randomization-test``);
* **source heterogeneity** — each contrast on the default form within each source, on the
  gold-only NDCG@10 gap as the seed reports it (":math:`+.128` arXiv, …"; :data:`SOURCE_METRIC`,
  ``source_metric=`` for another per-query metric): Δ with its exact-family bootstrap interval (families restricted to the source's queries; a source
  with fewer than five gold families gets none — resampling so few is degenerate). A
  source *reverses* a contrast when its Δ has the opposite sign of the pooled Δ; a contrast
  reverses *between benchmarks* when its pooled SourceShift Δ and its development Δ differ
  in sign; a contrast changes direction with the query form when its Δ differs in sign
  across forms. All three are stated in plain sentences (:attr:`ShiftStudy.reversals`);
* **metric ordering** — Spearman's ρ between the graded-NDCG and Gold-NDCG orderings of
  the fair default-form runs and the largest rank movement between them.

Every row is a frozen dataclass of numbers and names (:class:`ShiftSource`,
:class:`ShiftContrast` with its :class:`FormDelta` per form, :class:`SourceDelta`,
:class:`MetricOrdering`, :class:`Reversal`); prose is only in the tables' captions and
:meth:`Reversal.sentence`. :func:`shift_from_scores` computes the study from an opened and
scored run folder; :func:`compute_shift` opens and scores one first.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from nclue.errors import NclueError
from nclue.io import json_safe
from nclue.matrix.runset import RunSet
from nclue.release import Release
from nclue.scoring import Benchmark, Scores
from nclue.tables import METRIC_LABELS, Table, Tabular, fmt_ci, fmt_p, fmt_pp

FORMS = ("raw", "clean_v2", "natural")
MIN_FAMILIES = 5
"""A per-source interval needs at least this many exact gold families (fewer make a percentile bootstrap degenerate)."""
SOURCE_METRIC = "gold_ndcg"
"""The metric of the per-source deltas: the seed's source heterogeneity is of the gold-only NDCG@10 gap."""


class _Row:
    """A frozen dataclass row whose JSON is its fields, in field order (nested rows included)."""

    def to_json(self) -> dict:
        return json_safe(asdict(self))


@dataclass(frozen=True)
class ShiftSource(_Row):
    """One source: its extraction-gate record from ``MANIFEST.json`` and the queries whose golds it holds."""

    source: str
    documents: int
    failed_files: int
    pages: int
    failed_pages: int
    usable_share: float
    passed: bool
    included: bool
    reason: str
    documents_in_release: int
    queries: int
    n2: int
    n3: int


@dataclass(frozen=True)
class FormDelta:
    """A contrast on one query form: the mean paired difference (pp) and its two-sided sign-flip p."""

    delta: float
    p: float


@dataclass(frozen=True)
class ShiftContrast(_Row):
    """One Table S4 row: ``variant − base`` on every form both systems ran on."""

    name: str
    base: str
    variant: str
    forms: Mapping[str, FormDelta]


@dataclass(frozen=True)
class SourceDelta(_Row):
    """One contrast within one source on the default form, on ``metric`` (pp): Δ, its exact-family
    interval (``None`` below :data:`MIN_FAMILIES` families), the pooled Δ, the development Δ (n-Clue
    Score, so only when ``metric`` is n-Clue Score) and whether the source reverses the pooled Δ."""

    contrast: str
    metric: str
    source: str
    queries: int
    families: int
    delta: float
    ci: tuple[float, float] | None
    pooled: float
    development: float | None
    reverses: bool
    excludes_zero: bool


@dataclass(frozen=True)
class MetricOrdering(_Row):
    """Spearman's ρ between the graded- and Gold-NDCG orderings of ``runs`` fair runs, and the largest
    rank move (``max_shift`` places, run ``moved``); all but ``runs`` are ``None`` below two runs."""

    runs: int
    rho: float | None = None
    max_shift: int | None = None
    moved: str | None = None


@dataclass(frozen=True)
class ShiftStudy(Tabular):
    """Every number of the SourceShift study (pp unless a p-value, ρ, share or count)."""

    queries: int
    documents: int
    default_form: str
    draws: int
    bootstrap: int
    sources: tuple[ShiftSource, ...]
    mixed_queries: int
    scores: Mapping[str, Mapping[str, float]]
    contrasts: tuple[ShiftContrast, ...]
    source_deltas: tuple[SourceDelta, ...]
    reversal_records: tuple[Reversal, ...]
    metric_ordering: MetricOrdering
    source_metric: str = SOURCE_METRIC
    qrels: str = ""
    """The qrels file scored when it is not the release's own (``--shift-qrels``: the final copy), else ``""``."""

    @property
    def reversals(self) -> tuple[str, ...]:
        """Every reversal as a plain sentence, in the order found (:meth:`Reversal.sentence`)."""
        return tuple(r.sentence() for r in self.reversal_records)

    def sections(self) -> Iterator[tuple[str, str, Table]]:
        """``(file key, title, table)`` of every SourceShift table."""
        yield "table_shift_sources", "SourceShift sources: extraction gate and queries", self.sources_table()
        yield "table_s3_shift", "SourceShift systems × forms (Table S3)", self.systems_by_form_table()
        yield "table_s4_shift", "SourceShift paired contrasts (Table S4)", self.contrasts_by_form_table()
        yield "table_shift_source_deltas", "SourceShift source heterogeneity", self.source_table()

    def tables(self) -> list[Table]:
        return [t for _, _, t in self.sections()]

    def sources_table(self) -> Table:
        """The per-source extraction gate and query counts."""
        rows = tuple(
            (
                s.source,
                f"{s.documents:,}",
                f"{s.failed_files:,}",
                f"{s.pages + s.failed_pages:,}",
                f"{100 * s.usable_share:.2f}%",
                "pass" if s.passed else "FAIL",
                "yes" if s.included else "no",
                f"{s.documents_in_release:,}",
                f"{s.queries:,}",
                f"{s.n2}/{s.n3}",
            )
            for s in self.sources
        )
        return Table(
            (
                "Source",
                "Docs",
                "Failed files",
                "Pages",
                "Usable",
                "Gate",
                "In release",
                "Docs in release",
                "Queries",
                "n=2/n=3",
            ),
            rows,
            "lrrrrccrrc",
            f"SourceShift per-source extraction (≥ 98% usable pages to pass; failed files count as unusable pages) "
            f"and queries by the source of their golds; {self.queries} queries over {self.documents} documents"
            + (f", {self.mixed_queries} with golds from several sources" if self.mixed_queries else "")
            + ".",
        )

    def systems_by_form_table(self) -> Table:
        """Table S3: n-Clue Score of every system on every form."""
        forms = [f for f in FORMS if any(f in v for v in self.scores.values())]
        rows = tuple((system, *(fmt_pp(v.get(f)) for f in forms)) for system, v in self.scores.items())
        return Table(
            ("System", *forms),
            rows,
            "l" + "r" * len(forms),
            f"n-Clue Score@10 of every SourceShift system on every query form ({self.queries} queries"
            + (f"; qrels {self.qrels}" if self.qrels else "")
            + ").",
            number="S3",
        )

    def contrasts_by_form_table(self) -> Table:
        """Table S4: each contrast's Δ and sign-flip p per form."""
        forms = [f for f in FORMS if any(f in c.forms for c in self.contrasts)]
        headers = ["Contrast"] + [h for f in forms for h in (f"Δ {f}", f"p {f}")]
        rows = []
        for c in self.contrasts:
            cells = [c.name]
            for f in forms:
                cell = c.forms.get(f)
                cells += [fmt_pp(cell.delta, sign=True), fmt_p(cell.p)] if cell else ["–", "–"]
            rows.append(tuple(cells))
        return Table(
            tuple(headers),
            tuple(rows),
            "l" + "rr" * len(forms),
            f"Query-paired n-Clue Score differences (pp) with two-sided {self.draws:,}-draw sign-flip "
            f"permutation tests (n = {self.queries}); exploratory, no multiplicity correction.",
            number="S4",
        )

    def source_table(self) -> Table:
        """Source heterogeneity: each contrast within each source, against the pooled Δ."""
        rows = tuple(
            (
                d.contrast,
                d.source,
                str(d.queries),
                str(d.families),
                fmt_pp(d.delta, sign=True),
                fmt_ci(d.ci, 1, sign=True),
                fmt_pp(d.pooled, sign=True),
                "yes" + (" (CI excludes 0)" if d.excludes_zero else "") if d.reverses else "",
            )
            for d in self.source_deltas
        )
        return Table(
            ("Contrast", "Source", "Queries", "Families", "Δ", "Exact-family 95% CI", "Pooled Δ", "Reverses"),
            rows,
            "llrrrcrl",
            f"Per-source Δ{METRIC_LABELS.get(self.source_metric, self.source_metric)} on {self.default_form} (pp) "
            f"with exact-family bootstrap intervals ({self.bootstrap} "
            "replicates within each source; none below five gold families); a source reverses a contrast when its Δ "
            "has the opposite sign of the pooled Δ.",
        )

    def to_json(self) -> dict:
        return json_safe(
            {
                "queries": self.queries,
                "documents": self.documents,
                "default_form": self.default_form,
                "draws": self.draws,
                "bootstrap": self.bootstrap,
                "sources": [s.to_json() for s in self.sources],
                "mixed_queries": self.mixed_queries,
                "scores": self.scores,
                "contrasts": [c.to_json() for c in self.contrasts],
                "source_metric": self.source_metric,
                "qrels": self.qrels or None,
                "source_deltas": [d.to_json() for d in self.source_deltas],
                "reversals": list(self.reversals),
                "metric_ordering": self.metric_ordering.to_json(),
            }
        )


def _sign(value: float) -> int:
    return 0 if abs(value) < 1e-12 else (1 if value > 0 else -1)


@dataclass(frozen=True)
class Reversal:
    """Where a contrast changes direction: ``kind`` ``"benchmarks"`` (pooled SourceShift Δ against the
    development Δ), ``"source"`` (one source's Δ against the pooled Δ) or ``"form"`` (Δ across query
    forms). Numbers in pp; :meth:`sentence` is the one place they become prose."""

    kind: str
    contrast: str
    delta: float = 0.0
    reference: float = 0.0
    base: str = ""
    variant: str = ""
    form: str = ""
    source: str = ""
    queries: int = 0
    families: int = 0
    ci: tuple[float, float] | None = None
    excludes_zero: bool = False
    forms: Mapping[str, FormDelta] | None = None
    metric: str = "n_clue_score"

    @classmethod
    def of_source(cls, row: SourceDelta) -> Reversal:
        """The reversal of ``row``'s contrast on ``row``'s source (against the pooled Δ)."""
        return cls(
            "source",
            row.contrast,
            row.delta,
            row.pooled,
            metric=row.metric,
            source=row.source,
            queries=row.queries,
            families=row.families,
            ci=row.ci,
            excludes_zero=row.excludes_zero,
        )

    def sentence(self) -> str:
        """The reversal as one plain sentence (the report's "Where SourceShift reverses a contrast")."""
        if self.kind == "benchmarks":
            return (
                f"{self.contrast} ({self.variant} − {self.base}) reverses between benchmarks: {self.reference:+.1f} "
                f"points on the development benchmark, {self.delta:+.1f} on SourceShift ({self.form})."
            )
        if self.kind == "source":
            interval = (
                f"[{self.ci[0]:+.1f}, {self.ci[1]:+.1f}]"
                + (", excluding zero" if self.excludes_zero else ", including zero")
                if self.ci is not None
                else f"no interval: {self.families} gold famil{'y' if self.families == 1 else 'ies'}"
            )
            return (
                f"{self.contrast} reverses on {self.source} ({self.queries} queries): "
                f"Δ{METRIC_LABELS.get(self.metric, self.metric)} {self.delta:+.1f} ({interval}) "
                f"against {self.reference:+.1f} pooled."
            )
        forms = self.forms or {}
        parts = ", ".join(f"{v.delta:+.1f} on {f} (p = {v.p:.3f})" for f, v in forms.items())
        return f"{self.contrast} changes direction with the query form: {parts}."


def compute_shift(
    bench_dir: str | Path,
    run_dir: str | Path,
    n_boot: int,
    n_draws: int,
    seed: int,
    dev_deltas: Mapping[tuple[str, str], float] | None = None,
    check_inputs: bool = True,
    source_metric: str = SOURCE_METRIC,
) -> ShiftStudy:
    """The SourceShift study from its release and its matrix run directory (see the module docstring).

    Opens and scores the folder (:func:`nclue.report.scored.score_run_folder`; ``check_inputs``:
    the run files and release must be those the runs' ``matrix.json`` recorded,
    :mod:`nclue.report.provenance`), then :func:`shift_from_scores`.
    """
    from nclue.report.scored import score_run_folder

    folder = score_run_folder(bench_dir, run_dir, check_inputs=check_inputs)
    return shift_from_scores(
        folder.bench, folder.scores, folder.runset, folder.release, n_boot, n_draws, seed, dev_deltas, source_metric
    )


def shift_from_scores(
    bench: Benchmark,
    scores: Scores,
    runset: RunSet,
    release: Release,
    n_boot: int,
    n_draws: int,
    seed: int,
    dev_deltas: Mapping[tuple[str, str], float] | None = None,
    source_metric: str = SOURCE_METRIC,
) -> ShiftStudy:
    """The SourceShift study of an opened, scored run folder (see the module docstring).

    ``scores`` holds every run of ``runset`` scored on ``bench`` (the array view of ``release``);
    ``release`` gives the documents' sources and, from its ``MANIFEST.json``, the extraction gate
    (refused when missing). ``dev_deltas`` maps ``(base, variant)`` to the development
    benchmark's ΔScore (pp) of the same pair, to state where the direction reverses between
    benchmarks. The per-source deltas are of ``source_metric`` (default :data:`SOURCE_METRIC`),
    against its own pooled Δ. Deterministic for a seed.
    """
    from nclue.bench.pipeline import query_sources
    from nclue.scoring import metric_matrix

    primary = metric_matrix(scores, "n_clue_score")
    by_source_metric = metric_matrix(scores, source_metric)
    source_of = {d.doc_id: d.source or "unknown" for d in release.corpus}
    by_query = query_sources(release.judgments, source_of)
    q_source = np.array([by_query.get(q, "none") for q in bench.qids], dtype=object)
    sources = _source_rows(_gate(release), q_source, bench.n)
    contrasts, deltas, reversals = [], [], []
    pairs = [(c.name, c.base, v) for c in runset.contrasts for v in c.endpoints]
    for label, base, variant in pairs:
        name = label if sum(1 for p in pairs if p[0] == label) == 1 else f"{label}: {variant}"
        contrast = ShiftContrast(
            name, base, variant, _form_deltas(runset, scores, primary, base, variant, n_draws, seed)
        )
        contrasts.append(contrast)
        diff = primary[scores.index(variant)] - primary[scores.index(base)]
        pooled = 100.0 * float(diff.mean())
        dev = (dev_deltas or {}).get((base, variant))
        if dev is not None and _sign(dev) * _sign(pooled) < 0:
            reversals.append(Reversal("benchmarks", name, pooled, dev, base, variant, form=runset.form))
        source_diff = by_source_metric[scores.index(variant)] - by_source_metric[scores.index(base)]
        rows = _source_deltas(
            SourceContrast(name, source_metric, source_diff, dev if source_metric == "n_clue_score" else None),
            q_source,
            bench.family,
            sources,
            n_boot,
            seed,
        )
        deltas += rows
        reversals += [Reversal.of_source(r) for r in rows if r.reverses]
        if len({_sign(v.delta) for v in contrast.forms.values()} - {0}) > 1:
            reversals.append(Reversal("form", name, forms=contrast.forms))
    return ShiftStudy(
        queries=bench.n_queries,
        documents=len(release.corpus),
        default_form=runset.form,
        draws=n_draws,
        bootstrap=n_boot,
        sources=tuple(sources),
        mixed_queries=int((q_source == "mixed").sum()),
        scores={
            system: {form: 100.0 * float(primary[scores.index(name)].mean()) for form, name in runs_of.items()}
            for system, runs_of in runset.by_form().items()
        },
        contrasts=tuple(contrasts),
        source_deltas=tuple(deltas),
        reversal_records=tuple(reversals),
        metric_ordering=_metric_ordering(scores, runset.fair()),
        source_metric=source_metric,
        qrels=_other_qrels(release),
    )


def _other_qrels(release: Release) -> str:
    """The path of the qrels file ``release`` was opened with when it is not the release's own, else ``""``."""
    from nclue.release import QRELS_FILE

    path = release.files.get("qrels")
    own = release.root / QRELS_FILE if release.root is not None else None
    return "" if path is None or own is None or Path(path).resolve() == own.resolve() else str(path)


def _gate(release: Release) -> Mapping:
    """The extraction gate record of the release's ``MANIFEST.json`` (refused when missing)."""
    from nclue.release import read_manifest

    manifest = read_manifest(release.root) if release.root is not None else {}
    gate = manifest.get("gate")
    if not isinstance(gate, dict) or "sources" not in gate:
        raise NclueError(
            f"{release.root or 'this release'}: MANIFEST.json has no extraction gate; "
            "build the SourceShift release with this nclue"
        )
    return gate


def _source_rows(gate: Mapping, q_source: np.ndarray, n: np.ndarray) -> list[ShiftSource]:
    """Per source: the gate's extraction record and the queries whose golds it holds (``n = 2`` / ``n = 3``)."""
    rows = []
    for row in gate["sources"]:
        mask = q_source == row["source"]
        rows.append(
            ShiftSource(
                source=str(row["source"]),
                documents=int(row["documents"]),
                failed_files=int(row["failed_files"]),
                pages=int(row["pages"]),
                failed_pages=int(row["failed_pages"]),
                usable_share=float(row["usable_share"]),
                passed=bool(row["passed"]),
                included=bool(row["included"]),
                reason=str(row["reason"]),
                documents_in_release=int(row.get("documents_in_release", 0)),
                queries=int(mask.sum()),
                n2=int((mask & (n == 2)).sum()),
                n3=int((mask & (n == 3)).sum()),
            )
        )
    return rows


def _form_deltas(
    runset: RunSet, scores: Scores, primary: np.ndarray, base: str, variant: str, n_draws: int, seed: int
) -> dict[str, FormDelta]:
    """``variant − base`` on every form both systems ran on."""
    from nclue.stats import paired_randomization

    out = {}
    for form in FORMS:
        b = runset.run_of(runset.entries[base].system, form)
        v = runset.run_of(runset.entries[variant].system, form)
        if b is None or v is None:
            continue
        diff = primary[scores.index(v)] - primary[scores.index(b)]
        p = paired_randomization(diff[None, :], None, n_draws, seed)[0]
        out[form] = FormDelta(100.0 * float(diff.mean()), float(p))
    return out


@dataclass(frozen=True)
class SourceContrast:
    """What :func:`_source_deltas` splits by source: a contrast's per-query ``metric`` differences and
    its development Δ (pp; ``None`` when not on the same metric)."""

    name: str
    metric: str
    diff: np.ndarray
    development: float | None


def _source_deltas(
    contrast: SourceContrast,
    q_source: np.ndarray,
    family: np.ndarray,
    sources: list[ShiftSource],
    n_boot: int,
    seed: int,
) -> list[SourceDelta]:
    """One contrast's Δ within each source, with its exact-family interval (none below :data:`MIN_FAMILIES`)."""
    from nclue.stats import bootstrap_ci

    diff = contrast.diff
    pooled = 100.0 * float(diff.mean())
    rows = []
    for s in sources:
        mask = q_source == s.source
        if not mask.any():
            continue
        families = int(np.unique(family[mask]).size)
        ci = (
            100.0 * bootstrap_ci(diff[mask][None, :], family[mask], n_boot, seed)[0]
            if families >= MIN_FAMILIES
            else None
        )
        delta = 100.0 * float(diff[mask].mean())
        rows.append(
            SourceDelta(
                contrast=contrast.name,
                metric=contrast.metric,
                source=s.source,
                queries=int(mask.sum()),
                families=families,
                delta=delta,
                ci=None if ci is None else (float(ci[0]), float(ci[1])),
                pooled=pooled,
                development=contrast.development,
                reverses=_sign(delta) * _sign(pooled) < 0,
                excludes_zero=ci is not None and bool(ci[0] > 0 or ci[1] < 0),
            )
        )
    return rows


def _metric_ordering(scores: Scores, fair: list[str]) -> MetricOrdering:
    """Spearman's ρ between the graded- and Gold-NDCG orderings of the fair runs, and the largest rank move."""
    from scipy.stats import rankdata

    from nclue.scoring import metric_matrix
    from nclue.stats import spearman_matrix

    if len(fair) < 2:
        return MetricOrdering(len(fair))
    rows = [scores.index(n) for n in fair]
    graded = metric_matrix(scores, "graded_ndcg")[rows].mean(axis=1)
    gold = metric_matrix(scores, "gold_ndcg")[rows].mean(axis=1)
    rho = spearman_matrix({"graded": graded, "gold": gold})["graded"]["gold"]
    shift = np.abs(rankdata(-graded, method="min") - rankdata(-gold, method="min"))
    moved = int(np.argmax(shift))
    return MetricOrdering(len(fair), None if math.isnan(rho) else rho, int(shift[moved]), fair[moved])
