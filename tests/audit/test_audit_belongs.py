"""Which release a committed audit belongs to (:func:`nclue.demo.audited_qrels`).

An audit records the SHA-256 of the release's queries, qrels and corpus files. Publishing where a
document's bytes live (its URL and licence) must not orphan an audit of the same documents; any
change to a label, a query or a document must.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

from nclue.demo import audited_qrels
from nclue.release import Release
from nclue.types import CorpusDoc, Judgment, Query

QUERIES = [Query("q1", ("Line numbering", "Poetry"))]
JUDGMENTS = [Judgment("q1", "d1", 2, "gold", pages={"Line numbering": (1,), "Poetry": (2,)})]
DOCS = [CorpusDoc("d1", n_pages=3, path="a/d1.pdf", sha256="ab" * 32), CorpusDoc("d2", n_pages=5, sha256="cd" * 32)]
PUBLISHED = [replace(d, url=f"https://deb.example/{d.doc_id}.deb#x", licence="GPL-2+") for d in DOCS]


def audit_of(root: Path, bench: Path) -> Path:
    """An audit folder recording ``bench``'s file hashes (as ``nclue audit sample`` does), with a repaired qrels."""
    audit = root / "audit"
    audit.mkdir()
    files = {
        name: hashlib.sha256((bench / name).read_bytes()).hexdigest()
        for name in ("queries.jsonl", "qrels.jsonl", "corpus.jsonl")
    }
    (audit / "audit.json").write_text(json.dumps({"bench_files": files}))
    (audit / "qrels.v2.jsonl").write_text("")
    return audit


def test_an_audit_survives_published_urls_and_licences(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    Release.from_records(QUERIES, JUDGMENTS, DOCS).write(old)
    Release.from_records(QUERIES, JUDGMENTS, PUBLISHED).write(new)
    assert (old / "corpus.jsonl").read_bytes() != (new / "corpus.jsonl").read_bytes()
    audit = audit_of(tmp_path, old)
    repaired, note = audited_qrels(new, audit)
    assert repaired == audit / "qrels.v2.jsonl", note
    assert Release.open(new).corpus_documents_sha256 == hashlib.sha256((old / "corpus.jsonl").read_bytes()).hexdigest()


def test_an_audit_of_other_documents_or_labels_does_not_belong(tmp_path: Path) -> None:
    old = tmp_path / "old"
    Release.from_records(QUERIES, JUDGMENTS, DOCS).write(old)
    audit = audit_of(tmp_path, old)
    other_doc = tmp_path / "other-doc"
    Release.from_records(QUERIES, JUDGMENTS, [replace(PUBLISHED[0], sha256="ef" * 32), PUBLISHED[1]]).write(other_doc)
    repaired, note = audited_qrels(other_doc, audit)
    assert repaired is None and "corpus.jsonl: audited" in note and "qrels.jsonl" not in note
    other_label = tmp_path / "other-label"
    Release.from_records(QUERIES, [replace(JUDGMENTS[0], doc_id="d2")], DOCS).write(other_label)
    repaired, note = audited_qrels(other_label, audit)
    assert repaired is None and "qrels.jsonl: audited" in note and "corpus.jsonl" not in note
