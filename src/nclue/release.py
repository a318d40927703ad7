"""The one door to a benchmark release: open, validate, hash and write it (``docs/formats.md``).

:meth:`Release.open` reads a release directory into typed records —
:class:`~nclue.types.Query`, :class:`~nclue.types.Judgment`, :class:`~nclue.types.CorpusDoc` —
with one set of validation rules and errors that name the file, the line and the fix. Every
stage that needs queries, qrels or corpus rows goes through it; nothing else in ``nclue``
opens those files.

Layouts read:

* **nclue** (written by ``nclue build``): ``queries.jsonl`` rows ``{"qid", "conditions",
  "aliases"?, "forms"?}``, ``qrels.jsonl`` rows ``{"qid", "doc_id", "grade", "label"?,
  "pages"?}``, ``corpus.jsonl`` rows ``{"doc_id", "n_pages"?, "path"?, "source"?, "sha256"?,
  "n_bytes"?, "url"?}``;
* **BEIR**: ``queries.jsonl`` rows ``{"_id", "text", "metadata"?}`` (conditions from
  ``metadata.conditions`` or parsed from the text, ``"A"; "B"``), ``corpus.jsonl`` rows
  ``{"_id", "title"?, "text"?}``, qrels in ``qrels/test.tsv`` (``query-id corpus-id score``);
* **TREC qrels** (``qid iter doc_id grade``), given explicitly as ``qrels=PATH``.

The frozen **paraphrase cache** ``paraphrases.jsonl`` (rows ``{"qid", "text"}``, written by
``nclue bench paraphrase``, ``docs/construction.md#paraphrases``) is read when present: each
text becomes its query's ``forms["paraphrase"]``. It is never generated here; a query
without a row has no paraphrase form.

Validation (every layout): unique query ids; 2–8 distinct, non-empty conditions per query;
one qrel row per (query, document); known query ids; integer grades in ``0..n``; a ``gold``
label only with ``grade == n``; evidence pages only for the query's conditions, as positive
page numbers; and where a row carries pages, its grade equals the number of conditions
with evidence. Where qrels carry no label (BEIR, TREC, or a JSONL row without one), the
label is derived from the grade: ``gold`` iff ``grade == n`` (those formats cannot express
the distinct-page rule of ``docs/labels.md``). Grade-0 rows are dropped: zero is the default.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from nclue.errors import NclueError, where
from nclue.io import (
    atomic_write_text,
    dumps_canonical,
    iter_jsonl,
    iter_text_lines,
    read_json_object,
    sha256_file,
    write_json,
    write_jsonl,
)
from nclue.query import MAX_CONDITIONS, parse_conditions
from nclue.types import CorpusDoc, Judgment, Qrels, Query

QUERIES_FILE = "queries.jsonl"
QRELS_FILE = "qrels.jsonl"
CORPUS_FILE = "corpus.jsonl"
PARAPHRASES_FILE = "paraphrases.jsonl"
READING_FILE = "reading.jsonl"
"""A reader-judged release's reading record (per query: pool, judged documents, judgments)."""
MANIFEST_FILE = "MANIFEST.json"
"""The release's construction record (``nclue build``): parameters, extraction gate, reading, paraphrase."""
PARAPHRASE = "paraphrase"
BEIR_QRELS = Path("qrels") / "test.tsv"
MAX_PAGE = 2**31 - 1
LABELS = ("gold", "partial")
DISTRIBUTION_FIELDS = ("url", "licence", "licence_file")
"""Corpus fields that say where a document's bytes are published and under what terms; they do not
change what a document is, so :meth:`Release.corpus_documents_sha256` leaves them out."""


