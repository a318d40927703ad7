"""Run systems over a benchmark release and write TREC + JSONL runs (``docs/formats.md#runs``).

Only the release's queries are required. Release ``doc_id``s name the documents: a
collection document is matched to a release document by ``doc_id`` or, when the release's
corpus carries ``sha256``, by SHA-256 — so a published benchmark runs on a locally rebuilt
copy of its PDFs. With a corpus, collection documents outside the release are left out of
the runs; both directions of mismatch are counted in the :class:`RunReport`.

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

from nclue.engine import Engine
from nclue.errors import NclueError
from nclue.progress import Advance, Progress, quiet, stage_advance
from nclue.release import Release
from nclue.systems.backbone import Request, System
from nclue.systems.names import canonical
from nclue.systems.registry import Workspace
from nclue.types import DEFAULT_FORM, Form, Query, RankedDoc, Run

DEPTH = 100
BATCH_QUERIES = 32
"""Queries handed together to an engine worker, and to a system's ``prefetch``."""


@dataclass
class DocMapping:
    """Collection document → release ``doc_id`` (``None`` = not in the release)."""

    to_release: dict[str, str | None]
    matched_by_id: int = 0
    matched_by_sha256: int = 0
    unmatched_collection: list[str] = field(default_factory=list)
    missing_release: list[str] = field(default_factory=list)


def map_documents(release: Release, workspace: Workspace) -> DocMapping:
    """Match collection documents to the release's corpus by doc_id, then SHA-256."""
    collection_ids = workspace.pages.id_list
    if not release.corpus:
        return DocMapping({d: d for d in collection_ids}, matched_by_id=len(collection_ids))
    release_sha = {d.doc_id: d.sha256 or None for d in release.corpus}
    by_sha = {sha: doc_id for doc_id, sha in sorted(release_sha.items()) if sha}
    shas = workspace.store.doc_sha256
    mapping = DocMapping({})
    used: set[str] = set()
    for doc_id in collection_ids:
        if doc_id in release_sha:
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
    mapping.missing_release = sorted(set(release_sha) - used)
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


def run_name(system: str, form: str, default_form: str = DEFAULT_FORM) -> str:
    """``system`` on the default form, ``system@form`` otherwise (the matrix convention)."""
    return system if form == default_form else f"{system}@{form}"


def _rename(docs: list[RankedDoc], mapping: dict[str, str | None], depth: int) -> list[RankedDoc]:
    out = []
    for doc in docs:
        target = mapping.get(doc.doc_id)
        if target is not None:
            out.append(RankedDoc(target, doc.score, doc.pages, doc.evidence))
            if len(out) == depth:
                break
    return out


def check_form(queries: Sequence[Query], form: str) -> None:
    """Refuse an unknown form, or a stored-only form (``paraphrase``) some query lacks."""
    try:
        Form(form)
    except ValueError:
        raise NclueError(f"query form {form!r} is not one of {', '.join(f.value for f in Form)}") from None
    if form == Form.paraphrase:
        missing = [q.qid for q in queries if not q.forms.get(form)]
        if missing:
            raise NclueError(
                f"{len(missing)} of {len(queries)} queries have no paraphrase (e.g. {missing[0]!r}); paraphrases "
                "are read from the release's frozen cache and never generated at run time"
            )


def run_system(
    system: System,
    queries: Sequence[Query],
    form: str,
    mapping: DocMapping,
    name: str,
    depth: int = DEPTH,
    tick: Advance | None = None,
) -> tuple[Run, dict[str, str]]:
    """One system over every query: ``(run, {qid: error})``; a failing query gets an empty ranking."""
    extra = len(mapping.unmatched_collection)
    rankings: dict[str, list[RankedDoc]] = {}
    failed: dict[str, str] = {}
    requests = [Request(q.conditions, q.text(form), q.qid) for q in queries]
    prefetch = getattr(system, "prefetch", None)
    for start in range(0, len(requests), BATCH_QUERIES):
        batch = requests[start : start + BATCH_QUERIES]
        if prefetch is not None:
            try:
                prefetch(batch)
            except NclueError:  # each query then meets (and reports) the problem itself
                pass
        for request in batch:
            try:
                docs = system.search(request, depth + extra)
            except NclueError as exc:
                failed[request.qid] = str(exc)
                docs = []
            rankings[request.qid] = _rename(docs, mapping.to_release, depth)
            if tick is not None:
                tick(1)
    return Run(name=name, rankings=rankings, page_aware=bool(system.page_aware)), failed


