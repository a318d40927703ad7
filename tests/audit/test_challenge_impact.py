"""The targeted challenge against brute-force rescoring, its poll with duplicate streams, and the impact table."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr

import nclue
from nclue.audit.adjudicate import adjudicate
from nclue.audit.audit_params import ChallengeParams
from nclue.audit.challenge import challenge
from nclue.audit.impact import impact
from nclue.audit.packet import build_packet
from nclue.audit.store import AuditDir
from nclue.runfile import run_name
from tests.audit.simulate import answers, payload_of, read_jsonl, write_export
from tests.scoring.nclue_eval_helpers import write_jsonl


@pytest.fixture(scope="module")
def runs(release_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("runs")
    paths = {}
    for system in ("bm25.and", "bm25.decompose(distinct)", "bm25.joint"):
        run = nclue.run_system(release_dir / "bench", release_dir / "coll", system)
        paths[system] = next(p for p in run.write(out) if p.suffix == ".jsonl")
    return paths


def _contrast(bench: Path, a: Path, b: Path, qrels: Path | None = None, metric: str = "gold_ndcg") -> float:
    card = nclue.evaluate(bench, [a, b], ci="none", qrels=qrels)
    return getattr(card[run_name(a)], metric) - getattr(card[run_name(b)], metric)


@pytest.mark.parametrize("metric", [None, "n_clue_score"])
def test_targets_equal_brute_force_promotion(release_dir: Path, runs: dict, tmp_path: Path, metric: str | None) -> None:
    """Targets of the default (Gold-NDCG) and the n-Clue challenge, against one full rescoring per candidate."""
    bench = release_dir / "bench"
    a, b = runs["bm25.and"], runs["bm25.decompose(distinct)"]
    params = ChallengeParams(k=10, controls=3) if metric is None else ChallengeParams(k=10, controls=3, metric=metric)
    metric = metric or "gold_ndcg"
    summary = challenge(bench, a, b, tmp_path / "ch", params)
    assert summary.metric == metric
    qrels = read_jsonl(bench / "qrels.jsonl")
    n_of = {q["qid"]: len(q["conditions"]) for q in read_jsonl(bench / "queries.jsonl")}
    judged = {(r["qid"], r["doc_id"]): r for r in qrels}
    union = set()
    for path in (a, b):
        for row in read_jsonl(path):
            top = [d["doc_id"] for d in sorted(row["docs"], key=lambda d: -d["score"])][:10]
            union |= {(row["qid"], d) for d in top if judged.get((row["qid"], d), {}).get("label") == "partial"}
    base = _contrast(bench, a, b, metric=metric)
    assert summary.contrast * 100 == pytest.approx(base)
    targets = set()
    for qid, doc in sorted(union):
        promoted = [
            {"qid": r["qid"], "doc_id": r["doc_id"], "grade": n_of[qid], "label": "gold"}
            if (r["qid"], r["doc_id"]) == (qid, doc)
            else {k: r[k] for k in ("qid", "doc_id", "grade", "label")}
            for r in qrels
        ]
        path = tmp_path / "promoted.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in promoted))
        change = _contrast(bench, a, b, path, metric) - base
        if change * (1 if base >= 0 else -1) < -1e-9:
            targets.add((qid, doc))
    key = read_jsonl(tmp_path / "ch" / "key.jsonl")
    assert {(r["qid"], r["doc_id"]) for r in key if r["role"] == "target"} == targets
    assert summary.candidates == len(union) and summary.targets == len(targets) >= 1
    controls = [r for r in key if r["role"] == "control"]
    assert len(controls) == 3 and not {(r["qid"], r["doc_id"]) for r in controls} & targets


def test_challenge_poll_collapses_duplicates_and_breaks_ties(release_dir: Path, runs: dict, tmp_path: Path) -> None:
    root = tmp_path / "ch"
    challenge(
        release_dir / "bench", runs["bm25.and"], runs["bm25.decompose(distinct)"], root, ChallengeParams(controls=3)
    )
    packet = build_packet(root, release_dir / "coll", tmp_path / "challenge.html")
    payload = payload_of(root, packet.packet_id)
    assert payload["kind"] == "challenge" and payload["title"] == "Evidence review"
    admin = json.loads((root / "packets" / f"{packet.packet_id}.admin.json").read_text())
    pages_of = {r["doc_id"]: r["n_pages"] for r in read_jsonl(release_dir / "bench" / "corpus.jsonl")}
    for item in payload["items"]:
        n_pages = pages_of[admin["items"][item["id"]]["doc_id"]]
        assert all(min(6, n_pages) <= len(c["pages"]) <= 9 for c in item["conditions"])
    x = write_export(tmp_path / "X.json", payload, "X", answers(payload))
    y = write_export(tmp_path / "Y.json", payload, "Y", answers(payload))  # identical to X: one stream
    z = write_export(tmp_path / "Z.json", payload, "Z", answers(payload, {(0, 0), (1, 1)}))
    tied = adjudicate(root, [x, y, z])
    assert tied.polls[0].evaluators == ("X", "Z") and "identical to X" in tied.polls[0].notes[0]
    assert tied.unresolved == 2 and tied.tiebreak is not None
    tie = payload_of(root, tied.tiebreak.packet_id)
    w = write_export(tmp_path / "W.json", tie, "W", answers(tie))
    final = adjudicate(root, [x, y, z, w])
    assert final.qrels == root / "qrels.v2.jsonl" and final.unresolved == 0
    roles = {t.role for t in final.transitions}
    assert roles == {"target", "control"} and "Challenge targets" in final.to_markdown()


def _repaired(bench: Path, tmp_path: Path) -> tuple[list[dict], list[dict], Path]:
    """The release's qrels, a copy with every third gold demoted to partial, and that copy's path (v2)."""
    qrels = read_jsonl(bench / "qrels.jsonl")
    changed = [dict(r, label="partial") if r["label"] == "gold" and i % 3 == 0 else r for i, r in enumerate(qrels)]
    for r in changed:
        r.pop("pages", None)
    v2 = tmp_path / "qrels.v2.jsonl"
    v2.write_text("".join(json.dumps(r) + "\n" for r in changed))
    return qrels, changed, v2


def test_impact_rescoring_matches_the_public_evaluate(release_dir: Path, runs: dict, tmp_path: Path) -> None:
    """With ``--metric n_clue_score --keep-zero-gold``: every query on every version, as ``evaluate`` and ``compare`` score them."""
    bench = release_dir / "bench"
    qrels, changed, v2 = _repaired(bench, tmp_path)
    report = impact(
        bench,
        [bench / "qrels.jsonl", v2],
        list(runs.values()),
        draws=500,
        bootstrap=200,
        metric="n_clue_score",
        keep_zero_gold=True,
    )
    js = report.to_json()
    assert [v["name"] for v in js["versions"]] == ["v1", "v2"]
    for version, path in zip(js["versions"], (None, v2)):
        card = nclue.evaluate(bench, list(runs.values()), ci="none", qrels=path)
        assert version["n_clue_score"] == pytest.approx({n: card[n].n_clue_score for n in card})
        assert version["gold_ndcg"] == pytest.approx({n: card[n].gold_ndcg for n in card})
        assert version["counts"]["gold"] == sum(r["label"] == "gold" for r in (qrels if path is None else changed))
    assert js["versions"][1]["counts"]["queries"] == len(read_jsonl(bench / "queries.jsonl"))
    names = sorted(runs)
    rho = spearmanr(
        [js["versions"][0]["n_clue_score"][n] for n in names], [js["versions"][1]["n_clue_score"][n] for n in names]
    )
    undefined = not np.isfinite(rho.statistic)  # constant scores: the JSON says null, never a number
    assert js["movements"][0]["spearman"] == (None if undefined else pytest.approx(rho.statistic))
    first = js["contrasts"][0]
    best = sorted(names, key=lambda n: (-js["versions"][0]["n_clue_score"][n], n))
    assert (first["variant"], first["base"]) == (best[0], best[1])
    diff = nclue.compare(bench, runs[best[1]], [runs[best[0]]], bootstrap=200, draws=500)[best[0]]
    assert (first["p_query"], first["p_family"]) == pytest.approx((diff.p_query, diff.p_family))
    assert first["crossed_gold"] == pytest.approx(list(diff.crossed_gold))
    assert first["crossed_judged"] == pytest.approx(list(diff.crossed_judged))
    assert "Spearman ρ" in report.to_markdown() and np.isfinite(first["gap"])


def test_impact_drops_queries_a_repair_left_without_a_gold(release_dir: Path, runs: dict, tmp_path: Path) -> None:
    """The default: Gold-NDCG on v2 equals ``evaluate`` on a copy of the release without those queries and their qrels."""
    bench = release_dir / "bench"
    qrels, changed, v2 = _repaired(bench, tmp_path)
    report = impact(bench, [bench / "qrels.jsonl", v2], list(runs.values()), draws=500, bootstrap=200)
    js = report.to_json()
    lost = {r["qid"] for r in qrels if r["label"] == "gold"} - {r["qid"] for r in changed if r["label"] == "gold"}
    counts = js["versions"][1]["counts"]
    assert len(lost) >= 1 and (js["metric"], js["keep_zero_gold"]) == ("gold_ndcg", False)
    assert counts["lost_gold_queries"] == len(lost) and js["versions"][0]["counts"]["lost_gold_queries"] == 0
    assert counts["lost_gold_rows"] == sum(r["qid"] in lost for r in changed)
    queries = [q for q in read_jsonl(bench / "queries.jsonl") if q["qid"] not in lost]
    remaining = [r for r in changed if r["qid"] not in lost]
    assert (counts["queries"], counts["rows"]) == (len(queries), len(remaining))
    copy = tmp_path / "without-lost"
    write_jsonl(copy / "queries.jsonl", queries)
    write_jsonl(copy / "qrels.jsonl", remaining)
    shutil.copy(bench / "corpus.jsonl", copy / "corpus.jsonl")
    for version, release in zip(js["versions"], (bench, copy)):
        card = nclue.evaluate(release, list(runs.values()), ci="none")
        assert version["gold_ndcg"] == pytest.approx({n: card[n].gold_ndcg for n in card})
        assert version["n_clue_score"] == pytest.approx({n: card[n].n_clue_score for n in card})
    first = js["contrasts"][0]
    best = sorted(runs, key=lambda n: (-js["versions"][0]["gold_ndcg"][n], n))
    assert (first["variant"], first["base"]) == (best[0], best[1])
    later = js["contrasts"][1]
    assert later["gap"] == pytest.approx(
        js["versions"][1]["gold_ndcg"][best[0]] - js["versions"][1]["gold_ndcg"][best[1]]
    )


def test_challenge_from_a_repaired_version_writes_the_next(release_dir: Path, runs: dict, tmp_path: Path) -> None:
    bench = release_dir / "bench"
    _, _, v2 = _repaired(bench, tmp_path)
    # a challenge started from a repaired version records it, and its adjudication writes the next one
    ch = challenge(bench, runs["bm25.and"], runs["bm25.joint"], tmp_path / "ch", ChallengeParams(controls=2), qrels=v2)
    audit = AuditDir.open(ch.audit)
    assert audit.base_version == 2 and audit.release().files["qrels"] == v2
    packet = build_packet(ch.audit, release_dir / "coll", tmp_path / "ch.html")
    payload = payload_of(ch.audit, packet.packet_id)
    votes = [
        write_export(tmp_path / f"{n}.json", payload, n, answers(payload, flips))
        for n, flips in (("X", set()), ("Y", {(0, 0)}), ("Z", {(1, 0)}))
    ]
    assert adjudicate(ch.audit, votes).qrels == ch.audit / "qrels.v3.jsonl"
