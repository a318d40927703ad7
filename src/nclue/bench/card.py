"""The dataset card (``README.md``) of a release: counts, distribution tables and examples."""

from __future__ import annotations

from typing import Any

from nclue.bench.forms_qa import coverage_lines


def _table(title: str, counts: dict[str, int]) -> list[str]:
    total = sum(counts.values()) or 1
    unit = "families" if title.startswith("families") else "conditions" if title.startswith("conditions") else "queries"
    lines = [f"**{title}**", "", f"| value | {unit} | share |", "|---|---:|---:|"]
    lines += [f"| {k} | {v} | {100 * v / total:.1f}% |" for k, v in counts.items()]
    return lines + [""]


def _gate_lines(gate: dict[str, Any] | None) -> list[str]:
    """The "Sources and extraction gate" section (``docs/construction.md#extraction-gate``)."""
    if not gate:
        return []
    lines = [
        "## Sources and extraction gate",
        "",
        f"A source enters the release only if at least {100 * gate['threshold']:.0f}% of its pages have "
        f"≥ {gate['min_chars']} non-space characters (a file that failed to ingest counts as unusable pages).",
        "",
        "| source | documents | failed files | pages | usable share | gate | in release | documents in release "
        "| queries (gold source) |",
        "|---|---:|---:|---:|---:|---|---|---:|---:|",
    ]
    for row in gate["sources"]:
        lines.append(
            f"| {row['source']} | {row['documents']} | {row['failed_files']} | {row['pages'] + row['failed_pages']} "
            f"| {100 * row['usable_share']:.2f}% | {'pass' if row['passed'] else 'FAIL'} "
            f"| {'yes' if row['included'] else 'no'} ({row['reason']}) | {row.get('documents_in_release', 0)} "
            f"| {row.get('queries', 0)} |"
        )
    lines.append("")
    if gate.get("mixed_source_queries"):
        lines += [f"Queries whose golds come from several sources: {gate['mixed_source_queries']}.", ""]
    if gate["excluded"]:
        lines += [
            "Excluded (below the gate): " + ", ".join(gate["excluded"]) + " — none of their documents is in a "
            "query, a qrel or `corpus.jsonl`.",
            "",
        ]
    if gate["allowed_ungated"]:
        lines += ["Included although below the gate (`--allow-ungated`): " + ", ".join(gate["allowed_ungated"]), ""]
    return lines


def _paraphrase_lines(record: dict[str, Any] | None) -> list[str]:
    """The "Paraphrases" section once ``nclue bench paraphrase`` has filled the frozen cache."""
    if not record:
        return []
    lines = [
        "",
        "## Paraphrases",
        "",
        f"`{record['file']}` holds {record['accepted']} of {record['queries']} LLM paraphrases (model "
        f"`{record['model']}`, up to {record['attempts']} attempts per query, {record['rejected_replies']} replies "
        f"rejected by the parser). Every reply is frozen in `{record['cache']}`; the `paraphrase` query form is read "
        "from this file only and never generated at run time.",
    ]
    if record["missing"]:
        lines.append(f"Queries without a paraphrase: {len(record['missing'])} (e.g. `{record['missing'][0]}`).")
    return lines


def label_signals(manifest: dict[str, Any]) -> str:
    """One line: which signals built a release's labels (rule, heading or reader), for reports."""
    if manifest.get("reading"):
        replies = (manifest["reading"].get("provenance") or {}).get("replies", 0)
        where = "docs/construction.md#reader-judged-construction"
        return f"blind readers ({replies} replies; candidates from the lexical rule; {where})"
    if manifest.get("conditions", {}).get("kind") == "sections":
        return "a heading rule (section concepts clustered by MiniLM; docs/structure.md#circularity)"
    return f"a lexical rule over page text, gated by the `{manifest.get('judge', '?')}` judge (docs/construction.md)"


def _rule_lines(manifest: dict[str, Any]) -> list[str]:
    """The "Establishes rule" section: which signals built the labels, and what a system shares with them."""
    kind = manifest.get("conditions", {}).get("kind", "lexical")
    mine = manifest["parameters"]["mine"]
    compose = manifest["parameters"]["compose"]
    if kind == "sections":
        return [
            "**Signals that built the labels: headings.** A page establishes a section concept when one of its",
            "heading lines belongs to the concept's cluster of heading titles (clustered by MiniLM similarity);",
            "systems that read headings or MiniLM vectors share this signal (`docs/structure.md#circularity`).",
        ]
    if manifest.get("reading"):
        return _reader_lines(manifest["reading"])
    contested = compose.get("max_contested")
    return [
        "**Signals that built the labels: a lexical rule over page text** (surface forms, headings, defining",
        "sentences, repetition); systems that match surface forms or phrases share these signals. Outside",
        "table-of-contents/index pages and entries, running headers/footers, copyright, licence, BibTeX,",
        "bibliography and contact lines, proper names and a title page's unnumbered lines, a page establishes",
        "a condition when a heading names it (a one-word condition as the heading's head noun), a defining",
        "sentence introduces it (`X is a …`, `called X`), or (multi-word conditions) its surface forms occur",
        f"at least {mine.get('min_repeats', 2)} times in prose, outside list items and not as the object of a preposition.",
        "Aliases group case, hyphenation and inflection variants and corpus-paired acronyms.",
        *(
            [
                f"A query is kept only when at most {contested} of its judged (document, condition) pairs is",
                "*contested* — labelled absent while the document mentions the condition, exactly or loosely — so",
                "an absence a reader could dispute does not decide a label.",
            ]
            if contested is not None
            else []
        ),
    ]


