"""Run systems over a benchmark release and write TREC + JSONL runs (``docs/formats.md``).

Only ``BENCH/queries.jsonl`` is required. Release ``doc_id``s name the documents: a
collection document is matched to a release document by ``doc_id`` or, when the release's
``corpus.jsonl`` carries ``sha256``, by SHA-256 — so a published benchmark runs on a locally
rebuilt copy of its PDFs. With a ``corpus.jsonl``, collection documents outside the release
are left out of the runs; both directions of mismatch are counted in the :class:`RunReport`.

File names: ``OUT/<run name>.trec`` and ``OUT/<run name>.jsonl`` where the run name is the
system name (``system@form`` off the default form, as in :mod:`nclue.matrix.spec`). The
TREC name column is the run name without spaces (it must be one token; the system-name
grammar reads it back to the same system).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nclue.errors import NclueError, where
from nclue.io import atomic_write_text, dumps_canonical, iter_jsonl
from nclue.query import parse_conditions, render_forms
from nclue.systems.backbone import Request, System
from nclue.systems.names import canonical
from nclue.systems.registry import Workspace
from nclue.types import FORMS, Query, RankedDoc, Run

DEPTH = 100


def read_queries(bench_dir: str | os.PathLike[str]) -> list[Query]:
    """Queries of a release (``queries.jsonl``); missing forms are rendered from the conditions."""
    path = Path(bench_dir) / "queries.jsonl"
    out: list[Query] = []
    seen: set[str] = set()
    for line, row in iter_jsonl(path):
        qid = row.get("qid")
        if not isinstance(qid, str) or not qid:
            raise NclueError(f"{where(path, line)}: missing string field 'qid'")
        if qid in seen:
            raise NclueError(f"{where(path, line)}: duplicate qid {qid!r}")
        seen.add(qid)
        conds = row.get("conditions")
        if not isinstance(conds, list) or not all(isinstance(c, str) for c in conds):
            raise NclueError(f"{where(path, line)}: 'conditions' must be a list of strings")
        try:
            conditions = parse_conditions("", conds)
        except NclueError as exc:
            raise NclueError(f"{where(path, line)}: {exc}") from None
        forms = dict(render_forms(conditions))
        given = row.get("forms") or {}
        if not isinstance(given, dict):
            raise NclueError(f"{where(path, line)}: 'forms' must be an object")
        forms.update({k: v for k, v in given.items() if isinstance(v, str) and v.strip()})
        aliases = {k: tuple(v) for k, v in (row.get("aliases") or {}).items()}
        out.append(Query(qid=qid, conditions=conditions, forms=forms, aliases=aliases))
    return out


@dataclass
class DocMapping:
    """Collection document → release ``doc_id`` (``None`` = not in the release)."""

    to_release: dict[str, str | None]
    matched_by_id: int = 0
    matched_by_sha256: int = 0
    unmatched_collection: list[str] = field(default_factory=list)
    missing_release: list[str] = field(default_factory=list)


def map_documents(bench_dir: str | os.PathLike[str], workspace: Workspace) -> DocMapping:
    """Match collection documents to the release's ``corpus.jsonl`` by doc_id, then SHA-256."""
    collection_ids = [str(d) for d in workspace.pages.doc_ids.tolist()]
    corpus = Path(bench_dir) / "corpus.jsonl"
    if not corpus.is_file():
        return DocMapping({d: d for d in collection_ids}, matched_by_id=len(collection_ids))
    release: dict[str, str | None] = {}
    for line, row in iter_jsonl(corpus):
        doc_id = row.get("doc_id")
        if not isinstance(doc_id, str):
            raise NclueError(f"{where(corpus, line)}: missing string field 'doc_id'")
        sha = row.get("sha256")
        release[doc_id] = sha if isinstance(sha, str) and sha else None
    by_sha = {sha: doc_id for doc_id, sha in sorted(release.items()) if sha}
    shas = workspace.store.doc_sha256
    mapping = DocMapping({})
    used: set[str] = set()
    for doc_id in collection_ids:
        if doc_id in release:
            mapping.to_release[doc_id] = doc_id
            mapping.matched_by_id += 1
            used.add(doc_id)
    for doc_id in collection_ids:
        if doc_id in mapping.to_release:
            continue
        target = by_sha.get(shas.get(doc_id, ""))
        if target is not None and target not in used:
            mapping.to_release[doc_id] = target
            mapping.matched_by_sha256 += 1
            used.add(target)
        else:
            mapping.to_release[doc_id] = None
            mapping.unmatched_collection.append(doc_id)
    mapping.missing_release = sorted(set(release) - used)
    return mapping


@dataclass
class RunReport:
    """What :func:`run_systems` produced: runs by name, files written, matching and failures."""

    runs: dict[str, Run]
    files: list[Path]
    mapping: DocMapping
    failed: dict[str, dict[str, str]]

    def summary(self) -> str:
        """One human-readable paragraph."""
        m = self.mapping
        text = (
            f"{len(self.runs)} run(s); documents matched by doc_id {m.matched_by_id}, by sha256 {m.matched_by_sha256}; "
            f"collection documents not in the release {len(m.unmatched_collection)}; "
            f"release documents missing from the collection {len(m.missing_release)}"
        )
        for name, errors in self.failed.items():
            if errors:
                qid, msg = next(iter(errors.items()))
                text += f"\n{name}: {len(errors)} query(ies) got no ranking (e.g. {qid}: {msg})"
        return text


