"""The frozen response cache and the cached ask loop every LLM path shares.

:class:`ResponseCache` maps ``SHA-256(canonical {model, prompt})`` to the reply, persisted as
sorted JSON Lines. Every row keeps its provenance: the prompt template's name and SHA-256, who
answered (an endpoint URL, or the label given when a batch file was imported) and the UTC date.
A rebuild reads the cache, makes the same decisions and calls nothing.

:class:`Asker` is the loop around it: a prompt's reply comes from the cache, else from the
endpoint (``mode="online"``), else — ``mode="batch"`` — from the replies imported from a batch
file, or it is recorded as *pending*. :meth:`Asker.finish` saves the cache and, when prompts are
still pending, writes them as a batch request file (:mod:`nclue.llm.batch`) and raises
:class:`BatchPending` naming the file and the command that imports the answers.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path

from nclue.errors import NclueError
from nclue.io import dumps_canonical, iter_jsonl, sha256_bytes, write_jsonl
from nclue.llm.batch import Reply, Request, read_replies, write_requests
from nclue.llm.client import LLMConfig, chat

MODES: tuple[str, ...] = ("online", "batch")


class BatchPending(NclueError):
    """Prompts are waiting for answers in a batch request file (exit code 3: nothing is wrong, work is pending)."""

    def __init__(self, message: str, path: Path, pending: int) -> None:
        super().__init__(message, exit_code=3)
        self.path, self.pending = path, pending


def template_sha256(text: str) -> str:
    """SHA-256 of a prompt template's text (recorded with every reply it produced)."""
    return sha256_bytes(text.encode("utf-8"))


