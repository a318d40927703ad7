"""The LLM judge: item verification through an OpenAI-compatible chat-completions endpoint.

For each gold document of a candidate item the judge renders ``prompts/verify_item.txt``
with the evidence excerpts of every condition, sends it to ``POST {url}/chat/completions``
(``model``, one user message, ``max_tokens``; no temperature, top-p or seed, so the
provider default applies, as in the seed's construction-model provenance), and parses the
reply with ``prompts/verify_item.py``. The item passes only if every condition is
established for every gold; a reply the parser rejects removes the item.

Every response — accepted or rejected by the parser — is frozen in a JSON Lines cache keyed
by the SHA-256 of the exact prompt (and the model name), so a rebuild reads the cache, makes
the same decisions and never calls the endpoint again (``docs/construction.md#llm-judge``);
the cache file ships with the release under ``judge/``. Configuration comes from
options or the environment: ``NCLUE_LLM_URL``, ``NCLUE_LLM_MODEL``, ``NCLUE_LLM_KEY``.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from nclue.bench.compose import Item
from nclue.bench.evidence import window
from nclue.bench.inventory import Inventory
from nclue.bench.prompts import template
from nclue.bench.prompts.verify_item import parse
from nclue.corpus.store import PageStore
from nclue.errors import NclueError
from nclue.io import dumps_canonical, iter_jsonl, sha256_bytes, write_jsonl


@dataclass(frozen=True)
class LLMConfig:
    """Endpoint settings; ``from_env`` fills blanks from ``NCLUE_LLM_*`` variables."""

    url: str | None = None
    model: str | None = None
    key: str | None = None
    max_tokens: int = 800
    timeout_s: float = 60.0

    @classmethod
    def from_env(cls, url: str | None = None, model: str | None = None, key: str | None = None) -> LLMConfig:
        return cls(
            url=url or os.environ.get("NCLUE_LLM_URL"),
            model=model or os.environ.get("NCLUE_LLM_MODEL"),
            key=key or os.environ.get("NCLUE_LLM_KEY"),
        )


class ResponseCache:
    """Prompt-hash → response text, persisted as sorted JSON Lines."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.entries: dict[str, dict[str, str]] = {}
        if self.path.is_file():
            for _, row in iter_jsonl(self.path):
                self.entries[row["prompt_sha256"]] = row

    @staticmethod
    def key(prompt: str, model: str | None) -> str:
        return sha256_bytes(dumps_canonical({"model": model or "", "prompt": prompt}).encode("utf-8"))

    def get(self, prompt: str, model: str | None) -> str | None:
        row = self.entries.get(self.key(prompt, model))
        return row["response"] if row else None

    def put(self, prompt: str, model: str | None, response: str) -> None:
        k = self.key(prompt, model)
        self.entries[k] = {"prompt_sha256": k, "model": model or "", "prompt": prompt, "response": response}

    def save(self) -> None:
        write_jsonl(self.path, [self.entries[k] for k in sorted(self.entries)])


def chat(config: LLMConfig, prompt: str) -> str:
    """One chat-completions call; raise :class:`NclueError` if the endpoint cannot answer."""
    if not config.url or not config.model:
        raise NclueError(
            "the LLM judge needs an endpoint: set NCLUE_LLM_URL and NCLUE_LLM_MODEL (or --llm-url/--llm-model), "
            "or use --judge offline"
        )
    body = json.dumps(
        {"model": config.model, "messages": [{"role": "user", "content": prompt}], "max_tokens": config.max_tokens}
    ).encode("utf-8")
    headers = {"Content-Type": "application/json"}
    if config.key:
        headers["Authorization"] = f"Bearer {config.key}"
    request = urllib.request.Request(config.url.rstrip("/") + "/chat/completions", data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=config.timeout_s) as reply:
            payload = json.loads(reply.read().decode("utf-8"))
        return str(payload["choices"][0]["message"]["content"])
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        raise NclueError(f"LLM endpoint {config.url} is unreachable ({exc}); start it or use --judge offline") from None
    except (KeyError, IndexError, TypeError, json.JSONDecodeError) as exc:
        raise NclueError(f"LLM endpoint {config.url} returned no chat completion ({exc!r})") from None


class LLMGate:
    """Callable gate ``item → bool`` backed by the response cache."""

    def __init__(
        self, inventory: Inventory, store: PageStore, config: LLMConfig, cache: ResponseCache, max_pages: int = 3
    ) -> None:
        self.inventory = inventory
        self.store = store
        self.config = config
        self.cache = cache
        self.max_pages = max_pages
        self.cached_answers = 0
        self.fresh_answers = 0
        self.malformed = 0

    def prompt(self, item: Item, doc: int) -> tuple[str, list[str], dict[str, dict[int, str]]]:
        """The rendered prompt, the condition names and the excerpts offered per condition."""
        doc_id = self.inventory.doc_ids[doc]
        names = [self.inventory.conditions[c].name for c in item.conditions]
        excerpts: dict[str, dict[int, str]] = {}
        blocks = []
        for c, name, pages in zip(item.conditions, names, item.docs[doc]):
            aliases = self.inventory.conditions[c].aliases
            excerpts[name] = {p: window(self.store.page_text(doc_id, p), aliases) for p in pages[: self.max_pages]}
            lines = [f'Condition "{name}" (surface forms: {", ".join(aliases)})']
            lines += [f"  page {p}: {text}" for p, text in excerpts[name].items()]
            blocks.append("\n".join(lines))
        prompt = template("verify_item").format(doc_id=doc_id, conditions_block="\n\n".join(blocks))
        return prompt, names, excerpts

    def __call__(self, item: Item) -> bool:
        for doc in item.golds:
            prompt, names, excerpts = self.prompt(item, doc)
            response = self.cache.get(prompt, self.config.model)
            if response is None:
                try:
                    response = chat(self.config, prompt)
                except NclueError as exc:
                    self.cache.save()
                    raise NclueError(
                        f"{exc} ({self.cached_answers} answers were read from the cache {self.cache.path}; "
                        "rerun with the endpoint available to verify the rest)"
                    ) from None
                self.cache.put(prompt, self.config.model, response)
                self.fresh_answers += 1
            else:
                self.cached_answers += 1
            try:
                verdicts = parse(response, names, excerpts)
            except ValueError:
                self.malformed += 1
                return False
            if not all(verdicts.values()):
                return False
        return True
