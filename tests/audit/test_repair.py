"""The evidence-asymmetric policy, the expanded-page poll, majority decisions, tie-breaks and qrels v2."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from nclue.audit.adjudicate import adjudicate
from nclue.audit.audit_params import SampleParams
from nclue.audit.export import ConditionResponse, Export
from nclue.audit.packet import build_packet
from nclue.audit.repair import classify, repair
from nclue.audit.sample import sample
from nclue.errors import NclueError
from nclue.release import Release
from tests.audit.simulate import answers, hostile_release, payload_of, read_jsonl, write_export

INITIAL_FLIPS = {(0, 0), (2, 1), (4, 0), (6, 1), (7, 0), (9, 0), (10, 1)}


def _export(name: str, answers_: dict[str, bool]) -> Export:
    items = {"i": {cid: ConditionResponse(a, ((1, "q" * 12),) if a else ()) for cid, a in answers_.items()}}
    return Export(Path(name), "p", "audit", name, items)


def test_policy_hand_cases() -> None:
    names = {"c1": "alpha", "c2": "beta"}
    both = (_export("A", {"c1": True, "c2": True}), _export("E", {"c1": True, "c2": True}))
    assert classify(both, "i", names, {"alpha": (1,)})["category"] == "increase"
    assert classify(both, "i", names, {"alpha": (1,), "beta": (2,)})["category"] == "retained"
    split = (_export("A", {"c1": True, "c2": True}), _export("E", {"c1": True, "c2": False}))
    out = classify(split, "i", names, {})
    assert out["category"] == "split" and out["conditions"]["beta"]["state"] == "split"
    down = (_export("A", {"c1": True, "c2": False}), _export("E", {"c1": True, "c2": False}))
    assert classify(down, "i", names, {"alpha": (1,), "beta": (2,)})["category"] == "decrease"
    assert classify(down, "i", names, {"alpha": (1,)})["conditions"]["beta"]["state"] == "negative"


def expected_category(a: list[bool], e: list[bool], had: list[bool]) -> str:
    """The documented policy, written out independently."""
    if any(x != y for x, y in zip(a, e)):
        return "split"
    if any(h and not x for x, h in zip(a, had)):
        return "decrease"
    return "increase" if sum(a) > sum(had) else "retained"


def hall_gold(sets: list[set[int]]) -> bool:
    """Gold by brute force: every condition has pages, an injective choice exists, no page holds all."""
    if not all(sets) or set.intersection(*sets):
        return False
    return any(len(set(choice)) == len(choice) for choice in itertools.product(*sets))


@pytest.fixture
def initial(fresh_audit: dict, tmp_path: Path) -> dict:
    payload = payload_of(fresh_audit["audit"], fresh_audit["packet"].packet_id)
    a, e = answers(payload), answers(payload, INITIAL_FLIPS)
    return {
        **fresh_audit,
        "payload": payload,
        "a_items": a,
        "e_items": e,
        "a": write_export(tmp_path / "A.json", payload, "A", a),
        "e": write_export(tmp_path / "E.json", payload, "E", e),
    }


def test_policy_on_a_real_packet_and_the_expanded_poll(initial: dict, tmp_path: Path) -> None:
    report = repair(initial["audit"], [initial["a"], initial["e"]], initial["coll"], tmp_path / "poll.html")
    key = {r["pair"]: r for r in read_jsonl(initial["audit"] / "key.jsonl")}
    admin = json.loads((initial["audit"] / "packets" / f"{initial['payload']['packet_id']}.admin.json").read_text())
    expected = {}
    for item, ai, ei in zip(initial["payload"]["items"], initial["a_items"], initial["e_items"]):
        pair = key[admin["items"][item["id"]]["pair"]]
        had = [bool(pair["pages"].get(c["name"])) for c in item["conditions"]]
        expected[pair["pair"]] = expected_category(
            [c["answer"] for c in ai["conditions"]], [c["answer"] for c in ei["conditions"]], had
        )
    counts = {k: list(expected.values()).count(k) for k in ("increase", "retained", "split", "decrease")}
    got = report.to_json()
    assert (got["consensus_increases"], got["consensus_retained"], got["split_pairs"], got["decrease_pairs"]) == (
        counts["increase"],
        counts["retained"],
        counts["split"],
        counts["decrease"],
    )
    assert counts["split"] >= 1 and got["queue"]["pairs"] == counts["split"] + counts["decrease"]
    record = json.loads((initial["audit"] / "repair.json").read_text())
    assert "before any response is read" not in record["policy"] and record["policy"].startswith("1. Accept")
    poll = payload_of(initial["audit"], report.poll.packet_id)
    poll_admin = json.loads((initial["audit"] / "packets" / f"{report.poll.packet_id}.admin.json").read_text())
    assert len(poll["items"]) == got["queue"]["pairs"]
    for item in poll["items"]:
        pair = poll_admin["items"][item["id"]]["pair"]
        row = record["pairs"][pair]
        shown = {c["name"] for c in item["conditions"]}
        assert shown == {n for n, c in row["conditions"].items() if c["state"] != "locked"}
        for cond in item["conditions"]:
            pages = {p["page"] for p in cond["pages"]}
            n_pages = Release.open(initial["bench"]).corpus_index[key[pair]["doc_id"]].n_pages
            assert min(6, n_pages) <= len(pages) <= 9
            assert set(row["original"][cond["name"]]) <= pages  # the three initial pages stay in view
            assert set(row["conditions"][cond["name"]]["pages"]) <= pages  # and every evaluator selection
    recall = got["poll"]["held_out_recall"]
    assert recall["locked"] == sum(c["state"] == "locked" for p in got_queue(record) for c in p["conditions"].values())
    assert recall["rank6"] <= recall["rank9"] <= recall["locked"]


def got_queue(record: dict) -> list[dict]:
    return [record["pairs"][p] for p in record["queue"]]


def test_ties_go_to_a_tiebreak_and_the_majority_writes_qrels_v2(initial: dict, tmp_path: Path, cli) -> None:
    report = repair(initial["audit"], [initial["a"], initial["e"]], initial["coll"], tmp_path / "poll.html")
    poll = payload_of(initial["audit"], report.poll.packet_id)
    f1 = write_export(tmp_path / "F1.json", poll, "F1", answers(poll))
    f2 = write_export(tmp_path / "F2.json", poll, "F2", answers(poll, {(0, 0)}))
    with pytest.raises(NclueError, match="conditions wait for poll answers"):
        adjudicate(initial["audit"], [])
    tied = adjudicate(initial["audit"], [f1, f2], tiebreak_out=tmp_path / "tie.html")
    assert tied.unresolved == 1 and tied.qrels is None and (tmp_path / "tie.html").is_file()
    tie = payload_of(initial["audit"], tied.tiebreak.packet_id)
    assert tie["kind"] == "tiebreak" and len(tie["items"]) == 1 and len(tie["items"][0]["conditions"]) == 1
    assert tie["items"][0]["conditions"][0]["pages"] == poll["items"][0]["conditions"][0]["pages"]
    g = write_export(tmp_path / "G.json", tie, "G", answers(tie, {(0, 0)}))
    final = adjudicate(initial["audit"], [f1, f2, g])
    assert final.unresolved == 0 and final.qrels == initial["audit"] / "qrels.v2.jsonl"

    # independent expectation: majority of unique poll streams, initial consensus for locked conditions
    record = json.loads((initial["audit"] / "repair.json").read_text())
    key = {r["pair"]: r for r in read_jsonl(initial["audit"] / "key.jsonl")}
    votes: dict[tuple[str, str], list[tuple[bool, set[int]]]] = {}
    for payload, path in ((poll, f1), (poll, f2), (tie, g)):
        admin = json.loads((initial["audit"] / "packets" / f"{payload['packet_id']}.admin.json").read_text())
        for item in json.loads(path.read_text())["items"]:
            pair = admin["items"][item["id"]]["pair"]
            for c in item["conditions"]:
                name = admin["items"][item["id"]]["conditions"][c["id"]]["condition"]
                votes.setdefault((pair, name), []).append((c["answer"], {e["page"] for e in c["evidence"]}))
    expected = {}
    for pair, row in record["pairs"].items():
        sets = []
        for name in key[pair]["conditions"]:
            cond = row["conditions"][name]
            if cond["state"] == "locked":
                sets.append(set(cond["pages"]))
            elif pair in record["queue"]:
                vs = votes[(pair, name)]
                yes = [p for a, p in vs if a]
                sets.append(set().union(*yes) if len(yes) > len(vs) - len(yes) else set())
            else:
                sets.append(set())
        grade = sum(bool(s) for s in sets)
        expected[(key[pair]["qid"], key[pair]["doc_id"])] = (grade, "gold" if hall_gold(sets) else "partial")
    rows = {(r["qid"], r["doc_id"]): (r["grade"], r["label"]) for r in read_jsonl(final.qrels)}
    for pair, value in expected.items():
        assert rows.get(pair, (0, "partial")) == value if value[0] else pair not in rows
    untouched = {(r["qid"], r["doc_id"]): r for r in read_jsonl(initial["bench"] / "qrels.jsonl")}
    assert all(rows[k] == (v["grade"], v["label"]) for k, v in untouched.items() if k not in expected)
    moved = sum(1 for k, v in expected.items() if (untouched[k]["grade"], untouched[k]["label"]) != v)
    assert final.to_json()["changed"] == moved

    # the new version loads through the release door and `nclue evaluate --qrels` scores on it
    assert len(Release.open(initial["bench"], qrels=final.qrels).judgments) == len(rows)
    run = initial["bench"] / "controls" / "oracle.surface_and.jsonl"
    result = cli("evaluate", initial["bench"], run, "--qrels", final.qrels, "--format", "json", "--ci", "none")
    assert result.exit_code == 0, result.output
    assert (initial["audit"] / "qrels.v2.tsv").read_text().startswith("query-id\tcorpus-id\tscore\n")


def test_a_majority_gold_on_one_page_stays_partial(tmp_path: Path) -> None:
    """The J061 case: both conditions supported, but only on the same page — not a distinct-page gold."""
    coll, bench = hostile_release(tmp_path)
    sample(bench, tmp_path / "audit", SampleParams(pairs=1))
    first = build_packet(tmp_path / "audit", coll, tmp_path / "p.html")
    payload = payload_of(tmp_path / "audit", first.packet_id)
    item = payload["items"][0]

    def on_page_three(drop: set[int]) -> list[dict]:
        conds = []
        for j, c in enumerate(item["conditions"]):
            text = next(p["text"] for p in c["pages"] if p["page"] == 3)
            quote = "about footnotes & <bibliography>" if c["name"] == "bibliography" else "Plain page about footnotes"
            assert quote in text
            ok = j not in drop
            conds.append({"id": c["id"], "answer": ok, "evidence": [{"page": 3, "quote": quote}] if ok else []})
        return [{"id": item["id"], "status": "accepted", "conditions": conds}]

    a = write_export(tmp_path / "A.json", payload, "A", on_page_three(set()))
    e = write_export(tmp_path / "E.json", payload, "E", on_page_three({1}))
    report = repair(tmp_path / "audit", [a, e], coll, tmp_path / "poll.html")
    assert report.splits == 1
    poll = payload_of(tmp_path / "audit", report.poll.packet_id)
    shown = poll["items"][0]["conditions"][0]
    exports = []
    for name in ("F", "G", "H"):
        evidence = [
            {
                "page": 3,
                "quote": "Plain page about footnotes"
                if shown["name"] == "footnotes"
                else "about footnotes & <bibliography>",
            }
        ]
        items = [
            {
                "id": poll["items"][0]["id"],
                "status": "accepted",
                "conditions": [{"id": shown["id"], "answer": True, "evidence": evidence}],
            }
        ]
        exports.append(write_export(tmp_path / f"{name}.json", poll, name, items))
    final = adjudicate(tmp_path / "audit", exports)
    assert [(t.old, t.new) for t in final.transitions] == [((2, "gold"), (2, "partial"))]
    assert read_jsonl(final.qrels) == [
        {
            "doc_id": "evil/doc",
            "grade": 2,
            "label": "partial",
            "pages": {"bibliography": [3], "footnotes": [3]},
            "qid": "q1",
        }
    ]
    assert any("no gold document" in w for w in final.warnings)