_WORKSPACES: dict[str, Workspace] = {}


def search_batch(
    collection_dir: str, system: str, requests: list[tuple[str, tuple[str, ...], str]], depth: int
) -> list[tuple[list[RankedDoc], str | None]]:
    """Rank one batch of requests ``(qid, conditions, text)`` with ``system`` (a module-level
    function that engines ship to their workers); a worker opens each collection once."""
    ws = _WORKSPACES.get(collection_dir)
    if ws is None:
        ws = _WORKSPACES[collection_dir] = Workspace(collection_dir)
    engine_system = ws.system(system)
    prefetch = getattr(engine_system, "prefetch", None)
    if prefetch is not None:
        try:
            prefetch([Request(conditions, text, qid) for qid, conditions, text in requests])
        except NclueError:  # each query then meets (and reports) the problem itself
            pass
    out: list[tuple[list[RankedDoc], str | None]] = []
    for qid, conditions, text in requests:
        try:
            out.append((engine_system.search(Request(conditions, text, qid), depth), None))
        except NclueError as exc:
            out.append(([], str(exc)))
    return out


def run_system_on(
    engine: Engine,
    collection_dir: Path,
    system_name: str,
    page_aware: bool,
    queries: Sequence[Query],
    form: str,
    mapping: DocMapping,
    name: str,
    depth: int = DEPTH,
    tick: Advance | None = None,
) -> tuple[Run, dict[str, str]]:
    """:func:`run_system` with query batches ranked on ``engine``: the same run, file for file."""
    extra = len(mapping.unmatched_collection)
    batches = [queries[i : i + BATCH_QUERIES] for i in range(0, len(queries), BATCH_QUERIES)]
    args = (
        (str(collection_dir), system_name, [(q.qid, q.conditions, q.text(form)) for q in batch], depth + extra)
        for batch in batches
    )
    results: list = [None] * len(batches)
    for position, ranked in engine.imap(search_batch, args):
        results[position] = ranked
        if tick is not None:
            for _ in ranked:
                tick(1)
    rankings: dict[str, list[RankedDoc]] = {}
    failed: dict[str, str] = {}
    for batch, ranked in zip(batches, results):
        for query, (docs, error) in zip(batch, ranked):
            rankings[query.qid] = _rename(docs, mapping.to_release, depth)
            if error is not None:
                failed[query.qid] = error
    return Run(name=name, rankings=rankings, page_aware=page_aware), failed


def run_systems(
    release: Release | str | os.PathLike[str],
    collection: Workspace | str | os.PathLike[str],
    names: Sequence[str],
    form: str = DEFAULT_FORM,
    out_dir: str | os.PathLike[str] | None = None,
    depth: int = DEPTH,
    progress: Progress = quiet,
    default_form: str = DEFAULT_FORM,
    engine: Engine | None = None,
) -> RunReport:
    """Run each named system on the release's queries in ``form``; write runs when ``out_dir`` is set.

    ``release`` is an opened :class:`~nclue.release.Release` or its directory; ``collection`` an
    opened :class:`~nclue.systems.registry.Workspace` or a collection directory. With an
    ``engine`` (:mod:`nclue.engine`), batches of queries are ranked on its workers, each of which
    opens the collection itself; the run files are identical to a local run. ``progress``
    (:mod:`nclue.progress`) hears one stage per system, ``"queries: <run name>"`` (total: the queries).
    """
    rel = release if isinstance(release, Release) else Release.open(release, with_qrels=False)
    queries = rel.queries
    check_form(queries, form)
    ws = collection if isinstance(collection, Workspace) else Workspace(collection)
    mapping = map_documents(rel, ws)
    systems = [(canonical(n), ws.system(n)) for n in names]
    runs: dict[str, Run] = {}
    files: list[Path] = []
    failed: dict[str, dict[str, str]] = {}
    for system_name, system in systems:
        name = run_name(system_name, form, default_form)
        tick = stage_advance(progress, f"queries: {name}", len(queries))
        if engine is None:
            run, errors = run_system(system, queries, form, mapping, name, depth, tick)
        else:
            run, errors = run_system_on(
                engine,
                ws.collection_dir.resolve(),
                system_name,
                bool(system.page_aware),
                queries,
                form,
                mapping,
                name,
                depth,
                tick,
            )
        runs[name] = run
        failed[name] = errors
        if out_dir is not None:
            files += run.write(out_dir)
    return RunReport(runs=runs, files=files, mapping=mapping, failed=failed)
