"""The paper-style report of a matrix run: the seed's Tables S1, S1d, S1e, S1f, S1g/h, S1j, S2b.

:func:`compute_report` turns a benchmark and a run directory into one JSON-ready dict of
every table's numbers (percentage points); :func:`write_report` renders it as Markdown,
LaTeX, JSON and plots with an ``index.md``, and freezes the numbers plus the SHA-256 of
every input into ``RUN_DIR/frozen.json`` for ``nclue reproduce --verify``.

Tables (seed numbering):

* **S1** ranked scorecard of fair runs on the default query form: n-Clue Score with its
  exact-family 95% bootstrap CI, Gold Hit, Gold-NDCG (equal scores ordered by run name);
* **S1d** privileged controls and baselines from ``BENCH/controls/`` — never ranked;
* **S2b** n-Clue Score of each system on every query form it ran on;
* **S1e** displayed contrasts: each block's best endpoint (by n-Clue Score) against its base,
  Δ with family CI, ΔHit, ΔNDCG and the selection-aware p: blockwise max-|T| over every tried
  endpoint, then Holm across the blocks;
* **S1f** common support: ΔD and the unconditional Miss / subset-first / gold-first shares;
* **S1g/S1h** shared-document sensitivity and adversarial promotion bounds of each contrast;
* **S1j** task-factor strata (n, L_min, |D+|) as n-Clue Score / Gold Hit.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from nclue.errors import NclueError
from nclue.io import atomic_write_text, sha256_file, write_json
from nclue.matrix.runner import MANIFEST

FROZEN = "frozen.json"
CONTROL_DIR = "controls"


def _manifest(run_dir: Path) -> dict:
    path = run_dir / MANIFEST
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    runs = sorted(p.stem for p in run_dir.glob("*.jsonl"))
    if not runs:
        raise NclueError(f"{run_dir}: no runs (*.jsonl) and no {MANIFEST}; produce runs with `nclue run`")
    return {"spec": {"form": "clean_v2", "k": 10}, "contrasts": [],
            "runs": {r: {"system": r.split("@")[0], "form": r.split("@")[1] if "@" in r else "clean_v2",
                         "block": "standalone", "category": "RET"} for r in runs}}


def input_hashes(bench_dir: Path, run_dir: Path, run_names: list[str], control_paths: list[Path]) -> dict[str, str]:
    """SHA-256 of every file the report reads, keyed by a stable relative name."""
    out = {}
    for name in ("queries.jsonl", "qrels.jsonl", "corpus.jsonl"):
        if (bench_dir / name).is_file():
            out[f"bench/{name}"] = sha256_file(bench_dir / name)
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
    seed: int = 11,
) -> dict:
    """Every table's numbers from the frozen runs and qrels (deterministic for a seed)."""
    from nclue.evaluate import Block, compare_runs, load_benchmark, load_run, score_runs, scorecard

    bench_path, runs_path = Path(bench_dir), Path(run_dir)
    manifest = _manifest(runs_path)
    k = int(manifest["spec"].get("k", 10))
    default_form = manifest["spec"].get("form", "clean_v2")
    meta = manifest["runs"]
    names = list(meta)
    missing = [n for n in names if not (runs_path / f"{n}.jsonl").is_file()]
    if missing:
        raise NclueError(f"{runs_path}: run files missing for {', '.join(missing)}; rerun `nclue run --matrix`")
    control_paths = sorted((bench_path / CONTROL_DIR).glob("*.jsonl"))
    bench = load_benchmark(bench_path)
    runs = [load_run(runs_path / f"{n}.jsonl", bench, name=n) for n in names]
    controls = [load_run(p, bench) for p in control_paths]
    scores = score_runs(bench, runs + controls, k=k)
    card = scorecard(bench, scores, ci="family", n_boot=n_boot, seed=seed, with_strata=True)
    control_names = [c.name for c in controls]

    fair = [n for n in names if meta[n].get("form", default_form) == default_form]
    ranked = sorted(fair, key=lambda n: -card["runs"][n]["n_clue_score"])
    s1 = {
        n: {
            "rank": i,
            "category": meta[n].get("category", "RET"),
            **{m: card["runs"][n].get(m) for m in _S1_METRICS},
            "ci": card["runs"][n]["ci"]["n_clue_score"],
        }
        for i, n in enumerate(ranked, start=1)
    }
    s1d = {n: {m: card["runs"][n].get(m) for m in ("n_clue_score", "gold_hit", "gold_ndcg")} for n in control_names}

    forms_by_system: dict[str, dict[str, float]] = {}
    for n in names:
        forms_by_system.setdefault(meta[n]["system"], {})[meta[n].get("form", default_form)] = card["runs"][n]["n_clue_score"]
    s2b = {s: v for s, v in forms_by_system.items() if len(v) > 1}

    contrasts = manifest.get("contrasts", [])
    blocks = [Block(c["name"], c["base"], tuple(c["variants"])) for c in contrasts]
    s1e: dict[str, dict] = {}
    if blocks:
        block_result = compare_runs(bench, scores, blocks[0].base, [], blocks=blocks, n_boot=n_boot,
                                    n_draws=n_draws, seed=seed, sensitivity=False)["blocks"]
        for block in blocks:
            shown = block_result[block.name]["display"]
            pair = compare_runs(bench, scores, block.base, [shown], n_boot=n_boot, n_draws=n_draws, seed=seed)
            entry = pair["contrasts"][shown]
            s1e[block.name] = {
                "base": block.base,
                "display": shown,
                "tried": list(block.endpoints),
                "delta": entry["delta"],
                "ci": entry["ci"]["n_clue_score"],
                "p_block": block_result[block.name]["p_block"],
                "p_holm": block_result[block.name]["p_holm"],
                "common_n": entry["common_n"],
                "delta_d": entry["delta_d"],
                "base_mpg": entry["base_mpg"],
                "variant_mpg": entry["variant_mpg"],
                "crossed_judged": entry.get("crossed_judged"),
                "leave_one_gold_doc": entry.get("leave_one_gold_doc"),
                "remove_top20_judged": entry.get("remove_top20_judged"),
                "promotion_bound": entry["promotion_bound"],
            }
    page_aware = {
        n: {m: card["runs"][n].get(m) for m in ("gold_support", "page_coverage_condition", "page_coverage_all")}
        for n in ranked
        if card["runs"][n].get("gold_support") is not None
    }
    strata = {
        f"{factor}:{cell}": {
            "queries": data["queries"],
            "runs": {n: data["runs"][n] for n in ranked},
        }
        for factor, cells in card["strata"].items()
        for cell, data in cells.items()
    }
    return {
        "k": k,
        "queries": card["queries"],
        "families": card["families"],
        "seed": seed,
        "bootstrap": n_boot,
        "draws": n_draws,
        "default_form": default_form,
        "inputs": input_hashes(bench_path, runs_path, names, control_paths),
        "scorecard": s1,
        "controls": s1d,
        "query_forms": s2b,
        "contrasts": s1e,
        "page_support": page_aware,
        "strata": strata,
        "spearman": card.get("spearman"),
    }


