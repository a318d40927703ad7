"""Reader-verified coverage (``nclue.reader.verified_coverage``): which pairs are read, on which pages, and how the
reader's decisions replace the evidence — by hand-made evidence, and end to end through a batch
file on real pages, with replies written by parsing the prompts independently of the product."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from nclue.errors import NclueError
from nclue.reader.reading import Readings
from nclue.reader.verified_coverage import VerifyOptions, apply_readings, verification_requests
from nclue.select.coverage_evidence import Evidence


def evidence(probs: list[list[float]]) -> Evidence:
    docs, reqs = ("a/one", "b/two"), ("line numbering", "footnotes")
    arr = np.array(probs)
    pages = tuple(tuple((9,) if arr[d, r] >= 0.5 else () for r in range(2)) for d in range(2))
    return Evidence(docs, reqs, arr, np.full((2, 2), 9, dtype=np.int32), pages)


class RankedPages:
    """Stands in for EvidenceModel.ranked_pages: fixed pages per (requirement, document)."""

    def __init__(self, table: dict[tuple[str, str], tuple[int, ...]]) -> None:
        self.table, self.asked = table, []

    def ranked_pages(self, requirement: str, doc_id: str, n: int) -> tuple[int, ...]:
        self.asked.append((requirement, doc_id, n))
        return self.table[(requirement, doc_id)][:n]


def test_only_pairs_at_or_above_the_floor_are_asked_on_their_best_pages_in_order():
    ev = evidence([[0.9, 0.019], [0.02, 0.6]])
    model = RankedPages({("line numbering", "a/one"): (4, 2, 7), ("line numbering", "b/two"): (1, 3),
                         ("footnotes", "b/two"): (6, 5, 8)})  # fmt: skip
    requests = verification_requests(model, ev, lambda doc, p: f"text of {doc} page {p}")
    assert [(r.doc_id, [c["name"] for c in r.item["conditions"]]) for r in requests] == [
        ("a/one", ["line numbering"]),  # footnotes at 0.019 is below the 0.02 floor
        ("b/two", ["line numbering", "footnotes"]),  # 0.02 is read
    ]
    shown = [[p["page"] for p in c["pages"]] for r in requests for c in r.item["conditions"]]
    assert shown == [[4, 2], [1, 3], [6, 5]]  # the two best pages, best first
    prompt = requests[1].prompt
    assert prompt.index("--- page 6 ---") < prompt.index("--- page 5 ---")
    assert "text of b/two page 6" in prompt and 'Condition 2: "footnotes"' in prompt


def test_requirements_of_one_document_are_split_into_prompts_of_per_prompt():
    reqs = tuple(f"r{i}" for i in range(5))
    ev = Evidence(("d",), reqs, np.full((1, 5), 0.5), np.ones((1, 5), np.int32), ((((1,),) * 5),))
    model = RankedPages({(r, "d"): (1,) for r in reqs})
    requests = verification_requests(model, ev, lambda doc, p: "x", VerifyOptions(per_prompt=2))
    assert [[c["name"] for c in r.item["conditions"]] for r in requests] == [["r0", "r1"], ["r2", "r3"], ["r4"]]
    assert len({r.item["id"] for r in requests}) == 3


def test_readings_replace_the_probabilities_and_pages_of_read_pairs_only():
    ev = evidence([[0.9, 0.3], [0.01, 0.6]])
    readings = Readings(
        pages={("a/one", "line numbering"): (5,), ("a/one", "footnotes"): (), ("b/two", "footnotes"): (3, 7)},
        shown={("a/one", "line numbering"): (5, 2), ("a/one", "footnotes"): (1, 4), ("b/two", "footnotes"): (7, 3)},
        requests=2,
        rejected=1,
    )
    out = apply_readings(ev, readings)
    assert out.evidence.probs.tolist() == [[1.0, 0.0], [0.01, 1.0]]
    assert out.read.tolist() == [[True, True], [False, True]]
    assert out.established.tolist() == [[True, False], [False, True]]
    assert out.evidence.pages[0][0] == (5,) and out.evidence.pages[0][1] == ()
    assert out.evidence.pages[1][1] == (7, 3)  # quoted pages in the order shown (best first)
    assert out.evidence.best_page[1, 1] == 7 and out.evidence.best_page[1, 0] == 9  # unread pair unchanged
    assert out.evidence.covers(1) == {"footnotes": [7, 3]}
    assert out.summary == {"pairs_read": 3, "established": 2, "requests": 2, "pending": 0,
                           "malformed_replies": 0, "rejected_answers": 1}  # fmt: skip
    assert ev.probs[0, 1] == 0.3  # the input evidence is not modified


@pytest.mark.parametrize("kwargs", [{"floor": 0.0}, {"floor": 0.7}, {"pages": 0}, {"per_prompt": True}])
def test_bad_options_are_refused(kwargs):
    with pytest.raises(NclueError, match="verify"):
        VerifyOptions(**kwargs)


def prompt_conditions(prompt: str) -> list[tuple[str, list[tuple[int, str]]]]:
    """The conditions of a verification prompt and their shown pages' text, parsed from the text alone."""
    out = []
    blocks = re.split(r'\n\nCondition \d+: "', prompt)[1:]
    for block in blocks:
        name = block.split('"', 1)[0]
        body = block.split("\n\nAnswer with JSON only", 1)[0]
        parts = re.split(r"--- page (\d+) ---\n", body)[1:]
        out.append((name, [(int(parts[i]), parts[i + 1]) for i in range(0, len(parts), 2)]))
    return out


