"""Two simulated evaluators with known disagreements give exactly the expected agreement tables."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa

from nclue.audit.score import score
from tests.audit.simulate import answers, payload_of, read_jsonl, write_export

FLIPS = {(0, 0), (3, 1), (5, 0), (5, 1), (8, 0), (11, 1)}


def _wilson(s: int, n: int, z: float = 1.959963984540054) -> list[float]:
    p = s / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return [centre - half, centre + half]


@pytest.fixture
def two_evaluators(audited: dict, tmp_path: Path) -> tuple[dict, list[dict], list[dict], Path, Path]:
    payload = payload_of(audited["audit"], audited["packet"].packet_id)
    a_items = answers(payload)
    e_items = answers(payload, FLIPS)
    # one more known disagreement: on one condition both establish, E also ticks a second page
    i, j = next(
        (i, j)
        for i, it in enumerate(e_items)
        for j, c in enumerate(it["conditions"])
        if c["answer"]
        and a_items[i]["conditions"][j]["answer"]
        and len(payload["items"][i]["conditions"][j]["pages"]) > 1
    )
    chosen = e_items[i]["conditions"][j]["evidence"][0]["page"]
    extra = next(p for p in payload["items"][i]["conditions"][j]["pages"] if p["page"] != chosen)
    e_items[i]["conditions"][j]["evidence"] = sorted(
        [*e_items[i]["conditions"][j]["evidence"], {"page": extra["page"], "quote": extra["text"][:60]}],
        key=lambda e: e["page"],
    )
    a = write_export(tmp_path / "A.json", payload, "A", a_items)
    e = write_export(tmp_path / "E.json", payload, "E", e_items)
    return payload, a_items, e_items, a, e


def test_two_evaluators_give_the_expected_tables(audited: dict, two_evaluators) -> None:
    payload, a_items, e_items, a, e = two_evaluators
    report = score(audited["audit"], [a, e]).to_json()
    pair = report["pairs"][0]
    decisions_a = [c["answer"] for it in a_items for c in it["conditions"]]
    decisions_e = [c["answer"] for it in e_items for c in it["conditions"]]
    n_cond = len(decisions_a)
    # condition level: every flip is exactly one disagreement
    assert pair["condition_agreement"]["hits"] == n_cond - len(FLIPS)
    assert pair["condition_agreement"]["wilson95"] == pytest.approx(_wilson(n_cond - len(FLIPS), n_cond))
    binary = np.zeros((2, 2), dtype=int)
    for x, y in zip(decisions_a, decisions_e):
        binary[int(x), int(y)] += 1
    assert pair["condition_kappa"] == pytest.approx(cohens_kappa(binary).kappa)
    # grades: counted straight from the two answer lists
    ga = [sum(c["answer"] for c in it["conditions"]) for it in a_items]
    ge = [sum(c["answer"] for c in it["conditions"]) for it in e_items]
    table = np.zeros((4, 4), dtype=int)
    for x, y in zip(ga, ge):
        table[x, y] += 1
    assert pair["grade_confusion"] == table.tolist()
    same = sum(x == y for x, y in zip(ga, ge))
    assert pair["grade_agreement"]["hits"] == same
    assert same < 12  # the flips do change grades
    assert pair["grade_kappa_linear"] == pytest.approx(cohens_kappa(table, wt="linear").kappa)
    # page sets: every condition both establish has the same page, except the one with E's extra page
    both = sum(x and y for x, y in zip(decisions_a, decisions_e))
    assert pair["page_set_agreement"] == {
        "hits": both - 1,
        "n": both,
        "share": (both - 1) / both,
        "wilson95": _wilson(both - 1, both),
    }
    # all raters: Fleiss against statsmodels; integrity straight from the files
    counts = np.array([[2 - (x + y), x + y] for x, y in zip(decisions_a, decisions_e)])
    assert report["all_raters"]["fleiss_kappa"] == pytest.approx(fleiss_kappa(counts))
    assert report["all_raters"]["unanimous"] == n_cond - len(FLIPS)
    assert report["all_raters"]["pairwise_agreement"] == {"A–E": n_cond - len(FLIPS)}
    integrity = {row["evaluator"]: row for row in report["integrity"]}
    assert integrity["A"]["positive"] == sum(decisions_a) and integrity["E"]["positive"] == sum(decisions_e)
    assert integrity["E"]["pages"] == sum(decisions_e) + 1 == integrity["E"]["quotes_valid"]
    # strata by n: the key's n of each item's pair
    key = {r["pair"]: r for r in read_jsonl(audited["audit"] / "key.jsonl")}
    admin = read_admin(audited)
    n_of = [len(key[admin["items"][it["id"]]["pair"]]["conditions"]) for it in payload["items"]]
    for n in set(n_of):
        members = [i for i, m in enumerate(n_of) if m == n]
        cell = pair["strata"]["n"][str(n)]["grade"]
        assert (cell["hits"], cell["n"]) == (sum(ga[i] == ge[i] for i in members), len(members))


def read_admin(audited: dict) -> dict:
    import json

    return json.loads((audited["audit"] / "packets" / f"{audited['packet'].packet_id}.admin.json").read_text())


def test_tables_render_in_every_format(audited: dict, two_evaluators) -> None:
    *_, a, e = two_evaluators
    report = score(audited["audit"], [a, e])
    md, tex = report.to_markdown(), report.to_latex()
    assert "| Statistic | A–E |" in md and "Linearly weighted grade κ" in md and "| A \\ E | 0 | 1 | 2 | 3 |" in md
    assert r"\begin{tabular}" in tex and r"\toprule" in tex
    assert (
        Counter(t.caption.split(".")[0] for t in report.tables())[
            "Agreement on packet " + audited["packet"].packet_id + " (audit)"
        ]
        == 1
    )


def test_labels_against_each_evaluator_and_against_both(audited: dict, two_evaluators) -> None:
    """Label agreement counted by hand from the key and the two answer lists."""
    payload, a_items, e_items, a, e = two_evaluators
    report = score(audited["audit"], [a, e]).to_json()
    key = {r["pair"]: r for r in read_jsonl(audited["audit"] / "key.jsonl")}
    admin = read_admin(audited)
    labels, sources, golds = [], [], []
    for it in payload["items"]:
        row = key[admin["items"][it["id"]]["pair"]]
        golds.append(row["label"] == "gold")
        for cond in it["conditions"]:
            name = admin["items"][it["id"]]["conditions"][cond["id"]]["condition"]
            labels.append(bool(row["pages"].get(name)))
            sources.append(row["source"])
    dec = {
        "A": [c["answer"] for it in a_items for c in it["conditions"]],
        "E": [c["answer"] for it in e_items for c in it["conditions"]],
    }
    by = {x["evaluator"]: x for x in report["labels"]}
    assert set(by) == {"A", "E", "all"}
    for ev in ("A", "E"):
        agree = [d == lab for d, lab in zip(dec[ev], labels)]
        assert by[ev]["condition_agreement"]["hits"] == sum(agree)
        assert by[ev]["labelled_established_confirmed"] == {
            **by[ev]["labelled_established_confirmed"],
            "hits": sum(d and lab for d, lab in zip(dec[ev], labels)),
            "n": sum(labels),
        }
        binary = np.zeros((2, 2), dtype=int)
        for lab, d in zip(labels, dec[ev]):
            binary[int(lab), int(d)] += 1
        assert by[ev]["kappa"] == pytest.approx(cohens_kappa(binary).kappa)
        for src in set(sources):
            cell = by[ev]["by_source"][src]
            assert cell["hits"] == sum(a for a, s in zip(agree, sources) if s == src)
    both = [x == lab and y == lab for x, y, lab in zip(dec["A"], dec["E"], labels)]
    assert by["all"]["condition_agreement"]["hits"] == sum(both) and by["all"]["kappa"] is None
    # gold pairs whose every condition both evaluators confirm
    pos, ok = 0, 0
    for g, it_a, it_e in zip(golds, a_items, e_items):
        if g:
            pos += 1
            ok += all(c["answer"] for c in it_a["conditions"]) and all(c["answer"] for c in it_e["conditions"])
    assert (by["all"]["gold_pairs_all_confirmed"]["hits"], by["all"]["gold_pairs_all_confirmed"]["n"]) == (ok, pos)
    assert "Gold pairs with every condition confirmed" in score(audited["audit"], [a, e]).to_markdown()