class ResponseCache:
    """Prompt-hash → reply with provenance, persisted as sorted JSON Lines."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.entries: dict[str, dict[str, str]] = {}
        if self.path.is_file():
            for line, row in iter_jsonl(self.path):
                if not isinstance(row.get("prompt_sha256"), str) or not isinstance(row.get("response"), str):
                    raise NclueError(
                        f"{self.path}:{line}: not a response-cache row (needs prompt_sha256 and response); "
                        "restore the file from the release or delete it to ask again"
                    )
                self.entries[row["prompt_sha256"]] = row

    @staticmethod
    def key(prompt: str, model: str | None) -> str:
        """``SHA-256(canonical {model, prompt})`` — also the ``custom_id`` of a batch request."""
        return sha256_bytes(dumps_canonical({"model": model or "", "prompt": prompt}).encode("utf-8"))

    def get(self, prompt: str, model: str | None) -> str | None:
        """The cached reply, or ``None``."""
        row = self.entries.get(self.key(prompt, model))
        return row["response"] if row else None

    def put(
        self,
        prompt: str,
        model: str | None,
        response: str,
        template: str = "",
        template_hash: str = "",
        answered_by: str = "",
        date: str | None = None,
    ) -> None:
        """Freeze one reply with its provenance (a newer reply to the same prompt replaces it)."""
        k = self.key(prompt, model)
        self.entries[k] = {
            "prompt_sha256": k,
            "model": model or "",
            "prompt": prompt,
            "response": response,
            "template": template,
            "template_sha256": template_hash,
            "answered_by": answered_by,
            "date": date or datetime.now(UTC).date().isoformat(),
        }

    def save(self) -> None:
        """Write every row, sorted by key (atomic)."""
        write_jsonl(self.path, [self.entries[k] for k in sorted(self.entries)])

    def provenance(self) -> dict:
        """Who answered what: models, answerers, templates (name → SHA-256) and the date range, with counts."""
        rows = list(self.entries.values())
        dates = sorted(r.get("date", "") for r in rows if r.get("date"))
        templates = {r.get("template", ""): r.get("template_sha256", "") for r in rows if r.get("template")}
        return {
            "replies": len(rows),
            "models": dict(sorted(Counter(r.get("model", "") for r in rows).items())),
            "answered_by": dict(sorted(Counter(r.get("answered_by", "") or "unrecorded" for r in rows).items())),
            "templates": dict(sorted(templates.items())),
            "dates": [dates[0], dates[-1]] if dates else [],
        }


@dataclass
class Asker:
    """The cached ask loop of one LLM path (see the module docstring).

    ``template``/``template_text``: the prompt template's name and text (hashed into the
    provenance); ``batch_out``: where pending prompts go in batch mode; ``batch_in``: a replies
    file to import (its rows are matched to prompts by ``custom_id``); ``answered_by``: the
    provenance label of imported replies; ``answered_on``: their date (``YYYY-MM-DD``; default
    the day of import), so that a rebuild from frozen replies records the same provenance; ``resume``: the command that imports the answers.
    """

    config: LLMConfig
    cache: ResponseCache
    template: str
    template_text: str
    mode: str = "online"
    batch_out: Path | None = None
    batch_in: Path | None = None
    answered_by: str = ""
    answered_on: str | None = None
    resume: str = ""
    fresh: int = 0
    cached: int = 0
    imported: int = 0
    pending: list[Request] = field(default_factory=list)
    _replies: dict[str, Reply] = field(default_factory=dict)
    _used: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise NclueError(f"LLM mode {self.mode!r} is not one of {', '.join(MODES)}")
        if self.mode == "batch" and not self.config.model:
            raise NclueError(
                "a batch file needs the name of the model that will answer it (--model / --llm-model, e.g. "
                "gpt-4o-mini, or reader:A when people answer); it keys the frozen cache"
            )
        if self.answered_on is not None:
            try:
                date.fromisoformat(self.answered_on)
            except ValueError:
                raise NclueError(
                    f"the answer date {self.answered_on!r} is not a date; give it as YYYY-MM-DD (e.g. 2026-12-01)"
                ) from None
        if self.batch_in is not None:
            self._replies = read_replies(self.batch_in)
        self.template_hash = template_sha256(self.template_text)

    def known(self, prompt: str) -> bool:
        """The prompt's reply is in the cache or among the imported replies."""
        k = self.cache.key(prompt, self.config.model)
        return k in self.cache.entries or k in self._replies

    def ask(self, prompt: str) -> str | None:
        """The reply to ``prompt`` (cache → imported batch → endpoint), or ``None`` while it is pending."""
        reply = self.cache.get(prompt, self.config.model)
        if reply is not None:
            self.cached += 1
            return reply
        k = self.cache.key(prompt, self.config.model)
        if k in self._replies:
            got = self._replies[k]
            self._used.add(k)
            self.cache.put(
                prompt,
                self.config.model,
                got.text,
                self.template,
                self.template_hash,
                got.answered_by
                or self.answered_by
                or f"batch file {self.batch_in.name if self.batch_in else ''}".strip(),
                got.answered_on or self.answered_on,
            )
            self.imported += 1
            return got.text
        if self.mode == "batch":
            if k not in {r.custom_id for r in self.pending}:
                self.pending.append(Request(k, self.config.model or "", prompt, self.config.max_tokens))
            return None
        try:
            reply = chat(self.config, prompt)
        except NclueError as exc:
            self.cache.save()
            raise NclueError(
                f"{exc} ({self.fresh + self.imported} replies so far are frozen in {self.cache.path}; rerun to continue)"
            ) from None
        self.cache.put(prompt, self.config.model, reply, self.template, self.template_hash, self.config.url or "")
        self.fresh += 1
        return reply

    def forget(self, prompt: str) -> None:
        """Drop ``prompt``'s frozen reply (one that failed validation), so a corrected reply can answer it later."""
        self.cache.entries.pop(self.cache.key(prompt, self.config.model), None)

    @property
    def unmatched(self) -> int:
        """Imported replies whose ``custom_id`` matched no prompt this run asked."""
        return len(set(self._replies) - self._used - set(self.cache.entries))

    def finish(self) -> None:
        """Save the cache; in batch mode with prompts pending, write them and raise :class:`BatchPending`."""
        self.cache.save()
        if not self.pending:
            return
        target = self.batch_out or self.cache.path.with_name(f"{self.template}.requests.jsonl")
        write_requests(target, self.pending, self.config.api)
        note = f" ({self.imported} replies imported this run)" if self.imported else ""
        raise BatchPending(
            f"{len(self.pending)} prompts wait for answers in {target}{note}: send the file to a batch API "
            f"(its lines are {self.config.api} batch requests), a script or readers, then import the replies"
            + (f" with `{self.resume}`" if self.resume else ""),
            target,
            len(self.pending),
        )
