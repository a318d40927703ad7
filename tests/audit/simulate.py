"""Simulated evaluators: exports written from a stored packet by a fixed, readable rule.

A simulated evaluator marks a condition established when a displayed page contains one of its
surface forms, selecting the first such page and quoting the page text around the first
occurrence verbatim (so the quote passes the same checks as a person's). ``flip`` lists
``(item position, condition position)`` decisions to reverse (a flipped positive selects
nothing; a flipped negative quotes the first 40 characters of the first page), which gives two
evaluators known disagreements.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from pathlib import Path

from nclue.audit.export import export_digest


def quote_around(text: str, forms: list[str], width: int = 30) -> str | None:
    """A verbatim quote of the text around the first occurrence of a form (None if none occurs)."""
    for form in sorted(forms, key=len, reverse=True):
        m = re.search(re.escape(form), text, re.IGNORECASE)
        if m:
            start, stop = max(0, m.start() - width), min(len(text), m.end() + width)
            return text[start:stop]
    return None


def answers(payload: dict, flip: Collection[tuple[int, int]] = ()) -> list[dict]:
    """Export items (all accepted) for a packet payload."""
    items = []
    for i, item in enumerate(payload["items"]):
        conds = []
        for j, cond in enumerate(item["conditions"]):
            found = None
            for page in cond["pages"]:
                q = quote_around(page["text"], cond["aliases"])
                if q is not None and len(" ".join(q.split())) >= 12:
                    found = (page["page"], q)
                    break
            positive = found is not None
            if (i, j) in flip:
                positive = not positive
                if positive:
                    page = next(p for p in cond["pages"] if len(" ".join(p["text"][:40].split())) >= 12)
                    found = (page["page"], page["text"][:40])
            evidence = [{"page": found[0], "quote": found[1]}] if positive else []
            conds.append({"id": cond["id"], "answer": positive, "evidence": evidence})
        items.append({"id": item["id"], "status": "accepted", "conditions": conds})
    return items


def write_export(path: Path, payload: dict, evaluator: str, items: list[dict]) -> Path:
    """An export file exactly as the packet writes it (format, digest)."""
    obj = {
        "format": "nclue-audit-export",
        "version": 1,
        "kind": payload["kind"],
        "packet_id": payload["packet_id"],
        "evaluator": evaluator,
        "items": items,
        "digest": export_digest(payload["packet_id"], evaluator, items),
    }
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def simulate(
    audit_dir: Path, packet_id: str, evaluator: str, out: Path, flip: Collection[tuple[int, int]] = ()
) -> Path:
    """Write a simulated evaluator's export of a stored packet."""
    payload = payload_of(audit_dir, packet_id)
    return write_export(out, payload, evaluator, answers(payload, flip))


def payload_of(audit: Path, packet_id: str) -> dict:
    """A stored packet payload."""
    return json.loads((audit / "packets" / f"{packet_id}.json").read_text(encoding="utf-8"))


def read_jsonl(path: Path) -> list[dict]:
    """Rows of a JSON Lines file, read directly (an independent reader for checks)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


HOSTILE = (
    "<script>window.__pwned = 1</script> The bibliography lists every cited work of the manual.",
    '<img src=x onerror="window.__pwned = 2"> Footnotes are notes at the foot of the page </textarea><b>bold</b>',
    'Plain page about footnotes & <bibliography> \u2028 with a line separator and "quotes".',
)
"""Page texts that would run script or break the form if they were ever parsed as HTML."""


def hostile_release(root: Path) -> tuple[Path, Path]:
    """A collection whose pages carry :data:`HOSTILE` text and a one-query release over it."""
    from nclue.index.lexical import build_lexical_index
    from nclue.release import Release
    from nclue.types import CorpusDoc, Judgment, Query
    from tests.bench.conftest import write_collection

    coll = write_collection(
        root / "coll", {"evil/doc": list(HOSTILE), "evil/other": ["Nothing here at all, really."] * 2}
    )
    build_lexical_index(coll)
    conditions = ("bibliography", "footnotes")
    query = Query("q1", conditions, {}, {"bibliography": ("bibliography",), "footnotes": ("footnotes",)})
    judgment = Judgment("q1", "evil/doc", 2, "gold", {"bibliography": (1,), "footnotes": (2,)})
    corpus = [CorpusDoc("evil/doc", 3, "evil/doc.pdf", "evil"), CorpusDoc("evil/other", 2, "evil/other.pdf", "evil")]
    bench = root / "bench"
    Release.from_records([query], [judgment], corpus, root=bench).write(bench)
    return coll, bench
