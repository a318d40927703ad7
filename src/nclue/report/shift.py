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
* **source heterogeneity** — each contrast on the default form within each source: Δ with
  its exact-family bootstrap interval (families restricted to the source's queries; a source
  with fewer than five gold families gets none — resampling so few is degenerate). A
  source *reverses* a contrast when its Δ has the opposite sign of the pooled Δ; a contrast
  reverses *between benchmarks* when its pooled SourceShift Δ and its development Δ differ
  in sign; a contrast changes direction with the query form when its Δ differs in sign
  across forms. All three are stated in plain sentences (:attr:`ShiftStudy.reversals`);
* **metric ordering** — Spearman's ρ between the graded-NDCG and Gold-NDCG orderings of
  the fair default-form runs and the largest rank movement between them.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nclue.io import json_safe
from nclue.runfile import run_path
from nclue.tables import Table, Tabular, fmt_ci, fmt_p, fmt_pp

FORMS = ("raw", "clean_v2", "natural")
MIN_FAMILIES = 5
"""A per-source interval needs at least this many exact gold families (fewer make a percentile bootstrap degenerate)."""


@dataclass(frozen=True)
class ShiftStudy(Tabular):
    """Every number of the SourceShift study (pp unless a p-value, ρ, share or count)."""

    queries: int
    documents: int
    default_form: str
    draws: int
    bootstrap: int
    sources: tuple[dict, ...]
    mixed_queries: int
    scores: Mapping[str, Mapping[str, float]]
    contrasts: tuple[dict, ...]
    source_deltas: tuple[dict, ...]
    reversals: tuple[str, ...]
    metric_ordering: Mapping[str, float | int | str | None]

    def sections(self) -> Iterator[tuple[str, str, Table]]:
        """``(file key, title, table)`` of every SourceShift table."""
        yield "table_shift_sources", "SourceShift sources: extraction gate and queries", self.sources_table()
        yield "table_s3_shift", "SourceShift systems × forms (Table S3)", self.s3_table()
        yield "table_s4_shift", "SourceShift paired contrasts (Table S4)", self.s4_table()
        yield "table_shift_source_deltas", "SourceShift source heterogeneity", self.source_table()

    def tables(self) -> list[Table]:
        return [t for _, _, t in self.sections()]

    def sources_table(self) -> Table:
        rows = tuple(
            (
                s["source"],
                f"{s['documents']:,}",
                f"{s['failed_files']:,}",
                f"{s['pages'] + s['failed_pages']:,}",
                f"{100 * s['usable_share']:.2f}%",
                "pass" if s["passed"] else "FAIL",
                "yes" if s["included"] else "no",
                f"{s['documents_in_release']:,}",
                f"{s['queries']:,}",
                f"{s['n2']}/{s['n3']}",
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

    def s3_table(self) -> Table:
        forms = [f for f in FORMS if any(f in v for v in self.scores.values())]
        rows = tuple((system, *(fmt_pp(v.get(f)) for f in forms)) for system, v in self.scores.items())
        return Table(
            ("System", *forms),
            rows,
            "l" + "r" * len(forms),
            f"n-Clue Score@10 of every SourceShift system on every query form ({self.queries} queries).",
            number="S3",
        )

    def s4_table(self) -> Table:
        forms = [f for f in FORMS if any(f in c["forms"] for c in self.contrasts)]
        headers = ["Contrast"] + [h for f in forms for h in (f"Δ {f}", f"p {f}")]
        rows = []
        for c in self.contrasts:
            cells = [c["name"]]
            for f in forms:
                cell = c["forms"].get(f)
                cells += [fmt_pp(cell["delta"], sign=True), fmt_p(cell["p"])] if cell else ["–", "–"]
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
        rows = tuple(
            (
                d["contrast"],
                d["source"],
                str(d["queries"]),
                str(d["families"]),
                fmt_pp(d["delta"], sign=True),
                fmt_ci(d["ci"], 1, sign=True),
                fmt_pp(d["pooled"], sign=True),
                "yes" + (" (CI excludes 0)" if d["excludes_zero"] else "") if d["reverses"] else "",
            )
            for d in self.source_deltas
        )
        return Table(
            ("Contrast", "Source", "Queries", "Families", "Δ", "Exact-family 95% CI", "Pooled Δ", "Reverses"),
            rows,
            "llrrrcrl",
            f"Per-source ΔScore on {self.default_form} (pp) with exact-family bootstrap intervals ({self.bootstrap} "
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
                "sources": list(self.sources),
                "mixed_queries": self.mixed_queries,
                "scores": self.scores,
                "contrasts": list(self.contrasts),
                "source_deltas": list(self.source_deltas),
                "reversals": list(self.reversals),
                "metric_ordering": dict(self.metric_ordering),
            }
        )


def _sign(value: float) -> int:
    return 0 if abs(value) < 1e-12 else (1 if value > 0 else -1)


def compute_shift(
    bench_dir: str | Path,
    run_dir: str | Path,
    n_boot: int,
    n_draws: int,
    seed: int,
    dev_deltas: Mapping[tuple[str, str], float] | None = None,
    check_inputs: bool = True,
) -> ShiftStudy:
    """The SourceShift study from its release and its matrix run directory (see the module docstring).

    ``dev_deltas`` maps ``(base, variant)`` to the development benchmark's ΔScore (pp) of the
    same pair, to state where the direction reverses between benchmarks. ``check_inputs``: the
    run files and release must be those the runs' ``matrix.json`` recorded
    (:mod:`nclue.report.provenance`).
    """
    import json

    from scipy.stats import rankdata

    from nclue.bench.pipeline import query_sources
    from nclue.errors import NclueError
    from nclue.release import Release
    from nclue.report.paper import read_run_manifest
    from nclue.report.provenance import check_bench, check_run_files
    from nclue.scoring import Benchmark, load_run, metric_matrix, score_runs
    from nclue.stats import bootstrap_ci, paired_randomization, spearman_matrix

    bench_path, runs_path = Path(bench_dir), Path(run_dir)
    manifest = read_run_manifest(runs_path)
    default_form = manifest["spec"].get("form", "clean_v2")
    meta = manifest["runs"]
    release = Release.open(bench_path, require_qrels=True)
    if check_inputs:
        check_run_files(runs_path, manifest)
        check_bench(bench_path, runs_path, manifest, release.hashes)
    bench = Benchmark.from_release(release)
    runs = [load_run(run_path(runs_path, n), bench, name=n) for n in meta]
    scores = score_runs(bench, runs, k=int(manifest["spec"].get("k", 10)))
    primary = metric_matrix(scores, "n_clue_score")

    try:
        gate = json.loads((bench_path / "MANIFEST.json").read_text(encoding="utf-8"))["gate"]
    except (OSError, ValueError, KeyError):
        raise NclueError(
            f"{bench_path}: MANIFEST.json has no extraction gate; build the SourceShift release with this nclue"
        ) from None
    source_of = {d.doc_id: d.source or "unknown" for d in release.corpus}
    by_query = query_sources(release.judgments, source_of)
    q_source = np.array([by_query.get(q, "none") for q in bench.qids], dtype=object)
    sources = []
    for row in gate["sources"]:
        mask = q_source == row["source"]
        sources.append(
            {
                **{k: row[k] for k in ("source", "documents", "failed_files", "pages", "failed_pages", "usable_share")},
                **{k: row[k] for k in ("passed", "included", "reason")},
                "documents_in_release": row.get("documents_in_release", 0),
                "queries": int(mask.sum()),
                "n2": int((mask & (bench.n == 2)).sum()),
                "n3": int((mask & (bench.n == 3)).sum()),
            }
        )

    table: dict[str, dict[str, float]] = {}
    for name, m in meta.items():
        table.setdefault(m["system"], {})[m.get("form", default_form)] = 100.0 * float(
            primary[scores.index(name)].mean()
        )

    def run_of(system: str, form: str) -> str | None:
        name = system if form == default_form else f"{system}@{form}"
        return name if name in meta else None

    contrasts, deltas, reversals = [], [], []
    pairs = [(c["name"], c["base"], v) for c in manifest.get("contrasts", []) for v in c["variants"]]
    for label, base, variant in pairs:
        name = label if sum(1 for p in pairs if p[0] == label) == 1 else f"{label}: {variant}"
        forms = {}
        for form in FORMS:
            b, v = run_of(meta[base]["system"], form), run_of(meta[variant]["system"], form)
            if b is None or v is None:
                continue
            diff = primary[scores.index(v)] - primary[scores.index(b)]
            p = paired_randomization(diff[None, :], None, n_draws, seed)[0]
            forms[form] = {"delta": 100.0 * float(diff.mean()), "p": float(p)}
        contrasts.append({"name": name, "base": base, "variant": variant, "forms": forms})
        diff = primary[scores.index(variant)] - primary[scores.index(base)]
        pooled = 100.0 * float(diff.mean())
        dev = (dev_deltas or {}).get((base, variant))
        if dev is not None and _sign(dev) * _sign(pooled) < 0:
            reversals.append(
                f"{name} ({variant} − {base}) reverses between benchmarks: {dev:+.1f} points on the development "
                f"benchmark, {pooled:+.1f} on SourceShift ({default_form})."
            )
        for s in sources:
            mask = q_source == s["source"]
            if not mask.any():
                continue
            families = int(np.unique(bench.family[mask]).size)
            ci = (
                100.0 * bootstrap_ci(diff[mask][None, :], bench.family[mask], n_boot, seed)[0]
                if families >= MIN_FAMILIES
                else None
            )
            delta = 100.0 * float(diff[mask].mean())
            reverses = _sign(delta) * _sign(pooled) < 0
            excludes = ci is not None and bool(ci[0] > 0 or ci[1] < 0)
            deltas.append(
                {
                    "contrast": name,
                    "source": s["source"],
                    "queries": int(mask.sum()),
                    "families": families,
                    "delta": delta,
                    "ci": None if ci is None else (float(ci[0]), float(ci[1])),
                    "pooled": pooled,
                    "development": dev,
                    "reverses": reverses,
                    "excludes_zero": excludes,
                }
            )
            if reverses:
                interval = (
                    f"[{ci[0]:+.1f}, {ci[1]:+.1f}]" + (", excluding zero" if excludes else ", including zero")
                    if ci is not None
                    else f"no interval: {families} gold famil{'y' if families == 1 else 'ies'}"
                )
                reversals.append(
                    f"{name} reverses on {s['source']} ({int(mask.sum())} queries): {delta:+.1f} ({interval}) "
                    f"against {pooled:+.1f} pooled."
                )
        signs = {f: _sign(v["delta"]) for f, v in forms.items() if _sign(v["delta"])}
        if len(set(signs.values())) > 1:
            parts = ", ".join(f"{forms[f]['delta']:+.1f} on {f} (p = {forms[f]['p']:.3f})" for f in forms)
            reversals.append(f"{name} changes direction with the query form: {parts}.")

    fair = [n for n, m in meta.items() if m.get("form", default_form) == default_form]
    ordering: dict[str, float | int | str | None] = {"runs": len(fair), "rho": None, "max_shift": None, "moved": None}
    if len(fair) >= 2:
        rows = [scores.index(n) for n in fair]
        graded = metric_matrix(scores, "graded_ndcg")[rows].mean(axis=1)
        gold = metric_matrix(scores, "gold_ndcg")[rows].mean(axis=1)
        rho = spearman_matrix({"graded": graded, "gold": gold})["graded"]["gold"]
        shift = np.abs(rankdata(-graded, method="min") - rankdata(-gold, method="min"))
        moved = int(np.argmax(shift))
        ordering = {
            "runs": len(fair),
            "rho": None if math.isnan(rho) else rho,
            "max_shift": int(shift[moved]),
            "moved": fair[moved],
        }
    return ShiftStudy(
        queries=bench.n_queries,
        documents=len(release.corpus),
        default_form=default_form,
        draws=n_draws,
        bootstrap=n_boot,
        sources=tuple(sources),
        mixed_queries=int((q_source == "mixed").sum()),
        scores=table,
        contrasts=tuple(contrasts),
        source_deltas=tuple(deltas),
        reversals=tuple(reversals),
        metric_ordering=ordering,
    )