@dataclass(frozen=True)
class Release:
    """A benchmark release as typed records, plus where each part was read from.

    ``judgments`` hold every judged (grade ≥ 1) membership in file order; ``corpus`` is empty
    when the release has no ``corpus.jsonl``; ``files`` maps ``queries``/``qrels``/``corpus`` to
    the files read (absent roles were not there).
    """

    root: Path | None
    queries: tuple[Query, ...]
    judgments: tuple[Judgment, ...] = ()
    corpus: tuple[CorpusDoc, ...] = ()
    files: Mapping[str, Path] = field(default_factory=dict)

    # --- reading -----------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        qrels: str | os.PathLike[str] | None = None,
        require_qrels: bool = False,
        with_qrels: bool = True,
    ) -> Release:
        """Read and validate the release at ``path`` (see the module docstring).

        ``qrels`` names a qrels file to use instead of the release's own (nclue JSONL, BEIR
        ``.tsv`` or TREC). Without qrels the release still opens unless ``require_qrels``;
        ``with_qrels=False`` skips them (running systems needs only queries and corpus).
        """
        root = Path(path)
        if not root.is_dir():
            raise NclueError(f"{root}: benchmark release not found; build one with `nclue build COLLECTION -o {root}`")
        queries_file = root / QUERIES_FILE
        if not queries_file.is_file():
            raise NclueError(
                f"{root}: not a benchmark release (no {QUERIES_FILE}); give the directory written by `nclue build` "
                "or a BEIR dataset folder"
            )
        files: dict[str, Path] = {"queries": queries_file}
        queries = _read_queries(queries_file)
        if (root / PARAPHRASES_FILE).is_file():
            files["paraphrases"] = root / PARAPHRASES_FILE
            queries = with_paraphrases(queries, read_paraphrases(root / PARAPHRASES_FILE, queries))
        corpus: tuple[CorpusDoc, ...] = ()
        if (root / CORPUS_FILE).is_file():
            files["corpus"] = root / CORPUS_FILE
            corpus = _read_corpus(root / CORPUS_FILE)
        qrels_file = _find_qrels(root, qrels, require_qrels) if with_qrels else None
        judgments: tuple[Judgment, ...] = ()
        if qrels_file is not None:
            files["qrels"] = qrels_file
            judgments = read_qrels(qrels_file, queries)
        return cls(root, queries, judgments, corpus, files)

    @classmethod
    def from_records(
        cls,
        queries: Iterable[Query],
        judgments: Iterable[Judgment] = (),
        corpus: Iterable[CorpusDoc] = (),
        root: Path | None = None,
    ) -> Release:
        """An in-memory release, checked by the same rules as a file (errors name the record)."""
        qs = tuple(queries)
        seen: dict[str, int] = {}
        for i, q in enumerate(qs, start=1):
            _check_query(q.qid, list(q.conditions), f"query #{i}", seen, i)
        conditions = {q.qid: q.conditions for q in qs}
        rows = [
            (f"judgment #{i}", j.qid, j.doc_id, j.grade, j.label, None if j.pages is None else dict(j.pages))
            for i, j in enumerate(judgments, start=1)
        ]
        docs = tuple(corpus)
        _check_unique_docs([(f"corpus document #{i}", d.doc_id) for i, d in enumerate(docs, start=1)])
        return cls(root, qs, _judgments(rows, conditions), docs)

    def with_qrels(self, qrels: Qrels) -> Release:
        """This release judged by ``qrels`` instead of its own judgments, checked by the file rules.

        Every row must name a query of the release and a grade within its condition count; a
        row without a label is ``gold`` iff its grade equals the condition count. Grade-0 rows
        are dropped. The result has no evidence pages (Gold+Support is not computed on it).
        """
        if not isinstance(qrels, Qrels):
            raise NclueError(
                f"with_qrels takes nclue.Qrels (Qrels.from_dict / from_pandas), got {type(qrels).__name__}"
            )
        conditions = {q.qid: q.conditions for q in self.queries}
        rows = [
            (f"{qrels.name} row {i} ({qid}, {doc})", qid, doc, grade, label, None)
            for i, (qid, doc, grade, label) in enumerate(qrels.rows, start=1)
        ]
        files = {role: path for role, path in self.files.items() if role != "qrels"}
        return replace(self, judgments=_judgments(rows, conditions), files=files)

    # --- views -------------------------------------------------------------------------------

    @cached_property
    def query_index(self) -> dict[str, int]:
        """``qid`` → position in :attr:`queries` (file order)."""
        return {q.qid: i for i, q in enumerate(self.queries)}

    def query(self, qid: str) -> Query:
        """The query with id ``qid``."""
        i = self.query_index.get(qid)
        if i is None:
            raise NclueError(f"{self.root or 'release'}: no query {qid!r}")
        return self.queries[i]

    @cached_property
    def by_query(self) -> dict[str, tuple[Judgment, ...]]:
        """``qid`` → its judged documents, in qrels order (every query has an entry)."""
        out: dict[str, list[Judgment]] = {q.qid: [] for q in self.queries}
        for j in self.judgments:
            out[j.qid].append(j)
        return {q: tuple(v) for q, v in out.items()}

    @cached_property
    def corpus_index(self) -> dict[str, CorpusDoc]:
        """``doc_id`` → corpus row."""
        return {d.doc_id: d for d in self.corpus}

    @property
    def has_qrels(self) -> bool:
        """Whether qrels were read (an empty qrels file counts as read)."""
        return "qrels" in self.files or bool(self.judgments)

    def file_key(self, path: Path) -> str:
        """How :attr:`hashes` names ``path``: relative to the release, else as it was given."""
        return path.relative_to(self.root).as_posix() if self.root and path.is_relative_to(self.root) else str(path)

    @cached_property
    def hashes(self) -> dict[str, str]:
        """SHA-256 of every file read, keyed by :meth:`file_key`."""
        return {self.file_key(path): sha256_file(path) for path in self.files.values()}

    @cached_property
    def corpus_documents_sha256(self) -> str | None:
        """SHA-256 of ``corpus.jsonl`` as :meth:`write` would write it without :data:`DISTRIBUTION_FIELDS`.

        Equal for two releases whose documents are the same (ids, files, hashes, page counts) even
        when one also records where the bytes are published; ``None`` without corpus rows.
        """
        if not self.corpus:
            return None
        rows = ({k: v for k, v in d.to_json().items() if k not in DISTRIBUTION_FIELDS} for d in self.corpus)
        text = "".join(dumps_canonical(row) + "\n" for row in rows)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def problems(self) -> list[str]:
        """Cheap invariants a scorer relies on, as readable sentences (empty = none).

        No judgments at all; judged documents missing from the corpus; queries without a gold.
        """
        name = self.files.get("qrels", self.root or "release")
        if not self.judgments:
            return [f"{name}: no judgments (every row has grade 0 or the file is empty); nothing can be scored"]
        out = []
        if self.corpus:
            unknown = sorted({j.doc_id for j in self.judgments} - set(self.corpus_index))
            if unknown:
                out.append(
                    f"{name}: {len(unknown)} judged document(s) are not in {CORPUS_FILE} "
                    f"(e.g. {unknown[0]!r}); the qrels belong to another corpus — rebuild or fix the release"
                )
        without = [q for q, rows in self.by_query.items() if not any(j.label == "gold" for j in rows)]
        if without:
            out.append(
                f"{name}: {len(without)} of {len(self.queries)} queries have no gold document (e.g. {without[0]!r}); "
                "they can only be missed — check that the qrels match the queries"
            )
        return out

    # --- writing -----------------------------------------------------------------------------

    def write(self, out_dir: str | os.PathLike[str]) -> list[Path]:
        """Write ``queries.jsonl``, ``qrels.jsonl``, BEIR ``qrels/test.tsv`` and ``corpus.jsonl``.

        Paraphrases go to ``paraphrases.jsonl`` (when any query has one), never into ``queries.jsonl``.
        """
        out = Path(out_dir)
        written = [out / QUERIES_FILE, out / QRELS_FILE, out / BEIR_QRELS]
        plain = [replace(q, forms={k: v for k, v in q.forms.items() if k != PARAPHRASE}) for q in self.queries]
        write_jsonl(out / QUERIES_FILE, (q.to_json() for q in plain))
        paraphrases = {q.qid: q.forms[PARAPHRASE] for q in self.queries if q.forms.get(PARAPHRASE)}
        if paraphrases:
            write_paraphrases(out / PARAPHRASES_FILE, paraphrases)
            written.append(out / PARAPHRASES_FILE)
        write_judgments(out / QRELS_FILE, self.judgments)
        write_beir_qrels(out / BEIR_QRELS, self.judgments)
        if self.corpus:
            write_jsonl(out / CORPUS_FILE, (d.to_json() for d in self.corpus))
            written.append(out / CORPUS_FILE)
        return written


