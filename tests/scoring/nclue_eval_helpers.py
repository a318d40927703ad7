"""Writers for small hand-built benchmark releases and runs (shared by the scorer tests)."""

from __future__ import annotations

import json
from pathlib import Path

S6_QUERY = {
    "qid": "nclue_0000",
    "conditions": ["Executive Summary", "COVID-19", "Sanctions"],
    "forms": {"clean_v2": '"Executive Summary"; "COVID-19"; "Sanctions"'},
}
S6_QRELS = [
    {
        "qid": "nclue_0000",
        "doc_id": "world_bank_34454344",
        "grade": 3,
        "label": "gold",
        "pages": {"Executive Summary": [2], "COVID-19": [19], "Sanctions": [60]},
    },
    {
        "qid": "nclue_0000",
        "doc_id": "world_bank_34422285",
        "grade": 2,
        "label": "partial",
        "pages": {"COVID-19": [28], "Sanctions": [47]},
    },
    {"qid": "nclue_0000", "doc_id": "world_bank_34353633", "grade": 1, "label": "partial", "pages": {"Sanctions": [4]}},
]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_trec(path: Path, rankings: dict[str, list[tuple[str, float]]]) -> Path:
    lines = []
    for qid, docs in rankings.items():
        for rank, (doc, score) in enumerate(docs, start=1):
            lines.append(f"{qid} Q0 {doc} {rank} {score} {path.stem}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def make_release(root: Path, queries: list[dict], qrels: list[dict], corpus: list[dict] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    write_jsonl(root / "queries.jsonl", queries)
    write_jsonl(root / "qrels.jsonl", qrels)
    if corpus is not None:
        write_jsonl(root / "corpus.jsonl", corpus)
    return root
