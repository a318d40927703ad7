"""Reading evaluator exports back: structure, packet, digest, the item rules again, duplicates (``docs/audit.md#exports``).

An export is the JSON file a packet writes::

    {"format": "nclue-audit-export", "version": 1, "kind", "packet_id", "evaluator",
     "items": [{"id", "status": "empty"|"draft"|"accepted",
                "conditions": [{"id", "answer": true|false|null, "evidence": [{"page", "quote"}]}]}],
     "digest": SHA-256 of the canonical JSON of {"packet_id", "evaluator", "items"},
     "exported_at": ISO time (never used)}

It is refused — with the file, the item (its position in the packet and its id), the
condition and the fix — when it is not complete JSON (a truncated file), belongs to a packet
this audit does not hold, was edited after export (the digest does not match), names items or
conditions the packet does not have, or an accepted item breaks a rule of
:mod:`nclue.audit.validate` (a positive without a page, a quote that is not on its page, …).
Only accepted items count as completed. Several exports with identical decisions, pages and
quotes are one response stream: the later ones are flagged and collapsed.

The digest is an unkeyed SHA-256 that anyone can recompute, so it catches accidental edits,
damage and truncation, not a deliberate forger: an export rewritten with its digest recomputed
is accepted. What an evaluator cannot change is the audit directory, which stays with the
administrator (only the HTML packet is handed out): every export is checked against the
packet stored there — its items, conditions and pages, and each quote against the stored page
text — so a forged export can only give answers the real packet allows. Nothing proves who
wrote those answers; where that matters, keep each export as received (or its SHA-256) where
evaluators cannot write.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nclue.audit.audit_params import EXPORT_FORMAT
from nclue.audit.store import AuditDir
from nclue.audit.validate import condition_label, condition_problems
from nclue.errors import NclueError
from nclue.io import dumps_canonical, read_json, sha256_bytes

STATUSES = ("empty", "draft", "accepted")


@dataclass(frozen=True)
class ConditionResponse:
    """One condition's answer and its evidence ``((page, quote), …)`` sorted by page."""

    answer: bool
    evidence: tuple[tuple[int, str], ...] = ()

    @property
    def pages(self) -> frozenset[int]:
        """The selected pages."""
        return frozenset(p for p, _ in self.evidence)


@dataclass(frozen=True)
class Export:
    """One evaluator's validated answers to one packet; ``items`` holds accepted items only."""

    path: Path
    packet_id: str
    kind: str
    evaluator: str
    items: Mapping[str, Mapping[str, ConditionResponse]]
    incomplete: tuple[str, ...] = ()
    duplicate_of: str | None = None

    @property
    def fingerprint(self) -> str:
        """SHA-256 of every decision, page and quote (equal for identical streams)."""
        body = {
            item: {c: [r.answer, [list(e) for e in r.evidence]] for c, r in sorted(conds.items())}
            for item, conds in sorted(self.items.items())
        }
        return sha256_bytes(dumps_canonical(body).encode("utf-8"))


