"""The LLM judge against a local HTTP server that replays recorded chat-completion responses, and in batch rounds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nclue.bench.compose import evaluate
from nclue.bench.inventory import Condition, Inventory
from nclue.bench.llm import TEMPLATE, LLMGate
from nclue.bench.prompts import template
from nclue.bench.prompts.verify_item import parse
from nclue.corpus.store import PageStore
from nclue.errors import NclueError
from nclue.llm.batch import read_requests
from nclue.llm.cache import Asker, BatchPending, ResponseCache
from nclue.llm.client import LLMConfig
from tests.fixtures.chat_replay import ReplayServer, closed_port_url

DOCS = {
    "a/gold": [
        "1 Footnotes\nFootnotes are notes at the foot of the page. Footnotes carry references.",
        "2 Bibliography\nThe bibliography lists every cited work; bibliography styles vary.",
    ],
    "a/subset": ["1 Footnotes\nFootnotes here, footnotes there.", "Nothing else."],
}


def judge(inv, store, url, cache: Path, model: str | None = "m", key: str | None = None, **batch) -> LLMGate:  # noqa: ANN001
    """An LLM gate asking ``url`` through a frozen cache at ``cache`` (batch options as :class:`Asker`'s)."""
    mode = "batch" if batch else "online"
    config = LLMConfig(url=url, model=model, key=key)
    return LLMGate(inv, store, Asker(config, ResponseCache(cache), TEMPLATE, template(TEMPLATE), mode=mode, **batch))


@pytest.fixture
def setup(make_collection):
    store = PageStore.open(make_collection(DOCS))
    inv = Inventory(
        doc_ids=store.doc_ids.tolist(),
        n_pages=np.array([2, 2]),
        conditions=[
            Condition(name="bibliography", aliases=("bibliography",), key=("bibliography",), heading_df=1),
            Condition(name="footnotes", aliases=("footnote", "footnotes"), key=("footnote",), heading_df=1),
        ],
        pages=[{0: (2,)}, {0: (1,), 1: (1,)}],
    )
    item = evaluate(inv, (0, 1), max_golds=5)
    assert item is not None and item.golds == (0,)
    return store, inv, item


def _recorded(gate: LLMGate, item, verdict: bool = True, quote: str | None = None) -> dict[str, str]:
    prompt, names, excerpts = gate.prompt(item, item.golds[0])
    entries = []
    for name in names:
        page, text = next(iter(excerpts[name].items()))
        entries.append({"condition": name, "established": verdict, "page": page, "quote": quote or text.split(".")[0]})
    return {prompt: json.dumps({"conditions": entries})}


def test_llm_gate_calls_once_then_reads_cache(setup, tmp_path: Path) -> None:
    store, inv, item = setup
    cache_path = tmp_path / "judge" / "llm_cache.jsonl"
    probe = judge(inv, store, "x", cache_path)
    server = ReplayServer(_recorded(probe, item).__getitem__)
    try:
        gate = judge(inv, store, server.url, cache_path, key="k")
        assert gate(item) is True
        assert len(server.requests) == 1
        assert server.requests[0]["path"] == "/v1/chat/completions"
        assert server.requests[0]["auth"] == "Bearer k" and server.requests[0]["model"] == "m"
        gate.cache.save()
    finally:
        server.close()
    rows = [json.loads(line) for line in cache_path.read_text().splitlines()]
    assert len(rows) == 1 and len(rows[0]["prompt_sha256"]) == 64
    # rebuild: the endpoint is gone, the frozen answer is used and nothing is called
    again = judge(inv, store, closed_port_url(), cache_path)
    assert again(item) is True
    assert again.cached_answers == 1 and again.fresh_answers == 0


def test_unreachable_endpoint_is_a_clear_error(setup, tmp_path: Path) -> None:
    store, inv, item = setup
    gate = judge(inv, store, closed_port_url(), tmp_path / "c.jsonl")
    with pytest.raises(NclueError, match="unreachable.*frozen in"):
        gate(item)
    unset = judge(inv, store, None, tmp_path / "d.jsonl", model=None)
    with pytest.raises(NclueError, match="NCLUE_LLM_URL"):
        unset(item)


def test_negative_and_malformed_answers_reject_the_item_and_are_frozen(setup, tmp_path: Path) -> None:
    store, inv, item = setup
    probe = judge(inv, store, "x", tmp_path / "p.jsonl")
    for responses, malformed in (
        (_recorded(probe, item, verdict=False), 0),
        (_recorded(probe, item, quote="invented text"), 1),
    ):
        cache_path = tmp_path / f"{malformed}.jsonl"
        server = ReplayServer(responses.__getitem__)
        try:
            gate = judge(inv, store, server.url, cache_path)
            assert gate(item) is False
            assert gate.malformed == malformed
            assert len(gate.cache.entries) == 1  # the rejected reply is frozen too
            gate.cache.save()
        finally:
            server.close()
        # offline, the frozen reply decides again, the same way, without calling anything
        again = judge(inv, store, closed_port_url(), cache_path)
        assert again(item) is False and again.malformed == malformed and again.fresh_answers == 0


def test_parser_accepts_fenced_json_and_checks_quotes() -> None:
    excerpts = {"a": {3: "Alpha is the first letter."}}
    ok = '```json\n{"conditions": [{"condition": "a", "established": true, "page": 3, "quote": "alpha is  the first"}]}\n```'
    assert parse(ok, ["a"], excerpts) == {"a": True}
    with pytest.raises(ValueError, match="not one of the offered pages"):
        parse('{"conditions": [{"condition": "a", "established": true, "page": 4, "quote": "Alpha"}]}', ["a"], excerpts)
    with pytest.raises(ValueError, match="expected 1"):
        parse('{"conditions": []}', ["a"], excerpts)


def test_batch_rounds_give_the_decisions_of_an_endpoint(setup, tmp_path: Path) -> None:
    """Export the pending prompt, answer it in a replies file, import it: same verdict and cache row as online."""
    store, inv, item = setup
    probe = judge(inv, store, "x", tmp_path / "probe.jsonl")
    ((prompt, answer),) = _recorded(probe, item).items()
    out = tmp_path / "requests.jsonl"
    gate = judge(inv, store, None, tmp_path / "cache.jsonl", batch_out=out)
    with pytest.raises(BatchPending, match="1 prompts wait for answers") as pending:
        gate.prefetch([item])
    assert pending.value.exit_code == 3 and pending.value.path == out
    ((custom_id, exported),) = read_requests(out)
    assert exported == prompt and custom_id == ResponseCache.key(prompt, "m")
    row = json.loads(out.read_text())
    assert row["method"] == "POST" and row["url"] == "/v1/chat/completions" and row["body"]["model"] == "m"
    replies = tmp_path / "replies.jsonl"
    replies.write_text(
        json.dumps(
            {
                "custom_id": custom_id,
                "response": {"status_code": 200, "body": {"choices": [{"message": {"content": answer}}]}},
            }
        )
        + "\n"
    )
    again = judge(inv, store, None, tmp_path / "cache.jsonl", batch_in=replies, answered_by="reader A")
    assert again.known(item) and again(item) is True
    again.asker.finish()
    cached = json.loads((tmp_path / "cache.jsonl").read_text())
    assert cached["response"] == answer and cached["answered_by"] == "reader A" and cached["template"] == TEMPLATE
    offline = judge(inv, store, closed_port_url(), tmp_path / "cache.jsonl")
    assert offline(item) is True and offline.fresh_answers == 0


def test_batch_replies_are_validated_by_the_same_parser(setup, tmp_path: Path) -> None:
    store, inv, item = setup
    probe = judge(inv, store, "x", tmp_path / "probe.jsonl")
    ((prompt, _),) = _recorded(probe, item).items()
    ((custom_id, _),) = [(ResponseCache.key(prompt, "m"), prompt)]
    invented = json.loads(_recorded(probe, item, quote="invented text")[prompt])
    replies = tmp_path / "replies.jsonl"
    replies.write_text(json.dumps({"custom_id": custom_id, "reply": invented}) + "\n")
    gate = judge(inv, store, None, tmp_path / "cache.jsonl", batch_in=replies)
    assert gate(item) is False and gate.malformed == 1  # the quote is not on the page: rejected, as online
    twice = tmp_path / "twice.jsonl"
    twice.write_text(replies.read_text() * 2)
    with pytest.raises(NclueError, match="already answered on line 1"):
        judge(inv, store, None, tmp_path / "c2.jsonl", batch_in=twice)
    with pytest.raises(NclueError, match="needs the name of the model"):
        judge(inv, store, None, tmp_path / "c3.jsonl", model=None, batch_out=tmp_path / "r.jsonl")


def test_anthropic_format_endpoint(setup, tmp_path: Path) -> None:
    """The Messages API: /v1/messages, x-api-key and anthropic-version headers, text blocks joined."""
    from nclue.llm.client import chat

    server = ReplayServer(lambda prompt: f"echo {prompt}")
    try:
        config = LLMConfig(url=server.url, model="claude-x", key="secret", api="anthropic", max_tokens=50)
        assert chat(config, "hello") == "echo hello"
        sent = server.requests[0]
        assert sent["path"] == "/v1/messages" and sent["x-api-key"] == "secret" and sent["auth"] is None
        assert sent["anthropic-version"] and sent["max_tokens"] == 50 and sent["model"] == "claude-x"
    finally:
        server.close()
    with pytest.raises(NclueError, match="not one of openai, anthropic"):
        LLMConfig.from_env(api="gemini")
