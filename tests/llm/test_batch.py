"""Batch files of the LLM client: request formats, the three reply formats, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nclue.errors import NclueError
from nclue.llm.batch import Request, read_replies, read_requests, write_requests
from nclue.llm.cache import Asker, BatchPending, ResponseCache
from nclue.llm.client import LLMConfig
from nclue.llm.replies import json_object


def lines(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_request_files_are_batch_api_input(tmp_path: Path) -> None:
    reqs = [Request("b", "m", "second", 10), Request("a", "m", "first", 10)]
    write_requests(tmp_path / "o.jsonl", reqs)
    rows = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [r["custom_id"] for r in rows] == ["a", "b"]  # sorted
    assert rows[0] == {
        "custom_id": "a",
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {"model": "m", "messages": [{"role": "user", "content": "first"}], "max_tokens": 10},
    }
    write_requests(tmp_path / "a.jsonl", reqs, api="anthropic")
    row = json.loads((tmp_path / "a.jsonl").read_text().splitlines()[0])
    assert row == {
        "custom_id": "a",
        "params": {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "first"}]},
    }
    assert (
        read_requests(tmp_path / "a.jsonl") == read_requests(tmp_path / "o.jsonl") == [("a", "first"), ("b", "second")]
    )


def test_replies_in_openai_anthropic_and_plain_form(tmp_path: Path) -> None:
    path = lines(
        tmp_path / "r.jsonl",
        [
            {"custom_id": "o", "response": {"status_code": 200, "body": {"choices": [{"message": {"content": "A"}}]}}},
            {"custom_id": "x", "response": {"status_code": 500, "body": {}}, "error": {"message": "boom"}},
            {
                "custom_id": "c",
                "result": {"type": "succeeded", "message": {"content": [{"type": "text", "text": "B"}]}},
            },
            {"custom_id": "e", "result": {"type": "errored"}},
            {"custom_id": "p", "reply": "C"},
            {"custom_id": "j", "reply": {"conditions": []}},
        ],
    )
    got = {k: v.text for k, v in read_replies(path).items()}
    assert got == {"o": "A", "c": "B", "p": "C", "j": '{"conditions": []}'}


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"reply": "x"}, "no custom_id"),
        ({"custom_id": "a", "text": "x"}, "not a reply line"),
    ],
)
def test_bad_reply_lines_name_the_line(tmp_path: Path, row: dict, message: str) -> None:
    with pytest.raises(NclueError, match=rf"r\.jsonl:1: {message}"):
        read_replies(lines(tmp_path / "r.jsonl", [row]))


def test_asker_batch_round_trip_records_provenance(tmp_path: Path) -> None:
    cache = tmp_path / "cache.jsonl"
    config = LLMConfig(model="reader:A")
    asker = Asker(config, ResponseCache(cache), "t", "template {x}", mode="batch", batch_out=tmp_path / "req.jsonl")
    assert asker.ask("hello") is None and asker.ask("hello") is None  # pending once
    with pytest.raises(BatchPending) as pending:
        asker.finish()
    assert pending.value.pending == 1 and pending.value.exit_code == 3
    ((cid, prompt),) = read_requests(tmp_path / "req.jsonl")
    assert prompt == "hello" and cid == ResponseCache.key("hello", "reader:A")
    replies = lines(tmp_path / "rep.jsonl", [{"custom_id": cid, "reply": "hi"}, {"custom_id": "stray", "reply": "?"}])
    again = Asker(config, ResponseCache(cache), "t", "template {x}", mode="batch", batch_in=replies, answered_by="A")
    assert again.ask("hello") == "hi" and again.unmatched == 1
    again.finish()
    row = json.loads(cache.read_text())
    assert (row["answered_by"], row["template"], row["model"]) == ("A", "t", "reader:A")
    assert len(row["template_sha256"]) == 64 and ResponseCache(cache).provenance()["answered_by"] == {"A": 1}


def test_imported_replies_keep_the_date_they_were_answered(tmp_path: Path) -> None:
    config = LLMConfig(model="reader:A")
    cid = ResponseCache.key("hello", "reader:A")
    replies = lines(tmp_path / "rep.jsonl", [{"custom_id": cid, "reply": "hi"}])
    asker = Asker(
        config, ResponseCache(tmp_path / "c.jsonl"), "t", "x", mode="batch", batch_in=replies, answered_on="2025-03-04"
    )
    assert asker.ask("hello") == "hi"
    asker.finish()
    assert ResponseCache(tmp_path / "c.jsonl").provenance()["dates"] == ["2025-03-04", "2025-03-04"]
    with pytest.raises(NclueError, match="'4 March' is not a date; give it as YYYY-MM-DD"):
        Asker(config, ResponseCache(tmp_path / "d.jsonl"), "t", "x", mode="batch", answered_on="4 March")


def test_a_reply_line_can_carry_its_own_reader_and_date(tmp_path: Path) -> None:
    config = LLMConfig(model="reader:A")
    a, b = ResponseCache.key("one", "reader:A"), ResponseCache.key("two", "reader:A")
    replies = lines(
        tmp_path / "rep.jsonl",
        [
            {"custom_id": a, "reply": "first"},
            {"custom_id": b, "reply": "second", "answered_by": "reader B", "answered_on": "2025-04-01"},
        ],
    )
    asker = Asker(
        config,
        ResponseCache(tmp_path / "c.jsonl"),
        "t",
        "x",
        mode="batch",
        batch_in=replies,
        answered_by="reader A",
        answered_on="2025-03-04",
    )
    assert (asker.ask("one"), asker.ask("two")) == ("first", "second")
    asker.finish()
    rows = {r["response"]: r for r in map(json.loads, (tmp_path / "c.jsonl").read_text().splitlines())}
    assert (rows["first"]["answered_by"], rows["first"]["date"]) == ("reader A", "2025-03-04")
    assert (rows["second"]["answered_by"], rows["second"]["date"]) == ("reader B", "2025-04-01")
    bad = lines(tmp_path / "bad.jsonl", [{"custom_id": a, "reply": "x", "answered_on": "April"}])
    with pytest.raises(NclueError, match=r"bad.jsonl:1: answered_on 'April' is not a date"):
        Asker(config, ResponseCache(tmp_path / "d.jsonl"), "t", "x", mode="batch", batch_in=bad)


def test_json_object_strips_fences_and_prose() -> None:
    assert json_object('Sure:\n```json\n{"a": 1}\n```') == {"a": 1}
    for bad, message in (("no json", "no JSON object"), ("{bad}", "not JSON"), ("[1]", "no JSON object")):
        with pytest.raises(ValueError, match=message):
            json_object(bad)
