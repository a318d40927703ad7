"""Turn an nclue benchmark release plus its collection into a coverage task set (``docs/coverage.md``).

Mapping (one task per query):

* question = the query's ``natural`` form (``Find the document that discusses "X" and "Y".``);
* requirements = the query's conditions, in query order;
* pool (``docs/coverage.md#pools``), by ``pool``:

  - a **system name** (default ``bm25.decompose(distinct)``): the ``depth`` best documents of
    that system run on the collection over the query's ``form`` rendering
    (:func:`nclue.systems.run.run_systems`) — retrieval decides the pool, the qrels only judge it;
  - a **run file** (TREC or nclue JSONL): its ``depth`` best documents per query (score
    descending, file order on ties);
  - ``judged`` — **the protocol's judged pool**: every document judged for the query, those judged to
    establish nothing (grade 0) included — a reader-judged release's ``reading.jsonl`` lists
    them (``judged``). Which documents were judged was decided by the release's pooling, not by
    the grades, so the pool carries no label beyond "was read";
  - ``qrels`` — the **oracle pool**: the query's documents with a ``qrels.jsonl`` row (grade
    ≥ 1). The pool itself is then made from labels; it is a diagnostic setting, labelled as such
    in ``adapter.json`` and in every freeze manifest made from it;

  plus ``distractors`` documents drawn per query with ``numpy.random.default_rng(seed)`` from
  the release corpus outside the pool — **label-free**: the draw never looks at the judgments,
  so a distractor may be a judged document and keeps its grade. Pools are sorted by ID, so pool
  order carries no label; a retrieved pool keeps its retrieval scores in ``pool_scores``
  (aligned with ``pool``; label-free) for the ``retriever`` selector;
* ``typed_scores`` — each pool document's score under the typed comparator
  (:data:`nclue.select.diversify.TYPED_SYSTEM`, run over the whole collection; a document it does
  not return scores below every one it does), when the collection has a structure index;
* labels: one judge, ``inventory``, whose marks are agreed by definition: grade = clue count,
  requirements = the conditions with a non-empty evidence page set; a pool document without a
  qrels row has grade 0: exactly so for a rule-built release, which emits every document with a
  non-empty inventory page set for some condition of the query
  (``docs/construction.md#composition``); for a reader-judged release, a document outside
  ``reading.jsonl``'s judged set was never read and counts as 0 (``adapter.json`` counts them).

Document text rule (label-free): the document's pages in page order, whitespace collapsed,
concatenated until ``max_chars`` characters (default 2,000 — more than the 256 word pieces the
encoder keeps), title = ``doc_id``. Evidence pages are *not* used: they come from the inventory,
i.e. the labels, and would leak outcomes into the frozen vectors.

Queries whose pool is smaller than ``k`` are skipped and listed in ``adapter.json``, which also
records the pool rule (kind, system or run file with its SHA-256, depth, form) and the
collection, read by ``nclue coverage freeze``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from nclue.corpus.store import PageStore
from nclue.errors import NclueError
from nclue.io import sha256_file, write_json, write_jsonl
from nclue.progress import Progress, quiet
from nclue.release import READING_FILE, Release
from nclue.select.selection_defaults import DEFAULT_DEPTH, DEFAULT_POOL, JUDGED_POOL, ORACLE_POOL
from nclue.select.tasks import DOCS_FILE, JUDGMENTS_FILE, TASKS_FILE, id_key
from nclue.types import DEFAULT_FORM, Run

JUDGE = "inventory"
ADAPTER_FILE = "adapter.json"
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


def retrieved_pools(
    release: Release, store: PageStore, collection_dir: Path, pool: str, depth: int, form: str, progress: Progress
) -> tuple[dict[str, list[tuple[str, float]]], dict]:
    """``qid → [(doc_id, score), ...]`` (best first, at most ``depth``) and the pool rule."""
    path = Path(pool)
    if path.is_file():
        run = Run.read(path)
        rule = {
            "kind": "run",
            "run_file": str(path),
            "run_sha256": sha256_file(path),
            "depth": depth,
            "rule": f"the {depth} best documents of run file {path.name} per query (score descending)",
        }
        failed: dict[str, str] = {}
    else:
        from nclue.systems.registry import Workspace
        from nclue.systems.run import run_systems

        report = run_systems(
            release, Workspace(collection_dir, store), [pool], form=form, depth=depth, progress=progress
        )
        ((name, run),) = report.runs.items()
        failed = report.failed.get(name, {})
        rule = {
            "kind": "retrieval",
            "system": name,
            "form": form,
            "depth": depth,
            "rule": f"the {depth} best documents of {name} on the {form} rendering, run on the collection",
        }
    unknown = sorted({d.doc_id for docs in run.rankings.values() for d in docs} - set(store.doc_index))
    if unknown:
        raise NclueError(
            f"{pool}: pooled document {unknown[0]!r} is not in the collection; "
            "use a run over the collection the release was built from"
        )
    pools = {}
    for query in release.queries:
        ranked = sorted(run.rankings.get(query.qid, []), key=lambda d: -d.score)  # stable: file order on ties
        pools[query.qid] = [(d.doc_id, float(d.score)) for d in ranked[:depth]]
    rule["failed_queries"] = len(failed)
    return pools, rule


def judged_documents(bench: Path) -> dict[str, list[str]] | None:
    """``qid → documents judged for it`` from a reader-judged release's ``reading.jsonl`` (``None``: no such file)."""
    from nclue.io import iter_jsonl

    path = bench / READING_FILE
    if not path.is_file():
        return None
    return {row["qid"]: list(row["judged"]) for _, row in iter_jsonl(path)}