_S1_METRICS = ("n_clue_score", "gold_hit", "gold_ndcg", "graded_ndcg", "miss", "subset_first", "gold_first")


def write_report(data: dict, out_dir: str | os.PathLike[str], freeze_dir: str | os.PathLike[str] | None) -> list[Path]:
    """Render ``data`` into ``out_dir`` (md, tex, json, png, pdf + index.md); freeze it in ``freeze_dir``."""
    from nclue.report import plots
    from nclue.report.paper_tables import all_tables
    from nclue.report.tables import render

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    index = [
        "# nclue report",
        "",
        f"{data['queries']} queries in {data['families']} exact gold families; metrics at k = {data['k']}; "
        f"{data['bootstrap']} family-bootstrap replicates, {data['draws']} randomization draws, seed {data['seed']}.",
        "",
    ]
    for key, title, table in all_tables(data):
        for fmt, ext in (("markdown", "md"), ("latex", "tex")):
            path = out / f"{key}.{ext}"
            atomic_write_text(path, render(table, fmt))
            written.append(path)
        index += [f"## {title}", "", render(table, "markdown").rstrip(), "",
                  f"[Markdown]({key}.md) · [LaTeX]({key}.tex)", ""]
    written += plots.scorecard_plot(
        {n: {"n_clue_score": v["n_clue_score"], "ci": {"n_clue_score": v["ci"]}} for n, v in data["scorecard"].items()},
        out / "scorecard",
    )
    index += ["## Plots", "", "![scorecard](scorecard.png)", ""]
    if data["contrasts"]:
        written += plots.delta_plane_plot(
            {name: {"delta": c["delta"], "ci": {"n_clue_score": c["ci"]}} for name, c in data["contrasts"].items()},
            out / "delta_plane",
        )
        index += ["![delta plane](delta_plane.png)", ""]
    write_json(out / "report.json", data)
    written.append(out / "report.json")
    atomic_write_text(out / "index.md", "\n".join(index) + "\n")
    written.append(out / "index.md")
    if freeze_dir is not None:
        write_json(Path(freeze_dir) / FROZEN, data)
    return written