def read_manifest(root: str | os.PathLike[str], required: bool = True) -> dict[str, Any]:
    """The release's ``MANIFEST.json`` as a dict: the one reader of that file.

    A missing file is refused naming the fix when ``required``, else read as ``{}`` (a BEIR
    folder has none); a damaged one is always refused.
    """
    path = Path(root) / MANIFEST_FILE
    if not path.is_file():
        if required:
            raise NclueError(f"{path}: missing; build the release with `nclue build` (BEIR folders have no manifest)")
        return {}
    return read_json_object(path, "rebuild the release with `nclue build`", "release manifest")


def write_manifest(root: str | os.PathLike[str], manifest: Mapping[str, Any]) -> Path:
    """Write ``MANIFEST.json`` atomically (indented, key-sorted JSON); the caller rewrites ``SHA256SUMS``."""
    path = Path(root) / MANIFEST_FILE
    write_json(path, dict(manifest))
    return path


def read_paraphrases(path: str | os.PathLike[str], queries: Sequence[Query]) -> dict[str, str]:
    """``qid → paraphrase`` from a frozen ``paraphrases.jsonl``; errors name the file and line.

    Each row is ``{"qid", "text"}`` with a known qid, listed once, and a non-empty text.
    """
    known = {q.qid for q in queries}
    out: dict[str, str] = {}
    first: dict[str, int] = {}
    for line, row in iter_jsonl(path):
        loc = where(path, line)
        qid, text = row.get("qid"), row.get("text")
        if not isinstance(qid, str) or not qid:
            raise NclueError(f"{loc}: missing or non-string 'qid'")
        if qid not in known:
            raise NclueError(
                f"{loc}: qid {qid!r} is not in {QUERIES_FILE}; the paraphrase cache belongs to another release"
            )
        if not isinstance(text, str) or not text.strip():
            raise NclueError(f"{loc}: qid {qid!r} has no non-empty 'text'")
        if qid in out:
            raise NclueError(f"{loc}: qid {qid!r} repeated (first at line {first[qid]}); keep one")
        out[qid], first[qid] = text.strip(), line
    return out


