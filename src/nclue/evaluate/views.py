"""Tables for scorecards and contrasts, built from the JSON-ready dicts of the scorer.

The same :class:`~nclue.report.tables.Table` renders to the terminal, Markdown or LaTeX
(and is reused by the paper-style report). All numbers are percentage points except
p-values.
"""

from __future__ import annotations

import math
from typing import Any

from nclue.report.tables import Table, fmt_ci, fmt_p, fmt_pp

METRIC_LABELS = {
    "n_clue_score": "n-Clue Score",
    "gold_hit": "Gold Hit",
    "gold_ndcg": "Gold-NDCG",
    "graded_ndcg": "Graded NDCG",
    "gold_support": "Gold+Support",
}


def json_safe(obj: Any) -> Any:
    """Replace NaN/inf floats by ``None`` recursively (files are written with ``allow_nan=False``)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_safe(v) for v in obj]
    return obj


def scorecard_table(card: dict) -> Table:
    """Ranked scorecard: headline metrics, their CIs, and M/P/G (sorted by n-Clue Score, then name)."""
    runs = card["runs"]
    with_ci = any("ci" in row for row in runs.values())
    page = any("gold_support" in row for row in runs.values())
    headers = ["Run", "n-Clue Score"]
    headers += ["95% CI"] if with_ci else []
    headers += ["Gold Hit", "Gold-NDCG", "Graded NDCG", "M/P/G"]
    headers += ["Gold+Support"] if page else []
    rows = []
    for name, row in sorted(runs.items(), key=lambda kv: (-kv[1]["n_clue_score"], kv[0])):
        cells = [name, fmt_pp(row["n_clue_score"])]
        cells += [fmt_ci(row["ci"]["n_clue_score"])] if with_ci else []
        cells += [
            fmt_pp(row["gold_hit"]),
            fmt_pp(row["gold_ndcg"]),
            fmt_pp(row["graded_ndcg"]),
            "/".join(fmt_pp(row[m]) for m in ("miss", "subset_first", "gold_first")),
        ]
        cells += [fmt_pp(row.get("gold_support"))] if page else []
        rows.append(tuple(cells))
    ci_note = f"{card['ci']} bootstrap" if with_ci else "no CI"
    caption = f"Scorecard at k={card['k']} over {card['queries']} queries ({card['families']} families; {ci_note}); percentage points."
    return Table(tuple(headers), tuple(rows), caption=caption)


def strata_table(card: dict, metric_pair: tuple[str, str] = ("n_clue_score", "gold_hit")) -> Table:
    """Task-factor strata: each cell is ``n-Clue Score / Gold Hit`` (seed Table S1j)."""
    strata = card["strata"]
    columns = [(factor, name, cell) for factor, cells in strata.items() for name, cell in cells.items()]
    headers = ["Run"] + [
        f"{name if factor == 'n' else factor + ' ' + name} ({cell['queries']})" for factor, name, cell in columns
    ]
    runs = sorted(card["runs"], key=lambda n: (-card["runs"][n]["n_clue_score"], n))
    rows = []
    for run in runs:
        cells = [run]
        for _, _, cell in columns:
            values = cell["runs"][run]
            cells.append("/".join(fmt_pp(values[m]) for m in metric_pair))
        rows.append(tuple(cells))
    return Table(
        tuple(headers), tuple(rows), caption="Task-factor strata: n-Clue Score / Gold Hit (pp); slices overlap."
    )


def contrast_table(result: dict) -> Table:
    """Primary-metric inference for each contrast (seed Table S1e)."""
    headers = ("Contrast", "ΔScore", "Family 95% CI", "ΔHit", "ΔNDCG", "p (query)", "p (family)", "Holm p")
    rows = []
    for name, c in result["contrasts"].items():
        rows.append(
            (
                f"{name} − {result['base']}",
                fmt_pp(c["delta"]["n_clue_score"], sign=True),
                fmt_ci(c["ci"]["n_clue_score"], 2, sign=True),
                fmt_pp(c["delta"]["gold_hit"], sign=True),
                fmt_pp(c["delta"]["gold_ndcg"], sign=True),
                fmt_p(c["p_query"]),
                fmt_p(c["p_family"]),
                fmt_p(c["p_holm"]),
            )
        )
    return Table(
        headers,
        tuple(rows),
        caption=f"Paired contrasts against {result['base']} (pp; {result['draws']} sign-flip draws).",
    )


def support_table(result: dict) -> Table:
    """Common-support ordering and unconditional outcomes (seed Table S1f)."""
    headers = ("Contrast", "Common n", "ΔD", "Base M/P/G", "Variant M/P/G")
    rows = []
    for name, c in result["contrasts"].items():
        rows.append(
            (
                name,
                str(c["common_n"]),
                fmt_pp(c["delta_d"], sign=True),
                "/".join(fmt_pp(v) for v in c["base_mpg"]),
                "/".join(fmt_pp(v) for v in c["variant_mpg"]),
            )
        )
    return Table(headers, tuple(rows), caption="Common-support ΔD and unconditional Miss/Subset-first/Gold-first (pp).")


def sensitivity_table(result: dict) -> Table:
    """Shared-document sensitivity and promotion bounds of the n-Clue contrast (seed Tables S1g–S1i)."""
    headers = (
        "Contrast",
        "Crossed gold CI",
        "Crossed judged CI",
        "Leave-one-gold-doc",
        "Remove top-20 gold (q.)",
        "Promotion ≤1",
        "≤2",
        "≤3",
    )
    rows = []
    for name, c in result["contrasts"].items():
        if "crossed_gold" not in c:
            continue
        top = c["remove_top20_gold"]
        rows.append(
            (
                name,
                fmt_ci(c["crossed_gold"], 2, sign=True),
                fmt_ci(c["crossed_judged"], 2, sign=True),
                fmt_ci(c["leave_one_gold_doc"], 2, sign=True),
                f"{fmt_pp(top['delta'], sign=True)} ({top['queries']})",
                *(fmt_pp(c["promotion_bound"][k], sign=True) for k in ("1", "2", "3")),
            )
        )
    return Table(
        headers, tuple(rows), caption="Shared-document sensitivity and adversarial promotion bounds of ΔScore (pp)."
    )


def blocks_table(result: dict) -> Table:
    """Blockwise max-|T| with Holm across blocks (seed "Sel.+Holm p")."""
    headers = ("Block", "Base", "Displayed", "ΔScore", "max-|T| p", "Holm p", "Endpoints")
    rows = []
    for name, blk in result.get("blocks", {}).items():
        shown = blk["endpoints"][blk["display"]]
        rows.append(
            (
                name,
                blk["base"],
                blk["display"],
                fmt_pp(shown["delta"], sign=True),
                fmt_p(blk["p_block"]),
                fmt_p(blk["p_holm"]),
                str(len(blk["endpoints"])),
            )
        )
    return Table(
        headers,
        tuple(rows),
        caption="Blockwise max-|T| family sign-flip tests over every tried endpoint; Holm across blocks.",
    )
