"""One chat call over an OpenAI- or Anthropic-compatible HTTP endpoint.

``api="openai"`` posts ``{model, messages: [{role: user, content}], max_tokens}`` to
``{url}/chat/completions`` and reads ``choices[0].message.content`` (OpenAI, vLLM, llama.cpp,
Ollama, LiteLLM, …); ``api="anthropic"`` posts ``{model, max_tokens, messages}`` to
``{url}/messages`` with ``x-api-key`` and ``anthropic-version`` headers and joins the reply's
``text`` blocks (the Messages API). No temperature, top-p or seed is sent, so the provider's
default applies, as in the seed's construction-model provenance. Configuration comes from
arguments or the environment: ``NCLUE_LLM_URL``, ``NCLUE_LLM_MODEL``, ``NCLUE_LLM_KEY``,
``NCLUE_LLM_API``.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass

from nclue.errors import NclueError

APIS: tuple[str, ...] = ("openai", "anthropic")
ANTHROPIC_VERSION = "2023-06-01"


@dataclass(frozen=True)
class LLMConfig:
    """Endpoint settings; :meth:`from_env` fills blanks from ``NCLUE_LLM_*`` variables."""

    url: str | None = None
    model: str | None = None
    key: str | None = None
    api: str = "openai"
    max_tokens: int = 800
    timeout_s: float = 60.0

    @classmethod
    def from_env(
        cls, url: str | None = None, model: str | None = None, key: str | None = None, api: str | None = None
    ) -> LLMConfig:
        """Arguments first, then ``NCLUE_LLM_URL`` / ``_MODEL`` / ``_KEY`` / ``_API``."""
        chosen = api or os.environ.get("NCLUE_LLM_API") or "openai"
        if chosen not in APIS:
            raise NclueError(f"LLM api {chosen!r} is not one of {', '.join(APIS)} (--llm-api or NCLUE_LLM_API)")
        return cls(
            url=url or os.environ.get("NCLUE_LLM_URL"),
            model=model or os.environ.get("NCLUE_LLM_MODEL"),
            key=key or os.environ.get("NCLUE_LLM_KEY"),
            api=chosen,
        )


def _request(config: LLMConfig, prompt: str) -> urllib.request.Request:
    headers = {"Content-Type": "application/json"}
    body: dict = {
        "model": config.model,
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": config.max_tokens,
    }
    base = (config.url or "").rstrip("/")
    if config.api == "anthropic":
        headers["anthropic-version"] = ANTHROPIC_VERSION
        if config.key:
            headers["x-api-key"] = config.key
        path = "/messages"
    else:
        if config.key:
            headers["Authorization"] = f"Bearer {config.key}"
        path = "/chat/completions"
    return urllib.request.Request(base + path, data=json.dumps(body).encode("utf-8"), headers=headers)


def reply_text(api: str, payload: object) -> str:
    """The reply text of a chat response body in ``api``'s format; ``KeyError``/``TypeError`` if it has none."""
    if api == "anthropic":
        blocks = payload["content"]  # type: ignore[index]
        return "".join(str(b["text"]) for b in blocks if b.get("type") == "text")
    return str(payload["choices"][0]["message"]["content"])  # type: ignore[index]


def chat(config: LLMConfig, prompt: str) -> str:
    """One chat call; raise :class:`NclueError` if the endpoint cannot answer."""
    if not config.url or not config.model:
        raise NclueError(
            "this step needs an LLM endpoint: set NCLUE_LLM_URL and NCLUE_LLM_MODEL (or pass the endpoint "
            "and model options), or export the requests as a batch file and import the replies"
        )
    try:
        with urllib.request.urlopen(_request(config, prompt), timeout=config.timeout_s) as reply:
            payload = json.loads(reply.read().decode("utf-8"))
        return reply_text(config.api, payload)
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        raise NclueError(f"LLM endpoint {config.url} is unreachable ({exc}); start it or use a batch file") from None
    except (KeyError, IndexError, TypeError, AttributeError, json.JSONDecodeError) as exc:
        raise NclueError(f"LLM endpoint {config.url} returned no {config.api} chat reply ({exc!r})") from None
