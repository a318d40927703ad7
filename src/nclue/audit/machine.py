"""``nclue audit machine``: an LLM evaluator that fills an export the way a person does (``docs/audit.md#machine-evaluator``).

It reads the packet's stored payload — exactly what a person sees: the information need,
the rubric and the displayed pages, nothing from the key — and asks the project's LLM client
(:mod:`nclue.llm`: an OpenAI- or Anthropic-compatible endpoint, or a batch file) one question per
item, with the prompt ``prompts/evaluate_item.txt``. Every reply — usable or not — is frozen in a
response cache keyed by the SHA-256 of the prompt and model (:class:`nclue.llm.cache.ResponseCache`),
with who answered it and when, so a rerun reads the cache, makes the same decisions and never
calls the endpoint again. With ``batch_out`` the prompts without a reply are written as a batch
request file instead (:class:`nclue.llm.cache.BatchPending`); ``batch_in`` imports the replies,
each validated by :func:`parse_reply` and the packet's rules as if an endpoint had answered. An item is *accepted* only when its
answers pass the same rules a person's do (:mod:`nclue.audit.validate`: a page and a verbatim
quote for every positive, none for a negative); otherwise it stays a draft, exactly as in the
browser, and is counted as rejected. The result is an ordinary export (with its digest), so
``nclue audit score`` reports the machine's agreement with people in the same tables.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from nclue.audit.audit_params import EXPORT_FORMAT, FORMAT_VERSION, MIN_QUOTE_CHARS
from nclue.audit.export import export_digest
from nclue.audit.store import AuditDir
from nclue.audit.validate import condition_problems
from nclue.errors import NclueError
from nclue.io import write_json
from nclue.llm.cache import Asker, ResponseCache
from nclue.llm.client import LLMConfig
from nclue.llm.replies import json_object
from nclue.progress import Progress, quiet
from nclue.tables import Table, Tabular

MAX_PAGE_CHARS = 6000
TEMPLATE = "evaluate_item"


@dataclass(frozen=True)
class MachineSummary(Tabular):
    """What the machine evaluator answered (``nclue audit machine``)."""

    path: Path
    packet_id: str
    evaluator: str
    model: str
    items: int
    accepted: int
    rejected: int
    malformed: int
    cached: int
    fresh: int
    imported: int = 0
    reasons: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {
            k: (str(v) if isinstance(v, Path) else list(v) if isinstance(v, tuple) else v)
            for k, v in self.__dict__.items()
        }

    def tables(self) -> list[Table]:
        rows = (
            ("Export", str(self.path)),
            ("Packet / evaluator / model", f"{self.packet_id} / {self.evaluator} / {self.model}"),
            ("Items", str(self.items)),
            ("Accepted (passed validation)", str(self.accepted)),
            ("Rejected by validation (left as drafts)", str(self.rejected)),
            ("Replies that did not parse (item left unanswered)", str(self.malformed)),
            ("Answers read from the cache / fresh / imported", f"{self.cached} / {self.fresh} / {self.imported}"),
        )
        return [Table(("Machine evaluator", "Value"), rows, "lr", "Machine evaluator run.")]


def prompt_for(item: Mapping[str, Any], max_chars: int = MAX_PAGE_CHARS) -> str:
    """The prompt of one packet item (need, rubric and page text as displayed, each page cut at ``max_chars``)."""
    blocks = []
    for i, cond in enumerate(item["conditions"], start=1):
        r = cond["rubric"]
        lines = [
            f'Condition {i}: "{cond["name"]}"',
            f"Requirement: {r['requirement']}",
            "Counts: " + "; ".join(r["counts"]),
            "Does not count: " + "; ".join(r["does_not_count"]),
        ]
        if r.get("note"):
            lines.append(f"Note: {r['note']}")
        for page in cond["pages"]:
            lines += [f"--- page {page['page']} ---", page["text"][:max_chars]]
        blocks.append("\n".join(lines))
    return template_text().format(
        need=item["need"], conditions_block="\n\n".join(blocks), min_quote_chars=MIN_QUOTE_CHARS
    )


def template_text() -> str:
    """The machine evaluator's prompt template."""
    return resources.files("nclue.audit.prompts").joinpath(f"{TEMPLATE}.txt").read_text(encoding="utf-8")


def parse_reply(reply: str, item: Mapping[str, Any]) -> list[tuple[bool, list[tuple[int, str]]]]:
    """``[(established, [(page, quote), …]), …]`` per condition; ``ValueError`` names what is malformed."""
    entries = json_object(reply).get("conditions")
    conds = item["conditions"]
    if not isinstance(entries, list) or len(entries) != len(conds):
        raise ValueError(f"expected {len(conds)} condition entries")
    out = []
    for cond, entry in zip(conds, entries):
        if not isinstance(entry, dict) or entry.get("condition") != cond["name"]:
            raise ValueError(f"entry for {cond['name']!r} missing or out of order")
        if not isinstance(entry.get("established"), bool):
            raise ValueError(f"'established' for {cond['name']!r} is not a Boolean")
        evidence = entry.get("evidence", [])
        if not isinstance(evidence, list) or not all(
            isinstance(e, dict) and isinstance(e.get("page"), int) and isinstance(e.get("quote", ""), str)
            for e in evidence
        ):
            raise ValueError(f"'evidence' for {cond['name']!r} must list {{page, quote}} objects")
        pages: dict[int, str] = {}
        for e in evidence:
            pages.setdefault(int(e["page"]), str(e.get("quote", "")))
        out.append((entry["established"], sorted(pages.items())))
    return out