def typed_scores(
    release: Release, store: PageStore, collection: Path, form: str, progress: Progress
) -> tuple[dict[str, dict[str, float]] | None, str]:
    """``qid → {doc_id: score}`` of the typed comparator over the whole collection, and a note for
    ``adapter.json``; ``None`` (and why) when the collection cannot run it."""
    from nclue.select.diversify import TYPED_SYSTEM
    from nclue.systems.registry import Workspace
    from nclue.systems.run import run_systems

    try:
        report = run_systems(
            release,
            Workspace(collection, store),
            [TYPED_SYSTEM],
            form=form,
            depth=len(store.doc_ids),
            progress=progress,
        )
    except NclueError as exc:
        return None, f"absent: {TYPED_SYSTEM} cannot run on {collection} ({exc})"
    ((name, run),) = report.runs.items()
    scores = {qid: {d.doc_id: float(d.score) for d in docs} for qid, docs in run.rankings.items()}
    return scores, f"{name} over the whole collection ({len(store.doc_ids)} documents)"


def adapt_release(
    bench_dir: str | Path,
    collection_dir: str | Path,
    out_dir: str | Path,
    k: int = 5,
    distractors: int = 0,
    seed: int = 0,
    max_chars: int = 2000,
    pool: str = DEFAULT_POOL,
    depth: int = DEFAULT_DEPTH,
    form: str = DEFAULT_FORM,
    progress: Progress = quiet,
) -> dict:
    """Write ``tasks.jsonl``, ``docs.jsonl``, ``judgments.jsonl`` and ``adapter.json``; return the report.

    ``progress`` (:mod:`nclue.progress`) hears the ``"queries: <system>"`` stages of the systems run
    (:func:`nclue.systems.run.run_systems`): the pool's, when it is a system, and the typed comparator's.
    """
    bench, out, collection = Path(bench_dir), Path(out_dir), Path(collection_dir)
    if depth < 1:
        raise NclueError(f"pool depth must be at least 1, got {depth}")
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
    store = PageStore.open(collection)
    read = judged_documents(bench)
    given: dict[str, list[str]] | None = None
    if pool == ORACLE_POOL:
        retrieved = None
        given = {qid: list(docs) for qid, docs in qrels.items()}
        rule = {
            "kind": "qrels-oracle",
            "rule": "the query's documents with a qrels row (grade >= 1): an oracle pool made from the labels",
        }
    elif pool == JUDGED_POOL:
        if read is None:
            raise NclueError(
                f"{bench}: no {READING_FILE}, so the release records no judged pool with its grade-0 documents; "
                "adapt a reader-judged release (`nclue build --judge reader`) or use a retrieved pool"
            )
        retrieved, given = None, read
        rule = {
            "kind": "judged",
            "rule": f"every document judged for the query ({READING_FILE} 'judged'), grade 0 included",
        }
    else:
        retrieved, rule = retrieved_pools(release, store, collection, pool, depth, form, progress)
    typed, typed_note = typed_scores(release, store, collection, form, progress)
    rule["typed"] = typed_note
    rule.update({"distractors": distractors, "seed": seed})
    rng = np.random.default_rng(seed)
    tasks, judgments, skipped, used = [], [], [], set()
    unread = 0
    for query in release.queries:
        judged = qrels.get(query.qid, {})
        scores = dict(retrieved[query.qid]) if retrieved is not None else {}
        members = list(scores) if retrieved is not None else list(given.get(query.qid, []))
        extra: list[str] = []
        if distractors:
            taken = set(members)
            outside = [d for d in corpus if d not in taken]
            take = min(distractors, len(outside))
            extra = [outside[i] for i in sorted(rng.choice(len(outside), size=take, replace=False))] if take else []
        pool_ids = sorted([*members, *extra], key=id_key)
        if len(pool_ids) < k:
            skipped.append({"qid": query.qid, "pool": len(pool_ids)})
            continue
        task = {
            "task_id": query.qid,
            "question": query.text("natural"),
            "requirements": list(query.conditions),
            "pool": pool_ids,
            "splits": [f"n{query.n}"],
        }
        if retrieved is not None:
            floor = min(scores.values(), default=0.0)
            task["pool_scores"] = [scores.get(d, floor - 1.0) for d in pool_ids]
        if typed is not None:
            own = typed.get(query.qid, {})
            floor = min(own.values(), default=0.0)
            task["typed_scores"] = [own.get(d, floor - 1.0) for d in pool_ids]
        tasks.append(task)
        if read is not None:
            unread += sum(d not in judged and d not in set(read.get(query.qid, [])) for d in pool_ids)
        for doc_id in pool_ids:
            grade, reqs = judged.get(doc_id, (0, []))
            judgments.append(
                {"task_id": query.qid, "doc_id": doc_id, "judge": JUDGE, "grade": grade, "requirements": reqs}
            )
        used.update(pool_ids)
    if not tasks:
        raise NclueError(
            f"{bench}: no query has a pool of at least k={k} documents; raise --pool-depth, lower --k or add --distractors"
        )
    docs = [{"doc_id": d, "title": d, "text": leading_text(store, d, max_chars)} for d in sorted(used, key=id_key)]
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / TASKS_FILE, tasks)
    write_jsonl(out / DOCS_FILE, docs)
    write_jsonl(out / JUDGMENTS_FILE, judgments)
    report = {
        "release": str(bench.resolve()),
        "collection": str(collection.resolve()),
        "tasks": len(tasks),
        "documents": len(docs),
        "judgments": len(judgments),
        "judgments_sha256": sha256_file(out / JUDGMENTS_FILE),
        "skipped_small_pools": skipped,
        "k": k,
        "pool": rule,
        "distractors": distractors,
        "seed": seed,
        "unread_pool_documents": unread if read is not None else None,
        "max_chars": max_chars,
        "text_rule": "leading pages, whitespace collapsed, first max_chars characters",
    }
    write_json(out / ADAPTER_FILE, report)
    return report
