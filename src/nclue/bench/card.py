"""The dataset card (``README.md``) of a release: counts, distribution tables and examples."""

from __future__ import annotations

from typing import Any


def _table(title: str, counts: dict[str, int]) -> list[str]:
    total = sum(counts.values()) or 1
    unit = "families" if title.startswith("families") else "conditions" if title.startswith("conditions") else "queries"
    lines = [f"**{title}**", "", f"| value | {unit} | share |", "|---|---:|---:|"]
    lines += [f"| {k} | {v} | {100 * v / total:.1f}% |" for k, v in counts.items()]
    return lines + [""]


def render_card(manifest: dict[str, Any], tables: dict[str, dict[str, int]], examples: list[dict[str, Any]]) -> str:
    """Markdown dataset card from the manifest, the validation tables and example queries."""
    counts = manifest["counts"]
    params = manifest["parameters"]
    lines = [
        f"# {manifest['name']} — an n-Clue benchmark",
        "",
        "Conjunctive cross-page retrieval: each query lists 2–3 conditions; a **gold** document",
        "establishes every condition on distinct pages (and no single page holds all of them); a",
        "**partial** document establishes some. Labels are derived from a page-fact inventory mined",
        f"from the collection by the `{manifest['judge']}` judge and re-derived independently at build time.",
        "",
        "## Counts",
        "",
        f"- queries: {counts['queries']} (seed {manifest['seed']}, requested {params['compose']['n_queries']})",
        f"- qrel rows: {counts['qrel_rows']} = Σ union sizes {counts['union_total']}"
        f" ({counts['gold_rows']} gold, {counts['partial_rows']} partial)",
        f"- single-page-solvable golds: {counts['single_page_solvable_golds']}",
        f"- documents in corpus: {counts['documents']}; conditions mined: {counts['conditions_mined']};"
        f" conditions used: {counts['conditions_used']}; families: {counts['families']}",
        f"- candidate conjunctions: {counts['candidates']}; selection drops: "
        + (", ".join(f"{k}: {v}" for k, v in manifest["drops"].items()) or "none"),
        "",
        "## Establishes rule",
        "",
        "A page establishes a condition when, outside running headers/footers and table-of-contents",
        "or index lines, a heading contains one of its surface forms, or (multi-word conditions only)",
        "its surface forms occur at least twice, or a defining sentence introduces it (`X is a …`,",
        "`called X`). Aliases group case, hyphenation and inflection variants and corpus-paired",
        "acronyms.",
        "",
        "## Distributions",
        "",
    ]
    for title, values in tables.items():
        lines += _table(title, values)
    lines += [
        "## Controls (privileged; never ranked with fair systems)",
        "",
        "| run | n-Clue@10 | Gold Hit@10 |",
        "|---|---:|---:|",
    ]
    for name, score in manifest["controls"].items():
        lines.append(f"| {name} | {score['nclue@10']:.1f} | {score['gold_hit@10']:.1f} |")
    lines += ["", "## Ten example queries", ""]
    lines += ["| qid | query | gold (evidence pages) | subset (grade; evidence pages) |", "|---|---|---|---|"]
    for ex in examples:
        gold = ex["gold"]
        sub = ex["subset"]
        gold_pages = "; ".join(f"{c}: p.{','.join(map(str, p))}" for c, p in gold["pages"].items())
        sub_pages = "; ".join(f"{c}: p.{','.join(map(str, p))}" for c, p in sub["pages"].items())
        lines.append(
            f"| {ex['qid']} | {ex['clean_v2']} | `{gold['doc_id']}` ({gold_pages}) | `{sub['doc_id']}` (g={sub['grade']}; {sub_pages}) |"
        )
    lines += [
        "",
        "## Files",
        "",
        "`corpus.jsonl`, `queries.jsonl` (with raw / clean_v2 / natural forms), `qrels.jsonl` (grade,",
        "label, evidence pages), `qrels/test.tsv` (BEIR), `inventory.jsonl`, `controls/*.jsonl`,",
        "`MANIFEST.json`, `SHA256SUMS`. Page text and PDFs are not redistributed; corpus rows carry",
        "the source path and SHA-256. Check a copy with `nclue bench verify DIR`.",
        "",
    ]
    return "\n".join(lines)
