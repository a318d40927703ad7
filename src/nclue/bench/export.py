"""Export a release as a BEIR dataset folder, with the collection's text (``nclue bench export``).

BEIR's layout (Thakur et al., NeurIPS 2021 Datasets and Benchmarks; ``beir.datasets.data_loader``):

* ``corpus.jsonl`` — ``{"_id", "title", "text", "metadata"}`` per unit;
* ``queries.jsonl`` — ``{"_id", "text", "metadata"}``: ``text`` in the chosen form
  (``clean_v2`` unless asked), ``metadata`` with the conditions and every form the release has;
* ``qrels/test.tsv`` — ``query-id  corpus-id  score`` with a header line.

Two units:

* ``document`` — one corpus row per document of the collection, its pages' text joined by blank
  lines; the qrels are the release's (score = grade, the number of the query's conditions the
  document establishes). nclue reads this folder back as a benchmark (``Release.open``), and it
  scores runs exactly as the release does, but with golds derived from the grade (BEIR cannot
  express the distinct-page rule, ``docs/labels.md``).
* ``page`` — one row per page, ``_id`` ``DOC#pN`` (``metadata``: ``doc_id``, ``page``); a page is
  relevant to a query when it is an evidence page of one of its conditions, with score = the number
  of the query's conditions it establishes. The release must carry evidence pages.

The text is the collection's page store (``pages.parquet``), as extracted and normalised at
ingest. It is the documents' own text: check their licences before you redistribute an export.
"""

from __future__ import annotations

import os
import shutil
from collections import defaultdict
from pathlib import Path

from nclue.errors import NclueError
from nclue.io import atomic_write_text, write_jsonl
from nclue.release import BEIR_QRELS, CORPUS_FILE, QUERIES_FILE, Release
from nclue.types import DEFAULT_FORM, FORMS

UNITS = ("document", "page")
PAGE_SEPARATOR = "\n\n"


def page_id(doc_id: str, page: int) -> str:
    """The corpus id of one page in a page-unit export."""
    return f"{doc_id}#p{page}"


def export_beir(
    bench: str | os.PathLike[str],
    collection: str | os.PathLike[str],
    out: str | os.PathLike[str],
    unit: str = "document",
    form: str = DEFAULT_FORM,
) -> dict[str, int]:
    """Write the BEIR folder ``out`` (module docstring); returns the counts written."""
    from nclue.corpus.store import PageStore

    if unit not in UNITS:
        raise NclueError(f"unit {unit!r} is not one of {', '.join(UNITS)}")
    release = Release.open(bench, require_qrels=True)
    forms = {f for q in release.queries for f in q.forms} | set(FORMS)
    texts_of = {q.qid: {f: q.text(f) for f in sorted(forms) if f in FORMS or f in q.forms} for q in release.queries}
    missing_form = [q.qid for q in release.queries if form not in texts_of[q.qid]]
    if missing_form:
        raise NclueError(
            f"{bench}: {len(missing_form)} queries have no {form!r} form (first: {missing_form[0]}); "
            f"choose one of {', '.join(sorted(forms))} with --form"
        )
    store = PageStore.open(collection)
    target = Path(out)
    if target.exists() and any(target.iterdir()):
        raise NclueError(f"{target}: exists and is not empty; give a new folder for the export")
    texts, page_doc, page_number = store.texts, store.page_doc.tolist(), store.page_number.tolist()
    doc_ids = [str(d) for d in store.doc_ids.tolist()]
    known_docs = set(doc_ids)
    unknown = sorted({j.doc_id for j in release.judgments} - known_docs)
    if unknown:
        raise NclueError(
            f"{bench}: {len(unknown)} judged documents are not in {collection} (first: {unknown[0]}); "
            "export with the collection the release was built from"
        )
    titles = {d.doc_id: d.title or Path(d.path or d.doc_id).stem for d in release.corpus}
    if unit == "document":
        pages: dict[int, list[str]] = defaultdict(list)
        for row, doc in enumerate(page_doc):
            pages[doc].append(texts[row] or "")
        corpus = [
            {"_id": d, "title": titles.get(d, Path(d).stem), "text": PAGE_SEPARATOR.join(pages[i]), "metadata": {}}
            for i, d in enumerate(doc_ids)
        ]
        qrels = [(j.qid, j.doc_id, j.grade) for j in release.judgments if j.grade > 0]
    else:
        if any(j.pages is None for j in release.judgments):
            raise NclueError(f"{bench}: its qrels carry no evidence pages, so a page-unit export has no labels")
        corpus = [
            {
                "_id": page_id(doc_ids[doc], int(page_number[row])),
                "title": titles.get(doc_ids[doc], Path(doc_ids[doc]).stem),
                "text": texts[row] or "",
                "metadata": {"doc_id": doc_ids[doc], "page": int(page_number[row])},
            }
            for row, doc in enumerate(page_doc)
        ]
        qrels = _page_qrels(release)
    queries = [
        {
            "_id": q.qid,
            "text": texts_of[q.qid][form],
            "metadata": {"conditions": list(q.conditions), "forms": texts_of[q.qid]},
        }
        for q in release.queries
    ]
    # written beside the target and renamed into place: an interrupted export leaves no half folder
    partial = target.with_name(f".{target.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    (partial / BEIR_QRELS).parent.mkdir(parents=True)
    write_jsonl(partial / CORPUS_FILE, corpus)
    write_jsonl(partial / QUERIES_FILE, queries)
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{s}" for q, d, s in qrels]
    atomic_write_text(partial / BEIR_QRELS, "\n".join(lines) + "\n")
    if target.exists():
        target.rmdir()  # empty (checked above)
    partial.rename(target)
    return {"corpus": len(corpus), "queries": len(queries), "qrels": len(qrels)}


def _page_qrels(release: Release) -> list[tuple[str, str, int]]:
    """``(qid, page id, number of the query's conditions the page establishes)`` for every evidence page."""
    out = []
    for j in release.judgments:
        counts: dict[int, int] = defaultdict(int)
        for numbers in (j.pages or {}).values():
            for page in set(numbers):
                counts[page] += 1
        out.extend((j.qid, page_id(j.doc_id, page), n) for page, n in sorted(counts.items()))
    return out
