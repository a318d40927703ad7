"""Shared session fixtures: the real Debian PDF corpus, a small slice of it, and its page store.

* ``debian_pdf_dir``: the full ``debian-docs`` corpus (487 PDFs) fetched by
  :func:`nclue.corpus.fetch.fetch_recipe` into ``$NCLUE_CACHE/debian-docs`` (default
  ``~/.cache/nclue/debian-docs``), outside the repository, so every test session and CI run
  on the same machine fetches it once.
* ``small_pdf_dir``: :data:`SMALL_DOCS` (12 real PDFs, 444 pages: three R manuals, TeX
  package manuals of 16–60 pages, science and humanities) copied with their relative paths,
  so ``doc_id``s equal the full corpus's (e.g. ``r-doc-pdf/R/doc/manual/R-FAQ``).
* ``small_collection``: ``small_pdf_dir`` ingested by :func:`nclue.corpus.ingest.ingest`
  (``ocr="auto"``, one worker): a collection directory with ``docs.parquet`` and
  ``pages.parquet``, to be read through ``nclue.corpus.store.PageStore.open``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

SMALL_DOCS: tuple[str, ...] = (
    "r-doc-pdf/R/doc/manual/R-FAQ.pdf",
    "r-doc-pdf/R/doc/manual/R-data.pdf",
    "r-doc-pdf/R/doc/manual/R-lang.pdf",
    "texlive-humanities-doc/texlive-doc/latex/covington/covington.pdf",
    "texlive-humanities-doc/texlive-doc/latex/jura/jura.pdf",
    "texlive-humanities-doc/texlive-doc/latex/verse/verse.pdf",
    "texlive-science-doc/texlive-doc/latex/algorithm2e/algorithm2e.pdf",
    "texlive-science-doc/texlive-doc/latex/algorithmicx/algorithmicx.pdf",
    "texlive-science-doc/texlive-doc/latex/algorithms/algorithms.pdf",
    "texlive-science-doc/texlive-doc/latex/functan/functan.pdf",
    "texlive-science-doc/texlive-doc/latex/mhchem/mhchem.pdf",
    "texlive-science-doc/texlive-doc/latex/statistics/statistics.pdf",
)


def nclue_cache() -> Path:
    """Root of nclue's download cache: ``$NCLUE_CACHE`` or ``~/.cache/nclue``."""
    return Path(os.environ.get("NCLUE_CACHE") or Path.home() / ".cache" / "nclue")


@pytest.fixture(scope="session")
def debian_pdf_dir() -> Path:
    """The full ``debian-docs`` corpus, fetched once per machine (cached outside the repo)."""
    from nclue.corpus.fetch import fetch_recipe

    dest = nclue_cache() / "debian-docs"
    fetch_recipe("debian-docs", dest)
    return dest


@pytest.fixture(scope="session")
def small_pdf_dir(debian_pdf_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A deterministic folder of 12 real PDFs (444 pages) copied from the full corpus."""
    root = tmp_path_factory.mktemp("small-pdfs")
    for rel in SMALL_DOCS:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(debian_pdf_dir / rel, target)
    return root


@pytest.fixture(scope="session")
def small_collection(small_pdf_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``small_pdf_dir`` ingested by ``nclue.corpus.ingest.ingest``: a collection directory."""
    from nclue.corpus.ingest import ingest

    collection = tmp_path_factory.mktemp("small-collection") / "collection"
    ingest(small_pdf_dir, collection, workers=1, ocr="auto", progress=False)
    return collection
