"""Turn an nclue benchmark release plus its collection into an R03 task set.

Mapping (one task per query):

* question = the query's ``natural`` form (``Find the document that discusses "X" and "Y".``);
* requirements = the query's conditions, in query order;
* pool = the query's judged documents (every ``qrels.jsonl`` row, i.e. grade ≥ 1), plus
  ``distractors`` documents drawn per query with ``numpy.random.default_rng(seed)`` from the
  release corpus outside that union — grade 0 exactly, because a release emits every document
  with a non-empty inventory page set for some condition (``docs/construction.md#composition``). Pools are sorted by ID, so
  pool order carries no label;
* labels: one judge, ``inventory``, whose marks are agreed by definition: grade = clue count,
  requirements = the conditions with a non-empty evidence page set.

Document text rule (label-free): the document's pages in page order, whitespace collapsed,
concatenated until ``max_chars`` characters (default 2,000 — more than the 256 word pieces the
encoder keeps), title = ``doc_id``. Evidence pages are *not* used: they come from the inventory,
i.e. the labels, and would leak outcomes into the frozen vectors.

Queries whose pool is smaller than ``k`` are skipped and listed in ``adapter.json``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from nclue.corpus.store import PageStore
from nclue.errors import NclueError
from nclue.io import write_json, write_jsonl
from nclue.release import Release
from nclue.select.tasks import DOCS_FILE, JUDGMENTS_FILE, TASKS_FILE, id_key

JUDGE = "inventory"
_SPACE = re.compile(r"\s+")


def leading_text(store: PageStore, doc_id: str, max_chars: int) -> str:
    """The first ``max_chars`` characters of the document's whitespace-collapsed pages."""
    i = store.doc_index.get(doc_id)
    if i is None:
        raise NclueError(
            f"{store.root}: release document {doc_id!r} is not in the collection; "
            "pass the collection the release was built from"
        )
    parts: list[str] = []
    total = 0
    for row in range(int(store.doc_offsets[i]), int(store.doc_offsets[i + 1])):
        text = _SPACE.sub(" ", store.texts[row]).strip()
        if text:
            parts.append(text)
            total += len(text) + 1
        if total >= max_chars:
            break
    return " ".join(parts)[:max_chars]


def adapt_release(
    bench_dir: str | Path,
    collection_dir: str | Path,
    out_dir: str | Path,
    k: int = 5,
    distractors: int = 0,
    seed: int = 0,
    max_chars: int = 2000,
) -> dict:
    """Write ``tasks.jsonl``, ``docs.jsonl``, ``judgments.jsonl`` and ``adapter.json``; return the report."""
    bench, out = Path(bench_dir), Path(out_dir)
    release = Release.open(bench, require_qrels=True)
    qrels: dict[str, dict[str, tuple[int, list[int]]]] = {}
    for j in release.judgments:
        if j.pages is None:
            raise NclueError(
                f"{release.files['qrels']}: the qrels carry no evidence pages, so which requirement a document "
                "covers is unknown; adapt a release written by `nclue build` (qrels.jsonl with pages)"
            )
        conditions = release.query(j.qid).conditions
        qrels.setdefault(j.qid, {})[j.doc_id] = (j.grade, [i + 1 for i, c in enumerate(conditions) if j.pages.get(c)])
    corpus = sorted((d.doc_id for d in release.corpus), key=id_key)
    store = PageStore.open(collection_dir)
    rng = np.random.default_rng(seed)
    tasks, judgments, skipped, used = [], [], [], set()
    for query in release.queries:
        judged = qrels.get(query.qid, {})
        extra: list[str] = []
        if distractors:
            outside = [d for d in corpus if d not in judged]
            take = min(distractors, len(outside))
            extra = [outside[i] for i in sorted(rng.choice(len(outside), size=take, replace=False))] if take else []
        pool = sorted([*judged, *extra], key=id_key)
        if len(pool) < k:
            skipped.append({"qid": query.qid, "pool": len(pool)})
            continue
        tasks.append(
            {
                "task_id": query.qid,
                "question": query.text("natural"),
                "requirements": list(query.conditions),
                "pool": pool,
                "splits": [f"n{query.n}"],
            }
        )
        for doc_id in pool:
            grade, reqs = judged.get(doc_id, (0, []))
            judgments.append(
                {"task_id": query.qid, "doc_id": doc_id, "judge": JUDGE, "grade": grade, "requirements": reqs}
            )
        used.update(pool)
    if not tasks:
        raise NclueError(f"{bench}: no query has a pool of at least k={k} documents; lower --k or add --distractors")
    docs = [{"doc_id": d, "title": d, "text": leading_text(store, d, max_chars)} for d in sorted(used, key=id_key)]
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / TASKS_FILE, tasks)
    write_jsonl(out / DOCS_FILE, docs)
    write_jsonl(out / JUDGMENTS_FILE, judgments)
    report = {
        "release": str(bench),
        "tasks": len(tasks),
        "documents": len(docs),
        "judgments": len(judgments),
        "skipped_small_pools": skipped,
        "k": k,
        "distractors": distractors,
        "seed": seed,
        "max_chars": max_chars,
        "text_rule": "leading pages, whitespace collapsed, first max_chars characters",
    }
    write_json(out / "adapter.json", report)
    return report