def run_name(system: str, form: str, default_form: str = "clean_v2") -> str:
    """``system`` on the default form, ``system@form`` otherwise (the matrix convention)."""
    return system if form == default_form else f"{system}@{form}"


def trec_text(run: Run) -> str:
    """TREC six-column text: ``qid Q0 doc_id rank score tag``, ranking order = file order."""
    tag = run.name.replace(" ", "")
    lines = []
    for qid, docs in run.rankings.items():
        for rank, doc in enumerate(docs, start=1):
            lines.append(f"{qid} Q0 {doc.doc_id} {rank} {doc.score:.9g} {tag}\n")
    return "".join(lines)


def jsonl_rows(run: Run, page_aware: bool) -> list[dict]:
    """JSONL rows of a run (``pages``/``evidence`` only for page-aware systems)."""
    rows = []
    for qid, docs in run.rankings.items():
        entries = []
        for doc in docs:
            entry: dict = {"doc_id": doc.doc_id, "score": float(doc.score)}
            if page_aware:
                entry["pages"] = [[int(p), float(s)] for p, s in doc.pages]
                entry["evidence"] = {c: [int(p) for p in pages] for c, pages in doc.evidence.items()}
            entries.append(entry)
        rows.append({"qid": qid, "docs": entries})
    return rows


def write_run(run: Run, out_dir: str | os.PathLike[str], page_aware: bool) -> list[Path]:
    """Write ``OUT/<name>.trec`` and ``OUT/<name>.jsonl`` atomically; return their paths."""
    out = Path(out_dir)
    trec, jsonl = out / f"{run.name}.trec", out / f"{run.name}.jsonl"
    atomic_write_text(trec, trec_text(run))
    atomic_write_text(jsonl, "".join(dumps_canonical(r) + "\n" for r in jsonl_rows(run, page_aware)))
    return [trec, jsonl]


def _rename(docs: list[RankedDoc], mapping: dict[str, str | None], depth: int) -> list[RankedDoc]:
    out = []
    for doc in docs:
        target = mapping.get(doc.doc_id)
        if target is not None:
            out.append(RankedDoc(target, doc.score, doc.pages, doc.evidence))
            if len(out) == depth:
                break
    return out


def run_system(
    system: System, queries: Sequence[Query], form: str, mapping: DocMapping, name: str, depth: int = DEPTH,
    progress=None,
) -> tuple[Run, dict[str, str]]:
    """One system over every query: ``(run, {qid: error})``; a failing query gets an empty ranking."""
    extra = len(mapping.unmatched_collection)
    rankings: dict[str, list[RankedDoc]] = {}
    failed: dict[str, str] = {}
    for query in queries:
        request = Request(query.conditions, query.forms[form], query.qid)
        try:
            docs = system.search(request, depth + extra)
        except NclueError as exc:
            failed[query.qid] = str(exc)
            docs = []
        rankings[query.qid] = _rename(docs, mapping.to_release, depth)
        if progress is not None:
            progress()
    return Run(name=name, rankings=rankings), failed


def run_systems(
    bench_dir: str | os.PathLike[str],
    collection_dir: str | os.PathLike[str],
    names: Sequence[str],
    form: str = "clean_v2",
    out_dir: str | os.PathLike[str] | None = None,
    depth: int = DEPTH,
    progress: bool = True,
    default_form: str = "clean_v2",
    workspace: Workspace | None = None,
) -> RunReport:
    """Run each named system on the release's queries in ``form``; write runs when ``out_dir`` is set."""
    if form not in FORMS:
        raise NclueError(f"query form {form!r} is not one of {', '.join(FORMS)}")
    queries = read_queries(bench_dir)
    ws = workspace if workspace is not None else Workspace(collection_dir)
    mapping = map_documents(bench_dir, ws)
    systems = [(canonical(n), ws.system(n)) for n in names]
    runs: dict[str, Run] = {}
    files: list[Path] = []
    failed: dict[str, dict[str, str]] = {}
    bar = None
    if progress:
        from rich.progress import Progress

        bar = Progress(transient=True)
        bar.start()
    try:
        for system_name, system in systems:
            name = run_name(system_name, form, default_form)
            tick = None
            if bar is not None:
                task = bar.add_task(name, total=len(queries))
                tick = lambda task=task: bar.advance(task)  # noqa: E731
            run, errors = run_system(system, queries, form, mapping, name, depth, tick)
            runs[name] = run
            failed[name] = errors
            if out_dir is not None:
                files += write_run(run, out_dir, system.page_aware)
    finally:
        if bar is not None:
            bar.stop()
    return RunReport(runs=runs, files=files, mapping=mapping, failed=failed)
