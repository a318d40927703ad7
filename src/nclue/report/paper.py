"""The paper-style report of a matrix run, as a typed :class:`PaperReport`.

:func:`compute_report` turns a benchmark and a run directory into a :class:`PaperReport`;
:func:`write_report` renders it as Markdown, LaTeX, JSON and plots with an ``index.md``, and
freezes its JSON form plus the SHA-256 of every input into ``RUN_DIR/frozen.json`` for
``nclue reproduce --verify``. Every scorecard and contrast table is built by the same
builders as ``nclue evaluate`` / ``nclue compare`` (:mod:`nclue.scoring.results`), so a
statistic has the same row and column names everywhere.

Tables (the seed paper's numbering):

* **S1** fair runs of the default query form ranked by n-Clue Score, with the exact-family
  95% bootstrap interval, Gold Hit, Gold-NDCG, graded NDCG and M/P/G (equal scores by name);
* **S1d** privileged controls and baselines from ``BENCH/controls/`` — never ranked;
* **S2b** n-Clue Score of each system on every query form it ran on;
* **S1e** displayed contrasts: each block's best endpoint (by n-Clue Score) against its base,
  with the selection-aware p (blockwise max-|T| over every tried endpoint, Holm across blocks);
* **S1f** common support ΔD and the unconditional Miss / Subset-first / Gold-first shares;
* **S1g/S1h** shared-document sensitivity and the adversarial promotion bound of each contrast;
* **S1j** task-factor strata (n, L_min, |D+|) as n-Clue Score / Gold Hit.

Spearman's ρ between the metric orderings is computed over the fair runs of the default form
only (controls and off-form runs would inflate it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from nclue.errors import NclueError
from nclue.io import atomic_write_text, json_safe, sha256_file, write_json
from nclue.matrix.runner import MANIFEST
from nclue.scoring.results import (
    Contrast,
    Scorecard,
    contrast_table,
    page_support_table,
    promotion_table,
    scorecard_table,
    sensitivity_table,
    strata_table,
    support_table,
)
from nclue.tables import Table, Tabular, fmt_pp
from nclue.types import DEFAULT_FORM, DEFAULT_SEED

FROZEN = "frozen.json"
CONTROL_DIR = "controls"
FORM_ORDER = ("raw", "clean_v2", "natural", "paraphrase")


@dataclass(frozen=True)
class PaperReport(Tabular):
    """Every number of the paper-style report (pp unless a p-value, ρ or count)."""

    k: int
    queries: int
    families: int
    seed: int
    bootstrap: int
    draws: int
    default_form: str
    inputs: Mapping[str, str]
    card: Scorecard
    fair: tuple[str, ...]
    controls: tuple[str, ...]
    categories: Mapping[str, str]
    query_forms: Mapping[str, Mapping[str, float]]
    contrasts: Mapping[str, Contrast]
    spearman: Mapping[str, Mapping[str, float | None]] | None

    def sections(self) -> Iterator[tuple[str, str, Table]]:
        """``(file key, section title, table)`` for every table that has rows."""
        contrasts = list(self.contrasts.values())
        candidates = (
            (
                "table_s1_scorecard",
                "Scorecard (Table S1)",
                scorecard_table(
                    self.card,
                    self.fair,
                    self.categories,
                    caption=f"Table S1. Fair systems of form {self.default_form} ranked by n-Clue Score@{self.k} over "
                    f"{self.queries} queries ({self.families} families; exact-family bootstrap, "
                    f"{self.bootstrap} replicates); percentage points. M/P/G = Miss / Subset-first / Gold-first.",
                ),
            ),
            (
                "table_s1d_controls",
                "Controls (Table S1d)",
                scorecard_table(
                    self.card,
                    self.controls,
                    ranked=False,
                    caption="Table S1d. Controls read the construction inventory (oracle.*) or ignore the query "
                    "(baseline.*); never ranked with fair systems.",
                ),
            ),
            ("table_s2b_query_forms", "Query forms (Table S2b)", query_form_table(self.query_forms)),
            ("table_s1e_contrasts", "Displayed contrasts (Table S1e)", contrast_table(contrasts, self.draws)),
            ("table_s1f_common_support", "Common support (Table S1f)", support_table(contrasts)),
            ("table_s1g_sensitivity", "Shared-document sensitivity (Table S1g)", sensitivity_table(contrasts)),
            ("table_s1h_promotion", "Adversarial promotion bound (Table S1h)", promotion_table(contrasts)),
            ("table_s1j_strata", "Task-factor strata (Table S1j)", strata_table(self.card, self.fair)),
            ("table_page_support", "Page evidence (Gold+Support)", page_support_table(self.card, self.fair)),
        )
        for key, title, table in candidates:
            if table.rows:
                yield key, title, table

    def tables(self) -> list[Table]:
        return [table for _, _, table in self.sections()]

    def to_json(self) -> dict:
        runs = self.card.runs
        return json_safe(
            {
                "k": self.k,
                "queries": self.queries,
                "families": self.families,
                "seed": self.seed,
                "bootstrap": self.bootstrap,
                "draws": self.draws,
                "default_form": self.default_form,
                "inputs": dict(self.inputs),
                "scorecard": {
                    n: {"rank": i, "category": self.categories.get(n, "RET"), **runs[n].to_json()}
                    for i, n in enumerate(self.fair, start=1)
                },
                "controls": {n: runs[n].to_json() for n in self.controls},
                "query_forms": self.query_forms,
                "contrasts": {name: c.to_json() for name, c in self.contrasts.items()},
                "strata": {
                    factor: {
                        cell: {"queries": data["queries"], "runs": {n: data["runs"][n] for n in self.fair}}
                        for cell, data in cells.items()
                    }
                    for factor, cells in (self.card.strata or {}).items()
                },
                "spearman": self.spearman,
            }
        )


def query_form_table(query_forms: Mapping[str, Mapping[str, float]]) -> Table:
    """Table S2b: n-Clue Score of each system on every rendering it ran on."""
    forms = [f for f in FORM_ORDER if any(f in v for v in query_forms.values())]
    rows = tuple((system, *(fmt_pp(values.get(f)) for f in forms)) for system, values in query_forms.items())
    return Table(
        ("System", *forms),
        rows,
        "l" + "r" * len(forms),
        "Table S2b. n-Clue Score by query rendering; the qrels are identical across forms.",
    )


def _manifest(run_dir: Path) -> dict:
    path = run_dir / MANIFEST
    if path.is_file():
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise NclueError(f"{path}: damaged ({exc}); rerun `nclue run --matrix` to rewrite it") from None
    runs = sorted(p.stem for p in run_dir.glob("*.jsonl"))
    if not runs:
        raise NclueError(f"{run_dir}: no runs (*.jsonl) and no {MANIFEST}; produce runs with `nclue run`")
    return {
        "spec": {"form": DEFAULT_FORM, "k": 10},
        "contrasts": [],
        "runs": {
            r: {
                "system": r.split("@")[0],
                "form": r.split("@")[1] if "@" in r else DEFAULT_FORM,
                "block": "standalone",
                "category": "RET",
            }
            for r in runs
        },
    }


def input_hashes(
    release_hashes: Mapping[str, str], run_dir: Path, run_names: list[str], control_paths: list[Path]
) -> dict[str, str]:
    """SHA-256 of every file the report reads, keyed by a stable relative name."""
    out = {f"bench/{name}": digest for name, digest in release_hashes.items()}
    for path in control_paths:
        out[f"bench/{CONTROL_DIR}/{path.name}"] = sha256_file(path)
    for name in run_names:
        out[f"runs/{name}.jsonl"] = sha256_file(run_dir / f"{name}.jsonl")
    return out


def compute_report(
    bench_dir: str | os.PathLike[str],
    run_dir: str | os.PathLike[str],
    n_boot: int = 1000,
    n_draws: int = 10000,
    seed: int = DEFAULT_SEED,
) -> PaperReport:
    """Every table's numbers from the frozen runs and qrels (deterministic for a seed)."""
    from nclue.release import Release
    from nclue.scoring import Benchmark, Block, compare_runs, load_run, score_runs, scorecard
    from nclue.scoring.summary import HEADLINE, metric_matrix
    from nclue.stats import spearman_matrix

    bench_path, runs_path = Path(bench_dir), Path(run_dir)
    manifest = _manifest(runs_path)
    k = int(manifest["spec"].get("k", 10))
    default_form = manifest["spec"].get("form", DEFAULT_FORM)
    meta = manifest["runs"]
    names = list(meta)
    missing = [n for n in names if not (runs_path / f"{n}.jsonl").is_file()]
    if missing:
        raise NclueError(f"{runs_path}: run files missing for {', '.join(missing)}; rerun `nclue run --matrix`")
    control_paths = sorted((bench_path / CONTROL_DIR).glob("*.jsonl"))
    release = Release.open(bench_path, require_qrels=True)
    bench = Benchmark.from_release(release)
    runs = [load_run(runs_path / f"{n}.jsonl", bench, name=n) for n in names]
    controls = [load_run(p, bench) for p in control_paths]
    scores = score_runs(bench, runs + controls, k=k)
    card = scorecard(bench, scores, ci="family", n_boot=n_boot, seed=seed, with_strata=True)

    fair = card.ranked(n for n in names if meta[n].get("form", default_form) == default_form)
    forms_by_system: dict[str, dict[str, float]] = {}
    for n in names:
        forms_by_system.setdefault(meta[n]["system"], {})[meta[n].get("form", default_form)] = card[n].n_clue_score
    query_forms = {s: v for s, v in forms_by_system.items() if len(v) > 1}

    blocks = [Block(c["name"], c["base"], tuple(c["variants"])) for c in manifest.get("contrasts", [])]
    contrasts: dict[str, Contrast] = {}
    if blocks:
        tests = compare_runs(
            bench,
            scores,
            blocks[0].base,
            [],
            blocks=blocks,
            n_boot=n_boot,
            n_draws=n_draws,
            seed=seed,
            sensitivity=False,
        ).blocks
        for block in blocks:
            test = tests[block.name]
            pair = compare_runs(bench, scores, block.base, [test.display], n_boot=n_boot, n_draws=n_draws, seed=seed)
            contrasts[block.name] = replace(
                pair[test.display],
                block=block.name,
                tried=block.endpoints,
                p_block=test.p_block,
                p_selection=test.p_holm,
            )
    fair_rows = [scores.index(n) for n in fair]
    spearman = (
        spearman_matrix({m: metric_matrix(scores, m)[fair_rows].mean(axis=1) for m in HEADLINE})
        if len(fair_rows) >= 2
        else None
    )
    return PaperReport(
        k=k,
        queries=card.queries,
        families=card.families,
        seed=seed,
        bootstrap=n_boot,
        draws=n_draws,
        default_form=default_form,
        inputs=input_hashes(release.hashes, runs_path, names, control_paths),
        card=card,
        fair=tuple(fair),
        controls=tuple(c.name for c in controls),
        categories={n: meta[n].get("category", "RET") for n in names},
        query_forms=query_forms,
        contrasts=contrasts,
        spearman=spearman,
    )


