"""Independent re-derivation of a release's labels (``docs/construction.md#validation``) and its distribution tables.

Reads only the release files — queries, qrels and corpus through :class:`~nclue.release.Release`,
and ``inventory.jsonl`` — and recomputes every label by brute force (all injective
condition→page maps via :func:`itertools.permutations` over each document's pages, not
the Kuhn matching used by construction), then checks:

* every qrel row's pages equal the inventory's ``P(d, c)`` and its grade is the clue count;
* the union ``⋃_i {d : P(d, c_i) ≠ ∅}`` of each query equals its qrel rows
  (so Σ union sizes = number of qrel rows);
* every gold has ``grade = n``, a valid distinct-page assignment and no single page
  holding all conditions; every other row is partial; zero single-page-solvable golds;
* every query has ≥ 1 gold and ≥ 1 partial.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from nclue.io import iter_jsonl
from nclue.release import Release, read_manifest
from nclue.types import Judgment


@dataclass
class Validation:
    """Outcome of :func:`validate_release`: failures (empty = valid) and summary tables."""

    errors: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    tables: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors


def brute_force_label(page_sets: list[list[int]]) -> str | None:
    """Gold/partial/None by exhaustive search (the reference for property tests)."""
    n = len(page_sets)
    grade = sum(1 for p in page_sets if p)
    if grade == 0:
        return None
    if grade < n:
        return "partial"
    pages = sorted({p for s in page_sets for p in s})
    if any(all(p in s for s in page_sets) for p in pages):
        return "partial"
    for perm in itertools.permutations(pages, n):
        if all(perm[i] in page_sets[i] for i in range(n)):
            return "gold"
    return "partial"


_ORDER = ("1", "2", "3", "3-4", "3-5", "5-8", ">5", ">8", "<=25", "26-50", ">50", "<=30", "31-100", ">100")


def _ordered(counts: Counter[str]) -> dict[str, int]:
    """Buckets in their natural order (numeric labels, then the declared bucket order)."""
    rank = {b: i for i, b in enumerate(_ORDER)}
    return {k: counts[k] for k in sorted(counts, key=lambda b: (rank.get(b, len(rank)), b))}


def _bucket(value: int, edges: tuple[int, ...], labels: tuple[str, ...]) -> str:
    for edge, name in zip(edges, labels):
        if value <= edge:
            return name
    return labels[-1]


def _read_inventory(base: Path) -> tuple[dict[tuple[str, str], list[int]], dict[str, set[str]]]:
    """``({(condition, doc_id): pages}, {condition: documents with a page})`` from ``inventory.jsonl``."""
    inventory: dict[tuple[str, str], list[int]] = {}
    cond_docs: dict[str, set[str]] = defaultdict(set)
    for _, row in iter_jsonl(base / "inventory.jsonl"):
        inventory[(row["condition"], row["doc_id"])] = sorted(row["pages"])
        if row["pages"]:
            cond_docs[row["condition"]].add(row["doc_id"])
    return inventory, cond_docs


def _check_row(
    row: Judgment, conds: list[str], sets: list[list[int]], fail: Callable[[str], None], document_level: bool = False
) -> int:
    """Check one qrel row against the inventory's page sets of its query's conditions (grade,
    evidence pages, label re-derived by brute force); 1 when it is a single-page-solvable gold.

    Document-level labels (``label_unit="document"``) carry no pages and are gold iff ``g = n``."""
    where = f"{row.qid}/{row.doc_id}"
    grade = sum(1 for s in sets if s)
    if row.grade != grade:
        fail(f"{where}: grade {row.grade} but clue count {grade}")
    if document_level:
        if row.pages:
            fail(f"{where}: a document-level label with evidence pages")
        expected = "gold" if grade == len(conds) else ("partial" if grade else None)
        if row.label != expected:
            fail(f"{where}: label {row.label} but re-derived {expected} (document level)")
        return 0
    stored = {c: sorted(p) for c, p in (row.pages or {}).items() if p}
    if stored != {c: s for c, s in zip(conds, sets) if s}:
        fail(f"{where}: evidence pages differ from the inventory")
    expected = brute_force_label(sets)
    if row.label != expected:
        fail(f"{where}: label {row.label} but re-derived {expected}")
    single = row.label == "gold" and grade == len(conds) and any(all(p in s for s in sets) for p in sets[0])
    return int(single)


def _single_page_partial(row: Judgment, sets: list[list[int]]) -> bool:
    """A partial holding every condition on one page (kept by ``--single-page partial``, the J061 case)."""
    return row.label == "partial" and all(sets) and any(all(p in s for s in sets) for p in sets[0])


def validate_release(
    root: str | Path, release: Release | None = None, max_errors: int = 50, label_unit: str | None = None
) -> Validation:
    """Re-derive and check every label of the release at ``root`` (opened as ``release`` if given).

    ``label_unit``: ``page`` or ``document`` (the build's ``--labels``); ``None`` reads it from
    ``MANIFEST.json`` (``page`` when absent)."""
    base = Path(root)
    rel = release if release is not None else Release.open(base, require_qrels=True)
    if label_unit is None:
        manifest = read_manifest(base, required=False)
        label_unit = manifest.get("parameters", {}).get("compose", {}).get("labels", "page")
    document_level = label_unit == "document"
    result = Validation()
    inventory, cond_docs = _read_inventory(base)
    n_pages = {d.doc_id: d.n_pages or 0 for d in rel.corpus}
    queries = {q.qid: q for q in rel.queries}
    qrels: dict[str, dict[str, Judgment]] = defaultdict(dict)
    n_rows = len(rel.judgments)
    for row in rel.judgments:
        qrels[row.qid][row.doc_id] = row

    def fail(message: str) -> None:
        if len(result.errors) < max_errors:
            result.errors.append(message)

    union_total = 0
    single_page_golds = 0
    single_page_partials = 0
    queries_with_single_page_partial = 0
    tables: dict[str, Counter[str]] = defaultdict(Counter)
    cond_use: Counter[str] = Counter()
    families: Counter[tuple[str, ...]] = Counter()
    for qid in sorted(queries):
        conds = list(queries[qid].conditions)
        n = len(conds)
        union = sorted(set().union(*(cond_docs.get(c, set()) for c in conds)))
        union_total += len(union)
        rows = qrels.get(qid, {})
        if set(rows) != set(union):
            fail(f"{qid}: qrels docs differ from the union of condition doc sets ({len(rows)} vs {len(union)})")
        golds = []
        partials = 0
        one_page = 0
        for doc_id in union:
            row = rows.get(doc_id)
            if row is None:
                continue
            sets = [inventory.get((c, doc_id), []) for c in conds]
            single_page_golds += _check_row(row, conds, sets, fail, document_level)
            one_page += _single_page_partial(row, sets)
            if row.label == "gold":
                golds.append(doc_id)
            else:
                partials += 1
        single_page_partials += one_page
        queries_with_single_page_partial += one_page > 0
        if not golds:
            fail(f"{qid}: no gold document")
        if not partials:
            fail(f"{qid}: no natural subset (partial) document")
        tables["n"][str(n)] += 1
        tables["golds per query"][_bucket(len(golds), (1, 2, 5), ("1", "2", "3-5", ">5"))] += 1
        if golds:
            l_min = min(n_pages.get(d, 0) for d in golds)
            tables["L_min"][_bucket(l_min, (30, 100), ("<=30", "31-100", ">100"))] += 1
        tables["|D+|"][_bucket(len(union), (25, 50), ("<=25", "26-50", ">50"))] += 1
        cond_use.update(conds)
        families[tuple(sorted(golds))] += 1
    if single_page_golds:
        fail(f"{single_page_golds} gold rows are single-page solvable")
    if union_total != n_rows:
        fail(f"sum of union sizes {union_total} != number of qrel rows {n_rows}")
    for qid in qrels:
        if qid not in queries:
            fail(f"qrels.jsonl: query {qid} is not in queries.jsonl")
    fam_sizes = Counter(_bucket(v, (1, 2, 5), ("1", "2", "3-5", ">5")) for v in families.values())
    tables["families by size (queries sharing one gold set)"] = fam_sizes
    tables["conditions by reuse (queries per condition)"] = Counter(
        _bucket(v, (1, 2, 4, 8), ("1", "2", "3-4", "5-8", ">8")) for v in cond_use.values()
    )
    result.counts = {
        "queries": len(queries),
        "qrel_rows": n_rows,
        "union_total": union_total,
        "gold_rows": sum(1 for r in rel.judgments if r.label == "gold"),
        "partial_rows": sum(1 for r in rel.judgments if r.label == "partial"),
        "single_page_solvable_golds": single_page_golds,
        "single_page_partials": single_page_partials,
        "queries_with_single_page_partial": queries_with_single_page_partial,
        "families": len(families),
        "conditions_used": len(cond_use),
    }
    result.tables = {k: _ordered(v) for k, v in tables.items()}
    return result