def with_paraphrases(queries: Sequence[Query], paraphrases: Mapping[str, str]) -> tuple[Query, ...]:
    """``queries`` with ``forms["paraphrase"]`` set from ``paraphrases`` where a row exists."""
    return tuple(
        replace(q, forms={**q.forms, PARAPHRASE: paraphrases[q.qid]}) if q.qid in paraphrases else q for q in queries
    )


def write_paraphrases(path: str | os.PathLike[str], paraphrases: Mapping[str, str]) -> None:
    """Write ``paraphrases.jsonl``: one ``{"qid", "text"}`` row per query, sorted by qid."""
    write_jsonl(path, ({"qid": qid, "text": paraphrases[qid]} for qid in sorted(paraphrases)))


def write_judgments(path: str | os.PathLike[str], judgments: Iterable[Judgment]) -> int:
    """Write an nclue ``qrels.jsonl`` (one row per judged membership); return the row count."""
    return write_jsonl(path, (j.to_json() for j in judgments))


def write_beir_qrels(path: str | os.PathLike[str], judgments: Iterable[Judgment]) -> None:
    """BEIR ``qrels/test.tsv``: header ``query-id\\tcorpus-id\\tscore``, score = grade."""
    lines = ["query-id\tcorpus-id\tscore"] + [f"{j.qid}\t{j.doc_id}\t{j.grade}" for j in judgments]
    atomic_write_text(path, "\n".join(lines) + "\n")


