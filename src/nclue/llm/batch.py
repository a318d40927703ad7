"""Batch files: pending prompts out, replies in.

A **request file** is JSON Lines in the OpenAI Batch API's input format, so it can be uploaded
as it is — ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body": {"model",
"messages": [{"role": "user", "content": PROMPT}], "max_tokens"}}`` — or, with ``api="anthropic"``,
in the Message Batches format ``{"custom_id", "params": {"model", "max_tokens", "messages"}}``.
``custom_id`` is the prompt's cache key (:meth:`nclue.llm.cache.ResponseCache.key`).

A **replies file** is JSON Lines with one reply per line, in any of three forms:

* an OpenAI batch output line — ``{"custom_id", "response": {"status_code", "body": {chat
  completion}}, "error"}``;
* an Anthropic batch result line — ``{"custom_id", "result": {"type": "succeeded", "message":
  {…, "content": [{"type": "text", "text"}]}}}``;
* a plain line — ``{"custom_id", "reply": TEXT}`` — for scripts and people (a JSON object or array
  given as ``reply`` is taken as its JSON text).

Any line may also carry its own provenance, ``"answered_by"`` and ``"answered_on"``
(``YYYY-MM-DD``); they override the command's ``--llm-answered-by`` / ``--llm-answered-on`` for
that reply, so one file can hold replies read by different readers on different days.

Failed lines (an error, a non-200 status, ``errored``/``expired`` results) are skipped and
counted; a ``custom_id`` that appears twice is refused. The replies are then read by the
command that wrote the requests, which validates each one with its own parser, exactly as if
the endpoint had answered.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from nclue.errors import NclueError, where
from nclue.io import iter_jsonl, write_jsonl
from nclue.llm.client import reply_text


@dataclass(frozen=True)
class Request:
    """One pending prompt."""

    custom_id: str
    model: str
    prompt: str
    max_tokens: int


@dataclass(frozen=True)
class Reply:
    """One reply read from a replies file (``line``: where it came from)."""

    custom_id: str
    text: str
    line: int
    answered_by: str | None = None
    answered_on: str | None = None


def request_row(request: Request, api: str = "openai") -> dict:
    """The batch-API line of one request (OpenAI or Anthropic format)."""
    messages = [{"role": "user", "content": request.prompt}]
    if api == "anthropic":
        return {
            "custom_id": request.custom_id,
            "params": {"model": request.model, "max_tokens": request.max_tokens, "messages": messages},
        }
    return {
        "custom_id": request.custom_id,
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {"model": request.model, "messages": messages, "max_tokens": request.max_tokens},
    }


def write_requests(path: str | os.PathLike[str], requests: list[Request], api: str = "openai") -> int:
    """Write the requests (sorted by ``custom_id``) as a batch input file; return how many."""
    return write_jsonl(path, [request_row(r, api) for r in sorted(requests, key=lambda r: r.custom_id)])


def read_requests(path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """``(custom_id, prompt)`` of every line of a request file (either format)."""
    out = []
    for line, row in iter_jsonl(path):
        body = row.get("body") if "body" in row else row.get("params")
        try:
            prompt = body["messages"][0]["content"]  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            raise NclueError(f"{where(path, line)}: not a batch request line (no body.messages[0].content)") from None
        out.append((str(row.get("custom_id", "")), str(prompt)))
    return out


def _text_of(row: dict) -> str | None:
    """The reply text of one replies-file line, or ``None`` for a failed request."""
    if "reply" in row:
        reply = row["reply"]
        if isinstance(reply, dict | list):  # a script or a reader wrote the JSON answer itself
            return json.dumps(reply, ensure_ascii=False)
        return reply if isinstance(reply, str) else None
    if "response" in row:
        response = row.get("response") or {}
        if row.get("error") or response.get("status_code", 200) != 200:
            return None
        return reply_text("openai", response.get("body"))
    if "result" in row:
        result = row.get("result") or {}
        if result.get("type") != "succeeded":
            return None
        return reply_text("anthropic", result.get("message"))
    raise KeyError("reply")


def read_replies(path: str | os.PathLike[str]) -> dict[str, Reply]:
    """Every usable reply of a replies file by ``custom_id`` (formats in the module docstring)."""
    p = Path(path)
    out: dict[str, Reply] = {}
    for line, row in iter_jsonl(p):
        custom_id = row.get("custom_id")
        if not isinstance(custom_id, str) or not custom_id:
            raise NclueError(f"{where(p, line)}: no custom_id; every reply must carry the custom_id of its request")
        if custom_id in out:
            raise NclueError(
                f"{where(p, line)}: custom_id {custom_id[:12]}… already answered on line {out[custom_id].line}; "
                "keep one reply per request"
            )
        try:
            text = _text_of(row)
        except (KeyError, IndexError, TypeError, AttributeError):
            raise NclueError(
                f"{where(p, line)}: not a reply line (expected 'reply', an OpenAI 'response' or an Anthropic 'result')"
            ) from None
        if text is not None:
            out[custom_id] = Reply(custom_id, text, line, *_provenance(row, p, line))
    return out


def _provenance(row: dict, path: Path, line: int) -> tuple[str | None, str | None]:
    """A reply line's own ``answered_by`` and ``answered_on`` (``None`` where absent), checked."""
    from datetime import date

    by, on = row.get("answered_by"), row.get("answered_on")
    if by is not None and (not isinstance(by, str) or not by.strip()):
        raise NclueError(f"{where(path, line)}: answered_by must be a non-empty string (who answered)")
    if on is not None:
        try:
            date.fromisoformat(str(on))
        except ValueError:
            raise NclueError(
                f"{where(path, line)}: answered_on {on!r} is not a date; give it as YYYY-MM-DD (e.g. 2026-12-01)"
            ) from None
    return by, None if on is None else str(on)