def answer(prompt: str, establish: str, bad_quote: bool = False) -> dict:
    """Establish ``establish`` on its first shown page with a verbatim line of it; reject every other condition."""
    conditions = []
    for name, pages in prompt_conditions(prompt):
        if name == establish:
            page, text = pages[0]
            line = next(t.strip() for t in text.splitlines() if len(t.strip()) >= 12)
            quote = "not on the page at all" if bad_quote else line
            conditions.append({"condition": name, "established": True, "evidence": [{"page": page, "quote": quote}]})
        else:
            conditions.append({"condition": name, "established": False, "evidence": []})
    return {"conditions": conditions}


@pytest.mark.slow
def test_a_batch_round_trip_selects_on_what_the_reader_confirmed(indexed, tmp_path):
    from nclue.llm.batch import read_requests
    from nclue.llm.cache import BatchPending
    from nclue.reader.verified_coverage import open_verifier
    from nclue.select.single import NOT_FOUND, CoverageSelector

    selector = CoverageSelector(indexed)
    query = dict(query="writing algorithms in LaTeX", requirements=["floating environment", "pseudocode"], k=2,
                 pool_depth=3)  # fmt: skip
    plain = selector.select(**query)
    ask, cache = tmp_path / "ask.jsonl", tmp_path / "cache.jsonl"
    with pytest.raises(BatchPending) as pending:
        selector.select(**query, verify=open_verifier(indexed, "reader:T", cache=cache, batch_out=ask))
    assert pending.value.exit_code == 3
    prompts = read_requests(ask)
    names = [n for _, p in prompts for n, _ in prompt_conditions(p)]
    assert sorted(set(names)) == ["floating environment", "pseudocode"]
    replies = tmp_path / "replies.jsonl"
    replies.write_text(
        "".join(json.dumps({"custom_id": c, "reply": answer(p, "pseudocode")}) + "\n" for c, p in prompts)
    )
    verified = selector.select(
        **query, verify=open_verifier(indexed, "reader:T", cache=cache, batch_in=replies, answered_by="test")
    )
    v = verified.verification
    assert v["pairs_read"] == len(names) and v["established"] == names.count("pseudocode")
    assert v["malformed_replies"] == 0 and v["rejected_answers"] == 0 and v["model"] == "reader:T"
    assert verified.verdicts["floating environment"] == NOT_FOUND  # the reader rejected every read pair
    assert plain.verdicts["floating environment"] != NOT_FOUND  # the evidence alone said otherwise
    by_doc = {p: dict(prompt_conditions(text)) for p, text in prompts}
    first_page = {}
    for custom_id, text in prompts:
        doc_pages = dict(prompt_conditions(text)).get("pseudocode")
        if doc_pages:
            first_page[custom_id] = doc_pages[0][0]
    quoted = {s.doc_id: s.covers["pseudocode"] for s in verified.selected if "pseudocode" in s.covers}
    assert quoted and all(len(pages) == 1 for pages in quoted.values())
    assert all(pages[0] in first_page.values() for pages in quoted.values())
    assert all(s.probability["floating environment"] < 0.02 or s.probability["floating environment"] == 0.0
               for s in verified.selected)  # fmt: skip
    assert by_doc  # every prompt parsed
    cached = [json.loads(line) for line in cache.read_text().splitlines()]
    assert len(cached) == len(prompts) and {row["answered_by"] for row in cached} == {"test"}
    again = selector.select(**query, verify=open_verifier(indexed, "reader:T", cache=cache))
    assert again.to_json()["selected"] == verified.to_json()["selected"]  # the frozen cache answers: no batch file
    assert again.verdicts == verified.verdicts and again.verification["pairs_read"] == v["pairs_read"]