# --- parsing ---------------------------------------------------------------------------------


def _check_query(qid: object, conditions: object, loc: str, seen: dict[str, int], line: int) -> tuple[str, ...]:
    if not isinstance(qid, str) or not qid.strip():
        raise NclueError(f"{loc}: missing or empty query id")
    if qid in seen:
        raise NclueError(f"{loc}: query id {qid!r} already defined at record {seen[qid]}; query ids must be unique")
    seen[qid] = line
    if not isinstance(conditions, list) or not all(isinstance(c, str) and c.strip() for c in conditions):
        raise NclueError(f"{loc}: 'conditions' of {qid!r} must be a list of non-empty names")
    if len(set(conditions)) != len(conditions):
        raise NclueError(f"{loc}: query {qid!r} names a condition twice ({conditions}); list each once")
    if not 2 <= len(conditions) <= MAX_CONDITIONS:
        raise NclueError(
            f"{loc}: query {qid!r} has {len(conditions)} condition(s); a conjunctive query needs 2 to {MAX_CONDITIONS}"
        )
    return tuple(conditions)


def _string_map(value: object, loc: str, name: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise NclueError(f"{loc}: '{name}' must be a JSON object")
    return value


def _read_queries(path: Path) -> tuple[Query, ...]:
    out: list[Query] = []
    seen: dict[str, int] = {}
    for line, row in iter_jsonl(path):
        loc = where(path, line)
        if "qid" in row:
            conditions = _check_query(row.get("qid"), row.get("conditions"), loc, seen, line)
            forms = _string_map(row.get("forms"), loc, "forms")
            if not all(isinstance(v, str) for v in forms.values()):
                raise NclueError(f"{loc}: every value of 'forms' must be a string")
            aliases = _string_map(row.get("aliases"), loc, "aliases")
            if not all(isinstance(v, list) and all(isinstance(a, str) for a in v) for v in aliases.values()):
                raise NclueError(f"{loc}: 'aliases' must map each condition to a list of surface forms")
            forms = {k: v for k, v in forms.items() if v.strip()}
            out.append(Query(row["qid"], conditions, forms, {k: tuple(v) for k, v in aliases.items()}))
        elif "_id" in row:
            out.append(_beir_query(row, loc, seen, line))
        else:
            raise NclueError(f"{loc}: a query row needs 'qid' and 'conditions' (nclue) or '_id' and 'text' (BEIR)")
    if not out:
        raise NclueError(f"{path}: no queries")
    return tuple(out)


def _beir_query(row: dict, loc: str, seen: dict[str, int], line: int) -> Query:
    qid, text = row.get("_id"), row.get("text")
    if isinstance(qid, int) and not isinstance(qid, bool):
        qid = str(qid)
    if not isinstance(text, str) or not text.strip():
        raise NclueError(f"{loc}: BEIR query {qid!r} has no 'text'")
    meta = _string_map(row.get("metadata"), loc, "metadata")
    given = meta.get("conditions")
    if given is None:
        try:
            given = list(parse_conditions(text))
        except NclueError as exc:
            raise NclueError(
                f"{loc}: cannot read conditions from BEIR query text {text!r} ({exc}); write the text as "
                '"A"; "B" or give metadata.conditions'
            ) from None
    conditions = _check_query(qid, given, loc, seen, line)
    return Query(str(qid), conditions, {"raw": text.strip()})


def _read_corpus(path: Path) -> tuple[CorpusDoc, ...]:
    docs: list[CorpusDoc] = []
    for line, row in iter_jsonl(path):
        loc = where(path, line)
        doc_id = row.get("doc_id", row.get("_id"))
        if isinstance(doc_id, int) and not isinstance(doc_id, bool):
            doc_id = str(doc_id)
        if not isinstance(doc_id, str) or not doc_id:
            raise NclueError(f"{loc}: corpus row needs a non-empty string 'doc_id' (or BEIR '_id')")
        meta = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
        n_pages = row.get("n_pages", meta.get("n_pages"))
        texts = {}
        for key in ("path", "source", "sha256", "url", "title", "licence", "licence_file"):
            value = row.get(key)
            if value is not None and not isinstance(value, str):
                raise NclueError(f"{loc}: corpus field '{key}' of {doc_id!r} must be a string")
            texts[key] = value
        docs.append(
            CorpusDoc(
                doc_id,
                n_pages=None if n_pages is None else _as_int(n_pages, loc, "n_pages", low=0),
                n_bytes=None if row.get("n_bytes") is None else _as_int(row["n_bytes"], loc, "n_bytes", low=0),
                **texts,
            )
        )
    _check_unique_docs([(where(path, i), d.doc_id) for i, d in enumerate(docs, start=1)])
    return tuple(docs)


def _check_unique_docs(items: Sequence[tuple[str, str]]) -> None:
    seen: dict[str, str] = {}
    for loc, doc_id in items:
        if doc_id in seen:
            raise NclueError(f"{loc}: document {doc_id!r} already listed ({seen[doc_id]}); list each document once")
        seen[doc_id] = loc


def _find_qrels(root: Path, explicit: str | os.PathLike[str] | None, required: bool) -> Path | None:
    if explicit is not None:
        p = Path(explicit)
        if not p.is_file():
            raise NclueError(f"{p}: qrels file not found" + (" (it is a directory)" if p.is_dir() else ""))
        return p
    if (root / QRELS_FILE).is_file():
        return root / QRELS_FILE
    if (root / BEIR_QRELS).is_file():
        return root / BEIR_QRELS
    tsvs = sorted((root / "qrels").glob("*.tsv")) if (root / "qrels").is_dir() else []
    if len(tsvs) == 1:
        return tsvs[0]
    if tsvs:
        raise NclueError(
            f"{root / 'qrels'}: several BEIR splits ({', '.join(p.name for p in tsvs)}) and no test.tsv; "
            "pass the one to use with --qrels FILE"
        )
    if required:
        raise NclueError(f"{root}: no {QRELS_FILE} or qrels/*.tsv; pass --qrels FILE")
    return None


_Row = tuple[str, str, str, int, str | None, dict | None]


def read_qrels(path: str | os.PathLike[str], queries: Sequence[Query]) -> tuple[Judgment, ...]:
    """Parse a qrels file by its form (``.jsonl`` nclue, ``.tsv`` BEIR, else TREC) and validate it."""
    p = Path(path)
    if p.suffix == ".jsonl":
        rows = _jsonl_qrels(p)
    elif p.suffix == ".tsv":
        rows = _tsv_qrels(p)
    else:
        rows = _trec_qrels(p)
    return _judgments(rows, {q.qid: q.conditions for q in queries}, p)


def _as_int(value: object, loc: str, field: str = "grade", low: int | None = None) -> int:
    """``value`` as an int (``2`` or ``2.0``), else an error naming the location and field."""
    bad = NclueError(f"{loc}: {field} {value!r} is not an integer")
    if isinstance(value, bool):
        raise bad
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        raise bad from None
    if not number.is_integer():
        raise bad
    if low is not None and number < low:
        raise NclueError(f"{loc}: {field} {value!r} must be >= {low}")
    return int(number)


def _jsonl_qrels(path: Path) -> list[_Row]:
    out: list[_Row] = []
    for line, obj in iter_jsonl(path):
        loc = where(path, line)
        qid, doc = obj.get("qid"), obj.get("doc_id")
        if not isinstance(qid, str) or not isinstance(doc, str) or not doc:
            raise NclueError(f"{loc}: each row needs string 'qid' and 'doc_id'")
        label = obj.get("label")
        if label is not None and label not in LABELS:
            raise NclueError(f"{loc}: label {label!r} must be 'gold' or 'partial'")
        pages = obj.get("pages")
        if pages is not None and not isinstance(pages, dict):
            raise NclueError(f"{loc}: 'pages' must map condition name to a page list")
        out.append((loc, qid, doc, _as_int(obj.get("grade"), loc), label, pages))
    return out


def _tsv_qrels(path: Path) -> list[_Row]:
    out: list[_Row] = []
    for line, text in iter_text_lines(path):
        parts = text.split("\t")
        if line == 1 and parts[:2] == ["query-id", "corpus-id"]:
            continue
        if not text.strip():
            continue
        loc = where(path, line)
        if len(parts) != 3:
            raise NclueError(f"{loc}: BEIR qrels need 3 tab-separated columns (query-id, corpus-id, score)")
        out.append((loc, parts[0], parts[1], _as_int(parts[2], loc), None, None))
    return out


def _trec_qrels(path: Path) -> list[_Row]:
    out: list[_Row] = []
    for line, text in iter_text_lines(path):
        parts = text.split()
        if not parts:
            continue
        loc = where(path, line)
        if len(parts) != 4:
            raise NclueError(f"{loc}: TREC qrels need 4 columns (qid iter doc_id grade), got {len(parts)}")
        out.append((loc, parts[0], parts[2], _as_int(parts[3], loc), None, None))
    return out


def _judgments(
    rows: Iterable[_Row], conditions: Mapping[str, tuple[str, ...]], source: Path | None = None
) -> tuple[Judgment, ...]:
    out: list[Judgment] = []
    seen: dict[tuple[str, str], str] = {}
    for loc, qid, doc, grade, label, pages in rows:
        conds = conditions.get(qid)
        if conds is None:
            raise NclueError(f"{loc}: qid {qid!r} is not in {QUERIES_FILE}; remove the row or add the query")
        n = len(conds)
        if not 0 <= grade <= n:
            raise NclueError(f"{loc}: grade {grade} out of range 0..{n} for {qid!r} ({n} conditions)")
        if (qid, doc) in seen:
            raise NclueError(f"{loc}: ({qid}, {doc}) already judged at {seen[(qid, doc)]}; keep one row")
        seen[(qid, doc)] = loc
        evidence = None if pages is None else _evidence(pages, conds, loc)
        if evidence is not None and len(evidence) != grade:
            raise NclueError(
                f"{loc}: grade {grade} but {len(evidence)} conditions have evidence pages; the grade is the "
                "number of conditions with evidence — fix the row or rebuild the release"
            )
        if label is None:
            label = "gold" if grade == n else "partial"
        elif label == "gold" and grade != n:
            raise NclueError(f"{loc}: label 'gold' needs grade == n == {n}, got grade {grade}; fix the label or grade")
        if grade == 0:
            continue
        out.append(Judgment(qid, doc, grade, label, evidence))  # type: ignore[arg-type]
    return tuple(out)


def _evidence(raw: dict, conds: tuple[str, ...], loc: str) -> dict[str, tuple[int, ...]]:
    unknown = set(raw) - set(conds)
    if unknown:
        raise NclueError(f"{loc}: 'pages' names {sorted(unknown)} not among the query's conditions {list(conds)}")
    out = {}
    for c in conds:
        pages = raw.get(c, [])
        if not isinstance(pages, list | tuple) or not all(
            isinstance(p, int) and not isinstance(p, bool) and 1 <= p <= MAX_PAGE for p in pages
        ):
            raise NclueError(f"{loc}: pages of {c!r} must be a list of 1-based page numbers")
        if pages:
            out[c] = tuple(pages)
    return out
