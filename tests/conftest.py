"""Shared session fixtures: the committed small collection, and the real Debian PDF corpus.

* ``small_collection``: a copy of ``tests/fixtures/collection`` — the page store of 12 real
  PDFs (444 pages; three R manuals, TeX package manuals of 16–60 pages, science and
  humanities; see :mod:`tests.fixtures.small_collection`). Needs no download.
* ``debian_pdf_dir``: the full ``debian-docs`` corpus (487 PDFs) fetched by
  :func:`nclue.corpus.fetch.fetch_recipe` into ``$NCLUE_CACHE/debian-docs`` (default
  ``~/.cache/nclue/debian-docs``), outside the repository, so every test session and CI run
  on the same machine fetches it once. Tests that use it (directly or through
  ``small_pdf_dir``) are marked ``corpus``; ``pytest -m "not corpus"`` runs without it.
* ``small_pdf_dir``: the 12 PDFs behind ``small_collection``, copied with their relative paths,
  so ``doc_id``s equal the full corpus's (e.g. ``r-doc-pdf/R/doc/manual/R-FAQ``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.fixtures.chat_replay import ReplayServer
from tests.fixtures.small_collection import FIXTURE_COLLECTION, SMALL_DOCS, copy_small_pdfs, nclue_cache

__all__ = ["SMALL_DOCS"]
CORPUS_FIXTURES = {"debian_pdf_dir", "small_pdf_dir", "bad_pdf_dir", "scanned_dir"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that needs the downloaded corpus as ``corpus``."""
    for item in items:
        if CORPUS_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.corpus)


@pytest.fixture(scope="session")
def debian_pdf_dir() -> Path:
    """The full ``debian-docs`` corpus, fetched once per machine (cached outside the repo)."""
    from nclue.corpus.fetch import fetch_recipe

    dest = nclue_cache() / "debian-docs"
    fetch_recipe("debian-docs", dest)
    return dest


@pytest.fixture(scope="session")
def small_pdf_dir(debian_pdf_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A deterministic folder of the 12 real PDFs (444 pages) behind the fixture collection."""
    return copy_small_pdfs(debian_pdf_dir, tmp_path_factory.mktemp("small-pdfs"))


@pytest.fixture(scope="session")
def small_collection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh copy of the committed fixture collection (no download needed)."""
    target = tmp_path_factory.mktemp("small-collection") / "collection"
    shutil.copytree(FIXTURE_COLLECTION, target)
    return target


@pytest.fixture
def cli():  # noqa: ANN201 - returns the invoke function
    """``cli(*args)`` runs the real ``nclue`` app in-process (typer's CliRunner) and returns the result.

    Usage errors exit 2 with typer's usage message; an NclueError exits with its code and one
    ``error:`` line in ``result.output``; ``result.exception`` is then a ``SystemExit``.
    """
    from typer.testing import CliRunner

    from nclue.cli import app

    def invoke(*args: object):  # noqa: ANN202 - click's Result
        return CliRunner().invoke(app, [str(a) for a in args])

    return invoke


@pytest.fixture
def replay_server():
    """Factory fixture: ``replay_server(answer)`` starts a :class:`ReplayServer`; all are closed at teardown."""
    servers: list[ReplayServer] = []

    def start(answer) -> ReplayServer:  # noqa: ANN001
        server = ReplayServer(answer)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()