def _reader_lines(reading: dict[str, Any]) -> list[str]:
    """The rule section of a reader-judged release: who read, what was pooled, what was judged."""
    params = reading["params"]
    prov = reading["provenance"]
    who = ", ".join(f"{name} ({n} replies)" for name, n in prov.get("answered_by", {}).items())
    models = ", ".join(f"`{m}`" for m in prov.get("models", {}))
    dates = " to ".join(d[:10] for d in prov.get("dates", [])) or "undated"
    templates = ", ".join(f"`{t}` {h[:12]}" for t, h in prov.get("templates", {}).items())
    readers = f"{who or 'unrecorded'}; model {models or 'unrecorded'}; {dates}; template {templates or 'unrecorded'}"
    return [
        "**Signals that built the labels: blind readers.** Candidate conjunctions come from the lexical",
        "inventory (surface forms, headings, defining sentences, repetition), but every label was read: a",
        "(condition, document) pair is established when a blind reader, shown the condition's rubric and",
        f"its {params['pages_per_condition']} best pages of the audit's high-recall routes, quoted a page verbatim",
        "(`docs/construction.md#reader-judged-construction`). Gold, partial, rarity and the distinct-page rule are computed",
        "on the read labels; a document whose read evidence meets on one page only is a partial.",
        "",
        f"- pools: the rule's documents interleaved with the top {params['pool_depth']} of "
        + ", ".join(f"`{s}`" for s in params["pool_systems"])
        + f", at most {params['max_docs']} documents per candidate (median {reading['pool_documents_median']})",
        f"- read: {reading['pairs_read']} (document, condition) pairs on {reading['pages_shown']} pages shown "
        f"({reading['pairs_established']} established) in {reading['requests']} requests over "
        f"{len(reading['requests_per_round'])} rounds ({', '.join(map(str, reading['requests_per_round']))}: the pools' "
        f"{reading['pool_pairs']} pairs, then the other conditions of every document read as establishing one); "
        f"{reading['replies_malformed']} malformed replies, {reading['conditions_rejected']} answers rejected by the "
        "quote check",
        f"- judged: {100 * reading['judged_fraction']:.1f}% of the released queries' "
        f"{reading['released_judged_pairs']} (document, condition) pairs; `reading.jsonl` lists, per query, its pool, "
        "the documents read beyond it, its judgments and pages shown",
        f"- read by: {readers}",
        "- a document outside a query's pool was never judged and counts as not relevant (TREC-style pooling).",
    ]


def _pages_text(row: dict) -> str:
    """``cond: p.1,2; ...`` of a qrel row's evidence pages; document-level labels store none."""
    pages = row.get("pages") or {}
    return "; ".join(f"{c}: p.{','.join(map(str, p))}" for c, p in pages.items()) or "document-level label"


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
        *_gate_lines(manifest.get("gate")),
        "## Establishes rule",
        "",
        *_rule_lines(manifest),
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
        gold_pages = _pages_text(gold)
        sub_pages = _pages_text(sub)
        lines.append(
            f"| {ex['qid']} | {ex['clean_v2']} | `{gold['doc_id']}` ({gold_pages}) | `{sub['doc_id']}` (g={sub['grade']}; {sub_pages}) |"
        )
    lines += ["", *coverage_lines(manifest.get("query_forms"))]
    lines += _paraphrase_lines(manifest.get("paraphrase"))
    lines += [
        "",
        "## Files",
        "",
        "`corpus.jsonl`, `queries.jsonl` (with raw / clean_v2 / natural forms), `qrels.jsonl` (grade,",
        "label, evidence pages), `qrels/test.tsv` (BEIR), `inventory.jsonl`, `controls/*.jsonl`,",
        "`MANIFEST.json`, `SHA256SUMS` (and, after `nclue bench paraphrase`, `paraphrases.jsonl`), `NOTICE.md`",
        "(licences, third-party notices, removal policy). Page text and PDFs are not redistributed; corpus",
        "rows carry the source path, SHA-256 and, for fetched corpora, URL and licence. Without nclue:",
        "`python fetch_corpus.py . --out pdfs` rebuilds the PDFs and `python verify_release.py .` recomputes",
        "every published score (standard library only). With nclue: `nclue bench verify DIR`.",
        "",
    ]
    return "\n".join(lines)