def _packet(audit: AuditDir, packet_id: str | None) -> str:
    """The packet to answer: ``packet_id`` when the audit has it, else the audit's one initial packet."""
    ids = audit.packet_ids()
    if packet_id is None:
        first = audit.packets_of_kind("audit", "challenge")
        if len(first) != 1:
            raise NclueError(
                f"{audit.root}: {len(first)} initial packets ({', '.join(first) or 'none'}); choose one with --packet ID"
            )
        return first[0]
    if packet_id not in ids:
        raise NclueError(f"{audit.root}: no packet {packet_id!r} (packets: {', '.join(ids) or 'none'})")
    return packet_id


def _answer(item: Mapping[str, Any], reply: str | None) -> tuple[dict[str, Any], str, str]:
    """``(export entry, outcome, reason)`` of one item's reply: outcome ``empty`` (no reply),
    ``malformed`` (not parseable; left empty), ``rejected`` (a quote or answer fails the rubric;
    kept as a draft) or ``accepted``; ``reason`` says why it was not accepted."""
    if reply is None:
        return {"id": item["id"], "status": "empty", "conditions": _blank(item)}, "empty", ""
    try:
        parsed = parse_reply(reply, item)
    except ValueError as exc:
        return {"id": item["id"], "status": "empty", "conditions": _blank(item)}, "malformed", f"reply not used ({exc})"
    problems = [
        f"condition {i} (“{cond['name']}”): {p[0]}"
        for i, (cond, (answer, evidence)) in enumerate(zip(item["conditions"], parsed), start=1)
        if (p := condition_problems(cond, answer, evidence))
    ]
    entry = {
        "id": item["id"],
        "status": "draft" if problems else "accepted",
        "conditions": [
            {"id": cond["id"], "answer": answer, "evidence": [{"page": p, "quote": q} for p, q in evidence]}
            for cond, (answer, evidence) in zip(item["conditions"], parsed)
        ],
    }
    return entry, "rejected" if problems else "accepted", problems[0] if problems else ""


def machine(
    audit_dir: str | os.PathLike[str],
    endpoint: str | None = None,
    model: str | None = None,
    key: str | None = None,
    packet_id: str | None = None,
    out: str | os.PathLike[str] | None = None,
    evaluator: str = "M",
    cache: str | os.PathLike[str] | None = None,
    max_tokens: int = 1500,
    tick: Progress = quiet,
    api: str | None = None,
    batch_out: str | os.PathLike[str] | None = None,
    batch_in: str | os.PathLike[str] | None = None,
    answered_by: str = "",
) -> MachineSummary:
    """Answer every item of a packet through the LLM client and write an export (see the module docstring)."""
    audit = AuditDir.open(audit_dir)
    packet_id = _packet(audit, packet_id)
    payload, _ = audit.load_packet(packet_id)
    config = replace(LLMConfig.from_env(endpoint, model, key, api), max_tokens=max_tokens)
    batch = batch_out is not None or batch_in is not None
    asker = Asker(
        config,
        ResponseCache(Path(cache) if cache else audit.root / "machine" / "llm_cache.jsonl"),
        TEMPLATE,
        template_text(),
        mode="batch" if batch else "online",
        batch_out=Path(batch_out) if batch_out else audit.root / "machine" / f"{packet_id}-{evaluator}.requests.jsonl",
        batch_in=Path(batch_in) if batch_in else None,
        answered_by=answered_by,
        resume=f"nclue audit machine {audit.root} --packet {packet_id} --evaluator {evaluator} --model {config.model} "
        "--batch-in REPLIES.jsonl",
    )
    items, reasons = [], []
    counts = {"accepted": 0, "rejected": 0, "malformed": 0}
    tick("items", 0, len(payload["items"]))
    for pos, item in enumerate(payload["items"], start=1):
        reply = asker.ask(prompt_for(item))
        tick("items", 1, None)
        entry, outcome, reason = _answer(item, reply)
        items.append(entry)
        if outcome in counts:
            counts[outcome] += 1
        if reason:
            reasons.append(f"item {pos} ({item['id']}): {reason}")
    asker.finish()
    target = Path(out) if out else audit.root / f"machine-{evaluator}.json"
    write_json(
        target,
        {
            "format": EXPORT_FORMAT,
            "version": FORMAT_VERSION,
            "kind": payload["kind"],
            "packet_id": packet_id,
            "evaluator": evaluator,
            "model": config.model,
            "provenance": asker.cache.provenance(),
            "items": items,
            "digest": export_digest(packet_id, evaluator, items),
        },
    )
    return MachineSummary(
        path=target,
        packet_id=packet_id,
        evaluator=evaluator,
        model=config.model or "",
        items=len(items),
        reasons=tuple(reasons),
        cached=asker.cached,
        fresh=asker.fresh,
        imported=asker.imported,
        **counts,
    )


def _blank(item: Mapping[str, Any]) -> list[dict]:
    return [{"id": c["id"], "answer": None, "evidence": []} for c in item["conditions"]]
