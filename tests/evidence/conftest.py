"""The phrase benchmark of the coverage tests (8 documents × 4 pages, surface-rule labels)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.select.conftest import build_phrase_bench


@pytest.fixture(scope="session")
def phrase_bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """:func:`tests.select.conftest.build_phrase_bench` once per session."""
    return build_phrase_bench(tmp_path_factory.mktemp("phrases"))
