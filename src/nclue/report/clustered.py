"""Clustered views of the n-Clue contrasts: the seed's Table S1g columns and Table S1i.

* **S1g** (every displayed contrast): the observed ΔScore, the document macro, the crossed
  all-judged interval, the leave-one-judged-document range and the one-query-per-document
  interval (``docs/report.md#clustered-uncertainty``; :mod:`nclue.stats.clustered`,
  :mod:`nclue.stats.sensitivity`). Document macro and one-query-per-document use gold
  memberships: a query belongs to the documents that answer it.
* **S1i** (one headline contrast, one column per benchmark): queries and distinct gold
  documents, connected components of the query–gold-document graph and of the all-judged
  graph (count and largest), the connected-component bootstrap interval, the crossed
  intervals, the leave-one-document ranges and the removal of the 20 highest-degree
  documents — of the gold-only NDCG@10 gap by default, as in the seed (:data:`S1I_METRIC`).

Every value is in percentage points except counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from nclue.errors import NclueError
from nclue.io import json_safe
from nclue.scoring import Benchmark, Contrast, Scores, metric_matrix
from nclue.scoring.compare import shared_document_sensitivity
from nclue.stats import (
    component_bootstrap_ci,
    component_summary,
    document_macro,
    one_query_per_doc_ci,
)
from nclue.tables import METRIC_LABELS, Table, fmt_ci, fmt_pp

PP = 100.0


@dataclass(frozen=True)
class ClusteredRow:
    """The S1g columns of one contrast that :class:`~nclue.scoring.results.Contrast` does not carry."""

    document_macro: float | None
    one_query_per_doc: tuple[float, float] | None

    def to_json(self) -> dict:
        return json_safe({"document_macro": self.document_macro, "one_query_per_doc": self.one_query_per_doc})


def _pair(lo_hi: tuple[float, float]) -> tuple[float, float] | None:
    lo, hi = lo_hi
    return None if np.isnan(lo) else (PP * lo, PP * hi)


def clustered_rows(
    bench: Benchmark, scores: Scores, contrasts: Mapping[str, Contrast], n_boot: int, seed: int
) -> dict[str, ClusteredRow]:
    """Document macro and one-query-per-document interval of each contrast's per-query n-Clue difference."""
    primary = metric_matrix(scores, "n_clue_score")
    gold = bench.incidence("gold")
    out = {}
    for name, c in contrasts.items():
        diff = primary[scores.index(c.variant)] - primary[scores.index(c.base)]
        macro = document_macro(diff, gold)
        out[name] = ClusteredRow(
            document_macro=None if np.isnan(macro) else PP * macro,
            one_query_per_doc=_pair(one_query_per_doc_ci(diff, gold, n_boot, seed)),
        )
    return out


def clustered_table(contrasts: Sequence[Contrast], rows: Mapping[str, ClusteredRow], names: Sequence[str]) -> Table:
    """Table S1g in the seed's layout (pp)."""
    body = []
    for name, c in zip(names, contrasts):
        row = rows[name]
        body.append(
            (
                c.name,
                fmt_pp(c.delta["n_clue_score"], sign=True),
                fmt_pp(row.document_macro, sign=True),
                fmt_ci(c.crossed_judged, 2, sign=True),
                fmt_ci(c.leave_one_judged_doc, 2, sign=True),
                fmt_ci(row.one_query_per_doc, 2, sign=True),
            )
        )
    return Table(
        (
            "Contrast",
            "Observed",
            "Document macro",
            "Crossed all-judged 95% CI",
            "Leave-one-doc range",
            "One-query/doc 95% CI",
        ),
        tuple(body),
        "lrrccc",
        "Shared-document sensitivity of ΔScore (pp): every gold document weighted once (macro), the "
        "crossed query × document bootstrap over all judged memberships, the leave-one-judged-document range and "
        "the one-query-per-document bootstrap. None asserts independent query sampling.",
        number="S1g",
    )


S1I_METRIC = "gold_ndcg"
"""The metric of Table S1i: the seed's shared-document analysis is of the gold-only NDCG@10 gap
(its "Observed fusion−BM25 gap +.1718"); ``metric=`` chooses another per-query metric."""


@dataclass(frozen=True)
class ComponentColumn:
    """One benchmark's column of Table S1i for the contrast ``variant − base`` on ``metric`` (pp)."""

    benchmark: str
    base: str
    variant: str
    metric: str
    queries: int
    gold_documents: int
    gold_components: int
    gold_largest: int
    judged_components: int
    judged_largest: int
    observed: float
    component_ci: tuple[float, float] | None
    crossed_gold: tuple[float, float] | None
    leave_one_gold_doc: tuple[float, float] | None
    remove_top20_gold: Mapping[str, float]
    judged_component_ci: tuple[float, float] | None
    crossed_judged: tuple[float, float] | None
    leave_one_judged_doc: tuple[float, float] | None
    remove_top20_judged: Mapping[str, float]

    def to_json(self) -> dict:
        return json_safe({k: getattr(self, k) for k in self.__dataclass_fields__})


