"""The report's tables as :class:`~nclue.report.tables.Table` values, from :func:`compute_report` data."""

from __future__ import annotations

from collections.abc import Iterator

from nclue.report.tables import Table, fmt_ci, fmt_p, fmt_pp

FORM_ORDER = ("raw", "clean_v2", "natural", "paraphrase")


def scorecard_table(data: dict) -> Table:
    """Table S1: fair runs ranked by n-Clue Score with exact-family CIs."""
    rows = tuple(
        (str(r["rank"]), name, r["category"], fmt_pp(r["n_clue_score"]), fmt_ci(r["ci"]), fmt_pp(r["gold_hit"]),
         fmt_pp(r["gold_ndcg"]))
        for name, r in sorted(data["scorecard"].items(), key=lambda kv: kv[1]["rank"])
    )
    return Table(
        headers=("Rank", "System", "Cat.", "n-Clue Score", "Exact-family 95% CI", "Gold Hit", "Gold-NDCG"),
        rows=rows,
        align="rlcrcrr",
        caption=(f"Table S1. Fair systems ranked by n-Clue Score@{data['k']} (form {data['default_form']}); "
                 "Gold Hit and Gold-NDCG are supporting subscores."),
    )


def controls_table(data: dict) -> Table:
    """Table S1d: privileged controls and baselines, unranked."""
    rows = tuple(
        (name, fmt_pp(r["n_clue_score"]), fmt_pp(r["gold_hit"]), fmt_pp(r["gold_ndcg"]))
        for name, r in sorted(data["controls"].items())
    )
    return Table(
        headers=("Control", "n-Clue Score", "Gold Hit", "Gold-NDCG"),
        rows=rows,
        align="lrrr",
        caption="Table S1d. Controls read the construction inventory (oracle.*) or ignore the query (baseline.*); never ranked.",
    )


def query_form_table(data: dict) -> Table:
    """Table S2b: n-Clue Score of each system on every rendering it ran on."""
    forms = [f for f in FORM_ORDER if any(f in v for v in data["query_forms"].values())]
    rows = tuple(
        (system, *(fmt_pp(values.get(f)) for f in forms)) for system, values in data["query_forms"].items()
    )
    return Table(
        headers=("System", *forms),
        rows=rows,
        align="l" + "r" * len(forms),
        caption="Table S2b. n-Clue Score by query rendering; the qrels are identical across forms.",
    )


def contrast_table(data: dict) -> Table:
    """Table S1e: displayed contrasts with selection-aware Holm p-values."""
    rows = tuple(
        (name, f"{c['display']} vs {c['base']}", fmt_pp(c["delta"]["n_clue_score"], sign=True),
         fmt_ci(c["ci"], 2, sign=True), fmt_pp(c["delta"]["gold_hit"], sign=True),
         fmt_pp(c["delta"]["gold_ndcg"], sign=True), str(len(c["tried"])), fmt_p(c["p_holm"]))
        for name, c in data["contrasts"].items()
    )
    return Table(
        headers=("Contrast", "Variant vs base", "ΔScore", "Exact-family 95% CI", "ΔHit", "ΔNDCG", "Tried", "Sel.+Holm p"),
        rows=rows,
        align="llrcrrrr",
        caption=("Table S1e. Each block displays its best n-Clue endpoint; p is blockwise max-|T| over every tried "
                 "endpoint (family sign flips), Holm-adjusted across blocks. Effects in percentage points."),
    )


def _mpg(values: list[float]) -> str:
    return "/".join(f"{v / 100:.3f}" for v in values)


def support_table(data: dict) -> Table:
    """Table S1f: common-support ordering ΔD and unconditional M/P/G shares."""
    rows = tuple(
        (name, str(c["common_n"]), "–" if c["delta_d"] is None else f"{c['delta_d'] / 100:+.3f}",
         _mpg(c["base_mpg"]), _mpg(c["variant_mpg"]))
        for name, c in data["contrasts"].items()
    )
    return Table(
        headers=("Contrast", "Common n", "ΔD", "Base M/P/G", "Variant M/P/G"),
        rows=rows,
        align="lrrcc",
        caption=("Table S1f. ΔD is variant minus base in 1 − P(subset before gold) where both retrieve a gold; "
                 "M/P/G are unconditional miss, subset-first and gold-first shares."),
    )