@pytest.mark.slow
def test_a_reply_with_a_quote_not_on_the_page_leaves_its_pair_unread(indexed, tmp_path):
    from nclue.llm.batch import read_requests
    from nclue.llm.cache import BatchPending
    from nclue.reader.verified_coverage import open_verifier
    from nclue.select.single import CoverageSelector

    selector = CoverageSelector(indexed)
    query = dict(query="writing algorithms", requirements=["floating environment", "pseudocode"], k=2, pool_depth=3)
    plain = selector.select(**query)
    ask = tmp_path / "ask.jsonl"
    with pytest.raises(BatchPending):
        selector.select(**query, verify=open_verifier(indexed, "reader:Q", cache=tmp_path / "c.jsonl", batch_out=ask))
    prompts = read_requests(ask)
    replies = tmp_path / "replies.jsonl"
    replies.write_text(
        "".join(
            json.dumps({"custom_id": c, "reply": answer(p, "pseudocode", bad_quote=True)}) + "\n" for c, p in prompts
        )
    )
    verified = selector.select(
        **query, verify=open_verifier(indexed, "reader:Q", cache=tmp_path / "c.jsonl", batch_in=replies)
    )
    names = [name for _, p in prompts for name, _ in prompt_conditions(p)]
    v = verified.verification
    assert v["rejected_answers"] == names.count("pseudocode") > 0  # every pseudocode answer quoted nothing real
    assert v["pairs_read"] == names.count("floating environment") and v["established"] == 0
    for s in verified.selected:  # a rejected answer leaves its pair unread: the evidence's probability stands
        alone = float(selector.model.evidence(["pseudocode"], [s.doc_id]).probs[0, 0])
        assert s.probability["pseudocode"] == pytest.approx(alone, abs=1e-12)
    assert any(s.probability["pseudocode"] not in (0.0, 1.0) for s in verified.selected)
    assert "left their pairs unread" in verified.render("markdown")
    fixed = tmp_path / "fixed.jsonl"  # the failed replies were not frozen: corrected ones answer now
    fixed.write_text("".join(json.dumps({"custom_id": c, "reply": answer(p, "pseudocode")}) + "\n" for c, p in prompts))
    corrected = selector.select(
        **query, verify=open_verifier(indexed, "reader:Q", cache=tmp_path / "c.jsonl", batch_in=fixed)
    )
    assert corrected.verification["rejected_answers"] == 0 and corrected.verification["pairs_read"] == len(names)
    assert plain.selected  # the unverified selection answered too


@pytest.mark.slow
def test_replies_that_match_no_prompt_are_named_when_the_run_stops(indexed, tmp_path):
    from nclue.llm.cache import BatchPending
    from nclue.reader.verified_coverage import open_verifier
    from nclue.select.single import CoverageSelector

    stale = tmp_path / "stale.jsonl"  # replies written for other prompts (another spelling, another pool)
    stale.write_text(json.dumps({"custom_id": "0" * 64, "reply": {"conditions": []}}) + "\n")
    with pytest.raises(BatchPending, match="1 imported replies matched no prompt"):
        CoverageSelector(indexed).select(
            "writing algorithms", ["floating environment", "pseudocode"], k=2, pool_depth=3,
            verify=open_verifier(indexed, "reader:S", cache=tmp_path / "c.jsonl", batch_in=stale),
        )  # fmt: skip


@pytest.mark.slow
def test_without_an_endpoint_the_prompts_go_beside_the_cache(cli, indexed, tmp_path, monkeypatch):
    monkeypatch.delenv("NCLUE_LLM_URL", raising=False)
    result = cli("coverage", "select", indexed, "-q", "x", "-r", "pseudocode", "-r", "floating environment",
                 "--k", "2", "--pool-depth", "3", "--verify-model", "reader:A",
                 "--verify-cache", str(tmp_path / "v" / "cache.jsonl"))  # fmt: skip
    assert result.exit_code == 3, result.output
    assert (tmp_path / "v" / "coverage_verify.requests.jsonl").is_file()