@dataclass(frozen=True)
class ExportSet:
    """The exports of one packet after duplicate collapsing, with the notes to report."""

    packet_id: str
    kind: str
    exports: tuple[Export, ...]
    collapsed: tuple[Export, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def evaluators(self) -> tuple[str, ...]:
        """Evaluator labels of the kept streams, in the order given."""
        return tuple(e.evaluator for e in self.exports)


def export_digest(packet_id: str, evaluator: str, items: Any) -> str:
    """The digest a packet writes: SHA-256 of the canonical JSON of ``{packet_id, evaluator, items}``.

    Unkeyed, so it detects accidental edits and truncation, not a forger who recomputes it (see
    the module docstring)."""
    body = {"packet_id": packet_id, "evaluator": evaluator, "items": items}
    return sha256_bytes(dumps_canonical(body).encode("utf-8", "surrogatepass"))


def load_json(path: Path) -> dict:
    """The parsed export at ``path``; a missing, truncated, too deeply nested or foreign file is
    refused with the reason (see :func:`nclue.io.read_json`)."""
    if not path.is_file():
        raise NclueError(f"{path}: export not found" + (" (it is a folder)" if path.is_dir() else ""))
    obj = read_json(path, "the file is truncated or damaged — export it again from the packet", "JSON export")
    if not isinstance(obj, dict) or obj.get("format") != EXPORT_FORMAT:
        raise NclueError(f'{path}: not an nclue audit export (no "format": "{EXPORT_FORMAT}")')
    return obj


def read_export(path: str | os.PathLike[str], audit: AuditDir) -> Export:
    """Read and validate one export against the packet it names (see the module docstring)."""
    p = Path(path)
    obj = load_json(p)
    packet_id = obj.get("packet_id")
    if not isinstance(packet_id, str) or packet_id not in audit.packet_ids():
        known = ", ".join(audit.packet_ids()) or "none yet"
        raise NclueError(
            f"{p}: belongs to packet {packet_id!r}, which is not a packet of the audit {audit.root} "
            f"(its packets: {known}); score each export with the audit that built its packet"
        )
    evaluator = obj.get("evaluator")
    if not isinstance(evaluator, str) or not evaluator.strip():
        raise NclueError(f"{p}: the export has no evaluator label; enter one in the packet and export again")
    items = obj.get("items")
    if not isinstance(items, list):
        raise NclueError(f"{p}: 'items' is missing or not a list; the file is damaged — export it again")
    if obj.get("digest") != export_digest(packet_id, evaluator, items):
        raise NclueError(
            f"{p}: edited after export (its digest does not match its answers, so it was changed by hand or "
            "damaged); tampered or hand-edited exports are refused when their digest is stale — import it into the "
            "packet, check every item and export again"
        )
    payload, _ = audit.load_packet(packet_id)
    shown = {item["id"]: (pos, item) for pos, item in enumerate(payload["items"], start=1)}
    accepted: dict[str, dict[str, ConditionResponse]] = {}
    incomplete: list[str] = []
    seen: set[str] = set()
    for n, row in enumerate(items, start=1):
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            raise NclueError(f"{p}: item #{n} of the export has no id; the file is damaged — export it again")
        iid = row["id"]
        if iid not in shown:
            raise NclueError(f"{p}: item {iid!r} is not in packet {packet_id}; the export was altered")
        if iid in seen:
            raise NclueError(f"{p}: item {iid!r} appears twice; the export was altered")
        seen.add(iid)
        pos, item = shown[iid]
        where_ = f"{p}: item {pos} ({iid})"
        status = row.get("status")
        if status not in STATUSES:
            raise NclueError(f"{where_}: status {status!r} is not one of {', '.join(STATUSES)}")
        responses = _conditions(row.get("conditions"), item, where_)
        if status != "accepted":
            incomplete.append(iid)
            continue
        for index, cond in enumerate(item["conditions"], start=1):
            answer, evidence = responses[cond["id"]]
            problems = condition_problems(cond, answer, evidence)
            if problems:
                raise NclueError(f"{where_}, {condition_label(index, cond['name'])}: {problems[0]}")
        accepted[iid] = {
            cid: ConditionResponse(bool(answer), tuple(sorted(ev))) for cid, (answer, ev) in responses.items()
        }
    missing = [item["id"] for item in payload["items"] if item["id"] not in seen]
    return Export(
        path=p,
        packet_id=packet_id,
        kind=str(payload["kind"]),
        evaluator=evaluator.strip(),
        items=accepted,
        incomplete=tuple(incomplete + missing),
    )


def _conditions(raw: object, item: Mapping[str, Any], where_: str) -> dict[str, tuple[bool | None, list]]:
    """``{condition id: (answer, [(page, quote), …])}`` for every condition of ``item``."""
    if not isinstance(raw, list):
        raise NclueError(f"{where_}: 'conditions' is not a list; the export was altered")
    index = {c["id"]: i for i, c in enumerate(item["conditions"], start=1)}
    out: dict[str, tuple[bool | None, list]] = {}
    for entry in raw:
        cid = entry.get("id") if isinstance(entry, dict) else None
        if cid not in index:
            raise NclueError(f"{where_}: condition {cid!r} is not a condition of this item; the export was altered")
        label = condition_label(index[cid], item["conditions"][index[cid] - 1]["name"])
        answer = entry.get("answer")
        if answer not in (True, False, None):
            raise NclueError(f"{where_}, {label}: answer {answer!r} must be true, false or null")
        evidence = entry.get("evidence", [])
        if not isinstance(evidence, list) or not all(
            isinstance(e, dict)
            and isinstance(e.get("page"), int)
            and not isinstance(e.get("page"), bool)
            and isinstance(e.get("quote", ""), str)
            for e in evidence
        ):
            raise NclueError(f'{where_}, {label}: evidence must be a list of {{"page": number, "quote": text}}')
        pages = [e["page"] for e in evidence]
        if len(set(pages)) != len(pages):
            raise NclueError(f"{where_}, {label}: a page is selected twice; the export was altered")
        out[cid] = (answer, [(int(e["page"]), str(e.get("quote", ""))) for e in evidence])
    for cid in index:
        out.setdefault(cid, (None, []))
    return out


def read_exports(paths: Sequence[str | os.PathLike[str]], audit: AuditDir, packet_id: str | None = None) -> ExportSet:
    """Read several exports of one packet; identical streams collapse into the first, with a note.

    Two different exports under one evaluator label are refused (give one per evaluator).
    """
    if not paths:
        raise NclueError("give at least one export file")
    loaded = [read_export(p, audit) for p in paths]
    packets = sorted({e.packet_id for e in loaded})
    wanted = packet_id or loaded[0].packet_id
    others = [e for e in loaded if e.packet_id != wanted]
    if others:
        raise NclueError(
            f"{others[0].path}: answers packet {others[0].packet_id}, not {wanted} like {loaded[0].path}; score the "
            f"exports of one packet together (packets given: {', '.join(packets)})"
        )
    kept: list[Export] = []
    collapsed: list[Export] = []
    notes: list[str] = []
    by_print: dict[str, Export] = {}
    by_label: dict[str, Export] = {}
    for e in loaded:
        first = by_print.get(e.fingerprint)
        if first is not None:
            collapsed.append(Export(e.path, e.packet_id, e.kind, e.evaluator, e.items, e.incomplete, first.evaluator))
            notes.append(
                f"{e.path}: evaluator {e.evaluator} is identical to {first.evaluator} ({first.path}) at every "
                "decision, page and quote; counted once, as one response stream"
            )
            continue
        if e.evaluator in by_label:
            raise NclueError(
                f"{e.path}: a second, different export from evaluator {e.evaluator!r} (the first is "
                f"{by_label[e.evaluator].path}); give one export per evaluator"
            )
        by_print[e.fingerprint] = e
        by_label[e.evaluator] = e
        kept.append(e)
    return ExportSet(wanted, loaded[0].kind, tuple(kept), tuple(collapsed), tuple(notes))


def responses_of(exports: Iterable[Export], cid: str, item: str) -> list[tuple[str, ConditionResponse]]:
    """``(evaluator, response)`` of every export that accepted ``item``, for condition ``cid``."""
    return [(e.evaluator, e.items[item][cid]) for e in exports if item in e.items and cid in e.items[item]]
