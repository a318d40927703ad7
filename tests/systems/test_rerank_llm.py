"""``rerank(BASE, llm:MODEL)``: an LLM grades each pooled document's best pages, through the local replay
server in both chat formats, with the frozen cache (a rerun needs no endpoint) and batch judging."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nclue.errors import NclueError
from nclue.llm.batch import read_requests
from nclue.llm.cache import BatchPending
from nclue.systems.backbone import Request
from nclue.systems.registry import Workspace
from nclue.systems.rerank import LLM_MAX_TOKENS, LLM_PAGE_CHARS

REQUEST = Request(
    conditions=("numbered lines of verse", "footnotes in legal texts"),
    text='"numbered lines of verse"; "footnotes in legal texts"',
)
NAME = "rerank(bm25.joint, llm:grader-1, pool=5)"
WORDS = ("footnote", "legal", "text")


def grade_of(text: str) -> int:
    """The scripted grader: how many of :data:`WORDS` the page text holds (0-3)."""
    return sum(w in text.lower() for w in WORDS)


def answer(prompt: str) -> str:
    """Reply to a grading prompt from its pages only (between the page list's heading and the grading rule)."""
    pages = prompt.split("Pages of the document:", 1)[1].split("Grade the document:", 1)[0]
    return json.dumps({"grade": grade_of(pages)})


def expected_ranking(ws: Workspace) -> list[tuple[str, float]]:
    """By hand: the base pool re-sorted (stable) by the grade of each document's three best BM25 pages."""
    pool = ws.system("bm25.joint").search(REQUEST, depth=5)
    page = ws.backbone("bm25").page_scores([REQUEST.text])[0]
    grades = []
    for doc in pool:
        i = ws.store.doc_index[doc.doc_id]
        start, stop = ws.pages.doc_offsets[i], ws.pages.doc_offsets[i + 1]
        best = sorted(range(start, stop), key=lambda r: (-page[r], r))[:3]
        grades.append(grade_of(" ".join(ws.store.texts[r][:LLM_PAGE_CHARS] for r in best)))
    order = sorted(range(len(pool)), key=lambda i: -grades[i])
    return [(pool[i].doc_id, float(grades[i])) for i in order]


@pytest.fixture
def llm_env(tmp_path: Path, monkeypatch):  # noqa: ANN201 - sets the endpoint environment
    """A private cache file; ``set_endpoint(url, api)`` points ``NCLUE_LLM_*`` at an endpoint."""
    monkeypatch.setenv("NCLUE_RERANK_CACHE", str(tmp_path / "cache.jsonl"))
    for var in ("NCLUE_LLM_URL", "NCLUE_LLM_MODEL", "NCLUE_RERANK_BATCH_OUT", "NCLUE_RERANK_BATCH_IN"):
        monkeypatch.delenv(var, raising=False)

    def set_endpoint(url: str, api: str) -> None:
        monkeypatch.setenv("NCLUE_LLM_URL", url)
        monkeypatch.setenv("NCLUE_LLM_API", api)
        monkeypatch.setenv("NCLUE_LLM_KEY", "secret")

    return set_endpoint


def ranking(collection: Path) -> list[tuple[str, float]]:
    return [(d.doc_id, d.score) for d in Workspace(collection).system(NAME).search(REQUEST)]


@pytest.mark.parametrize(("api", "path"), [("openai", "/v1/chat/completions"), ("anthropic", "/v1/messages")])
def test_llm_grades_then_the_cache_answers_without_endpoint(
    lexical_collection: Path, replay_server, llm_env, api: str, path: str
) -> None:
    server = replay_server(answer)
    llm_env(server.url, api)
    first = ranking(lexical_collection)
    assert first == expected_ranking(Workspace(lexical_collection))
    assert first[-1][0].endswith("verse/verse")  # BM25's first document grades lowest: the pool is reordered
    assert len(server.requests) == 5 and {r["path"] for r in server.requests} == {path}
    sent = server.requests[0]
    assert sent["model"] == "grader-1" and sent["max_tokens"] == LLM_MAX_TOKENS
    if api == "anthropic":
        assert sent["x-api-key"] == "secret" and sent["anthropic-version"] and sent["auth"] is None
    else:
        assert sent["auth"] == "Bearer secret" and sent["x-api-key"] is None
    server.close()
    assert ranking(lexical_collection) == first  # served from the frozen cache: the endpoint is gone
    assert len(server.requests) == 5


def test_uncached_prompt_without_endpoint_fails(lexical_collection: Path, llm_env, monkeypatch) -> None:
    from tests.fixtures.chat_replay import closed_port_url

    llm_env(closed_port_url(), "anthropic")
    with pytest.raises(NclueError, match="unreachable"):
        ranking(lexical_collection)


def test_batch_judging_round_trip(lexical_collection: Path, tmp_path: Path, llm_env, monkeypatch) -> None:
    """Prompts exported (Anthropic batch format), replies imported, the same ranking as online grading."""
    monkeypatch.setenv("NCLUE_LLM_API", "anthropic")
    requests = tmp_path / "requests.jsonl"
    monkeypatch.setenv("NCLUE_RERANK_BATCH_OUT", str(requests))
    with pytest.raises(BatchPending, match="5 prompts wait for answers") as pending:
        ranking(lexical_collection)
    assert pending.value.path == requests
    assert all("params" in json.loads(line) for line in requests.read_text().splitlines())
    replies = tmp_path / "replies.jsonl"
    rows = [{"custom_id": cid, "reply": answer(prompt)} for cid, prompt in read_requests(requests)]
    replies.write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("NCLUE_RERANK_BATCH_IN", str(replies))
    assert ranking(lexical_collection) == expected_ranking(Workspace(lexical_collection))
    monkeypatch.delenv("NCLUE_RERANK_BATCH_IN")
    monkeypatch.delenv("NCLUE_RERANK_BATCH_OUT")
    assert ranking(lexical_collection) == expected_ranking(Workspace(lexical_collection))  # now from the cache


def test_malformed_reply_and_missing_model(lexical_collection: Path, replay_server, llm_env, monkeypatch) -> None:
    llm_env(replay_server(lambda prompt: "relevant, I think").url, "openai")
    with pytest.raises(NclueError, match=r"is not \{\"grade\": 0-3\}.*delete that row to ask again"):
        ranking(lexical_collection)
    with pytest.raises(NclueError, match="needs the model that answers.*llm:MODEL or set NCLUE_LLM_MODEL"):
        Workspace(lexical_collection).system("rerank(bm25.joint, llm)")
