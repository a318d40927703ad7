"""Paired base–variant contrasts with their uncertainty and sensitivity (``docs/statistics.md``).

:func:`compare_runs` returns a :class:`~nclue.scoring.results.Comparison`; every effect,
interval and bound is in percentage points, p-values are plain probabilities. Declared contrasts (each variant
against the base) are Holm-corrected on the family randomization p of the primary
metric (n-Clue Score). Optional *blocks* group every tried endpoint of one operation
(e.g. min / product / hmean / distinct) for a blockwise max-|T| test; Holm then runs
across blocks (seed, "Sel.+Holm p").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nclue.errors import NclueError
from nclue.io import read_json
from nclue.scoring.benchmark import Benchmark
from nclue.scoring.metrics import GOLD_FIRST, MISS, SUBSET_FIRST, Scores
from nclue.scoring.results import HEADLINE, BlockTest, Comparison, Contrast
from nclue.scoring.summary import metric_matrix
from nclue.stats import (
    bootstrap_ci,
    crossed_bootstrap,
    holm,
    leave_one_doc_out,
    max_t,
    paired_randomization,
    promotion_bound,
    remove_top_degree,
    spearman_matrix,
)
from nclue.types import DEFAULT_SEED

PP = 100.0
DEFAULT_DRAWS = 10000


@dataclass(frozen=True)
class Block:
    """A declared block: every tried endpoint of one operation against one base."""

    name: str
    base: str
    endpoints: tuple[str, ...]
    display: str | None = None


def read_blocks(path: str | Path, default_base: str) -> list[Block]:
    """Read ``{"blocks": [{"name", "endpoints": [...], "base"?, "display"?}, ...]}``."""
    p = Path(path)
    obj = read_json(p, 'expected a blocks file, JSON {"blocks": [...]}', "blocks file")
    items = obj.get("blocks") if isinstance(obj, dict) else None
    if not isinstance(items, list):
        raise NclueError(f'{p}: expected {{"blocks": [{{"name": ..., "endpoints": [run, ...]}}]}}')
    blocks = []
    named: dict[str, int] = {}
    for i, item in enumerate(items):
        ok = isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("endpoints"), list)
        if not ok or not item["endpoints"] or not all(isinstance(e, str) for e in item["endpoints"]):
            raise NclueError(f"{p}: block #{i + 1} needs a 'name' and a non-empty 'endpoints' list of run names")
        if item["name"] in named:
            raise NclueError(
                f"{p}: block #{i + 1} repeats the name {item['name']!r} of block #{named[item['name']]}; a repeated "
                "block would be counted twice in Holm's correction — give each block its own name"
            )
        named[item["name"]] = i + 1
        blocks.append(
            Block(item["name"], item.get("base", default_base), tuple(item["endpoints"]), item.get("display"))
        )
    return blocks


def _mpg(outcome: np.ndarray) -> tuple[float, float, float]:
    m, p, g = (PP * float((outcome == o).mean()) for o in (MISS, SUBSET_FIRST, GOLD_FIRST))
    return m, p, g


def _pair(lo_hi: np.ndarray | tuple[float, float]) -> tuple[float, float]:
    return PP * float(lo_hi[0]), PP * float(lo_hi[1])


def compare_runs(
    bench: Benchmark,
    scores: Scores,
    base: str,
    variants: Sequence[str],
    blocks: Sequence[Block] = (),
    n_boot: int = 1000,
    n_draws: int = DEFAULT_DRAWS,
    seed: int = DEFAULT_SEED,
    sensitivity: bool = True,
) -> Comparison:
    """Every paired contrast ``variant − base`` with CIs, tests and sensitivity analyses.

    Undefined values (e.g. a leave-one-doc range when every query shares one document)
    are ``None`` in the JSON form.
    """
    for name in (base, *variants, *(b.base for b in blocks), *(e for b in blocks for e in b.endpoints)):
        if name not in scores.names:
            raise NclueError(
                f"run {name!r} is not loaded; give its file on the command line (loaded: {', '.join(scores.names)})"
            )
    b = scores.index(base)
    rows = [scores.index(v) for v in variants]
    primary = metric_matrix(scores, "n_clue_score")
    diffs = {m: metric_matrix(scores, m)[rows] - metric_matrix(scores, m)[b] for m in HEADLINE}
    stacked = np.concatenate([diffs[m] for m in HEADLINE])
    ci = bootstrap_ci(stacked, bench.family, n_boot, seed).reshape(len(HEADLINE), len(rows), 2)
    p_query = paired_randomization(diffs["n_clue_score"], None, n_draws, seed)
    p_family = paired_randomization(diffs["n_clue_score"], bench.family, n_draws, seed)
    p_holm = holm(p_family) if len(rows) else np.array([])
    sens = shared_document_sensitivity(diffs["n_clue_score"], bench, n_boot, seed) if sensitivity and rows else []
    contrasts: dict[str, Contrast] = {}
    for i, (name, r) in enumerate(zip(variants, rows)):
        common = (scores.outcome[b] != MISS) & (scores.outcome[r] != MISS)
        contrasts[name] = Contrast(
            variant=name,
            base=base,
            delta={m: PP * float(diffs[m][i].mean()) for m in HEADLINE},
            ci={m: _pair(ci[j, i]) for j, m in enumerate(HEADLINE)},
            p_query=float(p_query[i]),
            p_family=float(p_family[i]),
            p_holm=float(p_holm[i]),
            common_n=int(common.sum()),
            delta_d=PP * float((primary[r, common] - primary[b, common]).mean()) if common.any() else None,
            base_mpg=_mpg(scores.outcome[b]),
            variant_mpg=_mpg(scores.outcome[r]),
            promotion_bound={
                str(k): PP
                * promotion_bound(primary[b] > 0, scores.first_judged[b], primary[r] > 0, scores.first_judged[r], k)
                for k in (1, 2, 3)
            },
            **(sens[i] if sens else {}),
        )
    names = [base, *variants]
    spearman = None
    if len(names) >= 2:
        idx = [scores.index(n) for n in names]
        spearman = spearman_matrix({m: metric_matrix(scores, m)[idx].mean(axis=1) for m in HEADLINE})
    return Comparison(
        base=base,
        k=scores.k,
        seed=seed,
        bootstrap=n_boot,
        draws=n_draws,
        contrasts=contrasts,
        blocks=_blocks(scores, bench, blocks, n_draws, seed) if blocks else {},
        spearman=spearman,
        warnings=bench.warnings,
    )


def shared_document_sensitivity(diffs: np.ndarray, bench: Benchmark, n_boot: int, seed: int) -> list[dict]:
    """Shared-document checks of each per-query difference row (``(n_contrasts, n_queries)``, any metric),
    in pp: the crossed query × gold-document (product weights) and query × judged-document (membership
    weights) bootstrap intervals (``docs/statistics.md#crossed-query-document-bootstrap``; weights drawn
    once for every row), the leave-one-document ranges and the mean after removing the 20 highest-degree
    documents with the queries it keeps."""
    gold, judged = bench.incidence("gold"), bench.incidence("judged")
    crossed_gold = crossed_bootstrap(diffs, gold, "product", n_boot, seed)
    crossed_judged = crossed_bootstrap(diffs, judged, "membership", n_boot, seed)
    out = []
    for d, cg, cj in zip(diffs, crossed_gold, crossed_judged):
        top_gold, n_gold = remove_top_degree(d, gold, bench.doc_ids, 20)
        top_judged, n_judged = remove_top_degree(d, judged, bench.doc_ids, 20)
        out.append(
            {
                "crossed_gold": _pair((cg.lo, cg.hi)),
                "crossed_gold_valid_replicates": cg.valid_replicates,
                "crossed_judged": _pair((cj.lo, cj.hi)),
                "leave_one_gold_doc": _pair(leave_one_doc_out(d, gold)),
                "leave_one_judged_doc": _pair(leave_one_doc_out(d, judged)),
                "remove_top20_gold": {"delta": PP * top_gold, "queries": n_gold},
                "remove_top20_judged": {"delta": PP * top_judged, "queries": n_judged},
            }
        )
    return out


def _blocks(scores: Scores, bench: Benchmark, blocks: Sequence[Block], n_draws: int, seed: int) -> dict[str, BlockTest]:
    primary = metric_matrix(scores, "n_clue_score")
    found: list[tuple[Block, str, dict, float]] = []
    for block in blocks:
        b = scores.index(block.base)
        rows = [scores.index(e) for e in block.endpoints]
        diffs = primary[rows] - primary[b]
        t, p = max_t(diffs, bench.family, n_draws, seed)
        observed = diffs.mean(axis=1)
        display = block.display or block.endpoints[int(np.argmax(observed))]
        if display not in block.endpoints:
            raise NclueError(
                f"block {block.name!r}: display {display!r} is not one of its endpoints {list(block.endpoints)}"
            )
        endpoints = {
            e: {"delta": PP * float(observed[j]), "t": float(t[j]), "p_max_t": float(p[j])}
            for j, e in enumerate(block.endpoints)
        }
        found.append((block, display, endpoints, float(p[block.endpoints.index(display)])))
    adjusted = holm([p for *_, p in found])
    return {
        block.name: BlockTest(block.name, block.base, display, endpoints, p_block, float(adj))
        for (block, display, endpoints, p_block), adj in zip(found, adjusted)
    }