def component_column(
    label: str,
    bench: Benchmark,
    scores: Scores,
    base: str,
    variant: str,
    *,
    n_boot: int,
    seed: int,
    metric: str = S1I_METRIC,
) -> ComponentColumn:
    """Table S1i's statistics of the per-query ``metric`` difference ``variant − base`` on one benchmark:
    the observed mean, the connected-component bootstrap and the shared-document sensitivity
    (:func:`nclue.scoring.compare.shared_document_sensitivity`) over gold and over all judged documents."""
    for name in (base, variant):
        if name not in scores.names:
            raise NclueError(f"Table S1i: run {name!r} is not loaded (loaded: {', '.join(scores.names)})")
    values = metric_matrix(scores, metric)
    diff = values[scores.index(variant)] - values[scores.index(base)]
    sens = shared_document_sensitivity(diff[None, :], bench, n_boot, seed)[0]
    gold, judged = bench.incidence("gold"), bench.incidence("judged")
    g_comp, g_large = component_summary(gold)
    j_comp, j_large = component_summary(judged)
    return ComponentColumn(
        benchmark=label,
        base=base,
        variant=variant,
        metric=metric,
        queries=bench.n_queries,
        gold_documents=int((np.diff(gold.tocsr().indptr) > 0).sum()),
        gold_components=g_comp,
        gold_largest=g_large,
        judged_components=j_comp,
        judged_largest=j_large,
        observed=PP * float(diff.mean()),
        component_ci=_pair(component_bootstrap_ci(diff, gold, n_boot, seed)) if g_comp >= 2 else None,
        crossed_gold=_defined(sens["crossed_gold"]),
        leave_one_gold_doc=_defined(sens["leave_one_gold_doc"]),
        remove_top20_gold=sens["remove_top20_gold"],
        judged_component_ci=_pair(component_bootstrap_ci(diff, judged, n_boot, seed)) if j_comp >= 2 else None,
        crossed_judged=_defined(sens["crossed_judged"]),
        leave_one_judged_doc=_defined(sens["leave_one_judged_doc"]),
        remove_top20_judged=sens["remove_top20_judged"],
    )


def _defined(lo_hi: tuple[float, float]) -> tuple[float, float] | None:
    """``lo_hi`` (already pp), or ``None`` when the statistic is undefined (NaN)."""
    return None if np.isnan(lo_hi[0]) else lo_hi


def components_table(columns: Sequence[ComponentColumn]) -> Table:
    """Table S1i: one column per benchmark (pp, counts)."""

    def removed(value: Mapping[str, float]) -> str:
        return f"{fmt_pp(value.get('delta'), sign=True)} ({int(value.get('queries', 0))} q.)" if value else "–"

    lines = (
        ("Queries / distinct gold docs", lambda c: f"{c.queries:,} / {c.gold_documents:,}"),
        ("Connected components (largest)", lambda c: f"{c.gold_components} ({c.gold_largest:,})"),
        ("Observed gap", lambda c: fmt_pp(c.observed, 2, sign=True)),
        ("Component bootstrap 95% CI", lambda c: fmt_ci(c.component_ci, 2, sign=True)),
        ("Crossed query/doc 95% interval", lambda c: fmt_ci(c.crossed_gold, 2, sign=True)),
        ("Leave-one-gold-doc range", lambda c: fmt_ci(c.leave_one_gold_doc, 2, sign=True)),
        ("Remove 20 highest-degree docs", lambda c: removed(c.remove_top20_gold)),
        ("All-judged components (largest)", lambda c: f"{c.judged_components} ({c.judged_largest:,})"),
        ("All-judged component bootstrap 95% CI", lambda c: fmt_ci(c.judged_component_ci, 2, sign=True)),
        ("All-judged crossed 95% interval", lambda c: fmt_ci(c.crossed_judged, 2, sign=True)),
        ("All-judged leave-one-doc range", lambda c: fmt_ci(c.leave_one_judged_doc, 2, sign=True)),
        ("Remove 20 highest-degree judged docs", lambda c: removed(c.remove_top20_judged)),
    )
    first = columns[0]
    return Table(
        ("Shared-document sensitivity", *(c.benchmark for c in columns)),
        tuple((label, *(cell(c) for c in columns)) for label, cell in lines),
        "l" + "r" * len(columns),
        f"Shared-document dependence of {first.variant} − {first.base} ({METRIC_LABELS.get(first.metric, first.metric)}, "
        "pp). Components "
        "link queries that share a gold (or any judged) document; the component bootstrap resamples whole "
        "components (no interval from a single component). Stress models, not uniquely correct sampling distributions.",
        number="S1i",
    )