def write_report(
    report: PaperReport, out_dir: str | os.PathLike[str], freeze_dir: str | os.PathLike[str] | None
) -> list[Path]:
    """Render ``report`` into ``out_dir`` (md, tex, json, png, pdf + index.md); freeze it in ``freeze_dir``."""
    from nclue.report import plots
    from nclue.tables import render

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    index = [
        "# nclue report",
        "",
        f"{report.queries} queries in {report.families} exact gold families; metrics at k = {report.k}; "
        f"{report.bootstrap} family-bootstrap replicates, {report.draws} randomization draws, seed {report.seed}.",
        "",
    ]
    for key, title, table in report.sections():
        for fmt, ext in (("markdown", "md"), ("latex", "tex")):
            path = out / f"{key}.{ext}"
            atomic_write_text(path, render(table, fmt))
            written.append(path)
        index += [
            f"## {title}",
            "",
            render(table, "markdown").rstrip(),
            "",
            f"[Markdown]({key}.md) · [LaTeX]({key}.tex)",
            "",
        ]
    written += plots.scorecard_plot({n: report.card[n] for n in report.fair}, out / "scorecard")
    index += ["## Plots", "", "![scorecard](scorecard.png)", ""]
    if report.contrasts:
        written += plots.delta_plane_plot(report.contrasts, out / "delta_plane")
        index += ["![delta plane](delta_plane.png)", ""]
    data = report.to_json()
    write_json(out / "report.json", data)
    written.append(out / "report.json")
    atomic_write_text(out / "index.md", "\n".join(index) + "\n")
    written.append(out / "index.md")
    if freeze_dir is not None:
        write_json(Path(freeze_dir) / FROZEN, data)
    return written