def test_an_endpoint_and_batch_files_together_are_refused(cli, lexical_only, tmp_path):
    result = cli("coverage", "select", lexical_only, "-q", "x", "-r", "pseudocode", "--verify-model", "m",
                 "--llm-url", "http://127.0.0.1:9/v1", "--verify-batch-out", str(tmp_path / "a.jsonl"))  # fmt: skip
    assert result.exit_code == 2 and "not both" in result.output


@pytest.mark.slow
def test_cli_batch_out_stops_with_exit_3_and_the_import_command(cli, indexed, tmp_path):
    ask = tmp_path / "ask.jsonl"
    result = cli("coverage", "select", indexed, "-q", "x", "-r", "pseudocode", "-r", "floating environment", "--k", "2",
                 "--pool-depth", "3", "--verify-model", "reader:A", "--verify-batch-out", str(ask),
                 "--verify-cache", str(tmp_path / "cache.jsonl"))  # fmt: skip
    assert result.exit_code == 3, result.output
    assert ask.is_file() and "--verify-batch-in" in result.output
    rows = [json.loads(line) for line in ask.read_text().splitlines()]
    contents = [row["body"]["messages"][0]["content"] for row in rows]
    assert contents and all('Condition 1: "' in c for c in contents)
    assert any('"pseudocode"' in c for c in contents) and any('"floating environment"' in c for c in contents)


def test_reply_options_without_a_reader_and_a_floor_above_one_half_are_refused(cli, lexical_only, tmp_path):
    result = cli("coverage", "select", lexical_only, "-q", "x", "-r", "pseudocode",
                 "--verify-batch-in", str(tmp_path / "r.jsonl"))  # fmt: skip
    assert result.exit_code == 2 and "name the reader with --verify-model" in result.output
    result = cli("coverage", "select", lexical_only, "-q", "x", "-r", "pseudocode", "--verify-pages", "3")
    assert result.exit_code == 2 and "--verify-pages belongs to reader verification" in result.output
    result = cli("coverage", "select", lexical_only, "-q", "x", "-r", "pseudocode", "--verify-model", "reader:A",
                 "--verify-floor", "0.7", "--verify-batch-out", str(tmp_path / "a.jsonl"))  # fmt: skip
    assert result.exit_code == 2 and "verify floor 0.7 must lie in (0, 0.5]" in result.output
    assert not (tmp_path / "a.jsonl").exists()


def test_reading_from_files_stops_with_the_prompts_then_reads_the_replies_and_the_cache(tmp_path):
    """``read_from_files``: no replies → BatchPending with every prompt in ``prompts.jsonl`` (the request's
    own prompt text); replies imported → the quoted pages; the replies gone → the frozen cache answers."""
    from nclue.llm.cache import BatchPending
    from nclue.reader.reading import read_from_files
    from nclue.reader.verified_coverage import reading_request

    pages = {
        3: "Line numbering\nThe lineno package numbers every line of the text.",
        8: "An index entry: footnotes, 12",
    }
    requests = [
        reading_request("d/one", [("line numbering", [8, 3]), ("footnotes", [8])], lambda doc, p: pages[p], "a")
    ]
    assert requests[0].item["id"].startswith("a")
    assert [p["page"] for p in requests[0].item["conditions"][0]["pages"]] == [8, 3]  # the given order
    work, replies = tmp_path / "work", tmp_path / "replies.jsonl"
    with pytest.raises(BatchPending):
        read_from_files(requests, work, replies, "reader:F")
    prompts = [json.loads(line) for line in (work / "prompts.jsonl").read_text().splitlines()]
    assert [p["prompt"] for p in prompts] == [requests[0].prompt]
    replies.write_text(
        "".join(
            json.dumps({"custom_id": p["custom_id"], "reply": answer(p["prompt"], "line numbering")}) + "\n"
            for p in prompts
        )
    )
    readings = read_from_files(requests, work, replies, "reader:F", answered_by="test")
    assert readings.pages == {("d/one", "line numbering"): (8,), ("d/one", "footnotes"): ()}
    replies.unlink()
    assert read_from_files(requests, work, replies, "reader:F").pages == readings.pages
