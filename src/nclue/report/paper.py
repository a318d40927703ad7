"""The paper-style report of a matrix run, as a typed :class:`PaperReport`.

:func:`compute_report` turns a benchmark and a run directory into a :class:`PaperReport`
(:func:`report_from_scores` computes it from the opened, scored objects);
:func:`write_report` renders it as Markdown, LaTeX, JSON, plots, ``index.md`` and a
self-contained ``index.html``, and freezes its JSON form plus the SHA-256 of every input
into ``OUT/frozen.json`` for ``nclue reproduce --verify`` (it writes nothing into the run folder). Every scorecard and contrast
table is built by the same builders as ``nclue evaluate`` / ``nclue compare``
(:mod:`nclue.scoring.results`), so a statistic has the same row and column names everywhere.
The studies are described in ``docs/report.md``.

Tables (the seed paper's numbering):

* **S1** fair runs of the default query form ranked by n-Clue Score, with the exact-family
  95% bootstrap interval, Gold Hit, Gold-NDCG, graded NDCG and M/P/G (equal scores by name);
  with the matrix spec's ``baselines = "ranked"`` (the default, the paper's Tables S1a–S1c) the
  query-blind ``baseline.*`` controls of ``BENCH/controls/`` are ranked among them, category BL;
* **S1d** the controls not ranked in S1: the privileged ``oracle.*`` controls (construction
  facts), and with ``baselines = "apart"`` (SPEC §5.6) the ``baseline.*`` ones too;
* **S2a** the LLM paraphrase probe, from ``SYSTEM@paraphrase`` runs (:mod:`nclue.report.paraphrase_probe`);
* **S2b** n-Clue Score of each system on every query form it ran on;
* **S1e** displayed contrasts: each block's best endpoint (by n-Clue Score) against its base,
  with the selection-aware p (blockwise max-|T| over every tried endpoint, Holm across blocks);
* **S1f** common support ΔD and the unconditional Miss / Subset-first / Gold-first shares;
* **S1g** document macro, crossed all-judged interval, leave-one-document range and
  one-query-per-document interval of each contrast; **S1h** the adversarial promotion
  bound; **S1i** the connected-component and crossed analyses of one headline contrast (the
  matrix spec's ``headline``, :func:`headline_pair`) on this benchmark and on SourceShift
  (:mod:`nclue.report.clustered`);
* **S1j** task-factor strata (n, L_min, |D+|) as n-Clue Score / Gold Hit;
* **S3/S4** SourceShift (:mod:`nclue.report.shift`), **S5a** condition masking
  (:mod:`nclue.report.masking`), **S5b** difficulty diagnostics
  (:mod:`nclue.report.difficulty`), **S6** the label example (:mod:`nclue.report.label`).

Spearman's ρ between the metric orderings is computed over the fair runs of the default form
only (controls and off-form runs would inflate it). A ranked baseline takes a rank in S1 and
nothing else: the figure, the strata, page support, the studies and every contrast and headline
pick use the fair runs only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from nclue.errors import NclueError, require_seed
from nclue.io import atomic_write_text, json_safe, sha256_file, write_json
from nclue.matrix.runset import RunSet
from nclue.matrix.spec import BASELINES_RANKED, BLOCKS
from nclue.release import Release
from nclue.report.clustered import S1I_METRIC, ClusteredRow, ComponentColumn, clustered_table, components_table
from nclue.report.difficulty import DifficultyStudy
from nclue.report.label import LabelExample
from nclue.report.masking import MaskingStudy
from nclue.report.paraphrase_probe import ProbeRow, probe_table
from nclue.report.provenance import runs_pages_fingerprint
from nclue.report.scored import ScoredFolder, score_run_folder
from nclue.report.shift import ShiftStudy, shift_from_scores
from nclue.runfile import run_path
from nclue.scoring import Benchmark, Block, Scores
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
from nclue.types import DEFAULT_SEED

FROZEN = "frozen.json"
CONTROL_DIR = "controls"
SUMS = "SHA256SUMS"
INVENTORY = "inventory.jsonl"
FORM_ORDER = ("raw", "clean_v2", "natural", "paraphrase")
STUDY_METRICS = ("gold_ndcg", "n_clue_score")
"""Per-query metrics Table S1i and the per-source deltas can be computed on."""
BASELINE_PREFIX = "baseline."
"""Controls that read no construction fact (``baseline.random``, ``baseline.frequency_prior``), category BL."""


@dataclass(frozen=True)
class PaperReport(Tabular):
    """Every number of the paper-style report (pp unless a p-value, ρ, AUC, coefficient or count)."""

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
    paraphrase: tuple[ProbeRow, ...] = ()
    clustered: Mapping[str, ClusteredRow] | None = None
    components: tuple[ComponentColumn, ...] = ()
    shift: ShiftStudy | None = None
    masking: MaskingStudy | None = None
    difficulty: DifficultyStudy | None = None
    label: LabelExample | None = None
    shift_paths: Mapping[str, str] | None = None
    masking_path: str | None = None
    qrels: Mapping[str, object] | None = None
    labels_built_by: str = ""
    study_metric: str = S1I_METRIC
    """The per-query metric of Table S1i and the SourceShift per-source deltas (the seed's gold-only NDCG@10)."""
    baselines: str = BASELINES_RANKED
    """Where the ``baseline.*`` controls go: ranked in Table S1 or ``apart`` in S1d (the matrix spec's ``baselines``)."""
    zero_gold: Mapping[str, object] | None = None
    """With a qrels version: ``keep`` (queries it leaves without a gold scored as misses) and, per study,
    the queries dropped instead (``development``, ``shift``)."""

    @property
    def ranked_baselines(self) -> tuple[str, ...]:
        """The ``baseline.*`` controls Table S1 ranks with the fair runs (none when they are apart)."""
        if self.baselines != BASELINES_RANKED:
            return ()
        return tuple(n for n in self.controls if n.startswith(BASELINE_PREFIX))

    @property
    def ranking(self) -> list[str]:
        """Table S1's rows in rank order: the fair runs and the ranked baselines, by n-Clue Score (ties by name)."""
        return self.card.ranked([*self.fair, *self.ranked_baselines])

    @property
    def unranked_controls(self) -> tuple[str, ...]:
        """Table S1d's rows: every control that Table S1 does not rank."""
        return tuple(n for n in self.controls if n not in self.ranked_baselines)

    def _scorecard_caption(self) -> str:
        """Table S1's caption: what it ranks, over what, with which interval."""
        ranked = f"Fair systems of form {self.default_form}"
        if self.ranked_baselines:
            ranked += " and the query-blind baselines (baseline.*, BL)"
        return (
            f"{ranked} ranked by n-Clue Score@{self.k} over {self.queries} queries ({self.families} families; "
            f"exact-family bootstrap, {self.bootstrap} replicates); percentage points. "
            "M/P/G = Miss / Subset-first / Gold-first."
        )

    def _controls_caption(self) -> str:
        """Table S1d's caption: why its rows are not ranked."""
        if self.baselines == BASELINES_RANKED:
            return (
                "Construction-fact controls (oracle.*): each reads the construction inventory, privileged input, "
                "so none is a fair retriever; never ranked."
            )
        return (
            "Controls read the construction inventory (oracle.*) or ignore the query "
            "(baseline.*); never ranked with fair systems."
        )

    def _scorecard_sections(self) -> list[tuple[str, str, Table]]:
        """Tables S1 (the fair systems, and the ranked baselines) and S1d (the controls never ranked)."""
        scorecard = scorecard_table(self.card, self.ranking, self.categories, caption=self._scorecard_caption())
        controls = scorecard_table(self.card, self.unranked_controls, ranked=False, caption=self._controls_caption())
        return [
            ("table_s1_scorecard", "Scorecard (Table S1)", replace(scorecard, number="S1")),
            ("table_s1d_controls", "Controls (Table S1d)", replace(controls, number="S1d")),
        ]

    def _rows_json(self, names: Sequence[str], ranks: Mapping[str, int]) -> dict[str, dict]:
        """``report.json`` rows of ``names``: each run's numbers, led by its Table S1 rank and category where S1 ranks it."""
        out = {}
        for name in names:
            ranked = {"rank": ranks[name], "category": self.categories.get(name, "RET")} if name in ranks else {}
            out[name] = {**ranked, **self.card.runs[name].to_json()}
        return out

    def sections(self) -> Iterator[tuple[str, str, Table]]:
        """``(file key, section title, table)`` for every table that has rows."""
        contrasts = list(self.contrasts.values())
        candidates: list[tuple[str, str, Table]] = [
            *self._scorecard_sections(),
            ("table_s2a_paraphrase", "Paraphrase probe (Table S2a)", probe_table(self.paraphrase, self.default_form)),
            ("table_s2b_query_forms", "Query forms (Table S2b)", query_form_table(self.query_forms)),
            (
                "table_s1e_contrasts",
                "Displayed contrasts (Table S1e)",
                replace(contrast_table(contrasts, self.draws), number="S1e"),
            ),
            ("table_s1f_common_support", "Common support (Table S1f)", replace(support_table(contrasts), number="S1f")),
        ]
        if self.clustered is not None and contrasts:
            candidates.append(
                (
                    "table_s1g_sensitivity",
                    "Shared-document sensitivity (Table S1g)",
                    clustered_table(contrasts, self.clustered, list(self.contrasts)),
                )
            )
        candidates += [
            (
                "table_s1h_promotion",
                "Adversarial promotion bound (Table S1h)",
                replace(promotion_table(contrasts), number="S1h"),
            ),
            (
                "table_shared_documents",
                "Shared-document stress checks",
                replace(sensitivity_table(contrasts), key="shared-documents"),
            ),
        ]
        if self.components:
            candidates.append(
                ("table_s1i_components", "Connected components (Table S1i)", components_table(self.components))
            )
        candidates += [
            (
                "table_s1j_strata",
                "Task-factor strata (Table S1j)",
                replace(strata_table(self.card, self.fair), number="S1j"),
            ),
            (
                "table_page_support",
                "Page evidence (Gold+Support)",
                replace(page_support_table(self.card, self.fair), key="page-support"),
            ),
        ]
        for study in (self.shift, self.masking, self.difficulty, self.label):
            if study is not None:
                candidates += list(study.sections())
        for key, title, table in candidates:
            if table.rows:
                yield key, title, table

    def tables(self) -> list[Table]:
        return [table for _, _, table in self.sections()]

    def skipped(self) -> list[str]:
        """One sentence per study that this report could not compute, with the command that produces it."""
        out = []
        if not self.paraphrase:
            out.append(
                "Table S2a (paraphrase probe): no `SYSTEM@paraphrase` runs. Fill the release's frozen cache with "
                "`nclue bench paraphrase BENCH --endpoint URL --model MODEL` (any OpenAI-compatible endpoint), run "
                "`nclue run BENCH COLL --form paraphrase -s 'dense.joint(max)' -s 'dense.joint(ptop3)' -o RUN_DIR` "
                "(next to the raw-form runs), then `nclue report` again."
            )
        if self.masking is None:
            out.append(
                "Table S5a (condition masking): no masked runs; `nclue report BENCH RUN_DIR -o OUT --collection COLL` "
                "writes them to OUT/masking first."
            )
        if self.shift is None:
            out.append(
                "Tables S3–S4 (SourceShift): no SourceShift benchmark given; build it with `nclue corpus fetch "
                "debian-docs-shift PDFS`, `nclue ingest`, `nclue index`, `nclue build`, `nclue run --matrix shift` and "
                "pass `--shift SHIFT_BENCH SHIFT_RUNS` (docs/report.md#sourceshift)."
            )
        if self.difficulty is None:
            out.append("Table S5b (difficulty): the release has no inventory.jsonl (built by `nclue build`).")
        return out

    def to_json(self) -> dict:
        ranks = {n: i for i, n in enumerate(self.ranking, start=1)}
        return json_safe(
            {
                "k": self.k,
                "queries": self.queries,
                "families": self.families,
                "seed": self.seed,
                "bootstrap": self.bootstrap,
                "draws": self.draws,
                "default_form": self.default_form,
                "baselines": self.baselines,
                "study_metric": self.study_metric,
                "inputs": dict(self.inputs),
                "labels_built_by": self.labels_built_by,
                "options": {
                    "shift": dict(self.shift_paths) if self.shift_paths else None,
                    "masking": self.masking_path,
                    "qrels": dict(self.qrels) if self.qrels else None,
                    "zero_gold": dict(self.zero_gold) if self.zero_gold else None,
                },
                "scorecard": self._rows_json(self.fair, ranks),
                "controls": self._rows_json(self.controls, ranks),
                "query_forms": self.query_forms,
                "paraphrase": {r.system: r.to_json() for r in self.paraphrase},
                "contrasts": {name: c.to_json() for name, c in self.contrasts.items()},
                "clustered": {n: r.to_json() for n, r in (self.clustered or {}).items()},
                "components": [c.to_json() for c in self.components],
                "strata": {
                    factor: {
                        cell: {"queries": data["queries"], "runs": {n: data["runs"][n] for n in self.fair}}
                        for cell, data in cells.items()
                    }
                    for factor, cells in (self.card.strata or {}).items()
                },
                "spearman": self.spearman,
                "shift": self.shift.to_json() if self.shift else None,
                "masking": self.masking.to_json() if self.masking else None,
                "difficulty": self.difficulty.to_json() if self.difficulty else None,
                "label": self.label.to_json() if self.label else None,
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
        "n-Clue Score by query rendering; the qrels are identical across forms.",
        number="S2b",
    )


def release_file_hashes(bench_path: Path, release_hashes: Mapping[str, str]) -> dict[str, str]:
    """SHA-256 of every file of the release: those ``SHA256SUMS`` lists and ``SHA256SUMS`` itself.

    A release without ``SHA256SUMS`` (a BEIR folder) contributes the files that were read.
    """
    sums = bench_path / SUMS
    out = {f"bench/{name}": digest for name, digest in release_hashes.items()}
    if not sums.is_file():
        return out
    out[f"bench/{SUMS}"] = sha256_file(sums)
    for line in sums.read_text(encoding="utf-8", errors="replace").splitlines():
        _, _, rel = line.partition("  ")
        if rel and (bench_path / rel).is_file():
            out[f"bench/{rel}"] = sha256_file(bench_path / rel)
    return out


def input_hashes(
    release_hashes: Mapping[str, str], run_dir: Path, run_names: list[str], control_paths: list[Path]
) -> dict[str, str]:
    """SHA-256 of every file the report reads, keyed by a stable relative name."""
    out = dict(release_hashes)
    for path in control_paths:
        out[f"bench/{CONTROL_DIR}/{path.name}"] = sha256_file(path)
    for name in run_names:
        path = run_path(run_dir, name)
        out[f"runs/{path.name}"] = sha256_file(path)
    return out


def compute_report(
    bench_dir: str | os.PathLike[str],
    run_dir: str | os.PathLike[str],
    n_boot: int = 1000,
    n_draws: int = 10000,
    seed: int = DEFAULT_SEED,
    shift: tuple[str | os.PathLike[str], str | os.PathLike[str]] | None = None,
    qrels: str | os.PathLike[str] | None = None,
    masking_dir: str | os.PathLike[str] | None = None,
    check_inputs: bool = True,
    shift_qrels: str | os.PathLike[str] | None = None,
    study_metric: str = S1I_METRIC,
    keep_zero_gold: bool = False,
) -> PaperReport:
    """Every table's numbers from the frozen runs and qrels (deterministic for a seed).

    Opens and scores the run folder, and the SourceShift one (:func:`nclue.report.scored.score_run_folder`),
    computes the tables with :func:`report_from_scores`, and adds what only the files give: the
    SHA-256 of every input, the masked runs and the options.

    The run files, benchmark and masked runs must be those ``matrix.json`` recorded
    (:mod:`nclue.report.provenance`); ``check_inputs=False`` leaves that to the caller
    (``nclue reproduce`` checks every input against its freeze and reports each change).

    ``shift`` names the SourceShift release and run directory (Tables S3–S4 and the second
    column of S1i). Masked runs (Table S5a) are read from ``masking_dir`` when given and
    present (:func:`nclue.report.masking.run_masking` writes them). ``qrels`` scores
    every table on another qrels version of the same queries (``qrels.v2.jsonl`` from
    ``nclue audit adjudicate``; nclue JSONL, BEIR ``.tsv`` or TREC), recorded with its SHA-256;
    ``shift_qrels`` does the same for the SourceShift release (the final copy of its stress path:
    ``nclue audit challenge`` → tie-breaks → ``adjudicate``). ``study_metric`` is the per-query
    metric of Table S1i and the per-source deltas (default the seed's Gold-NDCG@10). On a qrels
    version, queries it leaves without a gold are dropped with their rows (the supplement's
    removal after repair, as in ``nclue audit impact``) unless ``keep_zero_gold``; the choice and
    the dropped queries are recorded (``options.zero_gold``).
    """
    require_seed(seed)
    bench_path, runs_path = Path(bench_dir), Path(run_dir)
    control_paths = sorted((bench_path / CONTROL_DIR).glob("*.jsonl"))
    folder = score_run_folder(bench_path, runs_path, qrels, control_paths, check_inputs, keep_zero_gold)
    own = dict(folder.release.hashes)
    if qrels is not None:  # the version is frozen under qrels/ below, not as a file of the release
        own.pop(folder.release.file_key(folder.release.files["qrels"]), None)
    inputs = input_hashes(release_file_hashes(bench_path, own), runs_path, folder.runset.names, control_paths)
    qrels_record = qrels_version_record(Path(qrels)) if qrels is not None else None
    if qrels_record is not None:
        inputs["qrels/" + Path(qrels).name] = str(qrels_record["sha256"])
    shift_qrels = Path(shift_qrels).resolve() if shift_qrels is not None else None  # recorded by absolute path
    shifted = (
        score_run_folder(shift[0], shift[1], shift_qrels, check_inputs=check_inputs, keep_zero_gold=keep_zero_gold)
        if shift is not None
        else None
    )
    report = report_from_scores(
        folder.bench,
        folder.scores,
        folder.runset,
        folder.release,
        n_boot,
        n_draws,
        seed,
        controls=folder.controls,
        shift=shifted,
        study_metric=study_metric,
    )
    masked = Path(masking_dir) if masking_dir is not None and Path(masking_dir).is_dir() else None
    masking = _masking_part(folder, list(report.fair), masked, inputs, n_boot, seed, check_inputs) if masked else None
    shift_paths = None
    if shift is not None and shifted is not None:
        inputs.update(_shift_inputs(Path(shift[0]), shifted))
        shift_paths = {"bench": str(Path(shift[0])), "runs": str(Path(shift[1]))}
        if shift_qrels is not None:
            shift_paths["qrels"] = str(shift_qrels)
    return replace(
        report,
        inputs=inputs,
        masking=masking,
        shift_paths=shift_paths,
        masking_path=str(masking_dir) if masking is not None else None,
        qrels=qrels_record,
        zero_gold=_zero_gold_record(keep_zero_gold, folder, shifted, qrels, shift_qrels),
    )


def _zero_gold_record(
    keep: bool, folder: ScoredFolder, shifted: ScoredFolder | None, qrels: object, shift_qrels: object
) -> dict[str, object] | None:
    """What ``options.zero_gold`` records: nothing without a qrels version, else the rule and the dropped queries."""
    if qrels is None and shift_qrels is None:
        return None
    dropped = {"development": list(folder.dropped)}
    if shifted is not None:
        dropped["shift"] = list(shifted.dropped)
    return {"keep": keep, "dropped": dropped}


def report_from_scores(
    bench: Benchmark,
    scores: Scores,
    runset: RunSet,
    release: Release,
    n_boot: int = 1000,
    n_draws: int = 10000,
    seed: int = DEFAULT_SEED,
    controls: Sequence[str] = (),
    shift: ScoredFolder | None = None,
    study_metric: str = S1I_METRIC,
) -> PaperReport:
    """Every table's numbers from an opened, scored run folder (deterministic for a seed).

    ``scores`` holds every run of ``runset`` and the ``controls`` (their run names) scored on
    ``bench``, the array view of ``release``; the release's folder gives its own files, the
    ``inventory.jsonl`` of Table S5b and the ``MANIFEST.json`` that names the label signals.
    Table S1i decomposes :func:`headline_pair`. ``shift`` is the SourceShift run folder scored on
    its release (Tables S3–S4 and the second column of S1i, scored at this folder's ``k``).
    ``study_metric`` is the metric of Table S1i and of the SourceShift per-source deltas.

    The report records no inputs (``inputs`` is empty), masked runs or options: those come from
    files, and :func:`compute_report` adds them.
    """
    from nclue.report.clustered import clustered_rows, component_column
    from nclue.report.difficulty import difficulty_study
    from nclue.report.label import select_example
    from nclue.report.paraphrase_probe import probe_rows
    from nclue.scoring import scorecard

    require_seed(seed)
    card = scorecard(bench, scores, ci="family", n_boot=n_boot, seed=seed, with_strata=True)
    fair = card.ranked(runset.fair())
    run_by_form = runset.by_form()
    contrasts = declared_contrasts(bench, scores, list(runset.contrasts), n_boot, n_draws, seed)
    inventory = release.root / INVENTORY if release.root is not None else None
    difficulty = (
        difficulty_study(bench, scores, fair, inventory, n_boot, seed)
        if inventory is not None and inventory.is_file()
        else None
    )
    pair = headline_pair(runset, contrasts)
    if study_metric not in STUDY_METRICS:
        raise NclueError(f"study metric {study_metric!r} is not one of {', '.join(STUDY_METRICS)}")
    components = (
        [component_column("development", bench, scores, *pair, n_boot=n_boot, seed=seed, metric=study_metric)]
        if pair
        else []
    )
    shift_study = None
    if shift is not None:
        shift_study, column = _shift_part(
            shift, scores, runset.names, runset.k, pair, StudyDraws(n_boot, n_draws, seed, study_metric)
        )
        components += [column] if column is not None else []
    return PaperReport(
        k=runset.k,
        queries=card.queries,
        families=card.families,
        seed=seed,
        bootstrap=n_boot,
        draws=n_draws,
        default_form=runset.form,
        study_metric=study_metric,
        inputs={},
        card=card,
        fair=tuple(fair),
        controls=tuple(controls),
        categories=_categories(runset, controls),
        query_forms=_query_forms(card, run_by_form),
        contrasts=contrasts,
        spearman=headline_spearman(scores, fair),
        paraphrase=tuple(probe_rows(bench, scores, run_by_form, runset.form, n_boot, n_draws, seed)),
        clustered=clustered_rows(bench, scores, contrasts, n_boot, seed),
        components=tuple(components),
        shift=shift_study,
        difficulty=difficulty,
        label=select_example(release, seed),
        labels_built_by=_labels_built_by(release.root),
        baselines=runset.baselines,
    )


def _categories(runset: RunSet, controls: Sequence[str]) -> dict[str, str]:
    """The category code of every run (its matrix block's) and of every ``baseline.*`` control (BL)."""
    baselines = {n: BLOCKS["baseline"] for n in controls if n.startswith(BASELINE_PREFIX)}
    return {**{n: runset.entries[n].category for n in runset.names}, **baselines}


def _query_forms(card: Scorecard, run_by_form: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, float]]:
    """Table S2b's values: n-Clue Score of every system run on more than one rendering, per rendering."""
    return {
        system: {form: card[n].n_clue_score for form, n in runs_of.items()}
        for system, runs_of in run_by_form.items()
        if len(runs_of) > 1
    }


def headline_spearman(scores: Scores, fair: list[str]) -> dict[str, dict[str, float]] | None:
    """Table S1b: Spearman's ρ between the headline metrics' orderings of the fair runs (``None`` below two)."""
    from nclue.scoring.summary import HEADLINE, metric_matrix
    from nclue.stats import spearman_matrix

    rows = [scores.index(n) for n in fair]
    if len(rows) < 2:
        return None
    return spearman_matrix({m: metric_matrix(scores, m)[rows].mean(axis=1) for m in HEADLINE})


def headline_pair(runset: RunSet, contrasts: Mapping[str, Contrast]) -> tuple[str, str] | None:
    """The pair Table S1i decomposes: :attr:`RunSet.headline` (the matrix spec's ``[headline]``;
    for a folder whose ``matrix.json`` predates the key, the default spec's pair when both ran —
    :func:`nclue.matrix.runset.headline_of`), else the first declared contrast's base and displayed
    variant (``contrasts``, as Table S1e shows them). ``None`` without either."""
    if runset.headline is not None:
        return runset.headline
    first = next(iter(contrasts.values()), None)
    return None if first is None else (first.base, first.variant)


def _masking_part(
    folder: ScoredFolder,
    fair: list[str],
    masking_dir: Path,
    inputs: dict[str, str],
    n_boot: int,
    seed: int,
    check_inputs: bool,
) -> MaskingStudy | None:
    """Table S5a from the masked runs in ``masking_dir`` (their hashes added to ``inputs``)."""
    from nclue.report.masking import masking_study, systems_to_mask

    masking, masked_files = masking_study(
        folder.bench,
        folder.scores,
        masking_dir,
        {s: s for s in systems_to_mask(fair)},
        n_boot,
        seed,
        folder.release.hashes,
        runs_pages_fingerprint(folder.runset) if check_inputs else None,
    )
    for path in masked_files:
        inputs[f"masking/{path.name}"] = sha256_file(path)
    return masking


def declared_contrasts(
    bench: Benchmark, scores: Scores, blocks: Sequence[Block], n_boot: int, n_draws: int, seed: int
) -> dict[str, Contrast]:
    """Table S1c: each declared block's best endpoint against its base, with the block's max-|T| p
    and the Holm-adjusted selection p (:func:`nclue.scoring.compare_runs`)."""
    from nclue.scoring import compare_runs

    if not blocks:
        return {}
    tests = compare_runs(
        bench, scores, blocks[0].base, [], blocks=blocks, n_boot=n_boot, n_draws=n_draws, seed=seed, sensitivity=False
    ).blocks
    contrasts: dict[str, Contrast] = {}
    for block in blocks:
        test = tests[block.name]
        pair = compare_runs(bench, scores, block.base, [test.display], n_boot=n_boot, n_draws=n_draws, seed=seed)
        contrasts[block.name] = replace(
            pair[test.display], block=block.name, tried=block.endpoints, p_block=test.p_block, p_selection=test.p_holm
        )
    return contrasts


@dataclass(frozen=True)
class StudyDraws:
    """How the SourceShift part draws its statistics: bootstrap replicates, randomization draws, the
    seed, and the per-query metric of its per-source deltas and S1i column."""

    n_boot: int
    n_draws: int
    seed: int
    metric: str


def _shift_part(
    shift: ScoredFolder,
    scores: Scores,
    names: list[str],
    k: int,
    pair: tuple[str, str] | None,
    draws: StudyDraws,
) -> tuple[ShiftStudy, ComponentColumn | None]:
    """The SourceShift study (Tables S3–S4) and its S1i column for ``pair`` (scored at the development
    benchmark's ``k``); ``scores`` and ``names``: the development benchmark's scores and runs."""
    from nclue.report.clustered import component_column
    from nclue.scoring.summary import metric_matrix

    primary = metric_matrix(scores, "n_clue_score")
    dev_deltas = {
        (c.base, v): 100.0 * float((primary[scores.index(v)] - primary[scores.index(c.base)]).mean())
        for c in shift.runset.contrasts
        for v in c.endpoints
        if c.base in names and v in names
    }
    study = shift_from_scores(
        shift.bench,
        shift.scores,
        shift.runset,
        shift.release,
        draws.n_boot,
        draws.n_draws,
        draws.seed,
        dev_deltas,
        source_metric=draws.metric,
    )
    if pair is None or not set(pair) <= set(shift.runset.names):
        return study, None
    at_k = shift.scores if shift.scores.k == k else _rescore(shift, pair, k)
    column = component_column(
        "SourceShift", shift.bench, at_k, *pair, n_boot=draws.n_boot, seed=draws.seed, metric=draws.metric
    )
    return study, column


def _rescore(folder: ScoredFolder, names: Sequence[str], k: int) -> Scores:
    """The runs ``names`` of ``folder`` scored at cut-off ``k`` (the folder was scored at its own)."""
    from nclue.scoring import load_run_matrix, score_runs

    runs = [load_run_matrix(folder.runset.path(n), folder.bench, name=n) for n in names]
    return score_runs(folder.bench, runs, k=k)


def _shift_inputs(shift_bench: Path, shift: ScoredFolder) -> dict[str, str]:
    """SHA-256 of every SourceShift input: its release's files and its run files."""
    out = {"shift-" + key: digest for key, digest in release_file_hashes(shift_bench, shift.release.hashes).items()}
    for name in shift.runset.names:
        out[f"shift-runs/{shift.runset.path(name).name}"] = sha256_file(shift.runset.path(name))
    return out


def _labels_built_by(bench_path: Path | None) -> str:
    """:func:`nclue.bench.card.label_signals` of the release's manifest ("" without one)."""
    from nclue.bench.card import label_signals
    from nclue.release import read_manifest

    if bench_path is None:
        return ""
    try:
        manifest = read_manifest(bench_path, required=False)
        return label_signals(manifest) if manifest else ""
    except (NclueError, AttributeError):
        return ""


def qrels_version_record(path: Path) -> dict[str, object]:
    """``{path, name, sha256, version}`` of a qrels file (version ``N`` of ``qrels.vN.jsonl``, else 1)."""
    import re

    match = re.search(r"\.v([0-9]+)$", path.name.removesuffix(".jsonl").removesuffix(".tsv"))
    return {
        "path": str(path.resolve()),
        "name": path.name,
        "sha256": sha256_file(path),
        "version": int(match.group(1)) if match else 1,
    }


def frozen_name(qrels: str | os.PathLike[str] | None) -> str:
    """The freeze file of a report on the release's qrels (``frozen.json``) or on another version."""
    return FROZEN if qrels is None else f"frozen.{Path(qrels).name.removesuffix('.jsonl').removesuffix('.tsv')}.json"


def write_report(
    report: PaperReport,
    out_dir: str | os.PathLike[str],
    collection: str | os.PathLike[str] | None = None,
) -> list[Path]:
    """Render ``report`` into ``out_dir`` (md, tex, json, png, pdf, index.md, index.html) and freeze it there.

    The freeze (``frozen.json``, or ``frozen.VERSION.json`` on another qrels version) holds every
    number and the SHA-256 of every input; ``nclue reproduce BENCH RUN_DIR OUT --verify`` checks
    it. Nothing is written outside ``out_dir``: the run folder and the release are only read.

    With ``collection`` (the page store the runs searched, whose ``collection.json`` names
    the PDF folder), the label figure is rendered from the real PDF pages.
    """
    from nclue.report.html import write_html
    from nclue.tables import render

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    sections = list(report.sections())
    for key, _, table in sections:
        for fmt, ext in (("markdown", "md"), ("latex", "tex")):
            path = out / f"{key}.{ext}"
            atomic_write_text(path, render(table, fmt))
            written.append(path)
    notes = report.skipped()
    figure_files, figures = _figures(report, out, collection, notes)
    written += figure_files
    data = report.to_json()
    write_json(out / "report.json", data)
    written.append(out / "report.json")
    index = _index_lines(report, sections, figures, notes)
    atomic_write_text(out / "index.md", "\n".join(index) + "\n")
    written.append(out / "index.md")
    written.append(write_html(report, sections, figures, notes, out))
    freeze = out / frozen_name(report.qrels["path"] if report.qrels else None)
    write_json(freeze, data)
    written.append(freeze)
    drop_stale_outputs(out, written)
    return written


def _figures(
    report: PaperReport, out: Path, collection: str | os.PathLike[str] | None, notes: list[str]
) -> tuple[list[Path], list[tuple[str, str]]]:
    """The report's figures written into ``out``: ``(files, [(png name, caption)])``; a figure that
    cannot be drawn here adds a line to ``notes``."""
    from nclue.report import plots
    from nclue.report.label import render_figure

    written: list[Path] = []
    figures: list[tuple[str, str]] = []
    written += plots.scorecard_plot({n: report.card[n] for n in report.fair}, out / "scorecard")
    figures.append(("scorecard.png", "Fair systems ranked by n-Clue Score@10 with exact-family 95% intervals."))
    if report.contrasts:
        written += plots.delta_plane_plot(report.contrasts, out / "delta_plane")
        figures.append(("delta_plane.png", "Displayed contrasts in the ΔGold Hit × Δn-Clue Score plane."))
    if report.shift is not None and report.shift.source_deltas:
        written += plots.source_delta_plot([asdict(d) for d in report.shift.source_deltas], out / "shift_sources")
        figures.append(("shift_sources.png", "SourceShift: each contrast within each source, with 95% intervals."))
    if report.label is not None:
        if collection is not None:
            try:
                written += render_figure(report.label, collection, out)
                figures.append(("label_figure.png", f"Evidence pages of {report.label.qid}: gold and grade-2 subset."))
            except NclueError as exc:
                notes.append(f"Label figure (Table S6) not rendered: {exc}")
        else:
            notes.append(
                "Label figure (Table S6): give the collection, `nclue report BENCH RUN_DIR -o OUT --collection COLL`, "
                "to render the evidence pages from the PDFs."
            )
    return written, figures


def _index_lines(
    report: PaperReport, sections: list[tuple[str, str, Table]], figures: list[tuple[str, str]], notes: list[str]
) -> list[str]:
    """The lines of ``index.md``: the setting, every table with its files, reversals, figures, what was not computed."""
    from nclue.tables import render

    on = (
        f" Labels: `{report.qrels['name']}` (qrels version {report.qrels['version']}, SHA-256 "
        f"{str(report.qrels['sha256'])[:12]}…)."
        if report.qrels
        else " Labels: the release's own qrels (version 1)."
    )
    if report.labels_built_by:
        on += f" Signals that built the labels: {report.labels_built_by}."
    index = [
        "# nclue report",
        "",
        f"{report.queries} queries in {report.families} exact gold families; metrics at k = {report.k}; "
        f"{report.bootstrap} family-bootstrap replicates, {report.draws} randomization draws, seed {report.seed}.{on}",
        "",
    ]
    for key, title, table in sections:
        index += [
            f"## {title}",
            "",
            render(table, "markdown").rstrip(),
            "",
            f"[Markdown]({key}.md) · [LaTeX]({key}.tex)",
            "",
        ]
    if report.shift is not None and report.shift.reversals:
        index += ["## Where SourceShift reverses a contrast", "", *(f"- {line}" for line in report.shift.reversals), ""]
    index += ["## Figures", ""] + [f"![{caption}]({name})\n" for name, caption in figures]
    if notes:
        index += ["## Not computed here", "", *(f"- {line}" for line in notes), ""]
    return index


REPORT_FILES = "report-files.json"


def drop_stale_outputs(out: Path, written: list[Path]) -> list[str]:
    """Delete what the previous report in ``out`` wrote and this one did not; record this one's files.

    A report without SourceShift or masking runs writes fewer tables than one with them, so a
    reused folder would otherwise show another benchmark's Table S3 next to this one's S1.
    Only files listed in ``REPORT_FILES`` by an earlier report are deleted (never a file nclue
    did not write), and freezes (``frozen*.json``) are kept: each names the inputs it holds,
    and ``nclue reproduce`` checks them. Returns the deleted names.
    """
    record = out / REPORT_FILES
    names = sorted({p.relative_to(out).as_posix() for p in written})
    previous: list[str] = []
    if record.is_file():
        try:
            listed = json.loads(record.read_text(encoding="utf-8")).get("files", [])
            previous = [n for n in listed if isinstance(n, str)]
        except (ValueError, AttributeError):
            previous = []
    stale = [
        n
        for n in previous
        if n not in names and not Path(n).name.startswith("frozen") and "/" not in n and (out / n).is_file()
    ]
    for name in stale:
        (out / name).unlink()
    write_json(record, {"files": names})
    return stale