def sensitivity_table(data: dict) -> Table:
    """Tables S1g/S1h: shared-document sensitivity and adversarial promotion bounds."""
    rows = []
    for name, c in data["contrasts"].items():
        top = c.get("remove_top20_judged") or {}
        bound = c["promotion_bound"]
        rows.append((
            name,
            fmt_pp(c["delta"]["n_clue_score"], sign=True),
            fmt_ci(c.get("crossed_judged"), 2, sign=True),
            fmt_ci(c.get("leave_one_gold_doc"), 2, sign=True),
            f"{fmt_pp(top.get('delta'), sign=True)} ({top.get('queries', '–')} q.)",
            *(fmt_pp(bound[str(k)], sign=True) for k in (1, 2, 3)),
        ))
    return Table(
        headers=("Contrast", "Observed", "Crossed all-judged 95% CI", "Leave-one-gold-doc range",
                 "Remove top-20 judged docs", "Promote ≤1", "≤2", "≤3"),
        rows=tuple(rows),
        align="lrccrrrr",
        caption=("Tables S1g/S1h. Shared-document sensitivity of each displayed contrast and the exact adversarial "
                 "bound after promoting up to k judged top-10 subsets per query to gold (n-Clue points)."),
    )


def strata_table(data: dict) -> Table:
    """Table S1j: n-Clue Score / Gold Hit by task factor."""
    cells = list(data["strata"])
    runs = sorted(data["scorecard"], key=lambda name: data["scorecard"][name]["rank"])
    rows = tuple(
        (run, *(f"{fmt_pp(data['strata'][c]['runs'][run]['n_clue_score'])}/"
                f"{fmt_pp(data['strata'][c]['runs'][run]['gold_hit'])}" for c in cells))
        for run in runs
    )
    headers = ("System", *(f"{c.split(':', 1)[1] if c.startswith('n:') else c} ({data['strata'][c]['queries']})"
                           for c in cells))
    return Table(
        headers=headers,
        rows=rows,
        align="l" + "c" * len(cells),
        caption=("Table S1j. n-Clue Score / Gold Hit (pp) by number of conditions, L_min (minimum gold page count) "
                 "and |D+| (nonzero qrels); slices overlap and are descriptive."),
    )


def page_support_table(data: dict) -> Table:
    """Gold+Support and conditional page coverage of page-aware runs."""
    rows = tuple(
        (name, fmt_pp(v["gold_support"]), fmt_pp(v["page_coverage_condition"]), fmt_pp(v["page_coverage_all"]))
        for name, v in data["page_support"].items()
    )
    return Table(
        headers=("System", "Gold+Support", "Per-condition page coverage", "All-condition page coverage"),
        rows=rows,
        align="lrrr",
        caption=("Gold+Support: a top-k gold's three best surfaced pages meet the stored support of every condition "
                 "(all queries as denominator); coverage is conditional on retrieving a gold."),
    )


def all_tables(data: dict) -> Iterator[tuple[str, str, Table]]:
    """``(file key, section title, table)`` for every table that has rows."""
    candidates = (
        ("table_s1_scorecard", "Scorecard (Table S1)", scorecard_table),
        ("table_s1d_controls", "Controls (Table S1d)", controls_table),
        ("table_s2b_query_forms", "Query forms (Table S2b)", query_form_table),
        ("table_s1e_contrasts", "Displayed contrasts (Table S1e)", contrast_table),
        ("table_s1f_common_support", "Common support (Table S1f)", support_table),
        ("table_s1gh_sensitivity", "Sensitivity (Tables S1g/S1h)", sensitivity_table),
        ("table_s1j_strata", "Task-factor strata (Table S1j)", strata_table),
        ("table_page_support", "Page evidence (Gold+Support)", page_support_table),
    )
    for key, title, make in candidates:
        table = make(data)
        if table.rows:
            yield key, title, table
